package sim

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"unsafe"

	"github.com/rocekit/rocekit/internal/ring"
)

// Endpoint is what a Host hands every arriving frame to — for rocekit, an RC
// queue pair's transport, which checks the ICRC itself.
//
// frame is the network's buffer and is valid only during the call: the
// endpoint may read and modify it, but must copy whatever it keeps. It may
// send frames (Host.Send copies its argument, so sending frame itself is
// fine) and schedule events.
type Endpoint interface {
	Receive(now Time, frame []byte)
}

// TxNotifier is an Endpoint that wants to know when its host's port has
// finished serialising a frame: a NIC that hands the port one frame at a
// time and sends the next when the wire is free. TxDone runs at the end of
// the port's end-of-transmission event, after the frame has been given to
// the link and the port's next queued frame (if any) has started, so the
// port is idle when its queue was empty. It saves the NIC an event of its
// own for the same instant.
type TxNotifier interface {
	TxDone(now Time)
}

// EndpointFunc adapts a function to Endpoint.
type EndpointFunc func(now Time, frame []byte)

// Receive calls f(now, frame).
func (f EndpointFunc) Receive(now Time, frame []byte) { f(now, frame) }

// Frame is a frame buffer from the network's pool, for sending without a copy:
// get one with Network.AllocFrame, fill Data, and pass it to Host.SendFrame,
// which takes ownership. Data may be shortened but must not be replaced by
// another slice.
//
// A frame may also carry in-band network telemetry beside its bytes
// (SetCollectINT, SetINT, INT): records held in the frame itself, so that
// carrying them allocates nothing. A frame from the pool carries none.
type Frame struct {
	Data    []byte
	buf     []byte
	dst     int
	next    *Frame
	in      *Port // switch port it arrived by, while it is in a switch with PFC or a shared buffer
	inUse   bool
	prio    uint8 // priority, from Network.Classify when a host sent it
	collect bool  // switches with INT on append records (SetCollectINT)
	nINT    uint8 // records in hops
	hops    [MaxINTHops]INTHop
}

// PoolStats describes the network's frame pool.
type PoolStats struct {
	Frames int    // frames allocated so far; grows only when all are in use
	InUse  int    // frames held by queues, the wire, or the caller
	Grows  uint64 // times a pooled buffer was too small and was replaced
}

// Event kinds of the network's own handlers.
const (
	evTxDone uint32 = iota // a port finished serialising a frame
	evArrive               // a frame reached a port
	evPause                // a PFC pause (XOFF) reached a port
	evResume               // a PFC resume (XON) reached a port
)

// Network is a set of hosts and switches joined by links, driven by an
// Engine. It owns the frames in flight: a frame buffer comes from the
// network's pool when a host sends, and returns to it when the frame is
// dropped or after the receiving endpoint's Receive returns, so that a
// network in steady state allocates nothing.
//
// Randomness is deterministic: each fault of each direction of each link draws
// from its own PCG stream (math/rand/v2), seeded from the scenario seed and
// the link's name. The same topology, seed and sends give the same frames at
// the same times, always; adding a link or enabling a fault on one link does
// not change the decisions on another.
//
// The hook fields may be set at any time; nil disables them.
type Network struct {
	// Classify gives the priority (0-7) of a frame a host sends, once, when
	// Host.Send or SendFrame queues it; the frame keeps it at every hop: it
	// chooses the frame's output queue on every port and its PFC class in
	// every switch. Nil puts every frame in priority 0. A result above 7
	// is a bug in the hook and panics.
	Classify func(frame []byte) uint8
	// MarkCE is called for a frame joining an output queue when the
	// port's ECN marking (Port.SetRED, Port.SetECNThreshold) decides to
	// mark it. It should set the frame's ECN field to CE (the RoCE layer
	// knows where the IPv4 TOS byte is) and report whether it did; a frame
	// that is not ECN-capable is left alone and reported false. Nil marks
	// nothing.
	MarkCE func(frame []byte) bool
	// Tap is called for every frame put on the wire, when its first bit
	// leaves the sending port, with the link's ID and the direction — before
	// faults, so a capture shows what was sent. frame is valid only during
	// the call.
	Tap func(now Time, link int, dir Direction, frame []byte)
	// OnDrop is called for every frame the network drops, with the cause;
	// link is the link the frame was sent on or arrived by (-1 for
	// DropUnconnected). frame is valid only during the call.
	OnDrop func(now Time, link int, dir Direction, cause DropCause, frame []byte)

	eng   *Engine
	seed  uint64
	links []*Link
	names map[string]bool
	nodes int
	free  *Frame
	pool  PoolStats
}

