package cc

import (
	"testing"

	"github.com/rocekit/rocekit/sim"
)

func algorithms(t testing.TB) []Algorithm {
	d, err := NewDCQCN(mustPreset("paper"), 100e9)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewDCQCN(mustPreset("ns3-mellanox"), 100e9)
	if err != nil {
		t.Fatal(err)
	}
	hp, _ := HPCCPreset("ns3")
	h, err := NewHPCC(hp, 100e9, 10*sim.Microsecond)
	if err != nil {
		t.Fatal(err)
	}
	n, _ := NewNone(100e9)
	return []Algorithm{d, m, h, n}
}

func mustPreset(name string) DCQCNParams {
	p, err := Preset(name)
	if err != nil {
		panic(err)
	}
	return p
}

// A NIC's per-packet calls, through the interface, allocate nothing.
func TestZeroAllocs(t *testing.T) {
	ints := []INTHop{{RateBps: 100e9}, {RateBps: 100e9}}
	for _, a := range algorithms(t) {
		now := sim.Time(0)
		seq := uint64(0)
		allocs := testing.AllocsPerRun(1000, func() {
			now += 300 * sim.Nanosecond
			a.OnSent(now, 4096)
			seq += 4096
			if seq%(64*4096) == 0 {
				a.OnCNP(now)
			}
			ints[0].TS, ints[1].TS = now, now
			ints[0].TxBytes += 4096
			ints[1].TxBytes += 4096
			ints[1].QLen = int(seq % 50000)
			a.OnAck(now, seq, ints)
			if w := a.NextWake(); w <= now {
				a.Advance(w)
			}
			_ = a.Rate()
			_ = a.Window()
		})
		if allocs != 0 {
			t.Errorf("%T: %v allocations per packet", a, allocs)
		}
	}
	np, _ := NewNP(50 * sim.Microsecond)
	now := sim.Time(0)
	if allocs := testing.AllocsPerRun(1000, func() { now += sim.Microsecond; np.OnCE(now) }); allocs != 0 {
		t.Errorf("NP: %v allocations", allocs)
	}
}

// BenchmarkPacket is the per-packet work of one QP: OnSent, a CNP every
// 64 packets, an ACK with two INT hops, Advance when due.
func BenchmarkPacket(b *testing.B) {
	for _, a := range algorithms(b) {
		b.Run(name(a), func(b *testing.B) {
			ints := []INTHop{{RateBps: 100e9}, {RateBps: 100e9}}
			now := sim.Time(0)
			seq := uint64(0)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				now += 330 * sim.Nanosecond
				a.OnSent(now, 4096)
				seq += 4096
				if i%64 == 0 {
					a.OnCNP(now)
				}
				ints[0].TS, ints[1].TS = now, now
				ints[0].TxBytes += 4096
				ints[1].TxBytes += 4096
				ints[1].QLen = i % 50000
				a.OnAck(now, seq, ints)
				if w := a.NextWake(); w <= now {
					a.Advance(w)
				}
				_ = a.Rate()
			}
		})
	}
}

func name(a Algorithm) string {
	switch x := a.(type) {
	case *DCQCN:
		if x.p.RateDecreaseInterval > 0 {
			return "DCQCN-mellanox"
		}
		return "DCQCN-paper"
	case *HPCC:
		return "HPCC"
	}
	return "None"
}
