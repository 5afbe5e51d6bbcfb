package traffic

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/rocekit/rocekit/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func mustParse(t testing.TB, s string) Spec {
	t.Helper()
	sp, err := Parse(s)
	require.NoError(t, err)
	return sp
}

// A permutation is a derangement: every host sends exactly one flow and
// receives exactly one, never from itself; flows are sorted, sized and
// timed as asked, and the same seed gives the same flows.
func TestPermutationIsDerangement(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		hosts := rapid.IntRange(2, 3000).Draw(rt, "hosts")
		seed := rapid.Uint64().Draw(rt, "seed")
		s := Spec{Pattern: Permutation, Size: 10_000_000, Start: sim.Time(rapid.Int64Range(0, 1e12).Draw(rt, "start"))}
		flows, err := Generate(s, hosts, 100e9, seed)
		if err != nil {
			rt.Fatal(err)
		}
		if len(flows) != hosts {
			rt.Fatalf("%d flows on %d hosts", len(flows), hosts)
		}
		recv := make([]int, hosts)
		for i, f := range flows {
			if f.Src != i || f.Dst == f.Src || f.Dst < 0 || f.Dst >= hosts || f.Size != s.Size || f.Start != s.Start {
				rt.Fatalf("flow %d: %+v", i, f)
			}
			recv[f.Dst]++
		}
		for h, n := range recv {
			if n != 1 {
				rt.Fatalf("host %d receives %d flows", h, n)
			}
		}
		again, _ := Generate(s, hosts, 1, seed)
		if !slices.Equal(flows, again) {
			rt.Fatal("same seed, different flows")
		}
	})
}

// chi2Crit is the 0.999 quantile of the chi-square distribution with k
// degrees of freedom by the Wilson-Hilferty approximation (within 1% of
// the tabled value for k >= 8: 26.32 against 26.12 for k = 8).
func chi2Crit(k int) float64 {
	const z = 3.0902 // standard normal 0.999 quantile
	a := 2 / (9 * float64(k))
	return float64(k) * math.Pow(1-a+z*math.Sqrt(a), 3)
}

// Each of the 9 derangements of 4 hosts comes up equally often over 9,000
// seeds: a chi-square test with 8 degrees of freedom at the 0.1% level
// (critical value 26.12 in the tables). htsim's shuffle-and-swap, which
// draws 3 of them with probability 56/576 and 6 with 68/576, would fail it:
// its expected statistic is 3 x 125^2/1000 + 6 x 62.5^2/1000 = 70.3.
func TestPermutationUniform(t *testing.T) {
	counts := map[[4]int]int{}
	const seeds = 9000
	for seed := range uint64(seeds) {
		flows, err := Generate(Spec{Pattern: Permutation, Size: 1}, 4, 1, seed)
		require.NoError(t, err)
		var p [4]int
		for i, f := range flows {
			p[i] = f.Dst
		}
		counts[p]++
	}
	require.Len(t, counts, 9)
	chi := 0.0
	for _, n := range counts {
		d := float64(n) - seeds/9
		chi += d * d / (seeds / 9)
	}
	assert.Less(t, chi, 26.12, "counts %v", counts)
	// Distinct seeds give distinct permutations of many hosts.
	a, _ := Generate(Spec{Pattern: Permutation, Size: 1}, 128, 1, 1)
	b, _ := Generate(Spec{Pattern: Permutation, Size: 1}, 128, 1, 2)
	assert.NotEqual(t, a, b)
	// A spec's own seed wins over Generate's.
	c, _ := Generate(Spec{Pattern: Permutation, Size: 1, Seed: 2, HasSeed: true}, 128, 1, 1)
	assert.Equal(t, b, c)
}