// NewNetwork returns an empty network driven by eng, whose random faults are
// seeded by seed.
func NewNetwork(eng *Engine, seed uint64) *Network {
	if eng == nil {
		panic("sim: NewNetwork: nil Engine")
	}
	return &Network{eng: eng, seed: seed, names: map[string]bool{}}
}

// Engine returns the engine driving the network.
func (n *Network) Engine() *Engine { return n.eng }

// Now returns the engine's current time.
func (n *Network) Now() Time { return n.eng.now }

// Seed returns the scenario seed.
func (n *Network) Seed() uint64 { return n.seed }

// Links returns the links, indexed by ID. The slice is the network's own; do
// not modify it.
func (n *Network) Links() []*Link { return n.links }

// PoolStats returns the frame pool's statistics.
func (n *Network) PoolStats() PoolStats { return n.pool }

// AllocFrame returns a frame of size bytes from the pool, for Host.SendFrame.
// Its contents are unspecified. Return it with FreeFrame if it is not sent.
func (n *Network) AllocFrame(size int) *Frame {
	if size < 0 {
		panic("sim: AllocFrame: negative size")
	}
	return n.alloc(size, -1)
}

// AllocFrameAligned is AllocFrame with Data[at] on a 64-byte boundary (a
// cache line), for a frame whose payload starts at at: copying a payload
// into or out of aligned memory from a source that is not 8-byte aligned
// runs at a third of the speed (measured on 4 KiB copies). at must be
// within [0, size].
func (n *Network) AllocFrameAligned(size, at int) *Frame {
	if size < 0 || at < 0 || at > size {
		panic("sim: AllocFrameAligned: bad size or offset")
	}
	return n.alloc(size, at)
}

// FreeFrame returns a frame from AllocFrame to the pool. It panics if the
// frame is already free.
func (n *Network) FreeFrame(f *Frame) { n.release(f) }

// alloc takes a frame of size bytes from the pool; with at >= 0, Data[at]
// is 64-byte aligned.
func (n *Network) alloc(size, at int) *Frame {
	f := n.free
	if f != nil {
		n.free = f.next
		f.next = nil
	} else {
		f = &Frame{}
		n.pool.Frames++
	}
	need := size
	if at >= 0 {
		need += lineSize - 1
	}
	if cap(f.buf) < need {
		if f.buf != nil {
			n.pool.Grows++
		}
		f.buf = make([]byte, (need+511)&^511)
	}
	pad := 0
	if at >= 0 {
		pad = int(-(uintptr(unsafe.Pointer(unsafe.SliceData(f.buf))) + uintptr(at)) & (lineSize - 1))
	}
	f.Data = f.buf[pad : pad+size]
	f.inUse = true
	n.pool.InUse++
	return f
}

func (n *Network) release(f *Frame) {
	if !f.inUse {
		panic("sim: frame freed twice")
	}
	f.inUse = false
	f.Data = nil
	f.collect, f.nINT = false, 0
	f.next = n.free
	n.free = f
	n.pool.InUse--
}

// lineSize is the cache line AllocFrameAligned aligns payloads to (alloc
// and allocLike find the offset from the address): BENCHMARKS.md
// ("Simulator", "One connection") has a 4 KiB copy from a source 70 bytes
// past a line at 339-388 ns, from an aligned one 48-53 ns.
const lineSize = 64

// allocLike returns a copy of f in a pooled frame with the same alignment
// within the cache line.
func (n *Network) allocLike(f *Frame) *Frame {
	at := int(-uintptr(unsafe.Pointer(unsafe.SliceData(f.Data))) & (lineSize - 1))
	g := n.alloc(len(f.Data), min(at, len(f.Data)))
	copy(g.Data, f.Data)
	g.dst = f.dst
	g.prio = f.prio
	g.collect = f.collect
	g.nINT = f.nINT
	g.hops = f.hops
	return g
}

