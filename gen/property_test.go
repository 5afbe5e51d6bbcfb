package gen

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/roce"
)

// Any scenario, any mix of faults at any rates, any seed: generation never
// fails; the input stream is the source with the faulted frames changed,
// removed or added and every other frame unchanged and in order; each
// faulted frame differs from its source frame only where its fault says;
// the outputs are what an independent replay into rc gives, each after
// the input that caused it.
func TestPropertyFaults(t *testing.T) {
	encaps := []packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1, packet.IBLocal, packet.IBGlobal}
	ops := []string{"write", "send", "read", "atomic", "mix"}
	rapid.Check(t, func(rt *rapid.T) {
		sc, err := roce.ParseScenario([]byte(fmt.Sprintf(`{"seed": %d, "hosts": [{"name": "a"}, {"name": "b"}],
		  "links": [{"a": "a", "b": "b", "bandwidth_gbps": %d, "delay_ns": 300}],
		  "qps": [{"from": "a", "to": "b", "mtu": %d, "outstanding": %d, "sq_psn": %d, "work": {"op": %q, "count": %d, "size": 1, "size_max": %d}}]}`,
			rapid.Uint64().Draw(rt, "seed"), rapid.SampledFrom([]int{10, 100, 400}).Draw(rt, "gbps"),
			rapid.SampledFrom([]int{256, 1024, 4096}).Draw(rt, "mtu"), rapid.IntRange(1, 8).Draw(rt, "outstanding"),
			rapid.SampledFrom([]int{0, 16777200, 8388607}).Draw(rt, "sq_psn"),
			rapid.SampledFrom(ops).Draw(rt, "op"), rapid.IntRange(1, 12).Draw(rt, "count"), rapid.IntRange(1, 5000).Draw(rt, "size_max"))))
		require.NoError(rt, err)
		e := rapid.SampledFrom(encaps).Draw(rt, "encap")
		src, err := FromScenario(sc, ScenarioOptions{Encap: e, MemInit: MemInit(rapid.IntRange(0, 1).Draw(rt, "init"))})
		require.NoError(rt, err)
		var fs []FaultSpec
		for _, k := range rapid.SliceOfNDistinct(rapid.SampledFrom(Kinds()), 0, 6, func(k Kind) Kind { return k }).Draw(rt, "kinds") {
			if k == WrongQKey || k == BadVCRC && !isIB(e) {
				continue
			}
			fs = append(fs, FaultSpec{Kind: k, Rate: rapid.Float64Range(0.01, 1).Draw(rt, "rate"), At: -1})
		}
		opt := Options{Seed: rapid.Uint64().Draw(rt, "fault seed"), Faults: fs}
		g := collectR(rt, src, opt)

		// Stream shape: unfaulted frames are the source's, in order.
		removed, added := 0, 0
		for _, f := range g.res.Faults {
			switch {
			case f.Kind.removes():
				removed++
			case f.Kind == Duplicate || f.Kind == GhostACK:
				added++
			}
		}
		require.Equal(rt, len(src.Frames)-removed+added, len(g.in))
		next := 0
		for i := range g.in {
			in := &g.in[i]
			if in.Fault != nil {
				continue
			}
			for next < len(src.Frames) && in.Source != next {
				next++
			}
			require.Less(rt, next, len(src.Frames), "input %d out of source order", i)
			require.Equal(rt, src.Frames[next].Data, in.Data, "input %d", i)
			next++
		}
		// Faulted frames: only the declared bytes changed.
		for _, f := range g.res.Faults {
			if f.Frame < 0 || f.Kind == Duplicate || f.Kind == Reorder || f.Kind == GhostACK || f.Kind == Truncate || f.Kind == MiddleWithoutFirst {
				continue
			}
			orig, got := src.Frames[f.Source].Data, g.in[f.Frame].Data
			require.Equal(rt, len(orig), len(got))
			fr, _ := decodeT(src, got)
			require.NotNil(rt, fr.Network(), "%s frame decodes", f.Kind)
			l, ok := frameLayout(fr)
			require.True(rt, ok)
			for b := range got {
				if got[b] == orig[b] {
					continue
				}
				in := b >= f.Offset && b < f.Offset+f.Size ||
					(f.ICRC == ICRCRecomputed || f.ICRC == ICRCCorrupted) && b >= l.icrc && b < l.icrc+4 ||
					l.vcrc >= 0 && b >= l.vcrc && b < l.vcrc+2 || f.IPChecksum && (b == l.l3+10 || b == l.l3+11)
				require.True(rt, in, "%s changed byte %d outside %s", f.Kind, b, f.Field)
			}
		}
		// Outputs: contiguous per input, in time order, after their cause.
		n := 0
		for i := range g.in {
			require.Equal(rt, n, g.in[i].FirstOut)
			for k := 0; k < g.in[i].NumOut; k++ {
				o := &g.out[n+k]
				require.Equal(rt, i, o.Cause)
				require.GreaterOrEqual(rt, o.Time, g.in[i].Time)
			}
			n += g.in[i].NumOut
			if i > 0 {
				require.GreaterOrEqual(rt, g.in[i].Time, g.in[i-1].Time+src.DUT.txTime(len(g.in[i-1].Data)), "inputs never overlap")
			}
		}
		require.Equal(rt, n, len(g.out))
		for i := 1; i < len(g.out); i++ {
			require.GreaterOrEqual(rt, g.out[i].Time, g.out[i-1].Time+src.DUT.txTime(len(g.out[i-1].Data)), "outputs never overlap")
		}
	})
}

// collectR is collect for rapid.
func collectR(rt *rapid.T, src *Source, opt Options) *got {
	g := &got{}
	res, err := Generate(src, opt, SinkFunc(func(f *Frame) error {
		c := *f
		c.Data = append([]byte(nil), f.Data...)
		if f.Stream == In {
			g.in = append(g.in, c)
		} else {
			g.out = append(g.out, c)
		}
		return nil
	}))
	require.NoError(rt, err)
	g.res = res
	return g
}

// The same property's replay half, on fixed sources of every
// encapsulation with every fault at a high rate: the independent replay
// agrees with the generator frame by frame.
func TestReplayAgreesUnderFaults(t *testing.T) {
	for _, e := range []packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1, packet.IBLocal, packet.IBGlobal} {
		t.Run(e.String(), func(t *testing.T) {
			src := mixSourceEncap(t, e)
			for seed := uint64(1); seed <= 4; seed++ {
				var fs []FaultSpec
				for _, k := range Kinds() {
					if k != WrongQKey && (k != BadVCRC || isIB(e)) {
						fs = append(fs, FaultSpec{Kind: k, Rate: 0.05, At: -1})
					}
				}
				g := collect(t, src, Options{Seed: seed, Faults: fs})
				replayCheck(t, src, g)
			}
		})
	}
}
