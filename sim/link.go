package sim

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
)

// Direction is one of the two directions of a Link.
type Direction uint8

const (
	// AtoB is the direction from the link's A port (the first argument of
	// Connect) to its B port.
	AtoB Direction = 0
	// BtoA is the direction from B to A.
	BtoA Direction = 1
)

// String returns "A->B" or "B->A".
func (d Direction) String() string {
	switch d {
	case AtoB:
		return "A->B"
	case BtoA:
		return "B->A"
	}
	return fmt.Sprintf("Direction(%d)", uint8(d))
}

// Reverse returns the other direction.
func (d Direction) Reverse() Direction { return d ^ 1 }

// DropCause says why the network dropped a frame.
type DropCause uint8

const (
	DropLoss        DropCause = iota + 1 // independent random loss (Faults.Loss)
	DropBurst                            // Gilbert-Elliott burst loss (Faults.Burst)
	DropDead                             // the link direction was dead (Link.SetDead)
	DropQueue                            // drop-tail: the output queue was full
	DropNoRoute                          // a switch had no port for the destination
	DropUnconnected                      // sent from a port with no link
	DropBuffer                           // a switch's shared buffer was full (Switch.SetBuffer)
)

// String names the cause.
func (c DropCause) String() string {
	switch c {
	case DropLoss:
		return "loss"
	case DropBurst:
		return "burst"
	case DropDead:
		return "dead"
	case DropQueue:
		return "queue"
	case DropNoRoute:
		return "noroute"
	case DropUnconnected:
		return "unconnected"
	case DropBuffer:
		return "buffer"
	}
	return fmt.Sprintf("DropCause(%d)", uint8(c))
}

// GilbertElliott is a two-state burst-loss model, stepped once per frame.
// In the good state a frame is lost with probability LossGood, in the bad
// state with LossBad; after that decision the state moves good->bad with
// probability PGoodBad, bad->good with PBadGood. With LossBad = 1 and
// LossGood = 0, losses come in bursts of mean length 1/PBadGood separated by
// gaps of mean length 1/PGoodBad. The model starts in the good state.
type GilbertElliott struct {
	PGoodBad float64
	PBadGood float64
	LossBad  float64
	LossGood float64
}

func (g GilbertElliott) enabled() bool { return g.PGoodBad > 0 || g.LossGood > 0 }

// Faults is the fault model of one direction of a link. Every probability is
// per frame, in [0, 1]; the zero Faults is a perfect link. Each fault draws
// from its own PRNG stream (see Network), and only while it is enabled, so
// changing one fault's settings never changes another's decisions.
//
// Faults are decided when a frame has been serialised onto the wire. A frame
// lost to Loss or Burst (or a dead link) is dropped; otherwise it may be
// duplicated, corrupted and delayed, each independently.
type Faults struct {
	// Loss is the probability that a frame is lost, independently of all
	// others.
	Loss float64
	// Burst is Gilbert-Elliott burst loss; the zero value disables it.
	Burst GilbertElliott
	// Reorder is the probability that a frame is held back by an extra
	// delay drawn uniformly from [1ps, ReorderDelay], so that frames sent
	// after it may overtake it.
	Reorder      float64
	ReorderDelay Time
	// Duplicate is the probability that a frame is delivered twice: an
	// exact copy of the frame as sent arrives right after it (same time,
	// later in FIFO order), with the original's reorder delay.
	Duplicate float64
	// Corrupt is the probability that one bit of the frame, chosen
	// uniformly, is flipped. The frame is still delivered: the receiving
	// endpoint's ICRC check is what drops it, as in hardware.
	Corrupt float64
}

// IsProbability reports whether p is a probability: in [0, 1] (NaN is not).
func IsProbability(p float64) bool { return p >= 0 && p <= 1 }

// Validate reports whether every probability is in [0, 1] and the reorder
// delay is usable.
func (f Faults) Validate() error {
	for _, p := range []struct {
		name string
		v    float64
	}{
		{"Loss", f.Loss}, {"Burst.PGoodBad", f.Burst.PGoodBad}, {"Burst.PBadGood", f.Burst.PBadGood},
		{"Burst.LossBad", f.Burst.LossBad}, {"Burst.LossGood", f.Burst.LossGood},
		{"Reorder", f.Reorder}, {"Duplicate", f.Duplicate}, {"Corrupt", f.Corrupt},
	} {
		if !IsProbability(p.v) {
			return fmt.Errorf("sim: fault %s = %v is not a probability in [0, 1]", p.name, p.v)
		}
	}
	if f.ReorderDelay < 0 {
		return errors.New("sim: negative ReorderDelay")
	}
	if f.Reorder > 0 && f.ReorderDelay == 0 {
		return errors.New("sim: Reorder set with a zero ReorderDelay")
	}
	return nil
}

