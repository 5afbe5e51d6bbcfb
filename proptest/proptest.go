// Package proptest gives rapid generators for every rocekit header's Fields,
// for valid transport packets of every opcode and for whole frames, so users
// can property-test their own code against wire-exact input.
//
//	rapid.Check(t, func(t *rapid.T) {
//		f := proptest.BTHFields().Draw(t, "bth")
//		...
//	})
package proptest

import "pgregory.net/rapid"

// Uint24 draws a value that fits 24 bits (QPNs, PSNs, EE contexts, MSNs),
// biased towards the edges 0 and 0xFFFFFF.
func Uint24() *rapid.Generator[uint32] {
	return rapid.OneOf(rapid.Uint32Range(0, 0xFFFFFF), rapid.SampledFrom([]uint32{0, 1, 0x7FFFFF, 0x800000, 0xFFFFFE, 0xFFFFFF}))
}

// Bits draws a value that fits n bits (n <= 8).
func Bits(n uint) *rapid.Generator[uint8] {
	return rapid.Uint8Range(0, uint8(1<<n-1))
}
