// Package analysis follows InfiniBand / RoCE conversations across the frames
// of a capture: it groups packets per queue-pair flow, pairs the two
// directions of each connection, reassembles messages, matches READ requests
// with their responses, checks PSN order with 24-bit arithmetic, counts NAKs,
// CNPs, ECN marks and CRC failures, estimates ACK round-trip times, and
// reports per-frame anomalies (Warning) and a per-connection Summary.
//
// The rules come from ib-facts.md §5 (IBA Vol. 1 ch. 9 as Linux rxe
// implements it): PSN comparison §5.1, segmentation §5.2, PSN consumption
// (a READ request reserves N = max(1, ceil(len/PMTU)) PSNs) §5.3, the
// responder's PSN regions §5.4, AETH syndromes §5.6-5.9.
//
// A Tracker is fed one decoded frame at a time with Observe. In steady
// state it allocates nothing: a flow's state is created once, when its first
// packet (or a CM exchange naming it) is seen, and warnings are appended to
// the caller's slice.
//
// How directions are paired: a flow is keyed by (encapsulation, source
// address, destination address, destination QP). Responses (ACKs, NAKs,
// READ responses, ATOMIC ACKs) travel to the requester's QP, so the flow
// carrying a connection's responses has the reverse addresses. The two are
// paired either by the CM exchange (REQ gives the active side's QPN and the
// starting PSN of the passive side's requests, REP the passive side's QPN
// and the starting PSN of the active side's requests, REQ the path MTU), or,
// without CM, when a response's PSN falls inside the PSN range of requests
// one reverse flow alone has sent (and, for a READ response, inside one of
// its outstanding READs). When several reverse flows fit (QPs between the
// same two hosts whose PSNs overlap), the pairing is ambiguous and waits for
// a response that names one alone (Connection.PairedBy "ambiguous").
//
// Conns holds these rules (flow keys, pairing, CM learning) for any flow
// type; the Tracker and package conform both keep their flows in one.
package analysis