// Counters count what happened to the frames of one direction of a link.
// Drops by Loss, Burst and Dead happen on the wire; queue drops and ECN marks
// happen at the output queue of the port that feeds this direction.
type Counters struct {
	SentFrames, SentBytes           uint64 // put on the wire (each also passed to the Tap)
	DeliveredFrames, DeliveredBytes uint64 // arrived at the far port, duplicates included
	LossDrops                       uint64 // dropped by Faults.Loss
	BurstDrops                      uint64 // dropped by Faults.Burst
	DeadDrops                       uint64 // dropped because the direction was dead
	QueueDrops, QueueDropBytes      uint64 // drop-tail at the feeding port's queue (static or dynamic threshold)
	// (frames a full shared buffer drops are counted by Port.Stats)
	Duplicated                uint64 // extra copies delivered
	Reordered                 uint64 // frames given an extra delay
	Corrupted                 uint64 // frames with a flipped bit
	ECNMarked                 uint64 // frames for which MarkCE reported a mark
	PauseFrames, ResumeFrames uint64 // PFC frames a switch port sent this way
	PausedTime                Time   // time the sending port was paused by PFC (to its last resume), summed over priorities
}

// WireDrops returns the frames dropped on the wire: LossDrops + BurstDrops +
// DeadDrops.
func (c Counters) WireDrops() uint64 { return c.LossDrops + c.BurstDrops + c.DeadDrops }

// LinkConfig sets up a link.
type LinkConfig struct {
	// Bandwidth in bits per second, the same both ways. Required.
	Bandwidth int64
	// Delay is the propagation delay, from the last bit leaving the sender
	// to the last bit arriving at the receiver.
	Delay Time
	// Name identifies the link and seeds its PRNG streams; it must be
	// unique in the network. Empty means "A--B" from the port names.
	Name string
}

// PRNG streams of one link direction, one per fault.
const (
	streamLoss = iota
	streamBurst
	streamReorder
	streamDuplicate
	streamCorrupt
	nStreams
)

type linkDir struct {
	from, to *Port
	faults   Faults
	ge       bool // Burst enabled
	bad      bool // Gilbert-Elliott state
	dead     bool
	c        Counters
	pcg      [nStreams]rand.PCG
	rng      [nStreams]*rand.Rand
}

// Link is a full-duplex point-to-point link between two ports: a bandwidth,
// a propagation delay, and per direction a fault model, a dead switch and
// counters. Frames are serialised by the sending Port; the link delivers
// them to the other port after the propagation delay, or not, as its faults
// decide.
type Link struct {
	net       *Network
	id        int
	name      string
	bandwidth int64
	delay     Time
	psPerByte Time // 8e12/bandwidth when exact, else 0
	dir       [2]linkDir
}

// ID returns the link's index in the network, in order of Connect calls.
func (l *Link) ID() int { return l.id }

// Name returns the link's name.
func (l *Link) Name() string { return l.name }

// A returns the port given first to Connect.
func (l *Link) A() *Port { return l.dir[AtoB].from }

// B returns the port given second to Connect.
func (l *Link) B() *Port { return l.dir[AtoB].to }

// Bandwidth returns the link rate in bits per second.
func (l *Link) Bandwidth() int64 { return l.bandwidth }

// Delay returns the propagation delay.
func (l *Link) Delay() Time { return l.delay }

// TxTime returns the time to serialise n bytes on this link.
func (l *Link) TxTime(n int) Time {
	if l.psPerByte != 0 {
		return Time(n) * l.psPerByte
	}
	return TxTime(n, l.bandwidth)
}

// SetFaults sets the fault model of direction d. It panics if f is not
// valid (see Faults.Validate). The Gilbert-Elliott state is kept.
func (l *Link) SetFaults(d Direction, f Faults) {
	if err := f.Validate(); err != nil {
		panic(err)
	}
	ld := &l.dir[d&1]
	ld.faults = f
	ld.ge = f.Burst.enabled()
}

// Faults returns the fault model of direction d.
func (l *Link) Faults(d Direction) Faults { return l.dir[d&1].faults }

