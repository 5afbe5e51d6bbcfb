package roce

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/cc"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/internal/prefetch"
	"github.com/rocekit/rocekit/internal/ring"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// nic is a host's RoCEv2 NIC: it owns the host's QP ends, sends their
// packets one at a time as the wire frees (round-robin among the QPs that
// have output), and delivers arriving frames to the QP they name.
type nic struct {
	s       *Sim
	idx     int // host index: the destination number switches route by
	name    string
	host    *sim.Host
	link    *sim.Link
	mac     [6]byte
	ip      [4]byte
	busy    bool // a frame of ours is being serialised
	kicking bool
	active  ring.Ring[*qpEnd] // QP ends that have packets to send
	cnps    ring.Ring[*ccEnd] // CNPs to send, ahead of the QPs' packets
	hops    []sim.INTHop      // the telemetry of the frame being received (HPCC)
	rx      packet.Frame
	// tx is the frame being built, for whichever QP sends: addresses from
	// the NIC, the peer's from the QP end, the transport from the QP. One
	// per NIC rather than one per QP, so that with thousands of QPs the
	// fields being written are in cache.
	tx packet.FrameFields
}

// TxDone runs when the frame being serialised has left: the wire is free.
// The port calls it at the end of its end-of-transmission event, so the
// port is idle by then.
func (n *nic) TxDone(now sim.Time) {
	n.busy = false
	n.kick(now)
}

// kick sends the next packet if the wire is free: the first QP in the
// round-robin ring that has one sends it and goes to the back of the ring
// if it has more.
func (n *nic) kick(now sim.Time) {
	if n.busy || n.kicking {
		return
	}
	n.kicking = true
	if n.cnps.Len() > 0 {
		n.sendCNP(now, n.cnps.Pop())
		n.kicking = false
		return
	}
	for tries := n.active.Len(); tries > 0; tries-- {
		e := n.active.Pop()
		e.inActive = false
		if n.s.ccs != nil && !n.s.ccOf(e).mayPace(now) {
			continue // woken at its pacing time, or by the ACK that opens its window
		}
		if n.s.prefetch {
			n.prefetchNext()
			n.s.ahead.Drain(aheadLines)
		}
		n.tx.Eth.Dst, n.tx.IPv4.Dst, n.tx.UDP.SrcPort = e.peerMAC, e.peerIP, e.udpSrc
		ok := e.qp.NextPacket(qpTime(now), &n.tx.Transport)
		if ok {
			n.transmit(now, e)
		}
		e.service(now)
		if ok {
			break
		}
	}
	n.kicking = false
}

// transmit builds e's packet (in n.tx) as a RoCEv2/IPv4 frame with its
// ICRC into a pooled buffer and puts it on the wire.
func (n *nic) transmit(now sim.Time, e *qpEnd) {
	size := n.transmitFrame(now, e)
	if n.s.ccs != nil {
		n.s.ccOf(e).sent(now, size)
	}
}

// transmitFrame puts the frame in n.tx on the wire for e and returns its
// size.
func (n *nic) transmitFrame(now sim.Time, e *qpEnd) int {
	s := n.s
	ff := &n.tx
	t := &ff.Transport
	size := ff.Len()
	// The payload starts on a cache line, so that copying it in (from the
	// requester's buffer) and out (into the responder's region) is aligned.
	fr := s.net.AllocFrameAligned(size, size-icrc.Len-int(t.BTH.PadCnt&3)-len(t.Payload))
	k, err := ff.EncodeWith(fr.Data, &s.calc)
	if err != nil {
		panic(fmt.Sprintf("roce: building %v: %v", t.BTH.Opcode, err))
	}
	fr.Data = fr.Data[:k]
	s.st.packets++
	if len(t.Payload) > 0 {
		s.st.dataPackets++
		if f := s.fab; f != nil {
			f.sent[e.conn.id] += uint64(len(t.Payload))
		}
	}
	if t.BTH.Opcode == opcode.RCAcknowledge {
		switch syn := t.AETH.Syndrome; syn.Kind() {
		case aeth.RNRNAK:
			s.st.rnrNaks++
		case aeth.NAK:
			s.st.naks[min(int(syn.NAKCode()), 5)]++
		}
	}
	if s.prefetch {
		n.prefetchPeer(e, t)
	}
	// Every host has a link (Validate) and its port an unlimited queue, so
	// the frame is never dropped here; TxDone frees the wire.
	if s.int {
		s.ccOf(e).stampINT(fr, t)
	}
	n.busy = true
	dst := int(e.peer)
	if s.fab != nil { // switches route by the QP end (fabric.ends)
		dst = 2 * e.conn.id
		if !e.isReq {
			dst++
		}
	}
	n.host.SendFrame(dst, fr)
	return size
}