// drop counts a dropped frame, reports it and frees it.
func (n *Network) drop(now Time, l *Link, dir Direction, cause DropCause, f *Frame) {
	id := -1
	if l != nil {
		c := &l.dir[dir].c
		switch cause {
		case DropLoss:
			c.LossDrops++
		case DropBurst:
			c.BurstDrops++
		case DropDead:
			c.DeadDrops++
		case DropQueue:
			c.QueueDrops++
			c.QueueDropBytes += uint64(len(f.Data))
		}
		id = l.id
	}
	if f.in != nil {
		f.in.leave(now, f)
	}
	if n.OnDrop != nil {
		n.OnDrop(now, id, dir, cause, f.Data)
	}
	n.release(f)
}

func (n *Network) nodeName(name, kind string) string {
	n.nodes++
	if name == "" {
		name = fmt.Sprintf("%s%d", kind, n.nodes-1)
	}
	return name
}

// Connect joins ports a and b with a new link and returns it. It panics if
// either port is already connected, the bandwidth is not positive, the
// delay negative, or the link's name already taken.
func (n *Network) Connect(a, b *Port, cfg LinkConfig) *Link {
	if a == nil || b == nil || a == b {
		panic("sim: Connect: need two distinct ports")
	}
	if a.net != n || b.net != n {
		panic("sim: Connect: port of another network")
	}
	if a.link != nil || b.link != nil {
		panic("sim: Connect: port already connected")
	}
	l := &Link{net: n, id: len(n.links), name: cfg.Name}
	l.setRate(cfg.Bandwidth, cfg.Delay)
	if l.name == "" {
		l.name = a.name + "--" + b.name
	}
	if n.names[l.name] {
		panic("sim: Connect: duplicate link name " + l.name)
	}
	n.names[l.name] = true
	l.dir[AtoB].from, l.dir[AtoB].to = a, b
	l.dir[BtoA].from, l.dir[BtoA].to = b, a
	a.link, a.dir = l, AtoB
	b.link, b.dir = l, BtoA
	l.seed(n.seed)
	n.links = append(n.links, l)
	return l
}

// PortConfig sets up a port's output queues.
type PortConfig struct {
	// QueueLimit is the most bytes that may wait in each priority's output
	// queue (not counting the frame being serialised); a frame that would
	// take its queue past it is dropped (drop-tail). 0 means unlimited. A
	// frame that can start at once (the port idle, its priority not
	// paused) is never dropped by a queue limit.
	QueueLimit int
	// ECNThreshold is K: a frame that joins a queue already holding more
	// than K bytes is passed to Network.MarkCE. It is RED{KMin: K, KMax: K,
	// PMax: 1} on every priority (see Port.SetRED). 0 disables marking.
	ECNThreshold int
}

// NumPriorities is the number of priorities (IEEE 802.1p, 0-7) a port
// keeps a queue for. Higher priorities are served first.
const NumPriorities = 8

// Port is a network interface: it serialises frames onto its link at the
// link's rate, one at a time, while later frames wait in its output queues,
// one FIFO per priority, served in strict priority (the highest non-empty
// priority that is not paused goes next). A host has one port; a switch has
// several.
type Port struct {
	// The fields a frame's way through the port touches come first.
	net      *Network
	link     *Link
	host     *Host     // owner, if a host port
	sw       *Switch   // owner, if a switch port
	dir      Direction // direction of the frames this port sends
	busy     bool
	shared   bool  // a switch port with a shared buffer (BufferConfig)
	nonEmpty uint8 // bit i set while qs[i] holds a frame
	paused   uint8 // priorities the peer has asked to stop (PFC)
	redOn    uint8 // priorities with ECN marking
	intOn    bool  // a switch port that records INT (Switch.SetINT)
	qb       int   // bytes waiting, all priorities: the sum of qbp
	peak     int   // largest qb seen
	cfg      PortConfig

	// Time-weighted queue bytes: the integral of qb over time is the sum,
	// over the frames that waited, of size x (time out - time in), and
	// for those still waiting size x (now - time in). (qiHi, qiLo) is
	// that integral less qb x now, a 128-bit two's complement number in
	// byte-picoseconds: a frame joining subtracts size x its time, one
	// leaving adds size x its time.
	qiHi, qiLo uint64

	qbp [NumPriorities]int
	qs  [NumPriorities]ring.Ring[*Frame] // output queues, one per priority

	name    string
	index   int // index in the switch
	created Time

	// ECN marking per priority (RED), and the port's PRNG stream for it.
	red [NumPriorities]RED
	pcg rand.PCG

	// PFC. Sending side: when each paused priority was paused, and the
	// time each was paused up to its last resume. Switch ingress side:
	// inBytes[i] bytes of priority i that arrived by this port are in the
	// switch (inTotal in all), and pausing's bit i is set while the peer is
	// told to stop priority i.
	pausing    uint8
	pausedAt   [NumPriorities]Time
	pausedTime [NumPriorities]Time
	inTotal    int
	inBytes    [NumPriorities]int

	// Frames dropped for want of a route after arriving by the port, for
	// a full shared buffer on their way out of it, or sent unconnected.
	noRoute, bufferDrops, unconnected uint64
	// Frames that collect INT but found no room for this port's record.
	intOverflows uint64
}