import (
	"time"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// Options tune a Tracker.
type Options struct {
	// PMTU is the path MTU (256, 512, 1024, 2048 or 4096) to assume until
	// a CM REQ or a full-size First/Middle packet says otherwise. 0 infers
	// it from the traffic.
	PMTU int
	// SkipVCRC stops Observe from checking the VCRC of native IB frames
	// (ObserveChecked never checks: the caller says).
	SkipVCRC bool
}

// Check is the result of an integrity check the caller made.
type Check uint8

// Check results.
const (
	NotChecked Check = iota
	CheckOK
	CheckBad
)

// Tracker follows conversations. The zero value is not usable: call New.
type Tracker struct {
	opts      Options
	conns     *Conns[flow, *flow]
	recent    [recentFlows]*flow // flows by FlowKey.quick, checked before the map
	frames    uint64
	ib        uint64
	undecoded uint64
	warn      [numWarnings]uint64
	seq       uint64 // position of the frame being observed (see Shards.ObserveChecked)
}

// New returns a Tracker.
func New(opts Options) *Tracker {
	if !rc.ValidMTU(opts.PMTU) {
		opts.PMTU = 0
	}
	t := &Tracker{opts: opts}
	t.conns = NewConns(t.newFlow)
	return t
}

// Observe records one frame and appends its anomalies to warnings, which it
// returns (pass warnings[:0] of a reused slice: no allocation per frame).
// frameNo is the frame's number in the capture, ts its time; icrcOK says
// whether its ICRC matched (pass true when it was not checked). Unless
// Options.SkipVCRC is set, Observe checks a native IB frame's VCRC itself.
//
// Frames that carry no IB transport packet, or whose transport packet did
// not decode completely (f.Transport.Framed false), are counted and
// otherwise ignored, but for a bad ICRC or VCRC, which is counted and
// warned about as on any frame. A frame with a bad ICRC or VCRC does not
// advance the protocol state: the receiver drops it. A transport packet the
// capture cut (f.Transport.Cut) is followed like a whole one, from the
// headers it kept.
func (t *Tracker) Observe(frameNo int, ts time.Time, f *packet.Frame, icrcOK bool, warnings []Warning) []Warning {
	ic := CheckOK
	if !icrcOK {
		ic = CheckBad
	}
	vc := NotChecked
	if !t.opts.SkipVCRC && f.VCRC != nil && f.Transport.ICRC != nil {
		if ok, _, _, err := f.CheckVCRC(); err == nil {
			vc = CheckBad
			if ok {
				vc = CheckOK
			}
		}
	}
	return t.ObserveChecked(frameNo, ts, f, ic, vc, warnings)
}

// ObserveChecked is Observe with both integrity checks made by the caller.
func (t *Tracker) ObserveChecked(frameNo int, ts time.Time, f *packet.Frame, icrc, vcrc Check, warnings []Warning) []Warning {
	return t.observe(t.frames+1, frameNo, ts, f, icrc, vcrc, warnings)
}

// observe is ObserveChecked for the frame at position seq of everything
// observed (by this Tracker, or by all the Shards it is one of).
func (t *Tracker) observe(seq uint64, frameNo int, ts time.Time, f *packet.Frame, icrc, vcrc Check, warnings []Warning) []Warning {
	var o obs
	o.Set(seq, frameNo, ts, f, icrc, vcrc)
	return t.observeObs(&o, warnings)
}

// observeObs records one frame.
func (t *Tracker) observeObs(o *obs, warnings []Warning) []Warning {
	t.frames++
	t.seq = o.seq
	switch o.state {
	case obsOther:
		return warnings
	case obsUndecoded:
		t.undecoded++
		return t.undecodedCRCs(o, warnings)
	}
	t.ib++
	op := o.op
	fl := t.lookup(&o.key)
	fl.count(o)

	w := warnings
	if o.icrc == CheckBad {
		fl.icrcBad++
		w = t.add(fl, w, wICRCBad)
	}
	if o.vcrc == CheckBad {
		fl.vcrcBad++
		w = t.add(fl, w, wVCRCBad)
	}
	if o.flags&obsECNCE != 0 {
		fl.ecnCE++
		w = t.add(fl, w, wECNCE)
	}
	if o.icrc == CheckBad || o.vcrc == CheckBad {
		return w
	}
	switch {
	case op == opcode.CNP || op == opcode.IBCNP:
		// A CNP travels to the QP whose traffic was marked: it names the
		// reverse direction of the flow it travels in.
		fl.cnps++
		return t.add(fl, w, wCNP)
	case op.Transport() == opcode.UD:
		return t.ud(fl, o, w)
	case op.IsRequest():
		return t.request(fl, o, w)
	case op.IsResponse():
		return t.response(fl, o, w)
	}
	return w
}

// undecodedCRCs counts and warns about a bad ICRC or VCRC of a frame whose
// transport packet did not decode: there is no flow to charge it to, but
// the verdict on its bytes stands.
func (t *Tracker) undecodedCRCs(o *obs, w []Warning) []Warning {
	if o.icrc == CheckBad {
		t.warn[wICRCBad]++
		w = append(w, ICRCBad)
	}
	if o.vcrc == CheckBad {
		t.warn[wVCRCBad]++
		w = append(w, VCRCBad)
	}
	return w
}

func (t *Tracker) add(fl *flow, w []Warning, k wk) []Warning {
	t.warn[k]++
	fl.warn[k]++
	return append(w, Warnings[k])
}

// recentFlows is the size of the table of recently seen flows.
const recentFlows = 256

// lookup returns the flow with key k, creating it on first sight. A table
// indexed by a hash of the key is checked first; the map only on a miss.
func (t *Tracker) lookup(k *FlowKey) *flow {
	r := &t.recent[k.quick()%recentFlows]
	if c := *r; c != nil && c.Key.same(k) {
		return c
	}
	fl := t.conns.Flow(*k)
	*r = fl
	return fl
}

// newFlow makes the flow of a key seen for the first time.
func (t *Tracker) newFlow(k FlowKey) *flow {
	fl := &flow{pmtu: t.opts.PMTU, created: t.seq}
	fl.Key = k
	if fl.pmtu != 0 {
		fl.pmtuFrom = fromOption
	}
	fl.req.init()
	return fl
}

// ud handles UD packets: every SEND Only is a message; CM MADs to QP1 teach
// QPNs, starting PSNs and the path MTU. UD PSNs are not checked: a UD QP
// numbers all its packets in one sequence whatever their destination (the
// native-IB capture's multicast QP 0x48 jumps 911097 -> 911131 towards one
// group), and receivers ignore them (ib-facts.md §6).
func (t *Tracker) ud(fl *flow, o *obs, w []Warning) []Warning {
	if o.flags&obsDETH != 0 {
		q := o.srcQP
		switch {
		case !fl.udSrcKnown:
			fl.udSrcQP, fl.udSrcKnown = q, true
		case fl.udSrcQP != q:
			fl.udManySrc = true
		}
	}
	fl.msgs[kindSend].add(uint64(o.payload))
	if o.cm.Attr != 0 {
		t.cm(o)
	}
	return w
}

// request handles a request packet of RC, UC, RD or XRC.
func (t *Tracker) request(fl *flow, o *obs, w []Warning) []Warning {
	s := &fl.req
	op, q, now := o.op, o.psn, o.ts
	info := op.Info()
	rethLen, lenCut := o.rethLen, o.flags&obsRETHCut != 0
	lo, hi := consumed(op, rethLen, lenCut, fl.mtu())
	uc := op.Transport() == opcode.UC
	checkPSN := op.Transport() != opcode.RD // RD PSNs count per EE context, not per QP

	resend := false
	if checkPSN && s.expect {
		d := rc.DiffPSN(q, s.next)
		switch {
		case d < 0:
			// Before the next PSN: the requester went back.
			resend = true
			s.abandon(fl)
			s.karn(q)
		case rc.DiffPSN(q, s.nextHi) > 0:
			s.gaps++
			s.missing += uint64(rc.DiffPSN(q, s.nextHi))
			s.abandon(fl)
			s.abandonOpenRead()
			w = t.add(fl, w, wPSNGap)
		default:
			if d > 0 {
				s.resolveOpenRead(q, fl)
			}
			resend = rc.DiffPSN(q, s.maxNext) < 0
		}
		if resend {
			if uc || (s.ackedValid && rc.DiffPSN(q, s.acked) <= 0) {
				s.dups++
				w = t.add(fl, w, wDuplicatePSN)
			} else {
				s.retrans++
				w = t.add(fl, w, wRetransmission)
			}
		}
	} else if !s.expect {
		s.first = q
		s.pos = posUnknown
	}
	if !s.started {
		s.started = true
		if s.expect && checkPSN && rc.DiffPSN(q, s.first) < 0 {
			s.first = q
		}
	}
	s.expect = true
	s.next = (q + lo) & rc.PSNMask
	s.nextHi = (q + hi) & rc.PSNMask
	if rc.DiffPSN(s.next, s.maxNext) > 0 || !s.maxSet {
		s.maxNext, s.maxSet = s.next, true
	}
	s.lastTS = now

	// Message position and reassembly.
	pos := info.Position
	kind := kindOf(op)
	n := uint64(o.payload)
	if pos == opcode.First || pos == opcode.Middle {
		fl.learnMTU(int(o.payload), fromPackets)
	}
	open := s.pos == posInSend || s.pos == posInWrite
	fam := posIdle
	if kind == kindSend {
		fam = posInSend
	} else if kind == kindWrite {
		fam = posInWrite
	}
	bad := false
	switch pos {
	case opcode.First, opcode.Only:
		bad = open
	case opcode.Middle, opcode.Last:
		bad = s.pos == posIdle || (open && s.pos != fam)
	}
	if bad {
		s.seqErrs++
		w = t.add(fl, w, wUnexpectedOpcodeSequence)
		if pos == opcode.First || pos == opcode.Only || s.pos != fam {
			s.abandon(fl)
		}
	}
	// A message is recorded once, when its Last/Only packet is seen for the
	// first time (a go-back may resend it).
	fresh := !s.recSet || rc.DiffPSN(q, s.recTo) > 0
	switch pos {
	case opcode.First:
		s.pos, s.msgBytes, s.msgValid = fam, n, true
	case opcode.Middle:
		s.pos = fam
		s.msgBytes += n
	case opcode.Last:
		s.msgBytes += n
		switch {
		case !s.msgValid:
			fl.partial++
		case fresh:
			fl.msgs[kind].add(s.msgBytes)
			s.recTo, s.recSet = q, true
		}
		s.pos, s.msgValid = posIdle, false
	case opcode.Only:
		s.pos, s.msgValid = posIdle, false
		switch {
		case !fresh:
		case kind == kindRead || kind == kindFlush || kind == kindAtomicWrite:
			// Completed by the responses.
		case kind == kindAtomic:
			fl.msgs[kind].add(8)
			s.recTo, s.recSet = q, true
		default:
			fl.msgs[kind].add(n)
			s.recTo, s.recSet = q, true
		}
	}

	switch kind {
	case kindRead, kindFlush, kindAtomicWrite:
		if kind == kindRead && !resend {
			fl.readReqs++
		}
		e := s.addRead(q, rethLen, lenCut, lo, hi, kind, resend)
		if lo != hi {
			s.openRead = e
		} else {
			s.openRead = nil
		}
	default:
		s.openRead = nil
	}
	if o.flags&obsAckReq != 0 && !resend && !uc {
		s.pushAck(q, now)
	}
	return w
}

// response handles a response packet (ACK, ATOMIC ACK, READ response) on
// fl; it answers requests of fl's peer.
func (t *Tracker) response(fl *flow, o *obs, w []Warning) []Warning {
	op, q, now := o.op, o.psn, o.ts
	peer := fl.Peer
	if peer == nil {
		was := fl.PairedBy
		if peer = t.conns.PairByPSN(fl, q, op); peer != nil {
			t.paired(fl, peer)
			if was == Ambiguous {
				peer.req.settle(q)
			}
		}
	}
	var s *reqStream
	if peer != nil && peer.req.started {
		s = &peer.req
	}
	if o.flags&obsAETH != 0 {
		syn := o.syn
		switch syn.Kind() {
		case aeth.ACK:
			if op.Operation() == opcode.Acknowledge {
				fl.acks++
			}
			if s != nil {
				s.ack(q, now)
			}
		case aeth.RNRNAK:
			fl.rnrNAKs++
			w = t.add(fl, w, wRNRNAK)
			if s != nil {
				s.ack((q-1)&rc.PSNMask, now)
			}
		case aeth.NAK:
			c := int(syn.NAKCode())
			if c < len(nakWarnings) {
				fl.naks[c]++
				w = t.add(fl, w, nakWarnings[c])
			} else {
				fl.naks[len(nakWarnings)]++
			}
			if s != nil {
				s.ack((q-1)&rc.PSNMask, now)
			}
		}
	}
	if op.Family() == opcode.FamilyReadResponse {
		w = t.readResponse(fl, peer, s, o, w)
	}
	return w
}

// readResponse matches a READ response with its outstanding READ request.
func (t *Tracker) readResponse(fl, peer *flow, s *reqStream, o *obs, w []Warning) []Warning {
	op, q, now := o.op, o.psn, o.ts
	fl.readResps++
	if s == nil {
		fl.readUnmatched++
		return w
	}
	e := s.matchRead(q, op.Position())
	if e == nil {
		fl.readUnmatched++
		if rc.DiffPSN(q, s.first) >= 0 {
			w = t.add(fl, w, wReadResponseUnmatched)
		}
		return w
	}
	fl.readMatched++
	pos := op.Position()
	n := int(o.payload)
	off := rc.DiffPSN(q, e.psn)
	if e.n == 0 {
		switch pos {
		case opcode.First:
			if fl.learnMTU(n, fromPackets) && !e.lenCut {
				s.resolve(e, rc.Packets(e.length, fl.pmtu))
			}
		case opcode.Only:
			s.resolve(e, 1)
		case opcode.Last:
			s.resolve(e, uint32(off)+1)
		}
	} else if pos == opcode.First || pos == opcode.Middle {
		fl.learnMTU(n, fromPackets)
	}

	d := rc.DiffPSN(q, e.nextResp)
	switch {
	case d > 0:
		fl.gaps++
		fl.missing += uint64(d)
		w = t.add(fl, w, wPSNGap)
	case d < 0:
		if !e.retried {
			fl.dups++
			w = t.add(fl, w, wDuplicatePSN)
		}
	}
	first := off == 0
	last := e.n > 0 && uint32(off) == e.n-1
	var ok bool
	switch {
	case e.n == 0 && first:
		ok = pos == opcode.First || pos == opcode.Only
	case e.n == 0:
		ok = pos == opcode.Middle || pos == opcode.Last
	case first && last:
		ok = pos == opcode.Only
	case first:
		ok = pos == opcode.First
	case last:
		ok = pos == opcode.Last
	default:
		ok = pos == opcode.Middle
	}
	if !ok {
		fl.seqErrs++
		w = t.add(fl, w, wUnexpectedOpcodeSequence)
	}
	if d >= 0 {
		e.got += uint64(n)
		if d > 0 {
			e.holes = true
		}
	}
	e.nextResp = (q + 1) & rc.PSNMask
	s.ack(q, now)
	if pos == opcode.Last || pos == opcode.Only {
		if peer != nil {
			switch {
			case e.holes:
				peer.partial++
			case !s.readRecSet || rc.DiffPSN(e.psn, s.readRecTo) > 0:
				peer.msgs[e.kind].add(e.got)
				s.readRecTo, s.readRecSet = e.psn, true
				if e.kind == kindRead {
					peer.readsDone++
				}
			}
		}
		s.removeRead(e)
	}
	return w
}

// paired makes the two directions of a connection share what one knows of
// the path MTU.
func (t *Tracker) paired(a, b *flow) {
	switch {
	case a.pmtuFrom > b.pmtuFrom:
		b.pmtu, b.pmtuFrom = a.pmtu, a.pmtuFrom
	case b.pmtuFrom > a.pmtuFrom:
		a.pmtu, a.pmtuFrom = b.pmtu, b.pmtuFrom
	}
}

// consumed returns how many PSNs a request uses: exactly one, except a READ
// request, which reserves N = max(1, ceil(len/PMTU)); when the PMTU is not
// known yet N lies between the counts for PMTU 4096 and 256. When the
// capture cut the RETH (lenCut) the length is unknown: N lies between 1 and
// the count for the largest message.
func consumed(op opcode.Opcode, rethLen uint32, lenCut bool, pmtu int) (lo, hi uint32) {
	if op.Operation() != opcode.RDMAReadRequest {
		return 1, 1
	}
	if lenCut {
		return 1, MaxReadPSNs(pmtu)
	}
	if pmtu != 0 {
		n := rc.Packets(rethLen, pmtu)
		return n, n
	}
	return rc.Packets(rethLen, 4096), rc.Packets(rethLen, 256)
}