// Receive takes a frame that arrived at the host. As a NIC does, it drops
// (and counts) frames that do not parse as RoCEv2/IPv4, are not addressed
// to this host, have a bad IPv4 header checksum or a bad ICRC, or name no
// QP of this host; the rest go to their QP.
func (n *nic) Receive(now sim.Time, frame []byte) {
	s := n.s
	if s.ahead.Pending() {
		s.ahead.Drain(aheadLines)
	}
	rx := &n.rx
	if err := rx.DecodeEthernet(frame); err != nil || rx.Encap != packet.RoCEv2IPv4 {
		s.st.malformed++
		return
	}
	ip := rx.IPv4
	if [6]byte(rx.Eth[0:6]) != n.mac || [4]byte(ip[16:20]) != n.ip {
		s.st.misaddressed++
		return
	}
	if ip.ComputeChecksum() != ip.Checksum() {
		s.st.ipChecksum++
		return
	}
	if ok, _, _, err := rx.CheckICRC(); err != nil || !ok {
		s.st.icrcErrors++
		return
	}
	var h bth.BTH = rx.Transport.BTH // named so that DestQP is inlined
	i := h.DestQP() - qpnBase
	if i>>1 >= uint32(len(s.connArr)) {
		s.st.unknownQP++
		return
	}
	e := &s.connArr[i>>1].req
	if i&1 != 0 {
		e = &s.connArr[i>>1].rsp
	}
	if e.nic != n {
		s.st.unknownQP++
		return
	}
	if [4]byte(ip[12:16]) != e.peerIP { // RC: the source must be the QP's peer (§5.11)
		s.st.misaddressed++
		return
	}
	ce := (*ccEnd)(nil)
	if s.ccs != nil {
		ce = s.ccOf(e)
		if h.Opcode() == opcode.CNP { // for this end's data: the reaction point's input
			s.ccst.cnpsReceived++
			ce.onCNP(now)
			return
		}
	}
	if ip.ECN() == 3 {
		s.st.ceReceived++
		if ce != nil && ce.npOn && len(rx.Transport.Payload) > 0 && ce.np.OnCE(now) {
			n.queueCNP(ce)
		}
	}
	var acked []cc.INTHop
	if ce != nil && s.int && len(n.hops) > 0 {
		if len(rx.Transport.Payload) > 0 {
			ce.keepINT(n.hops) // echoed in this end's next ACK
		} else {
			acked = toCC(ce.conv[:0], n.hops)
		}
	}
	e.qp.Receive(qpTime(now), &rx.Transport)
	if ce != nil && h.Opcode() == opcode.RCAcknowledge {
		ce.onAck(now, acked)
	}
	e.service(now)
	n.kick(now)
}

// qpEnd is one QP of a connection, on its host's NIC. It is one cache line
// (TestConnLayout): sending a packet reads nothing else of the connection.
type qpEnd struct {
	qp      *rc.QP
	nic     *nic
	conn    *conn
	wakeGen uint64
	wakeAt  sim.Time
	peer    int32 // host index of the other end
	peerIP  [4]byte
	peerMAC [6]byte
	udpSrc  uint16 // UDP source port of its frames

	isReq       bool
	inActive    bool // in the NIC's ring
	wakePending bool
}

