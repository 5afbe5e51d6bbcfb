package roce

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/rocekit/rocekit/atomiceth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/internal/heapsize"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/reth"
	"github.com/rocekit/rocekit/sim"
)

// DefaultMemoryLimit is the most memory New lets a simulation take (by
// MemoryEstimate) unless Options.MaxMemoryBytes says otherwise. It is fixed
// rather than taken from the machine, so that a scenario is accepted or
// refused the same way everywhere.
const DefaultMemoryLimit = 8 << 30

// Memory is an estimate of the memory a simulation takes at its peak, in
// bytes (each figure saturates at math.MaxInt64).
type Memory struct {
	Connections int64 // connections (QP pairs)
	// State is the connections' state: each conn, its two QPs with their
	// responder resources and queues, its memory-region table, its pending
	// events and its places in the NICs' send rings.
	State int64
	// Buffers are the connections' buffers (requester buffers, responder
	// regions, receive buffers) and the data pattern.
	Buffers int64
	// Frames are the frames that can be in flight at once: what the
	// connections can have outstanding, or what the links and the switch's
	// queues hold, whichever is less.
	Frames int64
	// Base is the Go runtime, the program and the simulator's fixed part.
	Base int64
	// Total is the sum of State, Buffers, Frames and Base.
	Total int64
	// Key is the JSON key path (e.g. qps[0].count) of the value most of
	// the memory follows: the one to lower to need less.
	Key string
}

// memoryBase is Memory.Base: the runtime and the program (a few MiB of
// resident memory) and the heap the garbage collector lets grow before its
// first collection (4 MiB).
const memoryBase = 8 << 20

// Per-object sizes of a connection's state, from the types.
const (
	// eventBytes is a pending event as the engine keeps it: an Event and
	// its Handler.
	eventBytes = int64(unsafe.Sizeof(struct {
		sim.Event
		sim.Handler
	}{}))
	// A connection's Memory is a Go map holding one region: the map's
	// header (six words) and one group of eight slots with their control
	// word.
	mapHeader = 6 * 8
	mapGroup  = 8 + 8*int64(unsafe.Sizeof(struct {
		k uint32
		v *rc.MR
	}{}))
	// frameHeaders is the most header bytes of a frame the simulator
	// sends: Ethernet, IPv4, UDP, BTH, the larger extended header and the
	// ICRC; minFrame is the smallest frame (an ACK without its AETH).
	frameHeaders = packet.EthernetLen + packet.IPv4Len + packet.UDPLen + bth.Len + max(reth.Len, atomiceth.Len) + icrc.Len
	minFrame     = packet.EthernetLen + packet.IPv4Len + packet.UDPLen + bth.Len + icrc.Len
	maxFrame     = frameHeaders + 4096 // at the largest MTU
)

// frameBytes is the memory of a pooled frame with a payload of n bytes:
// its buffer (sim.Network.AllocFrameAligned rounds it up to 512 bytes after
// room to align the payload) and the Frame.
func frameBytes(n int) float64 {
	return math.Ceil(float64(frameHeaders+63+max(n, 0))/512)*512 + float64(unsafe.Sizeof(sim.Frame{}))
}

// pow2 is the smallest power of two at least n (and at least least), at
// most 2^62.
func pow2(n, least int64) int64 {
	c := least
	for c < n && c < 1<<62 {
		c *= 2
	}
	return c
}

