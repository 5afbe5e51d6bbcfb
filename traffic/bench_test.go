package traffic

import "testing"

func BenchmarkSample(b *testing.B) {
	b.ReportAllocs()
	r := newRNG(1)
	var sum int64
	for b.Loop() {
		sum += WebSearch.Sample(r.float())
	}
	_ = sum
}

// A k=8 fat-tree's permutation (128 hosts, htsim's reference experiment).
func BenchmarkPermutation128(b *testing.B) {
	b.ReportAllocs()
	s := Spec{Pattern: Permutation, Size: 10_000_000}
	for b.Loop() {
		if _, err := Generate(s, 128, 100e9, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// Poisson WebSearch at load 0.3 on 320 hosts at 100 Gb/s (HPCC's fat.txt)
// for 10 ms: about 7,000 flows.
func BenchmarkPoisson320(b *testing.B) {
	b.ReportAllocs()
	s := Spec{Pattern: Poisson, Load: 0.3, CDF: "websearch", Duration: 10e9}
	var n int
	for b.Loop() {
		flows, err := Generate(s, 320, 100e9, 1)
		if err != nil {
			b.Fatal(err)
		}
		n = len(flows)
	}
	b.ReportMetric(float64(n), "flows")
}
