package icrc

// Kernels lists the vector kernels this CPU runs, the fastest first: an
// AVX-512 CPU runs the AVX2 kernel too, and every CPU with a vector kernel
// runs the SSE one.
func Kernels() []string {
	var ks []string
	switch kernel {
	case kernel512:
		ks = append(ks, "avx512", "avx256")
	case kernel256:
		ks = append(ks, "avx256")
	}
	if haveSSEKernel() {
		ks = append(ks, "sse128")
	}
	return ks
}

// SumIPv4With returns the ICRC of a RoCEv2/IPv4 packet b by the named path:
// "portable" or one of Kernels.
func SumIPv4With(path string, b []byte) uint32 {
	s := ipv4Shapes[b[0]&0x0F]
	switch path {
	case "avx512":
		return ^finish64(fold512(b, s))
	case "avx256":
		return ^fold256(b, s)
	case "sse128":
		return ^fold128(b, s)
	}
	return finish(s.start, b, s.mask)
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
		case "sse128":
			vec = append(vec, ^fold128(b, s))
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
