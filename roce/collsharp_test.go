package roce

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/topo"
	"github.com/stretchr/testify/require"
)

// The SHARP runs below: 8 ranks on one switch, 100 Gb/s host links, a 16
// MiB float32 all-reduce in 32 chunks of 512 KiB; the aggregation node's
// link runs at the switch's 800 Gb/s.
const (
	sharpCount = 4 << 20 // elements: 16 MiB
	sharpChunk = 512 << 10
	sharpHdr   = 4154.0 / 4096 // a 4096-byte packet's headers on the wire
	sharpLink  = 12.5e9        // a host link, bytes per second
)

func runSharpUnits(t *testing.T, sc *Scenario, streams int, reduceBps float64) float64 {
	t.Helper()
	r, err := RunCollective(sc, CollConfig{Ranks: 8, Op: coll.AllReduce, Sharp: true, DType: coll.Float32, RedOp: coll.Sum,
		Count: sharpCount, SharpStreams: streams, SharpReduceBps: reduceBps}, Options{})
	require.NoError(t, err)
	require.Zero(t, r.Wrong, "streams %d, %g B/s", streams, reduceBps)
	require.True(t, r.Summary.AllSucceeded(), "streams %d, %g B/s", streams, reduceBps)
	return r.Time.Seconds()
}

// TestCollSharpReduceRate: one aggregation unit reducing at R bytes per
// second (coll.SharpConfig). A chunk's 8 pieces take 8d, d = 512 KiB / R,
// one after the other. Two bounds, hand-computed:
//
//   - link bound: the ranks' links as without reduction cost (T0, measured
//     with R = 0), plus the last chunk's 8 reductions, which start only
//     when its pieces have all come: T0 + 8d;
//   - reduction bound: the first chunk lands after t1 = 512 KiB x headers /
//     12.5 GB/s = 42.5 us, the unit then reduces 32 chunks back to back,
//     and the last result takes t1 again down to the ranks: 2 t1 + 32 x 8d.
//
// The time is the larger of the two within 1%: at R = 200 and 100 GB/s
// (8d = 21 and 42 us, at or above the aggregation link's 100 GB/s) the
// links bound it, at 50 and 25 GB/s the reduction, and it grows as R falls
// (measured 1.407, 1.428, 1.448, 2.772, 5.456 ms). Two units at 25 GB/s
// reduce as fast as one at 50 GB/s, the second starting a chunk (t1)
// later: 3 t1 + 16 x 8d = 2.812 ms, within 1% (measured 2.814 ms).
func TestCollSharpReduceRate(t *testing.T) {
	sc := collScenario(t, `{"seed":7,"topology":"star:hosts=8","traffic":"incast:n=1,size=1KB"}`)
	t0 := runSharpUnits(t, sc, 1, 0)
	t1 := sharpChunk * sharpHdr / sharpLink
	prev := t0
	for _, gbps := range []float64{200, 100, 50, 25} {
		r := gbps * 1e9
		d := sharpChunk / r
		link, reduction := t0+8*d, 2*t1+32*8*d
		got := runSharpUnits(t, sc, 1, r)
		t.Logf("one unit at %3.0f GB/s: %.4f ms; link bound %.4f ms, reduction bound %.4f ms", gbps, got*1e3, link*1e3, reduction*1e3)
		require.InEpsilon(t, max(link, reduction), got, 0.01, "%g GB/s", gbps)
		require.Greater(t, got, prev, "%g GB/s: slower reduction, longer all-reduce", gbps)
		prev = got
	}
	want := 3*t1 + 16*8*sharpChunk/25e9
	two := runSharpUnits(t, sc, 2, 25e9)
	t.Logf("two units at 25 GB/s: %.4f ms, hand-computed %.4f ms", two*1e3, want*1e3)
	require.InEpsilon(t, want, two, 0.01)
}

// skewStar writes star:hosts=8 with host h7's link at half rate (50 Gb/s)
// as a topology file and returns the scenario on it.
func skewStar(t *testing.T) *Scenario {
	t.Helper()
	var b topo.Builder
	for i := 0; i < 8; i++ {
		b.AddHost(fmt.Sprintf("h%d", i))
	}
	s := b.AddSwitch("s0")
	for i := 0; i < 8; i++ {
		rate := int64(100e9)
		if i == 7 {
			rate = 50e9
		}
		b.Connect(topo.NodeID(i), s, rate, sim.Microsecond)
	}
	tp, err := b.Build()
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "skew.json")
	f, err := os.Create(path)
	require.NoError(t, err)
	require.NoError(t, topo.WriteJSON(f, tp))
	require.NoError(t, f.Close())
	return collScenario(t, `{"seed":8,"topology":"`+path+`","traffic":"incast:n=1,size=1KB"}`)
}