// service runs after every call into the QP: it takes the completions (and
// lets the generator post more work), puts the QP in its NIC's ring if it
// has packets to send, and arranges a wake-up for its timers.
func (e *qpEnd) service(now sim.Time) {
	q := e.qp
	if q.PendingCompletions() > 0 {
		s := e.nic.s
		for q.PendingCompletions() > 0 {
			s.comps = q.AppendCompletions(s.comps[:0])
			for i := range s.comps {
				cp := &s.comps[i]
				if cp.Opcode.IsRecv() {
					e.conn.onRecv(now, cp)
				} else {
					e.conn.onSend(now, cp)
				}
			}
			if e.isReq {
				e.conn.postMore(now)
			}
		}
	}
	if !e.inActive && q.HasOutgoing() {
		e.inActive = true
		e.nic.active.Push(e)
	}
	e.arm(now)
}

// arm schedules a wake-up at the QP's NextWake unless one is pending at or
// before it. A pending one that turns out early finds nothing due and
// re-arms; one overtaken by an earlier wake-up is ignored by its generation.
func (e *qpEnd) arm(now sim.Time) {
	w, ok := e.nextWake()
	if !ok || e.wakePending && e.wakeAt <= w {
		return
	}
	w = max(w, now)
	e.wakeGen++
	e.wakePending, e.wakeAt = true, w
	e.nic.s.eng.Schedule(w, e, 0, e.wakeGen)
}

// The QPs count time as rc.Time, the engine and the NICs as sim.Time, both
// in integer picoseconds: qpTime and nextWake are where they meet.

// qpTime is the engine's time t as the QPs count it.
func qpTime(t sim.Time) rc.Time { return rc.Time(t) }

// nextWake is the QP's NextWake in the engine's time.
func (e *qpEnd) nextWake() (sim.Time, bool) {
	w, ok := e.qp.NextWake()
	return sim.Time(w), ok
}

// Handle is the QP's timer wake-up.
func (e *qpEnd) Handle(ev sim.Event) {
	if ev.A != e.wakeGen {
		return
	}
	e.wakePending = false
	if w, ok := e.nextWake(); ok && w <= ev.At {
		e.qp.Tick(qpTime(ev.At))
	}
	e.service(ev.At)
	e.nic.kick(ev.At)
}

// conn is one connection: a requester QP, a responder QP, the work
// generator, and buffers reused as rings of Outstanding slots.
//
// With thousands of connections taking turns every line a packet touches is
// a miss, so what a packet needs is in few lines of the conn (TestConnLayout
// pins them; New allocates all conns in one line-aligned array): the
// requester's end; the responder's end; the responder's region header and
// its Memory; the post times; the counters with the generator's fixed op
// and size. Sending touches the first, receiving a request the second and
// third, an ACK the first, fourth and fifth (and the region's bytes, checked).
type conn struct {
	req, rsp qpEnd
	mr       rc.MR
	mem      rc.Memory
	postInl  [postInline]sim.Time // post times by slot, while q <= postInline

	posted, completed int64
	q                 int32  // outstanding WRs at most
	slot              uint32 // bytes per slot
	gen               generator

	s           *Sim
	id          int
	postBig     []sim.Time // post times by slot, when q > postInline
	local       []byte     // READ destinations and atomic results; nil without them
	recvBuf     []byte
	recvDepth   int
	repostDelay sim.Time
	recvNext    uint64           // ID of the next receive WR
	sends       ring.Ring[int64] // WR numbers of SENDs not yet received
	coll        *collConn        // a collective's connection (RunCollective), or nil
	_           [connPad]byte
}

const (
	postInline = 8
	connPad    = 24 // makes a conn whole lines (TestConnLayout)
)

// postTime returns where the post time of slot is kept.
func (c *conn) postTime(slot int) *sim.Time {
	if c.q <= postInline {
		return &c.postInl[slot]
	}
	return &c.postBig[slot]
}

// start posts the receive buffers and the first work requests.
func (c *conn) start(now sim.Time) {
	if f := c.s.fab; f != nil {
		f.takeBuffers(c)
	}
	if c.coll != nil {
		c.collStart(now)
		return
	}
	for i := 0; i < c.recvDepth; i++ {
		c.postRecv()
	}
	c.postMore(now)
	c.req.service(now)
	c.rsp.service(now)
}

// starter starts connection ev.A at its start time.
type starter Sim

func (h *starter) Handle(ev sim.Event) {
	c := h.conns[ev.A]
	c.start(ev.At)
	c.req.nic.kick(ev.At)
	c.rsp.nic.kick(ev.At)
}

