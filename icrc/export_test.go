package icrc

// Generic and vector paths side by side, for tests.
var (
	HaveFold = haveFold
)

// BothPaths returns the ICRC of b (kind "ipv4", "ipv6", "grh" or "lrh2") by
// the portable code and, where the CPU has it, by the vector kernel.
func BothPaths(kind string, b []byte) (generic, vec uint32) {
	var m []byte
	var s *shape
	start := uint32(seed)
	switch kind {
	case "ipv4":
		ihl := b[0] & 0x0F
		m, s = ipv4Masks[ihl], ipv4Shapes[ihl]
	case "ipv6":
		m, s = ipv6Mask[:], ipv6Shape
	case "grh":
		m, s = grhMask[:], grhShape
	case "lrh2":
		m, s, start = lrhMask[:], lrhShape, 0
	}
	generic = finish(start, b, m)
	if haveFold {
		vec = vector(b, s)
	}
	return generic, vec
}