// TestCollSharpStreamsSkew: rank 7's link at half rate, so its pieces come
// every s = 512 KiB x headers / 6.25 GB/s = 85.1 us and a chunk stays open
// until its piece has come; units reduce at 12.5 GB/s (d = 41.9 us, a
// chunk 8d = 335.5 us, the 7 fast pieces first, in arrival order). Hand-
// computed, with t1 = 42.5 us when the first fast pieces land:
//
//   - one unit: the chunks one after the other, 8d each, then the last
//     result down to rank 7: t1 + 32 x 8d + s = 10.86 ms;
//   - two units: chunks 2j on one from t1, 2j+1 on the other a chunk later;
//     chunk 30 is done at t1 + 16 x 8d, and rank 7's link then carries
//     chunks 30 and 31 down: t1 + 16 x 8d + 2s = 5.58 ms;
//   - eight units keep up with rank 7 (8d < 8s), but chunk 0 is done only
//     at t1 + 8d, and from then rank 7's link carries the 32 results down
//     back to back: t1 + 8d + 32 s = 3.10 ms.
//
// Each within 1%; fewer streams, longer all-reduce, and eight still more
// than with free reduction (2.81 ms, rank 7's link alone).
func TestCollSharpStreamsSkew(t *testing.T) {
	sc := skewStar(t)
	free := runSharpUnits(t, sc, 1, 0)
	t1 := sharpChunk * sharpHdr / sharpLink
	s := 2 * t1
	d := sharpChunk / 12.5e9
	want := map[int]float64{1: t1 + 32*8*d + s, 2: t1 + 16*8*d + 2*s, 8: t1 + 8*d + 32*s}
	got := map[int]float64{}
	for _, streams := range []int{1, 2, 8} {
		got[streams] = runSharpUnits(t, sc, streams, 12.5e9)
		t.Logf("rank 7 at half rate, %d units at 12.5 GB/s: %.4f ms, hand-computed %.4f ms", streams, got[streams]*1e3, want[streams]*1e3)
		require.InEpsilon(t, want[streams], got[streams], 0.01, "%d units", streams)
	}
	t.Logf("free reduction: %.4f ms", free*1e3)
	require.Greater(t, got[1], got[2])
	require.Greater(t, got[2], got[8])
	require.Greater(t, got[8], free)
}

// TestCollSharpUnitsConfig: a bad SharpStreams or SharpReduceBps is
// refused naming the field; the defaults (two units, free reduction) give
// the time of a unit per chunk.
func TestCollSharpUnitsConfig(t *testing.T) {
	sc := collScenario(t, `{"seed":9,"topology":"star:hosts=4","traffic":"incast:n=1,size=1KB"}`)
	cfg := CollConfig{Ranks: 4, Op: coll.AllReduce, Sharp: true, DType: coll.Float32, RedOp: coll.Sum, Count: 100000, ChunkSize: 8192}
	for _, c := range []struct {
		streams int
		bps     float64
		want    string
	}{
		{-1, 0, "CollConfig.SharpStreams -1"},
		{0, -5, "CollConfig.SharpReduceBps -5"},
		{0, math.Inf(1), "CollConfig.SharpReduceBps +Inf"},
		{0, math.NaN(), "CollConfig.SharpReduceBps NaN"},
	} {
		c2 := cfg
		c2.SharpStreams, c2.SharpReduceBps = c.streams, c.bps
		_, err := RunCollective(sc, c2, Options{})
		require.ErrorContains(t, err, c.want)
	}
	var times []sim.Time
	for _, streams := range []int{0, 1, 1 << 20} {
		c2 := cfg
		c2.SharpStreams = streams
		r, err := RunCollective(sc, c2, Options{})
		require.NoError(t, err)
		require.Zero(t, r.Wrong)
		times = append(times, r.Time)
	}
	require.Equal(t, times[2], times[0], "free reduction: two units as a unit per chunk")
	require.Equal(t, times[2], times[1], "free reduction: one unit as a unit per chunk")
}
