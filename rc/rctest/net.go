// Package rctest connects two rc.QPs through a deterministic simulated
// network, for tests and quick experiments: each direction has a delay, an
// optional per-packet serialisation time and seeded random drop, duplicate
// and reorder decisions, and a Filter hook for scripted ones. Time advances
// from event to event: packet arrivals and the QPs' wake-up times.
//
// Every packet goes through real bytes: the sender's packet.Fields is
// encoded (plus 4 zero bytes in the ICRC slot) and the receiver gets it
// back from packet.Packet.Decode. Buffers and the event queue are reused,
// so a loss-free steady state allocates nothing.
package rctest

import (
	"fmt"
	"math/rand/v2"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// Side names one end: A or B.
type Side uint8

// The two ends.
const (
	A Side = 0
	B Side = 1
)

func (s Side) String() string {
	if s == A {
		return "a"
	}
	return "b"
}

// Peer is the other end.
func (s Side) Peer() Side { return 1 - s }

// Link is one direction of the network.
type Link struct {
	Delay sim.Time // propagation delay
	Gap   sim.Time // serialisation time per packet; 0 sends a burst at once

	// Probabilities of the random decisions, each in [0, 1].
	Drop, Dup, Reorder float64
	// ReorderDelay is the largest extra delay of a reordered packet (a
	// random amount up to it is added); 0 means 4 x Delay.
	ReorderDelay sim.Time
}

// Verdict is what the network does with a packet.
type Verdict uint8

// Verdicts. Pass (from a Filter) leaves the decision to the random link.
const (
	Pass Verdict = iota
	Deliver
	Drop
	Duplicate
)

func (v Verdict) String() string {
	return [...]string{"pass", "deliver", "drop", "duplicate"}[v]
}

// EventKind says what an Event reports.
type EventKind uint8

// Event kinds.
const (
	Sent      EventKind = iota // a QP sent Packet; Verdict says what the link did
	Completed                  // a QP produced Completion
	TimedOut                   // a QP's local ACK timer expired and it retried
)

// Event is reported to Net.Trace.
type Event struct {
	Time       sim.Time
	Kind       EventKind
	Side       Side           // the sending or completing QP
	Packet     *packet.Fields // Sent: valid during the call only
	Verdict    Verdict        // Sent: Deliver, Drop or Duplicate
	Completion rc.Completion  // Completed
}

type flight struct {
	at  sim.Time
	seq uint64
	to  Side
	buf []byte
}

// BufSize is the size of a packet buffer: BTH, the largest header set,
// 4096 payload bytes, pad and ICRC.
const BufSize = 4096 + 128

// Net is two QPs and the links between them.
type Net struct {
	QP   [2]*rc.QP
	Link [2]Link // Link[A] carries a->b, Link[B] b->a
	Now  sim.Time

	// Filter, if set, decides the fate of each sent packet before the
	// random link does; returning Pass lets the link decide.
	Filter func(from Side, f *packet.Fields) Verdict
	// Trace, if set, sees every packet sent, completion and timeout.
	Trace func(*Event)
	// Completions collects each QP's completions; a test may reset them.
	Completions [2][]rc.Completion
	// Delivered counts packets decoded and given to a QP; Lost those dropped.
	Delivered, Lost uint64

	rng     *rand.Rand
	q       []flight
	seq     uint64
	pool    [][]byte
	scratch packet.Fields
	pkt     packet.Packet
	busy    [2]sim.Time
	timeout [2]uint64
	ev      Event
}

// New connects a and b; seed drives the random link decisions.
func New(a, b *rc.QP, seed uint64) *Net {
	return &Net{QP: [2]*rc.QP{a, b}, rng: rand.New(rand.NewPCG(seed, seed^0x9E3779B97F4A7C15))}
}

// Rand is the network's seeded random source, for tests that want more
// deterministic randomness.
func (n *Net) Rand() *rand.Rand { return n.rng }

func (n *Net) trace(e *Event) {
	if n.Trace != nil {
		n.Trace(e)
	}
}

// Pump takes every packet the QPs have ready now and puts it on the links,
// and collects completions.
func (n *Net) Pump() {
	for s := A; s <= B; s++ {
		for n.QP[s].NextPacket(rc.Time(n.Now), &n.scratch) {
			n.transmit(s, &n.scratch)
		}
	}
	n.collect()
}

func (n *Net) collect() {
	for s := A; s <= B; s++ {
		q := n.QP[s]
		if q.PendingCompletions() == 0 {
			continue
		}
		k := len(n.Completions[s])
		n.Completions[s] = q.AppendCompletions(n.Completions[s])
		if n.Trace != nil {
			for _, c := range n.Completions[s][k:] {
				n.ev = Event{Time: n.Now, Kind: Completed, Side: s, Completion: c}
				n.trace(&n.ev)
			}
		}
	}
}

func (n *Net) transmit(from Side, f *packet.Fields) {
	l := &n.Link[from]
	v := Pass
	if n.Filter != nil {
		v = n.Filter(from, f)
	}
	reorder := false
	if v == Pass {
		v = Deliver
		switch {
		case l.Drop > 0 && n.rng.Float64() < l.Drop:
			v = Drop
		case l.Dup > 0 && n.rng.Float64() < l.Dup:
			v = Duplicate
		}
		reorder = l.Reorder > 0 && n.rng.Float64() < l.Reorder
	}
	if n.Trace != nil {
		n.ev = Event{Time: n.Now, Kind: Sent, Side: from, Packet: f, Verdict: v}
		n.trace(&n.ev)
	}
	dep := max(n.Now, n.busy[from])
	n.busy[from] = dep + l.Gap
	if v == Drop {
		n.Lost++
		return
	}
	copies := 1
	if v == Duplicate {
		copies = 2
	}
	for i := 0; i < copies; i++ {
		buf := n.getBuf()
		k, err := f.Encode(buf)
		if err != nil {
			panic(fmt.Sprintf("rctest: encode %s: %v", f.BTH.Opcode, err))
		}
		clear(buf[k : k+4]) // ICRC slot: not our concern here
		at := dep + l.Gap + l.Delay
		if reorder || i > 0 {
			d := l.ReorderDelay
			if d == 0 {
				d = 4 * l.Delay
			}
			if d > 0 {
				at += sim.Time(n.rng.Int64N(int64(d) + 1))
			}
		}
		n.push(flight{at: at, to: from.Peer(), buf: buf[:k+4]})
	}
}

func (n *Net) getBuf() []byte {
	if k := len(n.pool); k > 0 {
		b := n.pool[k-1]
		n.pool = n.pool[:k-1]
		return b[:cap(b)]
	}
	return make([]byte, BufSize)
}

// Heap of flights ordered by (at, seq).
func (n *Net) less(i, j int) bool {
	a, b := &n.q[i], &n.q[j]
	return a.at < b.at || a.at == b.at && a.seq < b.seq
}

func (n *Net) push(f flight) {
	n.seq++
	f.seq = n.seq
	n.q = append(n.q, f)
	for i := len(n.q) - 1; i > 0; {
		p := (i - 1) / 2
		if !n.less(i, p) {
			break
		}
		n.q[i], n.q[p] = n.q[p], n.q[i]
		i = p
	}
}

func (n *Net) pop() flight {
	top := n.q[0]
	last := len(n.q) - 1
	n.q[0] = n.q[last]
	n.q[last] = flight{}
	n.q = n.q[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(n.q) && n.less(l, m) {
			m = l
		}
		if r < len(n.q) && n.less(r, m) {
			m = r
		}
		if m == i {
			break
		}
		n.q[i], n.q[m] = n.q[m], n.q[i]
		i = m
	}
	return top
}

// InFlight is the number of packets on the links.
func (n *Net) InFlight() int { return len(n.q) }

// NextEvent returns the time of the next arrival or QP wake-up.
func (n *Net) NextEvent() (sim.Time, bool) {
	t, ok := sim.Time(0), false
	if len(n.q) > 0 {
		t, ok = n.q[0].at, true
	}
	for s := A; s <= B; s++ {
		if w, wok := n.QP[s].NextWake(); wok && (!ok || sim.Time(w) < t) {
			t, ok = sim.Time(w), true
		}
	}
	return t, ok
}

// Step pumps, then advances to the next event and handles it: one packet
// arrival, or the wake-ups due. It returns false when nothing is left to
// happen.
func (n *Net) Step() bool {
	n.Pump()
	t, ok := n.NextEvent()
	if !ok {
		return false
	}
	if t > n.Now {
		n.Now = t
	}
	if len(n.q) > 0 && n.q[0].at <= n.Now {
		f := n.pop()
		if err := n.pkt.Decode(f.buf); err != nil {
			panic(fmt.Sprintf("rctest: decode: %v", err))
		}
		n.QP[f.to].Receive(rc.Time(n.Now), &n.pkt)
		n.Delivered++
		n.pool = append(n.pool, f.buf)
	}
	n.collect()
	for s := A; s <= B; s++ {
		q := n.QP[s]
		if w, wok := q.NextWake(); wok && sim.Time(w) <= n.Now {
			q.Tick(rc.Time(n.Now))
		}
		if to := q.Stats().Timeouts; to != n.timeout[s] {
			n.timeout[s] = to
			if n.Trace != nil {
				n.ev = Event{Time: n.Now, Kind: TimedOut, Side: s}
				n.trace(&n.ev)
			}
		}
	}
	n.Pump()
	return true
}

// Run steps until nothing is left to happen or the next event is after
// until. It reports whether the network went quiet.
func (n *Net) Run(until sim.Time) bool {
	for {
		n.Pump()
		t, ok := n.NextEvent()
		if !ok {
			return true
		}
		if t > until {
			return false
		}
		n.Step()
	}
}

// RunUntil steps until done returns true (checked after every step), the
// network goes quiet or time passes limit. It reports whether done did.
func (n *Net) RunUntil(done func() bool, limit sim.Time) bool {
	for !done() {
		t, ok := n.NextEvent()
		if !ok {
			n.Pump()
			if t, ok = n.NextEvent(); !ok {
				return done()
			}
		}
		if t > limit {
			return false
		}
		n.Step()
	}
	return true
}
