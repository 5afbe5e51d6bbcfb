package gen

import (
	"fmt"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// Reaction is what a conforming DUT does with an input frame, as the golden
// model (the receive checks of ib-facts.md §3 and §5.11, then an rc.QP)
// computed it.
type Reaction uint8

// Reactions.
const (
	Accept            Reaction = iota // processed; any ACK or response it asked for follows
	SilentDrop                        // dropped without a response (Reason says why)
	NAKSequence                       // NAK PSN sequence error (§5.4 rule 2)
	NAKInvalid                        // NAK invalid request (§5.6 class C); the QP goes to Error
	NAKAccess                         // NAK remote access error (class C); the QP goes to Error
	NAKOperational                    // NAK remote operational error
	RNR                               // RNR NAK: no receive WQE (§5.6 class B)
	DupReACK                          // duplicate SEND/WRITE: ACK again with the last completed PSN (§5.4 rule 3)
	DupReadReplay                     // duplicate READ: responses sent again from the saved resource
	DupAtomicReplay                   // duplicate atomic: ATOMIC ACK sent again with the saved value
	DupResponseReplay                 // duplicate FLUSH / ATOMIC WRITE: its empty READ response sent again
	DupDrop                           // duplicate with no saved resource: dropped (class D)
	numReactions
)

var reactionNames = [numReactions]string{
	Accept: "accept", SilentDrop: "silent drop", NAKSequence: "NAK PSN sequence error",
	NAKInvalid: "NAK invalid request", NAKAccess: "NAK remote access error", NAKOperational: "NAK remote operational error",
	RNR: "RNR NAK", DupReACK: "duplicate: re-ACK", DupReadReplay: "duplicate: READ response replayed",
	DupAtomicReplay: "duplicate: ATOMIC ACK replayed", DupResponseReplay: "duplicate: response replayed",
	DupDrop: "duplicate: silent drop",
}

func (r Reaction) String() string {
	if r < numReactions {
		return reactionNames[r]
	}
	return fmt.Sprintf("reaction-%d", uint8(r))
}

// Reactions returns every reaction in order.
func Reactions() []Reaction {
	rs := make([]Reaction, numReactions)
	for i := range rs {
		rs[i] = Reaction(i)
	}
	return rs
}

// ParseReaction parses a reaction name as String writes it.
func ParseReaction(s string) (Reaction, error) {
	for i, n := range reactionNames {
		if n == s {
			return Reaction(i), nil
		}
	}
	return 0, fmt.Errorf("unknown reaction %q", s)
}

// recvQueue is a QP's receive buffers: WQE n uses slot n mod count.
type recvQueue struct {
	buf         []byte
	size, count int
	next        uint64
	repost      bool
}

// model is the golden model of the DUT: the checks a receiver makes on
// every frame, then one rc.QP per DUT QP.
type model struct {
	dut   *DUT
	mem   *rc.Memory
	qps   []*rc.QP
	rqs   []recvQueue
	tmpl  []packet.FrameFields
	fr    packet.Frame
	calc  icrc.Calc
	comps []rc.Completion

	outFree sim.Time // when the output link is free
	obuf    []byte
	outs    []outFrame
}

// outFrame is one frame the DUT must send.
type outFrame struct {
	t      sim.Time
	data   []byte
	off, n int
	qp     int
	op     opcode.Opcode
	psn    uint32
	syn    aeth.Syndrome
	msn    uint32
}

func newModel(d *DUT) (*model, error) {
	if err := d.Check(); err != nil {
		return nil, err
	}
	m := &model{dut: d, mem: rc.NewMemory()}
	for _, r := range d.MRs {
		buf := make([]byte, r.Length)
		if r.Init == MemPattern {
			for i := range buf {
				buf[i] = PatternByte(i)
			}
		}
		if err := m.mem.Register(&rc.MR{Addr: r.Addr, RKey: r.RKey, Access: r.Access, Buf: buf}); err != nil {
			return nil, err
		}
	}
	for i := range d.QPs {
		q := &d.QPs[i]
		p, err := rc.New(q.rcConfig(m.mem))
		if err != nil {
			return nil, err
		}
		rq := recvQueue{size: q.RecvBytes, count: q.RecvWQEs, repost: q.RecvRepost}
		rq.buf = make([]byte, rq.size*rq.count)
		for k := 0; k < rq.count; k++ {
			m.post(p, &rq)
		}
		m.qps = append(m.qps, p)
		m.rqs = append(m.rqs, rq)
		m.tmpl = append(m.tmpl, d.outTemplate(q))
	}
	return m, nil
}

func (m *model) post(p *rc.QP, rq *recvQueue) {
	s := int(rq.next%uint64(rq.count)) * rq.size
	_ = p.PostRecv(rc.RecvWR{ID: rq.next, Buf: rq.buf[s : s+rq.size : s+rq.size]})
	rq.next++
}

// verdict is the model's answer for one input frame.
type verdict struct {
	reaction Reaction
	reason   string // why a frame was dropped, or what an accepted one did
	qp       int
	comps    []rc.Completion // the DUT's completions (valid until the next input)
}

// receive runs one input frame, whose first bit arrives at now, through the
// model and appends the frames the DUT must send to m.outs (reset first).
func (m *model) receive(now sim.Time, data []byte) verdict {
	m.outs = m.outs[:0]
	m.obuf = m.obuf[:0]
	m.comps = m.comps[:0]
	v := verdict{reaction: SilentDrop, qp: -1}
	d := m.dut
	if v.reason = m.checkFrame(data); v.reason != "" {
		return v
	}
	if v.reason = m.checkAddress(); v.reason != "" {
		return v
	}
	t := &m.fr.Transport
	qi := d.qpIndex(t.BTH.DestQP())
	if qi < 0 {
		v.reason = fmt.Sprintf("no DUT QP 0x%x (BTH.DestQP)", t.BTH.DestQP())
		return v
	}
	v.qp = qi
	q := m.qps[qi]
	st0 := q.Stats()
	wasErr := q.State() == rc.StateError
	q.Receive(rc.Time(now), t) // both integer picoseconds
	sent := m.respond(now, qi, now+d.txTime(len(data))+d.Latency)
	m.comps = q.AppendCompletions(m.comps)
	rq := &m.rqs[qi]
	for _, c := range m.comps {
		if c.Opcode.IsRecv() && c.Status == rc.Success && rq.repost && q.State() != rc.StateError {
			m.post(q, rq)
		}
	}
	v.comps = m.comps
	v.reaction, v.reason = m.classify(qi, wasErr, st0, q.Stats(), sent)
	return v
}

// checkFrame decodes data into m.fr and makes the checks of a frame as a
// whole (ib-facts.md §3): that it is a well-formed IB transport packet
// with a good ICRC, VCRC and IPv4 header checksum. It returns why the
// frame is dropped, or "".
func (m *model) checkFrame(data []byte) string {
	fr := &m.fr
	err := decode(fr, m.dut.Encap, data)
	t := &fr.Transport
	if !fr.IsRoCE() || t.BTH == nil || fr.Network() == nil {
		if err != nil {
			return "malformed: " + err.Error()
		}
		return "malformed: not an IB transport packet"
	}
	if err != nil && t.BTH.TVer() == 0 && t.BTH.Opcode().Valid() {
		return "malformed: " + err.Error()
	}
	l, ok := frameLayout(fr)
	if !ok {
		return "malformed: no room for the ICRC"
	}
	want, err := computeICRC(&m.calc, fr.Encap, data[l.l3:l.icrc])
	if err != nil {
		return "malformed: " + err.Error()
	}
	if got := icrc.Get(data[l.icrc:]); got != want {
		return fmt.Sprintf("bad ICRC: carries 0x%08x, computed 0x%08x (ib-facts.md §3.2)", got, want)
	}
	if l.vcrc >= 0 {
		if ok, w, g, _ := fr.CheckVCRC(); !ok {
			return fmt.Sprintf("bad VCRC: carries 0x%04x, computed 0x%04x (§3.3)", g, w)
		}
	}
	if fr.Encap == packet.RoCEv2IPv4 && fr.IPv4.ComputeChecksum() != fr.IPv4.Checksum() {
		return "bad IPv4 header checksum"
	}
	return ""
}

// checkAddress checks that frame m.fr is addressed to the DUT, by the
// addresses of its encapsulation. It returns why the frame is dropped, or
// "".
func (m *model) checkAddress() string {
	fr, self := &m.fr, &m.dut.Self
	switch fr.Encap {
	case packet.RoCEv2IPv4:
		if fr.Eth.Dst() != self.MAC || [4]byte(fr.IPv4[16:20]) != self.IPv4 {
			return "not addressed to the DUT (MAC or IPv4 destination)"
		}
	case packet.RoCEv2IPv6:
		if fr.Eth.Dst() != self.MAC || [16]byte(fr.IPv6[24:40]) != self.IPv6 {
			return "not addressed to the DUT (MAC or IPv6 destination)"
		}
	case packet.RoCEv1:
		if fr.Eth.Dst() != self.MAC || [16]byte(fr.GRH.DGID()) != self.IPv6 {
			return "not addressed to the DUT (MAC or DGID)"
		}
	case packet.IBLocal, packet.IBGlobal:
		if fr.LRH.DLID() != self.LID {
			return "not addressed to the DUT (DLID)"
		}
	}
	return ""
}

// sentSummary is what the frames the DUT sent for one input say about it.
type sentSummary struct {
	first  opcode.Opcode // the first frame's opcode; 0 if none was sent
	nak    aeth.Syndrome // the first NAK's syndrome, if hasNAK
	hasNAK bool          // a NAK was sent
	rnr    bool          // an RNR NAK was sent
}

// respond builds the frames DUT QP qi sends now, none before earliest and
// each when the output link is free, into m.obuf and m.outs.
func (m *model) respond(now sim.Time, qi int, earliest sim.Time) sentSummary {
	var s sentSummary
	q, ff := m.qps[qi], &m.tmpl[qi]
	for q.NextPacket(rc.Time(now), &ff.Transport) {
		o := outFrame{qp: qi, op: ff.Transport.BTH.Opcode, psn: ff.Transport.BTH.PSN}
		if o.op.Info().Has(opcode.AETH) {
			o.syn, o.msn = ff.Transport.AETH.Syndrome, ff.Transport.AETH.MSN
			switch o.syn.Kind() {
			case aeth.NAK:
				if !s.hasNAK {
					s.nak, s.hasNAK = o.syn, true
				}
			case aeth.RNRNAK:
				s.rnr = true
			}
		}
		if s.first == 0 {
			s.first = o.op
		}
		n := ff.Len()
		off := len(m.obuf)
		if cap(m.obuf)-off < n {
			m.obuf = append(m.obuf[:cap(m.obuf)], make([]byte, n+cap(m.obuf))...)
		}
		m.obuf = m.obuf[:off+n]
		if _, err := ff.EncodeWith(m.obuf[off:], &m.calc); err != nil {
			panic(fmt.Sprintf("gen: building the model's %s: %v", o.op, err))
		}
		o.off, o.n = off, n
		o.t = max(earliest, m.outFree)
		m.outFree = o.t + m.dut.txTime(n)
		m.outs = append(m.outs, o)
	}
	// The data slices are taken once obuf has stopped growing.
	for i := range m.outs {
		o := &m.outs[i]
		o.data = m.obuf[o.off : o.off+o.n : o.off+o.n]
	}
	return s
}

// classify names the reaction of DUT QP qi to input m.fr, and why, from
// the QP's statistics before (st0) and after (st1) it and from what it
// sent; wasErr is whether the QP was in the Error state before.
func (m *model) classify(qi int, wasErr bool, st0, st1 rc.Stats, sent sentSummary) (Reaction, string) {
	t := &m.fr.Transport
	switch {
	case st1.Dropped > st0.Dropped:
		return SilentDrop, dropReason(t, &m.dut.QPs[qi], wasErr)
	case st1.Duplicates > st0.Duplicates:
		switch {
		case len(m.outs) == 0:
			return DupDrop, "duplicate with no saved responder resource (class D)"
		case sent.first == opcode.RCAcknowledge:
			return DupReACK, ""
		case sent.first == opcode.RCAtomicAcknowledge:
			return DupAtomicReplay, ""
		case t.BTH.Opcode().Operation() == opcode.RDMAReadRequest:
			return DupReadReplay, ""
		default:
			return DupResponseReplay, ""
		}
	case st1.OutOfSequence > st0.OutOfSequence:
		if sent.hasNAK && sent.nak.NAKCode() == aeth.PSNSequenceError {
			return NAKSequence, fmt.Sprintf("PSN %d is past the expected PSN %d", t.BTH.PSN(), m.outs[0].psn)
		}
		return SilentDrop, "out of sequence: the PSN sequence error NAK for this gap was already sent"
	case sent.hasNAK:
		r := NAKOperational
		switch sent.nak.NAKCode() {
		case aeth.PSNSequenceError:
			r = NAKSequence
		case aeth.InvalidRequest:
			r = NAKInvalid
		case aeth.RemoteAccessError:
			r = NAKAccess
		}
		return r, "the QP goes to the Error state (§5.6 class C)"
	case sent.rnr:
		return RNR, "no receive WQE posted"
	}
	return Accept, ""
}

// dropReason explains why the QP dropped a packet that passed the frame
// checks (ib-facts.md §5.10, §5.11, §5.3).
func dropReason(t *packet.Packet, q *QP, wasErr bool) string {
	op := t.BTH.Opcode()
	pk := q.pkey()
	switch {
	case wasErr:
		return "the QP is in the Error state (§5.10)"
	case t.BTH.TVer() != 0:
		return fmt.Sprintf("TVer %d, must be 0 (§5.11)", t.BTH.TVer())
	case !rc.PKeyMatch(t.BTH.PKey(), pk):
		return fmt.Sprintf("P_Key 0x%04x does not match the QP's 0x%04x (§5.11)", t.BTH.PKey(), pk)
	case !op.Valid():
		return fmt.Sprintf("opcode 0x%02x is reserved (§2.2)", uint8(op))
	case op.Transport() != opcode.RC:
		return fmt.Sprintf("opcode %s is not an RC opcode (§5.11)", op)
	case op.IsResponse():
		return "a response for a PSN the DUT's requester has not sent (§5.3)"
	}
	return "dropped by the QP"
}