func (n *Network) newPort(name string, cfg PortConfig) *Port {
	if cfg.QueueLimit < 0 || cfg.ECNThreshold < 0 {
		panic("sim: negative QueueLimit or ECNThreshold")
	}
	p := &Port{net: n, name: name, created: n.eng.now}
	p.cfg.QueueLimit = cfg.QueueLimit
	p.SetECNThreshold(cfg.ECNThreshold)
	p.seed(n.seed)
	return p
}

// Name returns the port's name: the host's name, or "switch/index".
func (p *Port) Name() string { return p.name }

// Link returns the port's link, or nil.
func (p *Port) Link() *Link { return p.link }

// Direction returns the direction of its link in which this port sends.
func (p *Port) Direction() Direction { return p.dir }

// Peer returns the port at the other end of the link, or nil.
func (p *Port) Peer() *Port {
	if p.link == nil {
		return nil
	}
	return p.link.dir[p.dir].to
}

// Config returns the port's queue configuration.
func (p *Port) Config() PortConfig { return p.cfg }

// SetQueueLimit sets the drop-tail limit of each priority's queue in bytes;
// 0 means unlimited.
func (p *Port) SetQueueLimit(bytes int) {
	if bytes < 0 {
		panic("sim: negative queue limit")
	}
	p.cfg.QueueLimit = bytes
}

// SetECNThreshold sets the ECN marking threshold K in bytes on every
// priority, as SetRED(prio, RED{KMin: K, KMax: K, PMax: 1}) does; 0 disables
// marking.
func (p *Port) SetECNThreshold(bytes int) {
	if bytes < 0 {
		panic("sim: negative ECN threshold")
	}
	p.cfg.ECNThreshold = bytes
	for i := range p.red {
		p.setRED(i, RED{KMin: bytes, KMax: bytes, PMax: 1})
	}
}

// QueuedBytes returns the bytes waiting in the output queues, summed over
// the priorities, not counting the frame being serialised.
func (p *Port) QueuedBytes() int { return p.qb }

// QueuedBytesPrio returns the bytes waiting in priority prio's output
// queue; 0 for a priority outside 0-7.
func (p *Port) QueuedBytesPrio(prio int) int {
	if prio < 0 || prio >= NumPriorities {
		return 0
	}
	return p.qbp[prio]
}

// QueuedFrames returns the number of frames waiting in the output queues.
func (p *Port) QueuedFrames() int {
	n := 0
	for i := range p.qs {
		n += p.qs[i].Len()
	}
	return n
}

// PeakQueuedBytes returns the largest QueuedBytes seen.
func (p *Port) PeakQueuedBytes() int { return p.peak }

// Busy reports whether the port is serialising a frame.
func (p *Port) Busy() bool { return p.busy }

// queueIn and queueOut account for size bytes joining and leaving the
// queues at now in the time-weighted integral.
func (p *Port) queueIn(now Time, size int) {
	hi, lo := bits.Mul64(uint64(size), uint64(now))
	var b uint64
	p.qiLo, b = bits.Sub64(p.qiLo, lo, 0)
	p.qiHi -= hi + b
}

func (p *Port) queueOut(now Time, size int) {
	hi, lo := bits.Mul64(uint64(size), uint64(now))
	var c uint64
	p.qiLo, c = bits.Add64(p.qiLo, lo, 0)
	p.qiHi += hi + c
}

