package traffic

import (
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"

	"github.com/rocekit/rocekit/sim"
)

// Generate returns the flows s describes on hosts hosts (2 .. MaxHosts)
// whose links run at hostRateBps bits per second (used by poisson only;
// it must then be positive). seed seeds the random patterns unless s
// carries its own (HasSeed). The result is the same for the same
// arguments, and sorted by start time, then source, then destination.
//
// A spec that asks for more than MaxFlows flows is refused before
// anything is allocated: for poisson the refusal is on the expected count,
// hosts x Duration / mean inter-arrival time, and should the draws exceed
// MaxFlows all the same, Generate stops with an error.
// A poisson spec naming a CDF file reads it (LookupCDF).
func Generate(s Spec, hosts int, hostRateBps int64, seed uint64) ([]Flow, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	fail := func(f string, a ...any) ([]Flow, error) {
		return nil, fmt.Errorf("traffic: %s on %d hosts: %s", s, hosts, fmt.Sprintf(f, a...))
	}
	if hosts < 2 || hosts > MaxHosts {
		return fail("want 2 .. %d hosts", MaxHosts)
	}
	if s.HasSeed {
		seed = s.Seed
	}
	r := newRNG(seed)
	switch s.Pattern {
	case Permutation:
		return permutation(hosts, s.Size, s.Start, r), nil
	case Incast:
		if s.N >= hosts {
			return fail("n=%d senders need at least %d hosts", s.N, s.N+1)
		}
		if s.Dst >= hosts {
			return fail("dst=%d is not a host (0 .. %d)", s.Dst, hosts-1)
		}
		flows := make([]Flow, s.N)
		for i := range flows {
			flows[i] = Flow{Src: (s.Dst + 1 + i) % hosts, Dst: s.Dst, Size: s.Size, Start: s.Start}
		}
		slices.SortFunc(flows, compareFlows)
		return flows, nil
	case AllToAll:
		n := int64(hosts) * int64(hosts-1) // hosts <= MaxHosts: no overflow
		if n > MaxFlows {
			return fail("%d x %d = %d flows, more than MaxFlows (%d)", hosts, hosts-1, n, MaxFlows)
		}
		flows := make([]Flow, 0, n)
		for i := 0; i < hosts; i++ {
			for j := 0; j < hosts; j++ {
				if i != j {
					flows = append(flows, Flow{Src: i, Dst: j, Size: s.Size, Start: s.Start})
				}
			}
		}
		return flows, nil
	case Incasts:
		if hostRateBps <= 0 {
			return fail("host rate %d b/s, want > 0", hostRateBps)
		}
		if s.N >= hosts {
			return fail("n=%d senders need at least %d hosts", s.N, s.N+1)
		}
		return incasts(s, hosts, hostRateBps, r)
	default:
		if hostRateBps <= 0 {
			return fail("host rate %d b/s, want > 0", hostRateBps)
		}
		cdf, err := LookupCDF(s.CDF)
		if err != nil {
			return nil, err
		}
		return poisson(s, hosts, hostRateBps, cdf, r)
	}
}

// permutation draws a derangement uniformly at random among all
// derangements of hosts elements, by rejection: a Fisher-Yates shuffle from
// the last position down fixes position i at step i, and the shuffle starts
// over as soon as a position holds itself (about e = 2.72 tries on
// average). csg-htsim's gen_permutation.py instead shuffles sources and
// destinations and swaps each destination equal to its source with the
// next one: always a derangement, but not a uniform one (on 4 hosts, 3 of
// the 9 derangements come out with probability 56/576 and 6 with 68/576).
func permutation(hosts int, size int64, start sim.Time, r *rng) []Flow {
	flows := make([]Flow, hosts)
	for {
		for i := range flows {
			flows[i] = Flow{Src: i, Dst: i, Size: size, Start: start}
		}
		ok := true
		for i := hosts - 1; i >= 0 && ok; i-- {
			j := int(r.intn(uint64(i + 1)))
			flows[i].Dst, flows[j].Dst = flows[j].Dst, flows[i].Dst
			ok = flows[i].Dst != i
		}
		if ok {
			return flows
		}
	}
}

// MeanInterArrival returns the mean time between one host's poisson flow
// arrivals: mean flow size x 8 / (load x host rate) (fabric-facts §6, HPCC
// ns-3's traffic_gen), in picoseconds as a float64.
func MeanInterArrival(meanSize, load float64, hostRateBps int64) float64 {
	return meanSize * 8e12 / (load * float64(hostRateBps))
}

