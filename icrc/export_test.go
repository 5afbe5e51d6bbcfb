package icrc

// Generic and vector paths side by side, for tests.
var (
	HaveFold = haveFold
)

// BothPaths returns the ICRC of b (kind "ipv4", "ipv6", "grh" or "lrh2") by
// the portable code and, where the CPU has it, by the vector kernel.
func BothPaths(kind string, b []byte) (generic, vec uint32) {
	var s *shape
	switch kind {
	case "ipv4":
		s = ipv4Shapes[b[0]&0x0F]
	case "ipv6":
		s = ipv6Shape
	case "grh":
		s = grhShape
	case "lrh2":
		s = lrhShape
	}
	generic = finish(s.start, b, s.mask)
	if haveFold {
		vec = ^finish64(fold512(b, s))
	}
	return generic, vec
}
