// Package be holds the small bit and byte helpers every header view uses:
// 24-bit big-endian fields and single-bit flags.
package be

// Uint24 reads a 24-bit big-endian value from b[0:3].
func Uint24(b []byte) uint32 { return uint32(b[0])<<16 | uint32(b[1])<<8 | uint32(b[2]) }

// PutUint24 writes the low 24 bits of v big-endian into b[0:3].
func PutUint24(b []byte, v uint32) { b[0], b[1], b[2] = byte(v>>16), byte(v>>8), byte(v) }

// Bit returns 1 for true and 0 for false.
func Bit(v bool) uint8 {
	if v {
		return 1
	}
	return 0
}

// SetFlag sets or clears the bits of mask in *b.
func SetFlag(b *byte, mask byte, v bool) {
	if v {
		*b |= mask
	} else {
		*b &^= mask
	}
}