// enqueue gives frame f to the port to send; the port owns it from now on.
// It reports false if the frame was dropped.
func (p *Port) enqueue(now Time, f *Frame) bool {
	l := p.link
	if l == nil {
		p.unconnected++
		p.net.drop(now, nil, 0, DropUnconnected, f)
		return false
	}
	prio := f.prio & (NumPriorities - 1) // always f.prio; lets the compiler drop bounds checks
	if !p.busy && p.paused&(1<<prio) == 0 {
		p.startTx(now, f)
		return true
	}
	size := len(f.Data)
	q := p.qbp[prio]
	if p.cfg.QueueLimit > 0 && q+size > p.cfg.QueueLimit {
		p.net.drop(now, l, p.dir, DropQueue, f)
		return false
	}
	if p.shared && p.overThreshold(prio, q+size, size) {
		p.net.drop(now, l, p.dir, DropQueue, f)
		return false
	}
	if p.redOn&(1<<prio) != 0 && q > p.red[prio].KMin {
		p.ecn(prio, q, f)
	}
	p.queueIn(now, size)
	p.qbp[prio] = q + size
	p.qb += size
	if p.qb > p.peak {
		p.peak = p.qb
	}
	p.nonEmpty |= 1 << prio
	r := &p.qs[prio]
	if r.Cap() == 0 {
		r.Init(make([]*Frame, firstQueue))
	}
	r.Push(f) // last: few values live across the call
	return true
}

func (p *Port) startTx(now Time, f *Frame) {
	p.busy = true
	l := p.link
	c := &l.dir[p.dir].c
	c.SentFrames++
	c.SentBytes += uint64(len(f.Data))
	if p.intOn && f.collect {
		p.stampINT(now, f)
	}
	if tap := p.net.Tap; tap != nil {
		tap(now, l.id, p.dir, f.Data)
	}
	p.net.eng.schedule(now+l.TxTime(len(f.Data)), (*portHandler)(p), evTxDone, 0, f)
}

// portHandler runs a port's events without giving Port an exported Handle
// method.
type portHandler Port

func (h *portHandler) Handle(ev Event) {
	p := (*Port)(h)
	f := ev.frame
	switch ev.Kind {
	case evTxDone:
		if f.in != nil {
			f.in.leave(ev.At, f)
		}
		p.link.transmitted(ev.At, p.dir, f)
		p.busy = false
		p.startNext(ev.At)
		if h := p.host; h != nil && h.txn != nil {
			h.txn.TxDone(ev.At)
		}
	case evArrive:
		p.arrive(ev.At, f)
	case evPause:
		bit := uint8(1) << (ev.A & 7)
		if p.paused&bit == 0 {
			p.paused |= bit
			p.pausedAt[ev.A&7] = ev.At
		}
	case evResume:
		i := ev.A & 7
		if bit := uint8(1) << i; p.paused&bit != 0 {
			p.paused &^= bit
			d := ev.At - p.pausedAt[i]
			p.pausedTime[i] += d
			p.link.dir[p.dir].c.PausedTime += d
			p.startNext(ev.At)
		}
	}
}

// startNext starts the next queued frame, the first of the highest
// priority that is not paused, if the port is idle.
func (p *Port) startNext(now Time) {
	if p.busy {
		return
	}
	ready := p.nonEmpty &^ p.paused
	if ready == 0 {
		return
	}
	prio := (bits.Len32(uint32(ready)) - 1) & (NumPriorities - 1)
	r := &p.qs[prio]
	next := r.Pop()
	if r.Len() == 0 {
		p.nonEmpty &^= 1 << prio
	}
	size := len(next.Data)
	p.queueOut(now, size)
	p.qbp[prio] -= size
	p.qb -= size
	p.startTx(now, next)
}

// Paused reports whether the port's peer has paused it (PFC), on any
// priority.
func (p *Port) Paused() bool { return p.paused != 0 }

// PausedPrio reports whether the port's peer has paused priority prio.
func (p *Port) PausedPrio(prio int) bool {
	return prio >= 0 && prio < NumPriorities && p.paused&(1<<prio) != 0
}

// IngressBytes returns, for a switch port with PFC or a shared buffer, the
// bytes of frames that arrived by it and are still in the switch, summed
// over the priorities.
func (p *Port) IngressBytes() int { return p.inTotal }

