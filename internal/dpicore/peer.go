package dpicore

import (
	"math/rand/v2"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/gen"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// PeerConfig is what a peer is made with.
type PeerConfig struct {
	QPN, DestQPN uint32 // the peer's QP number and the device's
	SQPSN        uint32 // first PSN the peer's requests carry
	RQPSN        uint32 // first PSN the peer expects of the device's requests
	MTU          int    // path MTU: 256, 512, 1024, 2048 or 4096

	// The peer's one memory region: MRLen bytes at MRAddr under R_Key
	// MRRKey, every remote right granted, filled with rocekit gen's
	// "pattern" (byte at offset i = (i + (i>>8) + (i>>16) + (i>>24)) & 0xff).
	// Local buffers of posted work requests are taken from it too.
	MRAddr uint64
	MRRKey uint32
	MRLen  int
}

// PeerStats counts what a peer did.
type PeerStats struct {
	Received    uint64     // frames given to Rx
	Rejected    uint64     // of those, dropped before the QP: not decodable, bad ICRC
	Sent        uint64     // frames handed out by Tx
	Coalesced   uint64     // ACKs never sent: a later ACK covered them (ack_every)
	Faults      [32]uint64 // faults applied, by kind: Faults[gen.Drop] frames lost, ...
	FaultsTotal uint64     // faults applied, every kind
	QP          rc.Stats   // the QP's own counters (retransmissions, NAKs, RNR NAKs, ...)
}

// outFrame is a frame waiting in the peer's output queue.
type outFrame struct {
	at  int64 // not before this time
	buf []byte
}

// faultSpec is one fault the peer applies to what it sends.
type faultSpec struct {
	spec gen.FaultSpec
	rng  *rand.Rand
}

// Peer is one end of an RC connection (an rc.QP: requester and responder)
// talking to a device under test frame by frame: the device's frames go in
// through Rx, time through Tick, and the peer's frames come out of Tx, one
// at a time, once their time has come. Between the QP and Tx sit, in this
// order, ACK coalescing (option ack_every), the faults of gen applied to
// what the peer sends (AddFault) and READ response pacing (option
// read_bytes_per_us). Completions come out of Poll.
type Peer struct {
	cfg   PeerConfig
	rcfg  rc.Config
	qp    *rc.QP
	mem   *rc.Memory
	mr    *rc.MR
	now   int64
	begun bool // traffic began: QP options are fixed

	encap   packet.Encap
	reverse bool
	tmpl    packet.FrameFields
	calc    icrc.Calc
	fr      packet.Frame
	scratch []byte

	// receive buffers kept posted
	recvWQEs, recvBytes int
	recvBuf             []byte
	recvNext            uint64
	recvPosted          int
	rnrNAKs             uint64 // post no receive buffer before this many RNR NAKs went out

	// ACK coalescing
	ackEvery  int
	ackDelay  int64
	acks      uint64
	held      []byte // the newest ACK not sent yet, when holding
	holding   bool
	heldSince int64

	// faults
	seed     uint64
	faults   []faultSpec
	nOut     int    // frames past coalescing: the index faults are decided by
	reorder  []byte // a frame held to go after the next one
	reorderT int64

	// pacing
	readRate int64 // bytes per microsecond; 0: unpaced
	readFree int64

	q     []outFrame // FIFO from qh
	qh    int
	free  [][]byte
	comps []rc.Completion
	ch    int

	stats PeerStats
}

// NewPeer returns a peer in RTS with rc.DefaultConfig's timers and limits,
// 16 receive buffers of 4096 bytes kept posted (one posted again for each
// SEND received), no coalescing, no pacing and no faults.
func NewPeer(c PeerConfig) (*Peer, error) {
	switch {
	case !rc.ValidMTU(c.MTU):
		return nil, errf(ErrArg, "mtu %d: want 256, 512, 1024, 2048 or 4096", c.MTU)
	case c.QPN > 0xFFFFFF || c.DestQPN > 0xFFFFFF:
		return nil, errf(ErrArg, "qpn 0x%x, dest_qpn 0x%x: QP numbers are 24 bits", c.QPN, c.DestQPN)
	case c.SQPSN > rc.PSNMask || c.RQPSN > rc.PSNMask:
		return nil, errf(ErrArg, "sq_psn 0x%x, rq_psn 0x%x: PSNs are 24 bits", c.SQPSN, c.RQPSN)
	case c.MRLen < 0 || c.MRLen > 1<<30:
		return nil, errf(ErrArg, "mr_len %d: want 0 to 2^30 bytes", c.MRLen)
	case c.MRAddr+uint64(c.MRLen) < c.MRAddr:
		return nil, errf(ErrArg, "mr_addr 0x%x + mr_len %d wraps around", c.MRAddr, c.MRLen)
	}
	p := &Peer{cfg: c, mem: rc.NewMemory(), encap: packet.RoCEv2IPv4, recvWQEs: 16, recvBytes: 4096,
		ackEvery: 1, ackDelay: 2 * int64(rc.Microsecond)}
	buf := make([]byte, c.MRLen)
	for i := range buf {
		buf[i] = gen.PatternByte(i)
	}
	p.mr = &rc.MR{Addr: c.MRAddr, RKey: c.MRRKey, Access: rc.AccessAll, Buf: buf}
	if err := p.mem.Register(p.mr); err != nil {
		return nil, errf(ErrArg, "%v", err)
	}
	p.rcfg = rc.DefaultConfig()
	p.rcfg.QPN, p.rcfg.DestQPN, p.rcfg.SQPSN, p.rcfg.RQPSN, p.rcfg.MTU = c.QPN, c.DestQPN, c.SQPSN, c.RQPSN, c.MTU
	p.rcfg.Memory = p.mem
	if err := p.remake(); err != nil {
		return nil, err
	}
	return p, nil
}

// remake builds the QP, the frame template and the receive buffers anew
// from the configuration (before traffic only).
func (p *Peer) remake() error {
	q, err := rc.New(p.rcfg)
	if err != nil {
		return errf(ErrArg, "%v", err)
	}
	p.qp = q
	p.tmpl = packet.DefaultFrame(p.encap)
	f := &p.tmpl
	if p.reverse {
		f.Eth.Src, f.Eth.Dst = f.Eth.Dst, f.Eth.Src
		f.IPv4.Src, f.IPv4.Dst = f.IPv4.Dst, f.IPv4.Src
		f.IPv6.Src, f.IPv6.Dst = f.IPv6.Dst, f.IPv6.Src
		f.GRH.SGID, f.GRH.DGID = f.GRH.DGID, f.GRH.SGID
	}
	f.UDP.SrcPort = packet.UDPSourcePort(0, p.rcfg.QPN, p.rcfg.DestQPN)
	p.recvBuf = make([]byte, p.recvWQEs*p.recvBytes)
	p.recvNext, p.recvPosted = 0, 0
	p.postRecvs()
	return nil
}

func (p *Peer) postRecvs() {
	if p.rnrNAKs > 0 {
		if p.qp.Stats().RNRNAKsSent < p.rnrNAKs {
			return
		}
		p.rnrNAKs = 0
	}
	for p.recvPosted < p.recvWQEs && p.qp.State() != rc.StateError {
		s := int(p.recvNext%uint64(p.recvWQEs)) * p.recvBytes
		_ = p.qp.PostRecv(rc.RecvWR{ID: p.recvNext, Buf: p.recvBuf[s : s+p.recvBytes : s+p.recvBytes]})
		p.recvNext++
		p.recvPosted++
	}
}

// Options, by name, for SetOption.
//
//	ack_every N           send only every Nth ACK (1: every one); a held ACK
//	                      goes out when ack_delay_ns passes without the Nth
//	ack_delay_ns N        how long an ACK may be held (default 2000)
//	read_bytes_per_us N   pace READ response frames to N bytes of frame per
//	                      microsecond (0: unpaced, the default)
//	recv_wqes N           receive buffers kept posted (default 16); 0 makes
//	                      every SEND meet an RNR NAK (ib-facts.md §5.7)
//	recv_bytes N          size of each receive buffer (default 4096)
//	rnr_naks N            post no receive buffer until the peer has answered
//	                      N SENDs with an RNR NAK (ib-facts.md §5.7)
//	min_rnr_timer N       5-bit RNR timer code the peer's RNR NAKs carry
//	rnr_retry N           RNR NAKs the peer's requester sits out (7: infinite)
//	retry_cnt N           retransmissions after timeouts or sequence NAKs
//	timeout N             5-bit local ACK timeout code (4.096 us x 2^N; 0: none)
//	seed N                seed of the faults (AddFault)
//	encap N               1 RoCEv2/IPv4 (default), 2 RoCEv2/IPv6, 3 RoCEv1
//	reverse N             1: the peer is 192.168.1.2 (02:00:00:00:00:02) and
//	                      the device .1; 0 (default): the other way round
//
// The options from recv_wqes to reverse change the QP and may be set only
// before the first Rx, Tick or post.
var Options = []string{"ack_every", "ack_delay_ns", "read_bytes_per_us", "recv_wqes", "recv_bytes", "rnr_naks",
	"min_rnr_timer", "rnr_retry", "retry_cnt", "timeout", "seed", "encap", "reverse"}

// SetOption sets option name (see Options) to v.
func (p *Peer) SetOption(name string, v int64) error {
	in := func(lo, hi int64) error {
		if v < lo || v > hi {
			return errf(ErrArg, "option %s: %d is out of range [%d, %d]", name, v, lo, hi)
		}
		return nil
	}
	switch name {
	case "ack_every":
		if err := in(1, 1<<20); err != nil {
			return err
		}
		p.ackEvery = int(v)
		return nil
	case "ack_delay_ns":
		if err := in(0, 1<<40); err != nil {
			return err
		}
		p.ackDelay = v * int64(rc.Nanosecond)
		return nil
	case "read_bytes_per_us":
		if err := in(0, 1<<40); err != nil {
			return err
		}
		p.readRate = v
		return nil
	}
	var err error
	switch name {
	case "recv_wqes":
		err = in(0, 1<<16)
	case "recv_bytes":
		err = in(0, 1<<31)
	case "rnr_naks":
		err = in(0, 1<<40)
	case "min_rnr_timer", "timeout":
		err = in(0, 31)
	case "rnr_retry", "retry_cnt":
		err = in(0, 7)
	case "seed":
		err = in(-1<<63, 1<<63-1)
	case "encap":
		err = in(1, 3)
	case "reverse":
		err = in(0, 1)
	default:
		return errf(ErrArg, "option %q: unknown (want one of %v)", name, Options)
	}
	if err != nil {
		return err
	}
	if p.begun {
		return errf(ErrState, "option %s: set it before the first rx, tick or post", name)
	}
	if name == "recv_wqes" && int64(p.recvBytes)*v > 1<<30 || name == "recv_bytes" && int64(p.recvWQEs)*v > 1<<30 {
		return errf(ErrArg, "option %s: receive buffers would take more than 2^30 bytes", name)
	}
	switch name {
	case "recv_wqes":
		p.recvWQEs = int(v)
	case "recv_bytes":
		p.recvBytes = int(v)
	case "rnr_naks":
		p.rnrNAKs = uint64(v)
	case "min_rnr_timer":
		p.rcfg.MinRNRTimer = uint8(v)
	case "timeout":
		p.rcfg.Timeout = uint8(v)
	case "rnr_retry":
		p.rcfg.RNRRetry = uint8(v)
	case "retry_cnt":
		p.rcfg.RetryCnt = uint8(v)
	case "seed":
		p.seed = uint64(v)
		for si := range p.faults {
			p.faults[si].rng = p.faultRNG(si)
		}
		return nil
	case "encap":
		p.encap = packet.Encap(v)
	case "reverse":
		p.reverse = v == 1
	}
	return p.remake()
}

// faultRNG is the random source of fault si, seeded as rocekit gen seeds
// the choice of frames for its fault si.
func (p *Peer) faultRNG(si int) *rand.Rand {
	k := p.faults[si].spec.Kind
	return rand.New(rand.NewPCG(p.seed, uint64(k)<<32|uint64(si)+1))
}

// AddFault adds a fault, written as rocekit gen's --fault takes it, applied
// to the frames the peer sends: KIND:RATE hits each frame with probability
// RATE, KIND:@N exactly the peer's Nth frame (from 0, counted before the
// faults). Kinds: drop (loss), duplicate, reorder (swap with the next
// frame; a frame held when ack_delay_ns passes without a next one goes
// alone), and those that change a frame's bytes (bad-icrc, flip-covered,
// flip-masked, truncate, wrong-padcnt, reserved-opcode, tver). A frame
// takes one fault at most, the first added that hits it.
func (p *Peer) AddFault(spec string) error {
	fs, err := gen.ParseFault(spec)
	if err != nil {
		return errf(ErrArg, "fault %q: %v", spec, err)
	}
	switch k := fs.Kind; {
	case k == gen.Drop || k == gen.Duplicate || k == gen.Reorder || k.Corrupts():
	default:
		return errf(ErrArg, "fault %q: %s is not one a peer applies (drop, duplicate, reorder, or one that changes a frame's bytes)", spec, k)
	}
	if fs.Rate == 0 && fs.At < 0 {
		return errf(ErrArg, "fault %q: give a rate (KIND:0.05) or a frame (KIND:@N); a live stream has no end to choose one frame from", spec)
	}
	p.faults = append(p.faults, faultSpec{spec: fs})
	p.faults[len(p.faults)-1].rng = p.faultRNG(len(p.faults) - 1)
	return nil
}

func (p *Peer) advance(now int64) error {
	if now < p.now {
		return errf(ErrArg, "time %d ps is before the last one given, %d ps: time never goes back", now, p.now)
	}
	p.now = now
	p.begun = true
	return nil
}

// Rx gives the peer a frame the device sent, at time now (picoseconds).
// A frame that does not decode as RoCE, or whose ICRC is wrong, is dropped
// as a receiver drops it and returned as an ErrFrame, counted in
// PeerStats.Rejected. The bytes are not kept.
func (p *Peer) Rx(data []byte, now int64) error {
	if err := p.advance(now); err != nil {
		return err
	}
	p.stats.Received++
	fr := &p.fr
	err := fr.DecodeEthernet(data)
	if !fr.IsRoCE() || fr.Transport.BTH == nil || err != nil {
		p.stats.Rejected++
		if err == nil {
			return errf(ErrFrame, "rx: frame of %d bytes is not a RoCE frame", len(data))
		}
		return errf(ErrFrame, "rx: frame of %d bytes dropped: %v", len(data), err)
	}
	if ok, want, got, err := fr.CheckICRC(); err != nil || !ok {
		p.stats.Rejected++
		return errf(ErrFrame, "rx: frame dropped: ICRC 0x%08x, computed 0x%08x (ib-facts.md §3)", got, want)
	}
	p.qp.Receive(rc.Time(now), &fr.Transport)
	if p.rnrNAKs > 0 {
		p.postRecvs()
	}
	p.drain()
	p.harvest()
	return nil
}

// Tick tells the peer the time is now: timers run, held ACKs and paced
// frames fall due.
func (p *Peer) Tick(now int64) error {
	if err := p.advance(now); err != nil {
		return err
	}
	p.qp.Tick(rc.Time(now))
	p.drain()
	p.harvest()
	if p.holding && now >= p.heldSince+p.ackDelay {
		p.releaseHeld()
	}
	if p.reorder != nil && now >= p.reorderT+p.ackDelay {
		p.release()
	}
	return nil
}

// drain takes every frame the QP has to send now.
func (p *Peer) drain() {
	t := &p.tmpl
	for p.qp.NextPacket(rc.Time(p.now), &t.Transport) {
		n := t.Len()
		if cap(p.scratch) < n {
			p.scratch = make([]byte, n)
		}
		b := p.scratch[:n]
		if _, err := t.EncodeWith(b, &p.calc); err != nil {
			panic("dpicore: encoding the peer's " + t.Transport.BTH.Opcode.String() + ": " + err.Error())
		}
		op := t.Transport.BTH.Opcode
		if p.ackEvery > 1 && op == opcode.RCAcknowledge && t.Transport.AETH.Syndrome.Kind() == aeth.ACK {
			p.acks++
			if p.acks%uint64(p.ackEvery) != 0 {
				if p.holding {
					p.stats.Coalesced++
				} else {
					p.heldSince = p.now
				}
				p.held, p.holding = append(p.held[:0], b...), true
				continue
			}
			if p.holding {
				p.stats.Coalesced++
				p.holding = false
			}
		} else if p.holding {
			p.releaseHeld()
		}
		p.fault(b, op)
	}
}

// releaseHeld sends the held ACK.
func (p *Peer) releaseHeld() {
	p.holding = false
	p.acks = 0
	p.fault(p.held, opcode.RCAcknowledge)
}

// fault applies the faults to the peer's next frame and queues what is
// left of it.
func (p *Peer) fault(b []byte, op opcode.Opcode) {
	i := p.nOut
	p.nOut++
	var k gen.Kind
	for si := range p.faults {
		f := &p.faults[si]
		hit := f.spec.At == i
		if f.spec.Rate > 0 {
			hit = f.rng.Float64() < f.spec.Rate
		}
		if hit && k == 0 {
			k = f.spec.Kind
		}
	}
	read := op.Operation() >= opcode.RDMAReadResponseFirst && op.Operation() <= opcode.RDMAReadResponseOnly &&
		op.Transport() == opcode.RC
	switch {
	case k == 0:
	case k == gen.Drop:
		p.count(k)
		return
	case k == gen.Duplicate:
		p.count(k)
		p.queue(b, read)
	case k == gen.Reorder:
		if p.reorder == nil {
			p.count(k)
			p.reorder = append(p.takeBuf(len(b)), b...)
			p.reorderT = p.now
			return
		}
	default:
		c := append(p.takeBuf(len(b)), b...)
		out, _, ok, err := gen.Corrupt(k, p.encap, c, p.seed, i)
		if err == nil && ok {
			p.count(k)
			b = out
		}
		p.queue(b, read)
		p.free = append(p.free, c[:0])
		p.release()
		return
	}
	p.queue(b, read)
	p.release()
}

// release queues the frame held by a reorder fault after the frame just
// queued.
func (p *Peer) release() {
	if r := p.reorder; r != nil {
		p.reorder = nil
		p.queue(r, false)
		p.free = append(p.free, r[:0])
	}
}

func (p *Peer) count(k gen.Kind) {
	if int(k) < len(p.stats.Faults) {
		p.stats.Faults[k]++
	}
	p.stats.FaultsTotal++
}

func (p *Peer) takeBuf(n int) []byte {
	if k := len(p.free); k > 0 {
		b := p.free[k-1]
		p.free = p.free[:k-1]
		if cap(b) >= n {
			return b[:0]
		}
	}
	return make([]byte, 0, max(n, 256))
}

// queue appends a copy of b to the output queue; read says it is a READ
// response, which pacing holds back.
func (p *Peer) queue(b []byte, read bool) {
	at := p.now
	if read && p.readRate > 0 {
		at = max(at, p.readFree)
		p.readFree = at + int64(len(b))*int64(rc.Microsecond)/p.readRate
	}
	if len(p.q) > 0 && at < p.q[len(p.q)-1].at {
		at = p.q[len(p.q)-1].at // FIFO: never before the frame ahead
	}
	if p.qh > 0 && p.qh >= len(p.q)/2 {
		// Sent frames fill the front: move the rest down, so that a queue
		// that never empties does not grow.
		k := copy(p.q, p.q[p.qh:])
		clear(p.q[k:])
		p.q, p.qh = p.q[:k], 0
	}
	p.q = append(p.q, outFrame{at: at, buf: append(p.takeBuf(len(b)), b...)})
}

// Tx copies the next frame due by the last time given into dst and
// returns its length, or Empty (as an *Error with Code Empty) when no frame
// is due. A dst too small is an ErrSpace and the frame stays queued.
func (p *Peer) Tx(dst []byte) (int, error) {
	if p.qh == len(p.q) || p.q[p.qh].at > p.now {
		return 0, errEmpty
	}
	f := &p.q[p.qh]
	if len(dst) < len(f.buf) {
		return 0, errf(ErrSpace, "tx: buffer of %d bytes: the frame has %d", len(dst), len(f.buf))
	}
	n := copy(dst, f.buf)
	p.free = append(p.free, f.buf[:0])
	f.buf = nil
	p.qh++
	p.stats.Sent++
	return n, nil
}

var errEmpty = &Error{Code: Empty, Msg: "nothing left"}

// NextWake returns when the peer next needs Tick (a timer, a paced or held
// frame), and false if nothing is pending.
func (p *Peer) NextWake() (int64, bool) {
	t, ok := int64(0), false
	take := func(v int64) {
		if !ok || v < t {
			t, ok = v, true
		}
	}
	if w, y := p.qp.NextWake(); y {
		take(int64(w))
	}
	if p.qh < len(p.q) {
		take(p.q[p.qh].at)
	}
	if p.holding {
		take(p.heldSince + p.ackDelay)
	}
	if p.reorder != nil {
		take(p.reorderT + p.ackDelay)
	}
	return t, ok
}

// harvest takes the QP's completions into the peer's queue and posts a
// receive buffer for each one a SEND used.
func (p *Peer) harvest() {
	if p.qp.PendingCompletions() == 0 {
		return
	}
	if p.ch == len(p.comps) {
		p.comps, p.ch = p.comps[:0], 0
	}
	n0 := len(p.comps)
	p.comps = p.qp.AppendCompletions(p.comps)
	for _, x := range p.comps[n0:] {
		if x.Opcode.IsRecv() {
			p.recvPosted--
		}
	}
	p.postRecvs()
}

// Poll returns the next completion, or false if there is none. Completions
// wait until polled, as in a completion queue.
func (p *Peer) Poll(c *rc.Completion) bool {
	if p.ch == len(p.comps) {
		return false
	}
	*c = p.comps[p.ch]
	p.ch++
	return true
}

// local returns the n bytes of the peer's memory region at addr.
func (p *Peer) local(what string, addr uint64, n uint32) ([]byte, error) {
	m := p.mr
	if addr < m.Addr || addr-m.Addr > uint64(len(m.Buf)) || uint64(n) > uint64(len(m.Buf))-(addr-m.Addr) {
		return nil, errf(ErrArg, "%s: [0x%x, +%d) is outside the peer's memory region [0x%x, 0x%x)", what, addr, n, m.Addr, m.Addr+uint64(len(m.Buf)))
	}
	return m.Slice(addr, int(n)), nil
}

func (p *Peer) post(wr rc.WR) error {
	p.begun = true
	if err := p.qp.PostSend(wr); err != nil {
		return errf(ErrArg, "%v", err)
	}
	p.drain()
	p.harvest()
	return nil
}

// PostWrite posts an RDMA WRITE of the n bytes at local (in the peer's
// region) to remote under rkey at the device.
func (p *Peer) PostWrite(id, local uint64, n uint32, remote uint64, rkey uint32) error {
	b, err := p.local("post_write", local, n)
	if err != nil {
		return err
	}
	return p.post(rc.WR{ID: id, Opcode: rc.WRRDMAWrite, Local: b, RemoteAddr: remote, RKey: rkey})
}

// PostRead posts an RDMA READ of n bytes from remote under rkey at the
// device into local (in the peer's region).
func (p *Peer) PostRead(id, local uint64, n uint32, remote uint64, rkey uint32) error {
	b, err := p.local("post_read", local, n)
	if err != nil {
		return err
	}
	return p.post(rc.WR{ID: id, Opcode: rc.WRRDMARead, Local: b, RemoteAddr: remote, RKey: rkey})
}

// PostSend posts a SEND of the n bytes at local (in the peer's region).
func (p *Peer) PostSend(id, local uint64, n uint32) error {
	b, err := p.local("post_send", local, n)
	if err != nil {
		return err
	}
	return p.post(rc.WR{ID: id, Opcode: rc.WRSend, Local: b})
}

// MemWrite copies b into the peer's region at addr.
func (p *Peer) MemWrite(addr uint64, b []byte) error {
	d, err := p.local("mem_write", addr, uint32(len(b)))
	if err == nil {
		copy(d, b)
	}
	return err
}

// MemRead copies len(dst) bytes of the peer's region at addr into dst.
func (p *Peer) MemRead(addr uint64, dst []byte) error {
	d, err := p.local("mem_read", addr, uint32(len(dst)))
	if err == nil {
		copy(dst, d)
	}
	return err
}

// State returns the QP's state (rc.StateRTS, or rc.StateError once it
// failed).
func (p *Peer) State() rc.State { return p.qp.State() }

// Stats returns the counters.
func (p *Peer) Stats() PeerStats {
	s := p.stats
	s.QP = p.qp.Stats()
	return s
}