func (c *conn) postRecv() {
	id := c.recvNext
	c.recvNext++
	sl := int(c.slot)
	b := int(id%uint64(c.recvDepth)) * sl
	if err := c.rsp.qp.PostRecv(rc.RecvWR{ID: id, Buf: c.recvBuf[b : b+sl : b+sl]}); err != nil {
		panic(err)
	}
}

// postMore posts work requests while fewer than q are outstanding.
func (c *conn) postMore(now sim.Time) {
	if c.coll != nil {
		return // a collective posts its chunks itself (collPump)
	}
	for c.posted < c.gen.count && c.posted-c.completed < int64(c.q) {
		c.post(now)
	}
}

// post posts WR number c.posted into its slot. WRITEs and SENDs send the
// WR's bytes straight from the pattern; a READ's source and an atomic's
// target are written into the responder's region first, as the
// application there would, unless the requester is in the Error state:
// then the WR is flushed at once and never reaches the responder, and
// copying a large READ's source for each of thousands of flushed WRs would
// cost more than the rest of the run.
func (c *conn) post(now sim.Time) {
	s := c.req.nic.s // in the conn's first line
	n := c.posted
	op, size := c.gen.at(n)
	slot := int(n % int64(c.q))
	off := slot * int(c.slot)
	wr := rc.WR{ID: uint64(n), RemoteAddr: c.mr.Addr + uint64(off), RKey: c.mr.RKey}
	flushed := c.req.qp.State() == rc.StateError
	switch op {
	case opWrite:
		wr.Opcode = rc.WRRDMAWrite
		wr.Local = s.pat.data(c.gen.key, n, size)
	case opSend:
		wr.Opcode = rc.WRSend
		wr.Local = s.pat.data(c.gen.key, n, size)
		c.sends.Push(n)
	case opRead:
		if !flushed {
			copy(c.mr.Buf[off:off+size], s.pat.data(c.gen.key, n, size))
		}
		wr.Opcode = rc.WRRDMARead
		wr.Local = c.local[off : off+size : off+size]
	case opFetchAdd, opCmpSwap:
		orig, operand, compare, _ := atomicOperands(op, wrKey(c.gen.key, n))
		if !flushed {
			binary.LittleEndian.PutUint64(c.mr.Buf[off:], orig)
		}
		wr.Opcode = rc.WRAtomicFetchAdd
		wr.CompareAdd = operand
		if op == opCmpSwap {
			wr.Opcode = rc.WRAtomicCmpSwap
			wr.CompareAdd, wr.Swap = compare, operand
		}
		wr.Local = c.local[off : off+8 : off+8]
	}
	*c.postTime(slot) = now
	c.posted++
	s.st.posted++
	if err := c.req.qp.PostSend(wr); err != nil {
		panic(fmt.Sprintf("roce: PostSend %s of %d bytes: %v", op, size, err))
	}
}

func (c *conn) fail(format string, a ...any) {
	s := c.s
	s.st.checkFailures++
	if s.fab != nil {
		s.fab.bad[c.id] = true
	}
	if s.st.firstFailure == "" {
		s.st.firstFailure = fmt.Sprintf("connection %d: ", c.id) + fmt.Sprintf(format, a...)
	}
}