// leave accounts for frame f, which arrived by switch port p, leaving the
// switch (sent on, or dropped): below XON, the peer may send its priority
// again.
func (p *Port) leave(now Time, f *Frame) {
	f.in = nil
	size := len(f.Data)
	s := p.sw
	s.used -= size
	p.inTotal -= size
	prio := f.prio
	p.inBytes[prio] -= size
	if p.pausing&(1<<prio) != 0 && p.inBytes[prio] <= s.pfc.XOn {
		p.pausing &^= 1 << prio
		p.sendPFC(now, evResume, prio)
	}
}

// sendPFC tells the peer of switch port p to stop (evPause) or go on
// (evResume) sending priority prio. The PFC frame goes ahead of anything
// queued, as MAC control frames do, and takes effect at the peer after its
// own serialisation and the propagation delay. It is passed to the Tap like
// any frame, but takes no time from the port's data frames.
func (p *Port) sendPFC(now Time, kind uint32, prio uint8) {
	l := p.link
	if l == nil {
		return
	}
	c := &l.dir[p.dir].c
	var quanta uint16
	if kind == evPause {
		c.PauseFrames++
		quanta = 0xFFFF
	} else {
		c.ResumeFrames++
	}
	if tap := p.net.Tap; tap != nil {
		var fr [pfcFrameLen]byte
		p.pfcFrame(fr[:], p.sw.wirePriority(prio), quanta)
		tap(now, l.id, p.dir, fr[:])
	}
	if l.dir[p.dir].dead {
		return
	}
	peer := l.dir[p.dir].to
	p.net.eng.Schedule(now+l.TxTime(pfcFrameLen)+l.delay, (*portHandler)(peer), kind, uint64(prio))
}

// pfcFrameLen is a PFC frame without FCS: the 60-byte Ethernet minimum.
const pfcFrameLen = 60

// pfcFrame writes an IEEE 802.1Qbb PFC frame into b: MAC control (0x8808)
// opcode 0x0101, the class-enable vector with priority prio's bit set, and
// pause time quanta for it at offset 18+2*prio (0 resumes). The source MAC
// is a locally administered address made from the switch's node number and
// the port.
func (p *Port) pfcFrame(b []byte, prio uint8, quanta uint16) {
	clear(b)
	copy(b, []byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0xFF, byte(p.sw.node), byte(p.index)})
	b[12], b[13] = 0x88, 0x08
	b[14], b[15] = 0x01, 0x01
	b[17] = 1 << prio
	o := 18 + 2*int(prio)
	b[o], b[o+1] = byte(quanta>>8), byte(quanta)
}

// pfcPriority is the priority PFC covers when PFCConfig.Priorities is 0:
// RoCE's usual lossless class.
const pfcPriority = 3

// arrive handles frame f arriving at port p from its link.
func (p *Port) arrive(now Time, f *Frame) {
	l := p.link
	in := p.dir.Reverse()
	d := &l.dir[in]
	if d.dead {
		p.net.drop(now, l, in, DropDead, f)
		return
	}
	d.c.DeliveredFrames++
	d.c.DeliveredBytes += uint64(len(f.Data))
	if h := p.host; h != nil {
		if h.iep != nil {
			h.iep.ReceiveINT(now, f.Data, f.hops[:f.nINT:f.nINT])
		} else if h.ep != nil {
			h.ep.Receive(now, f.Data)
		}
		p.net.release(f)
		return
	}
	s := p.sw
	out := -1
	if s.Forward != nil {
		out = s.Forward(p.index, f.dst, f.Data)
	} else if f.dst >= 0 && f.dst < len(s.table) {
		out = int(s.table[f.dst])
	}
	if out < 0 || out >= len(s.ports) {
		s.noRoute++
		p.noRoute++
		p.net.drop(now, l, in, DropNoRoute, f)
		return
	}
	if s.account {
		size := len(f.Data)
		if s.buf.Bytes > 0 && s.used+size > s.buf.Bytes {
			o := s.ports[out]
			o.bufferDrops++
			p.net.drop(now, o.link, o.dir, DropBuffer, f)
			return
		}
		f.in = p
		s.used += size
		p.inTotal += size
		prio := f.prio
		p.inBytes[prio] += size
		if s.pfc.XOff > 0 && p.pausing&(1<<prio) == 0 && p.inBytes[prio] > s.pfc.XOff && s.lossless(prio) {
			p.pausing |= 1 << prio
			p.sendPFC(now, evPause, prio)
		}
	}
	s.ports[out].enqueue(now, f)
	if s.used > s.peakUsed { // what the frame took, unless it was dropped
		s.peakUsed = s.used
	}
}