func TestIncast(t *testing.T) {
	flows, err := Generate(mustParse(t, "incast:n=15,size=2MB"), 128, 100e9, 0)
	require.NoError(t, err)
	require.Len(t, flows, 15)
	for i, f := range flows {
		assert.Equal(t, Flow{Src: i + 1, Dst: 0, Size: 2_000_000, Start: 0}, f)
	}
	// dst=6 on 8 hosts, 4 senders: hosts 7, 0, 1, 2 (after the receiver,
	// wrapping), sorted by source.
	flows, err = Generate(mustParse(t, "incast:n=4,size=1KiB,dst=6,start=3us"), 8, 100e9, 0)
	require.NoError(t, err)
	want := []Flow{{0, 6, 1024, 3 * sim.Microsecond}, {1, 6, 1024, 3 * sim.Microsecond}, {2, 6, 1024, 3 * sim.Microsecond}, {7, 6, 1024, 3 * sim.Microsecond}}
	assert.Equal(t, want, flows)
	// n = hosts-1: everyone else sends.
	flows, err = Generate(mustParse(t, "incast:n=7,size=1,dst=3"), 8, 1, 0)
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 4, 5, 6, 7}, srcs(flows))

	_, err = Generate(mustParse(t, "incast:n=8,size=1"), 8, 1, 0)
	assert.EqualError(t, err, "traffic: incast:n=8,size=1 on 8 hosts: n=8 senders need at least 9 hosts")
	_, err = Generate(mustParse(t, "incast:n=2,size=1,dst=8"), 8, 1, 0)
	assert.EqualError(t, err, "traffic: incast:n=2,size=1,dst=8 on 8 hosts: dst=8 is not a host (0 .. 7)")
}

func srcs(flows []Flow) []int {
	out := make([]int, len(flows))
	for i, f := range flows {
		out[i] = f.Src
	}
	return out
}

func TestAllToAll(t *testing.T) {
	flows, err := Generate(mustParse(t, "all-to-all:size=1MB"), 3, 100e9, 0)
	require.NoError(t, err)
	assert.Equal(t, []Flow{{0, 1, 1e6, 0}, {0, 2, 1e6, 0}, {1, 0, 1e6, 0}, {1, 2, 1e6, 0}, {2, 0, 1e6, 0}, {2, 1, 1e6, 0}}, flows)
	flows, err = Generate(mustParse(t, "all-to-all:size=1MB"), 128, 100e9, 0)
	require.NoError(t, err)
	assert.Len(t, flows, 128*127)
	assert.True(t, slices.IsSortedFunc(flows, compareFlows))
	seen := map[[2]int]bool{}
	for _, f := range flows {
		seen[[2]int{f.Src, f.Dst}] = true
		assert.NotEqual(t, f.Src, f.Dst)
	}
	assert.Len(t, seen, 128*127)
	// 3,163 hosts is the first count over MaxFlows: 3,163 x 3,162 =
	// 10,001,406; 3,162 x 3,161 = 9,995,082 fits.
	_, err = Generate(mustParse(t, "all-to-all:size=1"), 10_000, 1, 0)
	assert.EqualError(t, err, "traffic: all-to-all:size=1 on 10000 hosts: 10000 x 9999 = 99990000 flows, more than MaxFlows (10000000)")
	_, err = Generate(mustParse(t, "all-to-all:size=1"), 3163, 1, 0)
	assert.ErrorContains(t, err, "10001406 flows, more than MaxFlows")
}

// With the memory limit checked first, a refused spec allocates almost
// nothing.
func TestLimitsCheckedBeforeAllocating(t *testing.T) {
	s := mustParse(t, "all-to-all:size=1")
	allocs := testing.AllocsPerRun(5, func() { _, _ = Generate(s, 1_000_000, 1, 0) })
	assert.Less(t, allocs, 20.0)
	p := mustParse(t, "poisson:load=1,cdf=fbhadoop,duration=10s")
	var err error
	allocs = testing.AllocsPerRun(5, func() { _, err = Generate(p, 10_000, 100e9, 0) })
	assert.Less(t, allocs, 40.0)
	// Expected count: 10,000 hosts x 10 s / (120,420.75 x 8 / 100e9 s) =
	// 1e5 / 9.63366e-6 = 1.038e10.
	assert.EqualError(t, err, "traffic: poisson:load=1,cdf=fbhadoop,duration=10s on 10000 hosts at 100000000000 b/s: about 1.038e+10 flows expected (mean size 120421 bytes, mean inter-arrival 9.63366us per host), more than MaxFlows (10000000)")
}