// SetDead makes direction d drop every frame (dead = true), from now on,
// including frames already propagating, or makes it work again.
func (l *Link) SetDead(d Direction, dead bool) { l.dir[d&1].dead = dead }

// SetDeadAt schedules SetDead(d, dead) at time at.
func (l *Link) SetDeadAt(at Time, d Direction, dead bool) {
	a := uint64(d & 1)
	if dead {
		a |= 2
	}
	l.net.eng.Schedule(at, (*linkHandler)(l), 0, a)
}

// Dead reports whether direction d is dead.
func (l *Link) Dead(d Direction) bool { return l.dir[d&1].dead }

// Counters returns the counters of direction d.
func (l *Link) Counters(d Direction) Counters { return l.dir[d&1].c }

// linkHandler runs the events of SetDeadAt.
type linkHandler Link

func (h *linkHandler) Handle(ev Event) {
	(*Link)(h).SetDead(Direction(ev.A&1), ev.A&2 != 0)
}

// seed gives each fault of each direction of the link its own PCG stream,
// derived from the scenario seed and the link's name only: adding links,
// or creating them in another order, does not change this link's draws.
func (l *Link) seed(scenario uint64) {
	h := fnv.New64a()
	h.Write([]byte(l.name))
	name := h.Sum64()
	for d := range l.dir {
		for s := 0; s < nStreams; s++ {
			tag := name ^ uint64(d*nStreams+s+1)*0x9e3779b97f4a7c15
			l.dir[d].pcg[s].Seed(splitmix64(scenario^splitmix64(tag)), splitmix64(tag+scenario))
			l.dir[d].rng[s] = rand.New(&l.dir[d].pcg[s])
		}
	}
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// transmitted runs when frame f has been serialised onto direction d: it
// applies the faults and schedules the arrival (or drops the frame).
func (l *Link) transmitted(now Time, dir Direction, f *Frame) {
	d := &l.dir[dir]
	fa := &d.faults
	var lost, burst, reorder, dup, corrupt bool
	var extra Time
	var bit int
	if fa.Loss > 0 {
		lost = d.rng[streamLoss].Float64() < fa.Loss
	}
	if d.ge {
		r := d.rng[streamBurst]
		p := fa.Burst.LossGood
		if d.bad {
			p = fa.Burst.LossBad
		}
		burst = r.Float64() < p
		if d.bad {
			d.bad = !(r.Float64() < fa.Burst.PBadGood)
		} else {
			d.bad = r.Float64() < fa.Burst.PGoodBad
		}
	}
	if fa.Reorder > 0 {
		r := d.rng[streamReorder]
		if r.Float64() < fa.Reorder {
			reorder = true
			extra = 1 + Time(r.Int64N(int64(fa.ReorderDelay)))
		}
	}
	if fa.Duplicate > 0 {
		dup = d.rng[streamDuplicate].Float64() < fa.Duplicate
	}
	if fa.Corrupt > 0 {
		r := d.rng[streamCorrupt]
		if r.Float64() < fa.Corrupt && len(f.Data) > 0 {
			corrupt = true
			bit = r.IntN(len(f.Data) * 8)
		}
	}
	switch {
	case d.dead:
		l.net.drop(now, l, dir, DropDead, f)
		return
	case lost:
		l.net.drop(now, l, dir, DropLoss, f)
		return
	case burst:
		l.net.drop(now, l, dir, DropBurst, f)
		return
	}
	at := now + l.delay
	if at < now {
		at = MaxTime
	}
	var g *Frame
	if dup {
		g = l.net.allocLike(f)
		d.c.Duplicated++
	}
	if corrupt {
		f.Data[bit>>3] ^= 1 << (bit & 7)
		d.c.Corrupted++
	}
	if reorder {
		at += extra
		if at < now {
			at = MaxTime
		}
		d.c.Reordered++
	}
	to := (*portHandler)(d.to)
	l.net.eng.schedule(at, to, evArrive, 0, f)
	if g != nil {
		l.net.eng.schedule(at, to, evArrive, 0, g)
	}
}

// setRate checks and sets the rate and delay, and the per-byte fast path.
func (l *Link) setRate(bw int64, delay Time) {
	if bw <= 0 {
		panic("sim: Connect: Bandwidth must be positive")
	}
	if delay < 0 {
		panic("sim: Connect: negative Delay")
	}
	l.bandwidth, l.delay = bw, delay
	if 8e12%bw == 0 && 8e12/bw <= math.MaxInt32 {
		l.psPerByte = Time(8e12 / bw)
	}
}