// Host is an end node: one port, and an Endpoint that receives the frames
// arriving at it.
type Host struct {
	net  *Network
	port *Port
	ep   Endpoint
	txn  TxNotifier  // ep, if it is one
	iep  INTEndpoint // ep, if it is one
}

// NewHost adds a host with endpoint ep (which may be nil and set later with
// SetEndpoint). An empty name becomes "hostN". The host's port has an
// unlimited queue and no ECN marking; see Port.SetQueueLimit.
func (n *Network) NewHost(name string, ep Endpoint) *Host {
	h := &Host{net: n}
	h.SetEndpoint(ep)
	h.port = n.newPort(n.nodeName(name, "host"), PortConfig{})
	h.port.host = h
	return h
}

// Name returns the host's name.
func (h *Host) Name() string { return h.port.name }

// Port returns the host's port.
func (h *Host) Port() *Port { return h.port }

// Endpoint returns the host's endpoint.
func (h *Host) Endpoint() Endpoint { return h.ep }

// SetEndpoint sets the endpoint that receives the host's frames.
// If ep is a TxNotifier it is also told of every end of transmission; if it
// is an INTEndpoint, it receives every frame by ReceiveINT instead of
// Receive.
func (h *Host) SetEndpoint(ep Endpoint) {
	h.ep = ep
	h.txn, _ = ep.(TxNotifier)
	h.iep, _ = ep.(INTEndpoint)
}

// Send copies frame into a pooled buffer and queues it on the host's port,
// addressed to destination dst (used only by switches' forwarding; any value
// on a direct link). The caller keeps frame. Send reports false if the frame
// was dropped at once (full host queue, or no link).
func (h *Host) Send(dst int, frame []byte) bool {
	f := h.net.alloc(len(frame), -1)
	copy(f.Data, frame)
	f.dst = dst
	f.prio = h.net.classify(f.Data)
	return h.port.enqueue(h.net.eng.now, f)
}

// SendFrame queues a frame from Network.AllocFrame without copying it. The
// network owns f from then on, whether or not it is sent.
func (h *Host) SendFrame(dst int, f *Frame) bool {
	if !f.inUse {
		panic("sim: SendFrame of a free frame")
	}
	f.dst = dst
	f.prio = h.net.classify(f.Data)
	return h.port.enqueue(h.net.eng.now, f)
}

// classify returns the priority of a frame a host sends.
func (n *Network) classify(frame []byte) uint8 {
	if n.Classify == nil {
		return 0
	}
	return n.classifyHook(frame)
}

func (n *Network) classifyHook(frame []byte) uint8 {
	prio := n.Classify(frame)
	if prio >= NumPriorities {
		panic(fmt.Sprintf("sim: Network.Classify returned priority %d, want 0-7", prio))
	}
	return prio
}

// Switch is a store-and-forward switch: a frame that has fully arrived on a
// port is forwarded at once to the output queue of its priority on the port
// chosen for its destination. Each output queue has its own drop-tail limit
// and ECN marking; the switch may also have a shared buffer (SetBuffer) and
// be lossless on some priorities (SetPFC).
type Switch struct {
	// Forward, if set, chooses the output port of a frame from the input
	// port, the destination the sending host gave, and the frame itself;
	// a result outside [0, NumPorts()) drops the frame. If nil, the table
	// set with SetRoute is used.
	Forward func(inPort, dst int, frame []byte) int

	net      *Network
	name     string
	node     int
	ports    []*Port
	table    []int32
	noRoute  uint64
	pfc      PFCConfig
	pfcMask  uint8 // lossless priorities, from pfc.Priorities
	buf      BufferConfig
	account  bool // PFC or a shared buffer: frames in the switch are counted
	intOn    bool // INT recorded on every port (SetINT)
	used     int  // bytes of frames in the switch, while account
	peakUsed int
}