func TestGenerateErrors(t *testing.T) {
	for _, tc := range []struct {
		spec  string
		hosts int
		rate  int64
		want  string
	}{
		{"permutation:size=1", 1, 1, "traffic: permutation:size=1 on 1 hosts: want 2 .. 10000000 hosts"},
		{"permutation:size=1", 10_000_001, 1, "on 10000001 hosts: want 2 .. 10000000 hosts"},
		{"all-to-all:size=1", -3, 1, "on -3 hosts: want 2 .. 10000000 hosts"},
		{"poisson:load=0.5,cdf=websearch,duration=1ms", 4, 0, "poisson:load=0.5,cdf=websearch,duration=1ms on 4 hosts: host rate 0 b/s, want > 0"},
		{"poisson:load=0.5,cdf=nope.txt,duration=1ms", 4, 1e9, `cdf "nope.txt" is not websearch or fbhadoop, and not a readable file`},
	} {
		_, err := Generate(mustParse(t, tc.spec), tc.hosts, tc.rate, 0)
		assert.ErrorContains(t, err, tc.want, tc.spec)
	}
	_, err := Generate(Spec{Pattern: Permutation}, 4, 1, 0)
	assert.EqualError(t, err, "traffic: invalid permutation spec: Size 0, want > 0")
}

// secondMoment returns E[S^2] of a piecewise-linear CDF: on a segment the
// size is uniform on [a, b], whose E[S^2] is (a^2 + ab + b^2)/3.
func secondMoment(c CDF) float64 {
	pts := c.Points()
	m := 0.0
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1].Size, pts[i].Size
		m += (a*a + a*b + b*b) / 3 * (pts[i].Percent - pts[i-1].Percent) / 100
	}
	return m
}

// Poisson traffic offers load x rate on every host: over 64 hosts at
// 100 Gb/s for 1 s at load 0.3 (about 140,000 WebSearch flows), the bytes
// offered, the flow count, the mean gap between one host's arrivals and
// the share of gaps above the mean (e^-1 for exponential gaps) each fall
// within 4 standard deviations of their expected values; destinations are
// uniform (chi-square at the 0.1% level) and never the source. The
// standard deviations are of a compound Poisson sum (variance
// lambda T E[S^2]), a Poisson count (variance lambda T), a mean of n
// exponentials (mean / sqrt n), and a binomial share.
func TestPoissonStatistics(t *testing.T) {
	const hosts, rate, load = 64, int64(100e9), 0.3
	for _, tc := range []struct {
		cdf  string
		c    CDF
		dur  string
		secs float64
	}{{"websearch", WebSearch, "1s", 1}, {"fbhadoop", FBHadoop, "50ms", 0.05}} {
		for _, seed := range []uint64{1, 2, 3} {
			name := fmt.Sprintf("%s seed %d", tc.cdf, seed)
			s := mustParse(t, fmt.Sprintf("poisson:load=%v,cdf=%s,duration=%s", load, tc.cdf, tc.dur))
			flows, err := Generate(s, hosts, rate, seed)
			require.NoError(t, err)
			require.True(t, slices.IsSortedFunc(flows, compareFlows), name)

			mean := tc.c.Mean()
			lambdaT := float64(hosts) * load * float64(rate) / 8 / mean * tc.secs // expected flows
			n := float64(len(flows))
			assert.InDelta(t, lambdaT, n, 4*math.Sqrt(lambdaT), "%s: flow count", name)

			var bytes float64
			last := make([]sim.Time, hosts)
			var gapSum float64
			var gaps, above int
			gapMean := MeanInterArrival(mean, load, rate)
			dsts := make([]float64, hosts)
			for _, f := range flows {
				require.NotEqual(t, f.Src, f.Dst)
				require.True(t, f.Start >= 0 && f.Start.Seconds() < tc.secs)
				require.Positive(t, f.Size)
				bytes += float64(f.Size)
				g := float64(f.Start - last[f.Src])
				last[f.Src] = f.Start
				gapSum += g
				gaps++
				if g > gapMean {
					above++
				}
				dsts[f.Dst]++
			}
			offered := load * float64(rate) / 8 * hosts * tc.secs
			assert.InDelta(t, offered, bytes, 4*math.Sqrt(lambdaT*secondMoment(tc.c)), "%s: bytes offered", name)
			assert.InDelta(t, gapMean, gapSum/float64(gaps), 4*gapMean/math.Sqrt(float64(gaps)), "%s: mean gap", name)
			p := math.Exp(-1)
			assert.InDelta(t, p, float64(above)/float64(gaps), 4*math.Sqrt(p*(1-p)/float64(gaps)), "%s: gaps above the mean", name)
			chi := 0.0
			for _, c := range dsts {
				d := c - n/hosts
				chi += d * d / (n / hosts)
			}
			assert.Less(t, chi, chi2Crit(hosts-1), "%s: destinations", name)
		}
	}
}

