package icrc

// haveFold reports whether this CPU and OS run the AVX-512 carry-less
// multiply kernel: AVX-512 F, BW and VL, VPCLMULQDQ, and the OS saving the
// opmask and 512-bit register state.
var haveFold = detectFold()

func detectFold() bool {
	_, _, c1, _ := cpuid(1, 0)
	const osxsave = 1 << 27
	if c1&osxsave == 0 {
		return false
	}
	// XCR0: SSE, AVX, opmask, ZMM0-15 upper halves, ZMM16-31.
	if lo, _ := xgetbv(); lo&0xE6 != 0xE6 {
		return false
	}
	max, _, _, _ := cpuid(0, 0)
	if max < 7 {
		return false
	}
	_, b7, c7, _ := cpuid(7, 0)
	const (
		avx512f    = 1 << 16
		avx512bw   = 1 << 30
		avx512vl   = 1 << 31
		vpclmulqdq = 1 << 10
	)
	return b7&(avx512f|avx512bw|avx512vl) == avx512f|avx512bw|avx512vl && c7&vpclmulqdq != 0
}

func cpuid(eax, ecx uint32) (a, b, c, d uint32)

func xgetbv() (lo, hi uint32)

// fold512 folds the virtual message of fold.go (b with s applied, between
// zero pads that align it to 64 bytes in memory) to a polynomial below
// degree 64 congruent to its CRC remainder; finish64 completes it. len(b)
// must be at least 1.
//
//go:noescape
func fold512(b []byte, s *shape) (v uint64)