// PFCConfig is priority flow control (IEEE 802.1Qbb) on a switch, as RoCE
// fabrics use to be lossless, for the priorities in Priorities. The switch
// counts, per input port and lossless priority, the bytes of frames that
// arrived by it and have not yet left (queued or being sent on). When that
// exceeds XOff it sends the port's peer a PFC pause for that priority; the
// peer finishes the frame it is sending and sends no more of that priority
// (its other priorities go on, in strict priority) until the count is at or
// below XOn and the switch sends a resume. A pause lasts until the resume (a
// real switch refreshes its pause quanta while above XOn). Since the peer
// may itself be a switch port, whose queue then grows until its own ingress
// ports cross XOff, pauses propagate hop by hop back to the senders.
//
// Frames already on the wire still arrive: the headroom a port needs above
// XOff to lose nothing is PFCHeadroom.
type PFCConfig struct {
	XOff int // bytes; 0 disables PFC
	XOn  int // bytes, at most XOff
	// Priorities is the bitmask of lossless priorities (bit i for priority
	// i). 0 means priority 3 only, RoCE's usual lossless class. In a
	// network without Classify, where every frame is priority 0, there is
	// one class, and it is lossless whatever Priorities says: the pause
	// frames name the lowest priority in Priorities (3 for 0), as the
	// switch model did before it had priorities.
	Priorities uint8
}

// SetPFC enables (XOff > 0) or disables PFC on the switch. It panics if the
// thresholds are negative or XOn exceeds XOff. Change it only before frames
// flow.
func (s *Switch) SetPFC(cfg PFCConfig) {
	if cfg.XOff < 0 || cfg.XOn < 0 || cfg.XOn > cfg.XOff {
		panic("sim: SetPFC: need 0 <= XOn <= XOff")
	}
	s.pfc = cfg
	s.pfcMask = cfg.Priorities
	if s.pfcMask == 0 {
		s.pfcMask = 1 << pfcPriority
	}
	s.account = s.pfc.XOff > 0 || s.buf.Bytes > 0
}

// PFC returns the switch's PFC thresholds.
func (s *Switch) PFC() PFCConfig { return s.pfc }

// lossless reports whether PFC holds back frames of priority prio: a
// priority in the lossless set, or any frame in a network without Classify
// (one class).
func (s *Switch) lossless(prio uint8) bool {
	return s.pfc.XOff > 0 && (s.pfcMask&(1<<prio) != 0 || s.net.Classify == nil)
}

// wirePriority is the priority a PFC frame names for frames of priority
// prio: prio itself, or, in a network without Classify, the lowest
// lossless priority.
func (s *Switch) wirePriority(prio uint8) uint8 {
	if s.net.Classify == nil {
		return uint8(bits.TrailingZeros8(s.pfcMask))
	}
	return prio
}

// NewSwitch adds a switch with nports ports, each configured by cfg. An empty
// name becomes "switchN".
func (n *Network) NewSwitch(name string, nports int, cfg PortConfig) *Switch {
	if nports <= 0 {
		panic("sim: NewSwitch: need at least one port")
	}
	s := &Switch{net: n, node: n.nodes, name: n.nodeName(name, "switch")}
	for i := 0; i < nports; i++ {
		p := n.newPort(fmt.Sprintf("%s/%d", s.name, i), cfg)
		p.sw, p.index = s, i
		s.ports = append(s.ports, p)
	}
	return s
}

// Name returns the switch's name.
func (s *Switch) Name() string { return s.name }

// NumPorts returns the number of ports.
func (s *Switch) NumPorts() int { return len(s.ports) }

// Port returns port i.
func (s *Switch) Port(i int) *Port { return s.ports[i] }

// SetRoute sends frames for destination dst (>= 0) out of port; port -1
// removes the route.
func (s *Switch) SetRoute(dst, port int) {
	if dst < 0 {
		panic("sim: SetRoute: negative destination")
	}
	if port < -1 || port >= len(s.ports) {
		panic("sim: SetRoute: no such port")
	}
	for len(s.table) <= dst {
		s.table = append(s.table, -1)
	}
	s.table[dst] = int32(port)
}

// Route returns the port for destination dst in the table, or -1.
func (s *Switch) Route(dst int) int {
	if dst < 0 || dst >= len(s.table) {
		return -1
	}
	return int(s.table[dst])
}

// NoRouteDrops returns the number of frames dropped for want of a route.
func (s *Switch) NoRouteDrops() uint64 { return s.noRoute }

// firstQueue is the number of frames a port's queue first has room for.
const firstQueue = 16