// onSend handles a send completion: it must be the next WR in posting
// order; a successful one has its data checked where it landed, after
// which the slot may be reused.
func (c *conn) onSend(now sim.Time, cp *rc.Completion) {
	if c.coll != nil {
		c.collSent(now, cp)
		return
	}
	s := c.req.nic.s // in the conn's first line
	n := c.completed
	if cp.WRID != uint64(n) {
		s.st.orderErrors++
		c.fail("completion for WR %d while WR %d was next", cp.WRID, n)
		if cp.WRID < uint64(c.posted) {
			n = int64(cp.WRID)
		}
	}
	c.completed++
	s.done++
	if f := s.fab; f != nil {
		if cp.Status != rc.Success {
			f.bad[c.id] = true
		}
		if c.completed == c.gen.count {
			f.flowDone(c.id, now)
		}
	}
	s.st.wrStatus[cp.Status&31]++
	s.st.lastCompletion = now
	if s.done == s.total {
		s.finished = true
	}
	if cp.Status != rc.Success {
		return
	}
	op, size := c.gen.at(n)
	slot := int(n % int64(c.q))
	off := slot * int(c.slot)
	s.hist.Record(now - *c.postTime(slot))
	s.st.bytes += uint64(size)
	s.st.checks++
	switch op {
	case opWrite:
		if !s.pat.check(c.mr.Buf[off:off+size], c.gen.key, n) {
			c.fail("WRITE WR %d (%d bytes): the responder's memory does not hold the data", n, size)
		}
	case opRead:
		if !s.pat.check(c.local[off:off+size], c.gen.key, n) {
			c.fail("READ WR %d (%d bytes): the local buffer does not hold the responder's data", n, size)
		}
	case opSend:
		// Checked at the responder's receive completion, which comes first.
		if c.sends.Len() > 0 && *c.sends.Front() <= n {
			c.fail("SEND WR %d completed before the responder received it", n)
		}
	case opFetchAdd, opCmpSwap:
		orig, _, _, after := atomicOperands(op, wrKey(c.gen.key, n))
		got := binary.LittleEndian.Uint64(c.local[off:])
		target := binary.LittleEndian.Uint64(c.mr.Buf[off:])
		if got != orig || target != after {
			c.fail("%s WR %d: returned %#x (want %#x), target %#x (want %#x)", op, n, got, orig, target, after)
		}
	}
	if cp.ByteLen != uint32(size) {
		c.fail("WR %d: completion length %d, want %d", n, cp.ByteLen, size)
	}
	if f := s.fab; f != nil && c.completed == c.gen.count {
		f.releaseBuffers(c)
	}
}

// onRecv handles a receive completion at the responder: the buffer must
// hold the next SEND's data; the buffer is then posted again.
func (c *conn) onRecv(now sim.Time, cp *rc.Completion) {
	if c.coll != nil {
		c.collRecv(now, cp)
		return
	}
	s := c.req.nic.s // in the conn's first line
	s.st.recvStatus[cp.Status&31]++
	if cp.Status != rc.Success {
		return
	}
	if c.sends.Len() == 0 {
		s.st.recvWithoutSend++
		c.fail("receive completion %d with no SEND outstanding", cp.WRID)
		return
	}
	n := c.sends.Pop()
	_, size := c.gen.at(n)
	b := int(cp.WRID%uint64(c.recvDepth)) * int(c.slot)
	s.st.checks++
	if cp.ByteLen != uint32(size) || !s.pat.check(c.recvBuf[b:b+size], c.gen.key, n) {
		c.fail("SEND WR %d (%d bytes): receive %d holds %d bytes that are not the data", n, size, cp.WRID, cp.ByteLen)
	}
	if c.repostDelay == 0 {
		c.postRecv()
		return
	}
	s.eng.Schedule(now+c.repostDelay, c, 0, 0)
}

// Handle re-posts a receive buffer after the scenario's delay.
func (c *conn) Handle(ev sim.Event) {
	c.postRecv()
	c.rsp.service(ev.At)
	c.rsp.nic.kick(ev.At)
}

// MarkCE marks a RoCEv2/IPv4 Ethernet frame (up to two VLAN tags)
// congestion-experienced: it sets the IPv4 ECN field to CE (0b11) if the
// frame is ECN-capable (ECT(0) or ECT(1)) and rewrites the IPv4 header
// checksum. The ICRC masks the TOS byte and the header checksum, so the
// frame stays valid. It reports whether it changed the frame; it is the
// sim.Network MarkCE hook the simulator installs.
func MarkCE(frame []byte) bool {
	if len(frame) < packet.EthernetLen {
		return false
	}
	off := 12
	et := binary.BigEndian.Uint16(frame[off:])
	for i := 0; i < packet.MaxVLANs && (et == 0x8100 || et == 0x88A8 || et == 0x9100); i++ {
		off += 4
		if len(frame) < off+2 {
			return false
		}
		et = binary.BigEndian.Uint16(frame[off:])
	}
	if et != 0x0800 || len(frame) < off+2+packet.IPv4Len {
		return false
	}
	ip := packet.IPv4(frame[off+2:])
	if ip.Version() != 4 || ip.HeaderLen() < packet.IPv4Len || len(ip) < ip.HeaderLen() {
		return false
	}
	tos := ip.TOS()
	if e := tos & 3; e == 0 || e == 3 {
		return false
	}
	ip.SetTOS(tos | 3)
	ip.SetChecksum(ip.ComputeChecksum())
	return true
}