// MemoryEstimate estimates the memory a simulation of the scenario takes at
// its peak, from the sizes of the simulator's types and of what its
// constructors allocate. New refuses a scenario whose estimate is over its
// limit before it allocates anything. The scenario should be valid
// (Validate); for one that is not, the estimate means little, but it is
// still computed without failing.
func (sc *Scenario) MemoryEstimate() Memory {
	type part struct{ n, state, bufs, frames float64 } // per connection but n
	qps := sc.QPs
	if sc.IsFabric() {
		if p, err := sc.plan(); err == nil {
			qps = p.qps
		}
	}
	parts := make([]part, len(qps))
	var conns, state, bufs, connFrames, maxMsg float64
	perByte := 0.0 // frame memory per byte a link or queue holds
	for i := range qps {
		spec := &qps[i]
		g := newGenerator(&spec.Work, 0)
		n := float64(max(spec.count(), 0))
		q := int64(max(spec.outstanding(), 0))
		recv := int64(0)
		if g.hasSend {
			recv = int64(max(spec.recvDepth(), 0))
		}
		cfg := rc.Config{MaxRdAtomic: spec.ord(), MaxDestRdAtomic: spec.ird()}
		// The requester's QP holds the posted WRs; the responder's the
		// receive WQEs and a response per request at most (ACKs coalesce).
		st := float64(unsafe.Sizeof(conn{})) + float64(heapsize.Alloc(mapHeader, true)+heapsize.Alloc(mapGroup, true)) +
			float64(rc.SlabFootprint(cfg, int(q), 0, 0)) + float64(rc.SlabFootprint(cfg, 0, int(recv), int(q+1)))
		if q > postInline {
			st += float64(heapsize.Alloc(q*int64(unsafe.Sizeof(sim.Time(0))), false))
		}
		if g.hasSend {
			st += float64(heapsize.Alloc(pow2(q, 8)*int64(unsafe.Sizeof(int64(0))), false)) // conn.sends
		}
		st += float64(heapsize.Alloc(int64(len(g.wrs))*int64(unsafe.Sizeof(wrItem{})), false))
		// Each QP end is in its NIC's ring at most once (a power-of-two
		// ring: up to two slots) and has a wake-up pending; a delayed
		// re-post of a receive buffer is one more event.
		st += 2*2*float64(unsafe.Sizeof((*qpEnd)(nil))) + 2*float64(eventBytes)
		if spec.RecvRepostDelayNS > 0 {
			st += float64(recv) * float64(eventBytes)
		}
		buf := bufferBytes(spec, g)
		// Frames: a connection has at most its outstanding WRs' packets
		// (within its PSN window) and a response to each in flight.
		mtu := max(spec.mtu(), 1)
		pay := min(g.maxSize, mtu)
		pkts := float64(q) * math.Ceil(float64(g.maxSize)/float64(mtu))
		if spec.Window > 0 {
			pkts = min(pkts, float64(spec.Window))
		}
		fr := pkts*frameBytes(pay) + float64(q)*frameBytes(0)
		perByte = max(perByte, frameBytes(0)/minFrame, frameBytes(pay)/float64(frameHeaders+pay))

		parts[i] = part{n, st, buf, fr}
		conns += n
		state += n * st
		bufs += n * buf
		connFrames += n * fr
		maxMsg = max(maxMsg, float64(g.maxSize))
	}
	bufs += maxMsg + patSpan // the pattern
	frames, share := connFrames, 1.0
	if nb := sc.networkBytes() * perByte; nb < connFrames {
		frames, share = nb, nb/connFrames
	}
	key, worst := "qps", -1.0
	for i, p := range parts {
		other := p.bufs + p.frames*share
		if c := p.n * (p.state + other); c > worst {
			worst = c
			key = fmt.Sprintf("qps[%d].", i) + qps[i].memoryKey(p.state, other)
			if sc.IsFabric() {
				key = "traffic"
				if other > p.state {
					key = "flow.outstanding"
				}
			}
		}
	}
	m := Memory{
		Connections: saturate(conns), State: saturate(state), Buffers: saturate(bufs),
		Frames: saturate(frames), Base: memoryBase, Key: key,
	}
	m.Total = saturate(memoryBase + state + bufs + frames)
	return m
}

