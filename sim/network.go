package sim

import (
	"fmt"
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
type Frame struct {
	Data  []byte
	buf   []byte
	dst   int
	next  *Frame
	in    *Port // switch port it arrived by, while it is in a switch with PFC
	inUse bool
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
	// MarkCE is called for a frame that joins an output queue holding more
	// than the port's ECN threshold. It should set the frame's ECN field to
	// CE (the RoCE layer knows where the IPv4 TOS byte is) and report
	// whether it did; a frame that is not ECN-capable is left alone and
	// reported false. Nil marks nothing.
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

// PortConfig sets up a port's output queue.
type PortConfig struct {
	// QueueLimit is the most bytes that may wait in the output queue (not
	// counting the frame being serialised); a frame that would take the
	// queue past it is dropped (drop-tail). 0 means unlimited. A frame
	// that finds the port idle starts at once and is never dropped.
	QueueLimit int
	// ECNThreshold is K: a frame that joins a queue already holding more
	// than K bytes is passed to Network.MarkCE. 0 disables marking.
	ECNThreshold int
}

// Port is a network interface: it serialises frames onto its link at the
// link's rate, one at a time, while later frames wait in a FIFO output queue.
// A host has one port; a switch has several.
type Port struct {
	net   *Network
	name  string
	host  *Host   // owner, if a host port
	sw    *Switch // owner, if a switch port
	index int     // index in the switch
	link  *Link
	dir   Direction // direction of the frames this port sends
	cfg   PortConfig
	q     ring.Ring[*Frame]
	qb    int // bytes waiting
	peak  int // largest qb seen
	busy  bool

	// PFC. Sending side: paused while the peer has asked it to stop.
	// Switch ingress side: inBytes of frames that arrived by this port are
	// in the switch, and pausing is set while the peer is told to stop.
	paused   bool
	pausedAt Time
	pausing  bool
	inBytes  int
}

func (n *Network) newPort(name string, cfg PortConfig) *Port {
	if cfg.QueueLimit < 0 || cfg.ECNThreshold < 0 {
		panic("sim: negative QueueLimit or ECNThreshold")
	}
	return &Port{net: n, name: name, cfg: cfg}
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

// SetQueueLimit sets the drop-tail limit in bytes; 0 means unlimited.
func (p *Port) SetQueueLimit(bytes int) {
	if bytes < 0 {
		panic("sim: negative queue limit")
	}
	p.cfg.QueueLimit = bytes
}

// SetECNThreshold sets the ECN marking threshold K in bytes; 0 disables it.
func (p *Port) SetECNThreshold(bytes int) {
	if bytes < 0 {
		panic("sim: negative ECN threshold")
	}
	p.cfg.ECNThreshold = bytes
}

// QueuedBytes returns the bytes waiting in the output queue, not counting
// the frame being serialised.
func (p *Port) QueuedBytes() int { return p.qb }

// QueuedFrames returns the number of frames waiting in the output queue.
func (p *Port) QueuedFrames() int { return p.q.Len() }

// PeakQueuedBytes returns the largest QueuedBytes seen.
func (p *Port) PeakQueuedBytes() int { return p.peak }

// Busy reports whether the port is serialising a frame.
func (p *Port) Busy() bool { return p.busy }

// enqueue gives frame f to the port to send; the port owns it from now on.
// It reports false if the frame was dropped.
func (p *Port) enqueue(now Time, f *Frame) bool {
	l := p.link
	if l == nil {
		p.net.drop(now, nil, 0, DropUnconnected, f)
		return false
	}
	if !p.busy && !p.paused {
		p.startTx(now, f)
		return true
	}
	size := len(f.Data)
	if p.cfg.QueueLimit > 0 && p.qb+size > p.cfg.QueueLimit {
		p.net.drop(now, l, p.dir, DropQueue, f)
		return false
	}
	if p.cfg.ECNThreshold > 0 && p.qb > p.cfg.ECNThreshold {
		if mark := p.net.MarkCE; mark != nil && mark(f.Data) {
			l.dir[p.dir].c.ECNMarked++
		}
	}
	if p.q.Cap() == 0 {
		p.q.Init(make([]*Frame, firstQueue))
	}
	p.q.Push(f)
	p.qb += size
	if p.qb > p.peak {
		p.peak = p.qb
	}
	return true
}

func (p *Port) startTx(now Time, f *Frame) {
	p.busy = true
	l := p.link
	c := &l.dir[p.dir].c
	c.SentFrames++
	c.SentBytes += uint64(len(f.Data))
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
		if !p.paused {
			p.paused, p.pausedAt = true, ev.At
		}
	case evResume:
		if p.paused {
			p.paused = false
			p.link.dir[p.dir].c.PausedTime += ev.At - p.pausedAt
			p.startNext(ev.At)
		}
	}
}

// startNext starts the next queued frame if the port is idle and not
// paused.
func (p *Port) startNext(now Time) {
	if p.busy || p.paused {
		return
	}
	if p.q.Len() > 0 {
		next := p.q.Pop()
		p.qb -= len(next.Data)
		p.startTx(now, next)
	}
}

// Paused reports whether the port's peer has paused it (PFC).
func (p *Port) Paused() bool { return p.paused }

// IngressBytes returns, for a switch port with PFC, the bytes of frames that
// arrived by it and are still in the switch.
func (p *Port) IngressBytes() int { return p.inBytes }

// leave accounts for frame f, which arrived by switch port p, leaving the
// switch (sent on, or dropped): below XON, the peer may send again.
func (p *Port) leave(now Time, f *Frame) {
	f.in = nil
	p.inBytes -= len(f.Data)
	if p.pausing && p.inBytes <= p.sw.pfc.XOn {
		p.pausing = false
		p.sendPFC(now, evResume)
	}
}

// sendPFC tells the peer of switch port p to stop (evPause) or go on
// (evResume). The PFC frame goes ahead of anything queued, as MAC control
// frames do, and takes effect at the peer after its own serialisation and
// the propagation delay. It is passed to the Tap like any frame, but takes
// no time from the port's data frames.
func (p *Port) sendPFC(now Time, kind uint32) {
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
		p.pfcFrame(fr[:], quanta)
		tap(now, l.id, p.dir, fr[:])
	}
	if l.dir[p.dir].dead {
		return
	}
	peer := l.dir[p.dir].to
	p.net.eng.Schedule(now+l.TxTime(pfcFrameLen)+l.delay, (*portHandler)(peer), kind, 0)
}

// pfcFrameLen is a PFC frame without FCS: the 60-byte Ethernet minimum.
const pfcFrameLen = 60

// pfcFrame writes an IEEE 802.1Qbb PFC frame into b: MAC control (0x8808)
// opcode 0x0101, priority 3 (RoCE's usual lossless class) enabled, with
// pause time quanta for it (0 resumes). The source MAC is a locally
// administered address made from the switch's node number and the port.
func (p *Port) pfcFrame(b []byte, quanta uint16) {
	clear(b)
	copy(b, []byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0xFF, byte(p.sw.node), byte(p.index)})
	b[12], b[13] = 0x88, 0x08
	b[14], b[15] = 0x01, 0x01
	b[17] = 1 << pfcPriority
	o := 18 + 2*pfcPriority
	b[o], b[o+1] = byte(quanta>>8), byte(quanta)
}