// Prefetching. With thousands of connections taking turns, the state of
// the QP a packet is for has left the cache by the time the packet is
// handled: every line it touches is a wait for memory (measured: most of
// what a packet costs with 10,000 QPs more than with one). Where the
// simulator knows which QP comes next, it asks for those lines early
// (internal/prefetch), and they arrive while other events run:
//
//   - The NIC's round-robin ring says which QP ends send next: at each
//     kick, the QP end line of the one two places ahead, and the QP of the
//     next one (whose end line the previous kick asked for).
//   - A frame put on the wire reaches the other end of its connection
//     microseconds of simulated time later, hundreds of events on: the
//     conn, that end's QP and, for a request carrying a RETH (an RDMA
//     WRITE's First or Only packet), the bytes of the region it writes
//     (later packets of a message follow on in the region, which the
//     CPU's own prefetcher sees). The region's lines (64 for 4 KiB) are
//     asked for aheadLines at a time, at each kick and each frame
//     received (Sim.ahead, a prefetch.Queue), not all at once: a burst of
//     64 prefetches waits for fill buffers and stalls the core.
//
// BenchmarkPrefetchGain measures what it gains on the 10,000-QP incast.
// With few connections their state stays in the cache, and asking for it
// only costs instructions, so a Sim prefetches only when its connections'
// state is larger than prefetchAbove. Prefetching changes nothing the
// simulation computes (TestPrefetchChangesNothing); prefetching false turns
// it off, for that benchmark.
var prefetching = true

const (
	connLines = int(unsafe.Sizeof(conn{}) / 64)
	qpLines   = int((unsafe.Sizeof(rc.QP{}) + 63) / 64) // QPs start on lines (rc.Slab)
	// connStateBytes is a connection's state: the conn and its two QPs.
	connStateBytes = int(unsafe.Sizeof(conn{})) + 2*64*qpLines
	// prefetchAbove is half of a 2-4 MiB per-core L2 cache, which the
	// buffers and frames share.
	prefetchAbove = 1 << 20
	// aheadLines is how many of the queued region lines each kick and
	// each frame received ask for. 10-12 gave the 10,000-QP incast about
	// 0.83x the time per event of asking for a region whole (median ratios
	// against the one-QP incast 1.71-1.84 against 2.07-2.21,
	// BenchmarkQPScalingRatio, 2-core Intel VM); 4, 8, 16 and 24 did less
	// well, and queueing the conn and QP lines too was slower.
	aheadLines = 12
)

// prefetchNext asks for the state of the QP ends next in the NIC's ring
// (when the Sim prefetches).
func (n *nic) prefetchNext() {
	k := n.active.Len()
	if k > 1 {
		prefetch.Lines(unsafe.Pointer(*n.active.At(1)), 1)
	}
	if k > 0 {
		prefetch.Lines(unsafe.Pointer((*n.active.At(0)).qp), qpLines)
	}
}

// prefetchPeer asks for what packet t, which e sends, will touch at the
// other end of e's connection (when the Sim prefetches).
func (n *nic) prefetchPeer(e *qpEnd, t *packet.Fields) {
	c := e.conn
	p := &c.rsp
	if !e.isReq {
		p = &c.req
	}
	prefetch.Lines(unsafe.Pointer(c), connLines)
	prefetch.Lines(unsafe.Pointer(p.qp), qpLines)
	if e.isReq && t.BTH.Opcode.Info().Has(opcode.RETH) {
		if off := t.RETH.VA - c.mr.Addr; off < uint64(len(c.mr.Buf)) {
			k := min(uint64(len(t.Payload)), uint64(len(c.mr.Buf))-off)
			n.s.ahead.Add(unsafe.Pointer(&c.mr.Buf[off]), int((k+63)/64))
		}
	}
}