// memoryKey names the value of spec that most of a connection's memory
// follows: the count when its state outweighs its buffers and frames, else
// the receive depth, the outstanding WRs or the message size.
func (spec *QPSpec) memoryKey(state, bufs float64) string {
	switch g := newGenerator(&spec.Work, 0); {
	case state >= bufs:
		return "count"
	case g.hasSend && spec.recvDepth() > spec.outstanding():
		return "recv_depth"
	case spec.outstanding() > 1:
		return "outstanding"
	case len(spec.Work.WRs) > 0:
		j := 0
		for k, w := range spec.Work.WRs {
			if w.Size > spec.Work.WRs[j].Size {
				j = k
			}
		}
		return fmt.Sprintf("work.wrs[%d].size", j)
	case spec.Work.SizeMax > spec.Work.Size:
		return "work.size_max"
	}
	return "work.size"
}

// networkBytes bounds the bytes the network holds at once: what each link
// direction has on the wire (its rate times its delay, and the reordering
// delay), a frame at each end, and what the switch's port queues hold; +Inf
// with a switch whose queues are unlimited.
func (sc *Scenario) networkBytes() float64 {
	var b float64
	if sc.IsFabric() {
		p, err := sc.plan()
		if err != nil {
			return 0
		}
		buf := DefaultBufferBytes
		if sc.Fabric != nil && sc.Fabric.BufferBytes > 0 {
			buf = sc.Fabric.BufferBytes
		}
		b = float64(len(p.topo.Switches())) * float64(buf)
		for _, l := range p.topo.Links() {
			b += 2 * (float64(l.RateBps)*l.Delay.Seconds()/8 + 2*maxFrame)
		}
		return b
	}
	for _, l := range sc.Links {
		delay := max(l.DelayNS, 0)
		for _, f := range []*FaultSpec{l.Faults, l.AToB, l.BToA} {
			if f != nil && f.Reorder > 0 {
				delay += max(f.ReorderDelayNS, float64(10*sim.Microsecond/sim.Nanosecond))
			}
		}
		b += 2 * (max(l.BandwidthGbps, 0)*delay/8 + 2*maxFrame)
	}
	if w := sc.Switch; w != nil {
		if w.QueueBytes <= 0 {
			return math.Inf(1)
		}
		b += float64(len(sc.Links)) * (float64(w.QueueBytes) + maxFrame)
	}
	return b
}

// saturate converts a byte count to int64, at most math.MaxInt64.
func saturate(v float64) int64 {
	if !(v < math.MaxInt64) {
		return math.MaxInt64
	}
	return int64(v)
}

// MemoryError is New's error for a scenario that would take more memory
// than the limit.
type MemoryError struct {
	Estimate Memory
	Limit    int64
}

// Need describes the estimate against the limit, e.g. "the scenario needs
// about 50.51 GiB (8388599 connections x 6.25 KiB + buffers 512.1 MiB +
// frames 415.9 KiB + runtime 8 MiB), more than the 8 GiB limit".
func (e *MemoryError) Need() string {
	m := &e.Estimate
	per := 0.0
	if m.Connections > 0 {
		per = float64(m.State) / float64(m.Connections)
	}
	conns := "connections"
	if m.Connections == 1 {
		conns = "connection"
	}
	return fmt.Sprintf("the scenario needs about %s (%d %s x %s + buffers %s + frames %s + runtime %s), more than the %s limit",
		humanBytes(float64(m.Total)), m.Connections, conns, humanBytes(per), humanBytes(float64(m.Buffers)),
		humanBytes(float64(m.Frames)), humanBytes(float64(m.Base)), humanBytes(float64(e.Limit)))
}

func (e *MemoryError) Error() string {
	return "scenario: " + e.Need() + "; lower " + e.Estimate.Key
}

// CheckMemory returns a *MemoryError if the scenario's MemoryEstimate is
// over limit bytes (DefaultMemoryLimit for limit <= 0). New checks it with
// Options.MaxMemoryBytes; a program may check earlier, before it prepares
// anything else for the run.
func (sc *Scenario) CheckMemory(limit int64) error {
	if limit <= 0 {
		limit = DefaultMemoryLimit
	}
	if m := sc.MemoryEstimate(); m.Total > limit {
		return &MemoryError{Estimate: m, Limit: limit}
	}
	return nil
}
