package prefetch

import "unsafe"

// Lines prefetches the n cache lines (64 bytes each) starting at the
// line that holds p. A nil p is ignored.
func Lines(p unsafe.Pointer, n int) {
	if p != nil {
		lines(uintptr(p), n)
	}
}

// lines issues PREFETCHT0 for n lines from p.
//
//go:noescape
func lines(p uintptr, n int)

// LinesL2 is Lines into the level-2 cache (PREFETCHT1).
func LinesL2(p unsafe.Pointer, n int) {
	if p != nil {
		linesL2(uintptr(p), n)
	}
}

// linesL2 issues PREFETCHT1 for n lines from p.
//
//go:noescape
func linesL2(p uintptr, n int)
