package icrc

// Kernels lists the vector kernels this CPU runs, by Kernel's names, the
// fastest first: an AVX-512 CPU runs the AVX2 kernel too, and every CPU
// with a vector kernel runs the SSE one.
func Kernels() []string {
	var ks []string
	for k := kernel; k > kernelNone; k-- {
		if k > kernel128 || haveSSEKernel() {
			ks = append(ks, kernelNames[k])
		}
	}
	return ks
}

// kernelNamed returns the kernel with the given name.
func kernelNamed(name string) int {
	for k, n := range kernelNames {
		if n == name {
			return k
		}
	}
	panic("icrc: no kernel named " + name)
}

// SumIPv4By returns a function computing the ICRC of a RoCEv2/IPv4 packet
// by the named path: "portable" or one of Kernels.
func SumIPv4By(path string) func(b []byte) uint32 {
	k := kernelNamed(path)
	return func(b []byte) uint32 { return sumBy(k, b, ipv4Shapes[b[0]&0x0F]) }
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
	generic = sumBy(kernelNone, b, s)
	for _, k := range Kernels() {
		vec = append(vec, sumBy(kernelNamed(k), b, s))
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

// BarrettK returns the Barrett constants of fold256 and fold128: mu, then P.
func BarrettK() (mu, p uint64) { return barrettK[0], barrettK[1] }