// pfcPriority is the priority PFC frames pause.
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
		if h.ep != nil {
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
		p.net.drop(now, l, in, DropNoRoute, f)
		return
	}
	if s.pfc.XOff > 0 {
		f.in = p
		p.inBytes += len(f.Data)
		if !p.pausing && p.inBytes > s.pfc.XOff {
			p.pausing = true
			p.sendPFC(now, evPause)
		}
	}
	s.ports[out].enqueue(now, f)
}

// Host is an end node: one port, and an Endpoint that receives the frames
// arriving at it.
type Host struct {
	net  *Network
	port *Port
	ep   Endpoint
	txn  TxNotifier // ep, if it is one
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
// If ep is a TxNotifier it is also told of every end of transmission.
func (h *Host) SetEndpoint(ep Endpoint) {
	h.ep = ep
	h.txn, _ = ep.(TxNotifier)
}

// Send copies frame into a pooled buffer and queues it on the host's port,
// addressed to destination dst (used only by switches' forwarding; any value
// on a direct link). The caller keeps frame. Send reports false if the frame
// was dropped at once (full host queue, or no link).
func (h *Host) Send(dst int, frame []byte) bool {
	f := h.net.alloc(len(frame), -1)
	copy(f.Data, frame)
	f.dst = dst
	return h.port.enqueue(h.net.eng.now, f)
}

// SendFrame queues a frame from Network.AllocFrame without copying it. The
// network owns f from then on, whether or not it is sent.
func (h *Host) SendFrame(dst int, f *Frame) bool {
	if !f.inUse {
		panic("sim: SendFrame of a free frame")
	}
	f.dst = dst
	return h.port.enqueue(h.net.eng.now, f)
}

// Switch is a store-and-forward switch: a frame that has fully arrived on a
// port is forwarded at once to the output queue of the port chosen for its
// destination. Each output queue has its own drop-tail limit and ECN
// threshold.
type Switch struct {
	// Forward, if set, chooses the output port of a frame from the input
	// port, the destination the sending host gave, and the frame itself;
	// a result outside [0, NumPorts()) drops the frame. If nil, the table
	// set with SetRoute is used.
	Forward func(inPort, dst int, frame []byte) int

	net     *Network
	name    string
	node    int
	ports   []*Port
	table   []int32
	noRoute uint64
	pfc     PFCConfig
}

// PFCConfig is priority flow control (IEEE 802.1Qbb) on a switch, as RoCE
// fabrics use to be lossless, for one traffic class. The switch counts, per
// input port, the bytes of frames that arrived by it and have not yet left
// (queued or being sent on). When that exceeds XOff it sends the port's peer
// a PFC pause; the peer finishes the frame it is sending and sends no more
// until the count is at or below XOn and the switch sends a resume. A pause
// lasts until the resume (a real switch refreshes its pause quanta while
// above XOn). Frames already on the wire still arrive: XOff plus two
// propagation delays and a frame at line rate is the headroom a port needs
// to lose nothing.
type PFCConfig struct {
	XOff int // bytes; 0 disables PFC
	XOn  int // bytes, at most XOff
}

// SetPFC enables (XOff > 0) or disables PFC on the switch. It panics if the
// thresholds are negative or XOn exceeds XOff. Change it only before frames
// flow.
func (s *Switch) SetPFC(cfg PFCConfig) {
	if cfg.XOff < 0 || cfg.XOn < 0 || cfg.XOn > cfg.XOff {
		panic("sim: SetPFC: need 0 <= XOn <= XOff")
	}
	s.pfc = cfg
}

// PFC returns the switch's PFC thresholds.
func (s *Switch) PFC() PFCConfig { return s.pfc }

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
