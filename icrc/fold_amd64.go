package icrc

// kernel is the vector kernel this CPU and OS run: fold512 where they have
// AVX-512 F, BW and VL with VPCLMULQDQ and save the opmask and 512-bit
// register state; else fold256 where they have AVX2 with VPCLMULQDQ and
// save the 256-bit state (AMD Zen 3, Intel Alder Lake and later client
// parts); else fold128 where they have PCLMULQDQ and SSE4.1 (every x86-64
// CPU of the last decade or so); else none.
var kernel = detectKernel()

// haveSSEKernel reports whether the CPU runs fold128.
func haveSSEKernel() bool {
	_, _, c1, _ := cpuid(1, 0)
	const pclmulqdq, sse41 = 1 << 1, 1 << 19
	return c1&pclmulqdq != 0 && c1&sse41 != 0
}

func detectKernel() int {
	if v := detectVector(); v != kernelNone {
		return v
	}
	if haveSSEKernel() {
		return kernel128
	}
	return kernelNone
}

// detectVector returns the AVX-512 or AVX2 kernel if the CPU and OS run one.
func detectVector() int {
	_, _, c1, _ := cpuid(1, 0)
	const osxsave = 1 << 27
	if c1&osxsave == 0 {
		return kernelNone
	}
	max, _, _, _ := cpuid(0, 0)
	if max < 7 {
		return kernelNone
	}
	_, b7, c7, _ := cpuid(7, 0)
	const (
		avx2       = 1 << 5
		avx512f    = 1 << 16
		avx512bw   = 1 << 30
		avx512vl   = 1 << 31
		vpclmulqdq = 1 << 10
	)
	if c7&vpclmulqdq == 0 {
		return kernelNone
	}
	xcr0, _ := xgetbv()
	// XCR0: SSE, AVX, opmask, ZMM0-15 upper halves, ZMM16-31.
	if xcr0&0xE6 == 0xE6 && b7&(avx512f|avx512bw|avx512vl) == avx512f|avx512bw|avx512vl {
		return kernel512
	}
	// XCR0: SSE and AVX.
	if xcr0&0x06 == 0x06 && b7&avx2 != 0 {
		return kernel256
	}
	return kernelNone
}

func cpuid(eax, ecx uint32) (a, b, c, d uint32)

func xgetbv() (lo, hi uint32)

// fold512 folds the virtual message of fold.go (b with s applied, between
// zero pads that align it to 64 bytes in memory) down to a polynomial below
// degree 64 congruent to its CRC remainder, and reduces that by Barrett's
// method: it returns the CRC state (hash/crc32 form, before the final
// complement). len(b) must be at least 1.
//
//go:noescape
func fold512(b []byte, s *shape) (crc uint32)

// fold256 is fold512 for AVX2, in 256-bit registers, with the same result.
// It reads the whole aligned 64-byte blocks that hold b's first and last
// bytes (never another page) and masks the bytes outside b off.
//
//go:noescape
func fold256(b []byte, s *shape) (crc uint32)

// fold128 is fold256 for CPUs with only PCLMULQDQ and SSE4.1, in 128-bit
// registers: the same result (the CRC state), the same reads.
//
//go:noescape
func fold128(b []byte, s *shape) (crc uint32)
