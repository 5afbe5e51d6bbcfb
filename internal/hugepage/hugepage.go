// Package hugepage asks the operating system to back large, long-lived,
// randomly accessed allocations with huge pages (2 MiB on x86-64 Linux).
//
// With thousands of simulated queue pairs each packet touches state spread
// over tens of megabytes; with 4 KiB pages nearly every such touch also
// misses the TLB, which in a virtual machine costs a two-level page walk.
// It is only a hint: where the kernel does not do transparent huge pages,
// or not for this range, nothing changes.
package hugepage

import "unsafe"

// Size is the huge page size the hint is rounded to.
const Size = 2 << 20

// Advise hints that the whole huge pages inside [p, p+n) should be huge
// pages. Call it on memory the Go heap gave (a large allocation, which is
// not moved), best before the memory is first written.
func Advise(p unsafe.Pointer, n uintptr) {
	start := (uintptr(p) + Size - 1) &^ (Size - 1)
	end := (uintptr(p) + n) &^ (Size - 1)
	if end <= start {
		return
	}
	advise(start, end-start)
}

// Bytes is Advise for a byte slice.
func Bytes(b []byte) {
	if len(b) > 0 {
		Advise(unsafe.Pointer(unsafe.SliceData(b)), uintptr(len(b)))
	}
}

// Slice returns n zero Ts in one array that starts on a page boundary and
// is hinted to be huge pages. It allocates room for at least 32 KiB: the Go
// heap places an object that large on pages of its own, with no header
// before it (a smaller one that holds pointers starts 8 bytes into its
// block), so an element whose size is a multiple of 64 starts a cache line.
// The slice has length n; its capacity may be larger.
func Slice[T any](n int) []T {
	var x T
	size := unsafe.Sizeof(x)
	least := 1
	if size > 0 {
		least = (32<<10)/int(size) + 1
	}
	s := make([]T, max(n, 0), max(n, least))
	Advise(unsafe.Pointer(unsafe.SliceData(s)), uintptr(cap(s))*size)
	return s
}
