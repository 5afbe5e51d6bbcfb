package icrc

// Kernels lists the vector kernels this CPU runs: "avx512" runs "avx256"
// too, since AVX-512 CPUs have AVX2.
func Kernels() []string {
	switch kernel {
	case kernel512:
		return []string{"avx512", "avx256"}
	case kernel256:
		return []string{"avx256"}
	}
	return nil
}

// Paths returns the ICRC of b (kind "ipv4", "ipv6", "grh" or "lrh2") by the
// portable code and by each kernel of Kernels, in that order.
func Paths(kind string, b []byte) (generic uint32, vec []uint32) {
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
	for _, k := range Kernels() {
		switch k {
		case "avx512":
			vec = append(vec, ^finish64(fold512(b, s)))
		case "avx256":
			vec = append(vec, ^fold256(b, s))
		}
	}
	return generic, vec
}

// XPowTableMatches reports whether every entry of xPowTable equals
// xPowMod's, the slow definition.
func XPowTableMatches() bool {
	t := xPowTable()
	for i, v := range t {
		if v != xPowMod(i+xPowLo) {
			return false
		}
	}
	return true
}

// BarrettK returns fold256's Barrett constants: mu, then P.
func BarrettK() (mu, p uint64) { return barrettK[0], barrettK[1] }