// poisson draws each host's arrivals in turn, host 0 first, from one
// random stream: exponential gaps with mean MeanInterArrival (rounded to
// whole picoseconds), keeping arrivals before s.Duration; each flow's
// destination is uniform among the other hosts, its size cdf.Sample of a
// uniform draw.
func poisson(s Spec, hosts int, rate int64, cdf CDF, r *rng) ([]Flow, error) {
	gap := MeanInterArrival(cdf.Mean(), s.Load, rate)
	expect := float64(hosts) * float64(s.Duration) / gap
	if !(expect <= MaxFlows) {
		return nil, fmt.Errorf("traffic: %s on %d hosts at %d b/s: about %.4g flows expected (mean size %.6g bytes, mean inter-arrival %v per host), more than MaxFlows (%d)",
			s, hosts, rate, expect, cdf.Mean(), sim.Time(math.Round(gap)), MaxFlows)
	}
	flows := make([]Flow, 0, int(min(expect+4*math.Sqrt(expect)+16, MaxFlows)))
	for src := 0; src < hosts; src++ {
		t := sim.Time(0)
		for {
			g := math.Round(r.exp() * gap)
			if g >= float64(s.Duration-t) {
				break
			}
			t += sim.Time(g)
			if len(flows) == MaxFlows {
				return nil, fmt.Errorf("traffic: %s on %d hosts at %d b/s: drew more than MaxFlows (%d) flows, %.4g expected", s, hosts, rate, MaxFlows, expect)
			}
			dst := int(r.intn(uint64(hosts - 1)))
			if dst >= src {
				dst++
			}
			flows = append(flows, Flow{Src: src, Dst: dst, Size: cdf.Sample(r.float()), Start: t})
		}
	}
	slices.SortFunc(flows, compareFlows)
	return flows, nil
}

// incasts draws incast events as one Poisson process over the fabric:
// each event sends Size bytes from each of N senders to one receiver, all
// starting at the event's time; the receiver is uniform among the hosts
// and the senders are N distinct others, uniform (a partial Fisher-Yates
// shuffle). Events come at the rate that makes their bytes Load of all the
// hosts' capacity: hosts x rate x Load / (8 x N x Size) a second, as
// HPCC's experiments add "2% incast" to a Poisson load (fabric-facts §6).
func incasts(s Spec, hosts int, rate int64, r *rng) ([]Flow, error) {
	bytesPerEvent := float64(s.N) * float64(s.Size)
	gap := bytesPerEvent * 8e12 / (s.Load * float64(hosts) * float64(rate)) // ps between events
	expect := float64(s.Duration) / gap * float64(s.N)
	if !(expect <= MaxFlows) {
		return nil, fmt.Errorf("traffic: %s on %d hosts at %d b/s: about %.4g flows expected, more than MaxFlows (%d)",
			s, hosts, rate, expect, MaxFlows)
	}
	flows := make([]Flow, 0, int(min(expect+4*math.Sqrt(expect)+float64(s.N), MaxFlows)))
	pool := make([]int, hosts)
	t := sim.Time(0)
	for {
		g := math.Round(r.exp() * gap)
		if g >= float64(s.Duration-t) {
			break
		}
		t += sim.Time(g)
		if len(flows)+s.N > MaxFlows {
			return nil, fmt.Errorf("traffic: %s on %d hosts at %d b/s: drew more than MaxFlows (%d) flows, %.4g expected", s, hosts, rate, MaxFlows, expect)
		}
		dst := int(r.intn(uint64(hosts)))
		for i := range pool {
			pool[i] = i
		}
		pool[dst], pool[hosts-1] = pool[hosts-1], pool[dst]
		for i := 0; i < s.N; i++ { // senders from pool[0 .. hosts-2]
			j := i + int(r.intn(uint64(hosts-1-i)))
			pool[i], pool[j] = pool[j], pool[i]
			flows = append(flows, Flow{Src: pool[i], Dst: dst, Size: s.Size, Start: t})
		}
	}
	slices.SortFunc(flows, compareFlows)
	return flows, nil
}

// rng is the random stream of Generate: PCG-DXSM (math/rand/v2's PCG,
// whose output for a seed is fixed by its algorithm), with uniform
// integers, floats and exponentials derived here so the stream for a seed
// does not depend on how the standard library derives them.
type rng struct{ src *rand.PCG }

func newRNG(seed uint64) *rng {
	return &rng{src: rand.NewPCG(seed, 0x7472616666696373)} // "traffics"
}

// intn returns a uniform integer in [0, n), n > 0, by Lemire's
// multiply-and-reject method.
func (r *rng) intn(n uint64) uint64 {
	hi, lo := bits.Mul64(r.src.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.src.Uint64(), n)
		}
	}
	return hi
}

// float returns a uniform float64 in [0, 1) with 53 random bits.
func (r *rng) float() float64 { return float64(r.src.Uint64()>>11) * 0x1p-53 }

// exp returns an exponential variate with mean 1: -ln(1 - U).
func (r *rng) exp() float64 { return -math.Log(1 - r.float()) }
