package sim

import (
	"fmt"
	"hash/fnv"
)

// RED is ECN marking in the style of random early detection, as DCQCN and
// HPCC configure switches (fabric-facts §3), for one priority of one output
// port. It is decided when a frame joins the queue, on q, the bytes already
// waiting in that priority's queue (the frame being serialised is not
// counted): q <= KMin, no mark; KMin < q <= KMax, mark with probability
// PMax*(q-KMin)/(KMax-KMin); q > KMax, always mark. With KMin = KMax = K
// this is a step at K, what PortConfig.ECNThreshold sets. The zero RED
// (KMax 0) marks nothing.
//
// Published settings (fabric-facts §3): DCQCN at 40 Gb/s, KMin 5 KB, KMax
// 200 KB, PMax 0.01; HPCC's ns-3 defaults at 25 Gb/s, KMin 100 KB, KMax
// 400 KB, PMax 0.2, both thresholds scaled with the rate.
type RED struct {
	KMin, KMax int     // bytes, 0 <= KMin <= KMax
	PMax       float64 // mark probability at KMax, in [0, 1]
}

// Validate reports whether the thresholds are ordered and PMax is a
// probability.
func (r RED) Validate() error {
	if r.KMin < 0 || r.KMax < r.KMin {
		return fmt.Errorf("sim: RED thresholds KMin %d, KMax %d: need 0 <= KMin <= KMax", r.KMin, r.KMax)
	}
	if !IsProbability(r.PMax) {
		return fmt.Errorf("sim: RED PMax = %v is not a probability in [0, 1]", r.PMax)
	}
	return nil
}

// SetRED sets the ECN marking of priority prio's queue. It panics if prio
// is outside 0-7 or r is not valid (see RED.Validate). The random draws
// come from one PCG stream per port, seeded from the scenario seed and the
// port's name, and are made only for a q between KMin and KMax: the same
// seed gives the same marks, and adding a port does not change another's.
// SetECNThreshold, called later, replaces it; Config's ECNThreshold is not
// changed by it.
func (p *Port) SetRED(prio int, r RED) {
	if prio < 0 || prio >= NumPriorities {
		panic(fmt.Sprintf("sim: SetRED: priority %d outside 0-7", prio))
	}
	if err := r.Validate(); err != nil {
		panic(err)
	}
	p.setRED(prio, r)
}

// RED returns the ECN marking of priority prio's queue (the zero RED for a
// priority outside 0-7).
func (p *Port) RED(prio int) RED {
	if prio < 0 || prio >= NumPriorities {
		return RED{}
	}
	return p.red[prio]
}

func (p *Port) setRED(prio int, r RED) {
	p.red[prio] = r
	if r.KMax > 0 {
		p.redOn |= 1 << prio
	} else {
		p.redOn &^= 1 << prio
	}
}

// ecn marks frame f, joining priority prio's queue, which holds q > KMin
// bytes, if RED decides to. It is kept out of line: the common case, below
// KMin, then costs enqueue no saved registers.
//
//go:noinline
func (p *Port) ecn(prio uint8, q int, f *Frame) {
	if p.mark(prio, q) {
		if mark := p.net.MarkCE; mark != nil && mark(f.Data) {
			p.link.dir[p.dir].c.ECNMarked++
		}
	}
}

// mark decides whether a frame joining priority prio's queue, which holds
// q > KMin bytes, is marked.
func (p *Port) mark(prio uint8, q int) bool {
	r := &p.red[prio&(NumPriorities-1)]
	if q > r.KMax {
		return true
	}
	u := float64(p.pcg.Uint64()>>11) * 0x1p-53
	return u < r.PMax*float64(q-r.KMin)/float64(r.KMax-r.KMin)
}

// seed gives the port its PCG stream for ECN marking, derived from the
// scenario seed and the port's name only.
func (p *Port) seed(scenario uint64) {
	h := fnv.New64a()
	h.Write([]byte(p.name))
	tag := h.Sum64() ^ 0x2545f4914f6cdd1d // apart from the links' streams
	p.pcg.Seed(splitmix64(scenario^splitmix64(tag)), splitmix64(tag+scenario))
}