// Poisson flows depend on the seed only through Generate's arguments; a
// CDF file works like a named one.
func TestPoissonDeterministic(t *testing.T) {
	s := mustParse(t, "poisson:load=0.5,cdf=testdata/tiny_cdf.txt,duration=100us")
	a, err := Generate(s, 16, 25e9, 7)
	require.NoError(t, err)
	b, err := Generate(s, 16, 25e9, 7)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	c, err := Generate(s, 16, 25e9, 8)
	require.NoError(t, err)
	assert.NotEqual(t, a, c)
	// Mean size 1,250 bytes, gap 1,250 x 8 / (0.5 x 25e9) s = 800 ns: 16 x
	// 100 us / 800 ns = 2,000 flows expected, standard deviation 44.7.
	assert.InDelta(t, 2000, len(a), 4*44.7)
	for _, f := range a {
		assert.True(t, f.Size >= 1 && f.Size <= 3000, "%+v", f)
	}
}

// Incast events arrive as a Poisson process at the rate that makes their
// bytes the load asked for: 64 hosts at 100 Gb/s, 2% load, events of 8
// senders x 100 KB over 50 ms carry 0.02 x 64 x 12.5 GB/s x 50 ms = 800 MB,
// 1,000 events (sd about 32: within 4 sd). Every event has N distinct
// senders, none its receiver, all starting together.
func TestIncasts(t *testing.T) {
	s, err := Parse("incasts:n=8,size=100KB,load=0.02,duration=50ms,seed=3")
	require.NoError(t, err)
	require.Equal(t, "incasts:n=8,size=100KB,load=0.02,duration=50ms,seed=3", s.String())
	flows, err := Generate(s, 64, 100e9, 1)
	require.NoError(t, err)
	events := map[sim.Time][]Flow{}
	for _, f := range flows {
		events[f.Start] = append(events[f.Start], f)
	}
	require.InDelta(t, 1000, len(events), 4*32)
	dsts := map[int]int{}
	for at, ev := range events {
		require.Len(t, ev, 8, "event at %v", at)
		seen := map[int]bool{}
		for _, f := range ev {
			require.Equal(t, ev[0].Dst, f.Dst)
			require.NotEqual(t, f.Dst, f.Src)
			require.False(t, seen[f.Src], "sender twice in one event")
			seen[f.Src] = true
			require.Equal(t, int64(100000), f.Size)
			require.Less(t, f.Start, 50*sim.Millisecond)
		}
		dsts[ev[0].Dst]++
	}
	require.Greater(t, len(dsts), 55, "receivers spread over the hosts")
	again, err := Generate(s, 64, 100e9, 99)
	require.NoError(t, err)
	require.Equal(t, flows, again, "seed= fixes the draws")
	_, err = Generate(Spec{Pattern: Incasts, N: 64, Size: 1, Load: 0.1, Duration: 1}, 64, 100e9, 1)
	require.ErrorContains(t, err, "n=64 senders need at least 65 hosts")
}
