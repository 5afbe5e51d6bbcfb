package icrc

import "math/bits"

// Carry-less-multiply folding (used where the CPU has it, see fold_amd64.go).
//
// The CRC is computed over a virtual message W = k zero bytes, then the
// packet b with its mask ORed in and the starting CRC state XORed into its
// first four bytes, then t zero bytes. k puts W's start on a 64-byte boundary
// in memory, so every 64-byte load is aligned (a load split over two cache
// lines costs several times more); t makes len(W) a multiple of 64. Leading
// zero bytes leave a zero CRC state at zero, and XORing a state into the
// first four message bytes is the same as starting from it; the trailing
// zeros multiply the remainder by x^(8t), which the last step divides out.
// The pad bytes count as zeros: the AVX-512 kernel never reads them (masked
// loads); the AVX2 and SSE kernels read them, within the aligned 64-byte
// blocks that hold b's first and last bytes, and mask them off. The mask and state come
// from a 256-byte table per packet shape.
//
// Polynomial arithmetic, reflected as the CRC is: a register bit m stands for
// x^(127-m) of a 16-byte block. A 64x64 carry-less multiply of reflected
// values gives their product times x, so moving a block forward by D bits is
// lo64*r(x^(D+63) mod P) XOR hi64*r(x^(D-1) mod P), where r() reflects a
// 32-bit remainder into a 64-bit operand. D may be negative: x has an
// inverse modulo P.

// The vector kernels, by the width of the registers they fold in.
const (
	kernelNone = iota
	kernel128  // PCLMULQDQ and SSE4.1
	kernel256  // AVX2 with VPCLMULQDQ
	kernel512  // AVX-512 with VPCLMULQDQ
)

// kernelNames are the names Kernel reports.
var kernelNames = [...]string{kernelNone: "portable", kernel128: "sse", kernel256: "avx2", kernel512: "avx512"}

// sumBy returns the ICRC of b with s applied, by kernel k (which the CPU
// must run) or, for kernelNone, the portable code.
func sumBy(k int, b []byte, s *shape) uint32 {
	switch k {
	case kernel512:
		return ^fold512(b, s)
	case kernel256:
		return ^fold256(b, s)
	case kernel128:
		return ^fold128(b, s)
	}
	return finish(s.start, b, s.mask)
}

// edgeMask gives the AVX2 and SSE kernels their first and last chunks' lane
// masks:
// 64 bytes from edgeMask[64-k] keep lanes k..63, from edgeMask[64+t] lanes
// 0..63-t.
var edgeMask = func() (m [192]byte) {
	for i := 64; i < 128; i++ {
		m[i] = 0xFF
	}
	return m
}()

// shape is a packet shape: its mask (0xFF where a byte is masked, 0xF0 for
// the LRH VL nibble) and starting CRC (hash/crc32 form), and what the vector
// kernel reads: or[64+i] is ORed into b[i], xor[64+i] is XORed into b[i]
// after that (the starting state), both zero elsewhere, so that the kernel
// can read them at 64-k for a leading pad of k bytes. The kernel knows only
// the two arrays, at offsets 0 and 256.
type shape struct {
	or, xor [256]byte
	mask    []byte
	start   uint32
}

func newShape(mask []byte, start uint32) *shape {
	s := &shape{mask: mask, start: start}
	raw := ^start
	copy(s.or[64:], mask)
	s.xor[64] = byte(raw)
	s.xor[65] = byte(raw >> 8)
	s.xor[66] = byte(raw >> 16)
	s.xor[67] = byte(raw >> 24)
	return s
}

// foldK holds, per 512-bit register, the four 128-bit lanes of multipliers
// (lo64, hi64) the kernel uses to fold by 256, 192, 128 and 64 bytes.
var foldK [4][8]uint64

// reduceK[t] moves the four lanes of the last register onto the last 16
// bytes (forward by 48, 32, 16 and 0 bytes), divides out t trailing zero
// bytes, and multiplies by x^32 as the CRC does: the XOR of the four products
// is congruent to the CRC remainder and has degree below 96.
var reduceK [64][8]uint64

// top32K folds the top 32 of those 96 bits down by 64: what is left is
// below degree 64, and Barrett's reduction (barrettK) takes it to the
// remainder.
var top32K uint64

// barrettK holds, for the Barrett reduction that ends every kernel (FINISH
// in fold_amd64.s), mu = x^64 div P and P
// itself, each reflected as a 33-bit value (bit j is x^(32-j)).
var barrettK = [2]uint64{0x1F7011641, 0x1DB710641}

// xPowMod returns x^n mod P, P the CRC-32 polynomial, as a 32-bit value with
// bit d the coefficient of x^d. n may be negative.
func xPowMod(n int) uint32 {
	r := uint32(1)
	for ; n > 0; n-- {
		c := r >> 31
		r <<= 1
		if c != 0 {
			r ^= 0x04C11DB7
		}
	}
	for ; n < 0; n++ { // times x^-1: P has a constant term
		if r&1 != 0 {
			r = (r^0x04C11DB7)>>1 | 0x80000000
		} else {
			r >>= 1
		}
	}
	return r
}

// xPowLo and xPowHi bound the powers of x the kernels' constants use.
const xPowLo, xPowHi = -512, 8*256 + 63

// xPowTable returns x^n mod P for n from xPowLo to xPowHi, index n-xPowLo:
// one step from each to the next, where calling xPowMod for each of the
// about 1,000 constants took 0.1 ms at every start of the program.
func xPowTable() []uint32 {
	t := make([]uint32, xPowHi-xPowLo+1)
	r := xPowMod(xPowLo)
	for i := range t {
		t[i] = r
		c := r >> 31
		r <<= 1
		if c != 0 {
			r ^= 0x04C11DB7
		}
	}
	return t
}

// foldBits returns the (lo64, hi64) multipliers that move a 16-byte block
// forward by d bits, from a table of xPowTable.
func foldBits(pow []uint32, d int) (uint64, uint64) {
	return bits.Reverse64(uint64(pow[d+63-xPowLo])), bits.Reverse64(uint64(pow[d-1-xPowLo]))
}

// slicing8 holds the reflected IEEE CRC-32 table and its seven shifts, for
// eight bytes per step: slicing8[t][v] is the CRC state after byte v then t
// zero bytes, from state 0.
var slicing8 [8][256]uint32

func init() {
	pow := xPowTable()
	for j, n := range []int{256, 192, 128, 64} {
		lo, hi := foldBits(pow, 8*n)
		for l := 0; l < 4; l++ {
			foldK[j][2*l], foldK[j][2*l+1] = lo, hi
		}
	}
	for t := range reduceK {
		for l := 0; l < 4; l++ {
			reduceK[t][2*l], reduceK[t][2*l+1] = foldBits(pow, 8*(48-16*l-t)+32)
		}
	}
	top32K = bits.Reverse64(uint64(pow[63-xPowLo]))
	for i := 0; i < 256; i++ {
		c := uint32(i)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = c>>1 ^ 0xEDB88320
			} else {
				c >>= 1
			}
		}
		slicing8[0][i] = c
	}
	for i := 0; i < 256; i++ {
		c := slicing8[0][i]
		for t := 1; t < 8; t++ {
			c = slicing8[0][c&0xFF] ^ c>>8
			slicing8[t][i] = c
		}
	}
}
