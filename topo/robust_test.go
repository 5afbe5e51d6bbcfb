package topo

import (
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// Readers and Parse return an error or a topology for any input, never
// panic, and a topology they return routes every host pair.
func TestReadersNeverPanic(t *testing.T) {
	base := "4 2 3\n2 3\n0 2 1Gbps 1ns 0\n1 3 1Gbps 1ns 0\n2 3 1Gbps 1ns 0\n"
	jsonBase := `{"nodes":[{"name":"h0","kind":"host"},{"name":"s0","kind":"switch"}],"links":[{"a":"h0","b":"s0","rate_bps":1,"delay_ps":0}]}`
	rapid.Check(t, func(rt *rapid.T) {
		mutate := func(s, label string) string {
			b := []byte(s)
			for n := rapid.IntRange(0, 4).Draw(rt, label+"n"); n > 0; n-- {
				i := rapid.IntRange(0, len(b)).Draw(rt, label+"i")
				c := rapid.SampledFrom([]byte("0123456789 \n-.xGbpsnu{}[]\",:")).Draw(rt, label+"c")
				switch rapid.IntRange(0, 2).Draw(rt, label+"op") {
				case 0:
					b = append(b[:i], append([]byte{c}, b[i:]...)...)
				case 1:
					if i < len(b) {
						b = append(b[:i], b[i+1:]...)
					}
				default:
					if i < len(b) {
						b[i] = c
					}
				}
			}
			return string(b)
		}
		if tp, err := ReadNS3(strings.NewReader(mutate(base, "ns3")), "f"); err == nil {
			checkAllPairs(rt, tp)
		}
		if tp, err := ReadJSON(strings.NewReader(mutate(jsonBase, "json")), "f"); err == nil {
			checkAllPairs(rt, tp)
		}
		spec := rapid.SampledFrom([]string{"star:hosts=", "fat-tree:k=", "leaf-spine:leaves=2,spines=2,hosts=", "dragonfly:a=2,p=1,h="}).Draw(rt, "kind") +
			rapid.SampledFrom([]string{"0", "1", "2", "3", "-4", "x", "", "99999999999999999999", "6,k=2"}).Draw(rt, "val")
		if tp, err := Parse(spec, LinkParams{}); err == nil && tp.NumNodes() < 200 {
			checkAllPairs(rt, tp)
		}
	})
}

func BenchmarkFatTree16(b *testing.B) {
	b.ReportAllocs()
	var tp *Topology
	for b.Loop() {
		var err error
		tp, err = FatTree(16, 0, LinkParams{})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(tp.RoutingBytes()), "routing-bytes")
}

func BenchmarkNextHopsECMP(b *testing.B) {
	tp, err := FatTree(16, 0, LinkParams{})
	if err != nil {
		b.Fatal(err)
	}
	hosts, sws := tp.Hosts(), tp.Switches()
	var ft FiveTuple
	i := 0
	for b.Loop() {
		i++
		ft.SrcPort = uint16(i)
		_ = tp.ECMP(sws[i%len(sws)], hosts[i%len(hosts)], ft)
	}
}
