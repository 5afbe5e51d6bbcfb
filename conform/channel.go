package conform

import (
	"fmt"
	"hash/crc32"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// keepAcked is how many acknowledged slots a channel keeps, so that late
// retransmissions of acknowledged PSNs (their ACK lost after the capture
// point) can still be compared with the original.
const keepAcked = 64

// maxPinned bounds the slots a channel keeps behind a READ or atomic the
// responder passed without answering (its retry may still be answered):
// past it the request is forgotten and reported outstanding.
const maxPinned = 1 << 16

// channel is one requester's requests and the responder's answers to them:
// the requests travel on the flow that owns the channel, the responses on
// its peer.
//
// What the capture shows is bounded, not exact: a packet lost before the
// capture point is never seen, one lost after it is seen although its
// receiver never got it. The channel therefore keeps bounds. level is the
// highest PSN any captured response acknowledged (the requester cannot have
// learnt more); contig is the highest PSN the responder can have reached
// (every request before it was seen: a PSN that never passed the capture
// point never reached the responder). A NAK does not lower it for good: a
// request captured before the NAK may still have been on its way.
type channel struct {
	started    bool
	startKnown bool   // the CM told the first PSN: MSN starts at 0, the first packet opens a message
	first      uint32 // first PSN of the channel as known
	frontier   uint32 // PSN after the highest request PSN sent
	lastEnd    uint32 // PSN after the latest request captured
	evicted    uint32 // slots before this PSN are forgotten
	slots      slotRing

	level      uint32 // the highest level a response implied
	levelFrame int
	levelNAK   bool   // ... and it came from a NAK
	lack       uint32 // the highest level an Acknowledge implied
	lackFrame  int

	contig     uint32
	contigOK   bool // false while a READ of unknown N leaves contig unbounded
	resetFrame int  // frame of the last NAK or RNR NAK

	// Where requests get lost relative to the capture point. lossBeforeTap:
	// a PSN was skipped in the captured requests. lossAfterTap: a PSN
	// sequence NAK named a PSN the capture saw (since the last NAK, and not
	// refused by an RNR NAK). Only with the second and not the first is the
	// capture point known to sit at the requester, where a go-back-N must be
	// seen from its first packet.
	lossBeforeTap, lossAfterTap bool
	rnrPSN                      uint32
	rnrFrame                    int
	suspects                    []suspect // go-backs that start after level

	invalidSet   bool // a request the responder must NAK as invalid awaits its NAK
	invalidPSN   uint32
	invalidFrame int
	invalidWhy   string

	msnKnown  bool
	msnCur    uint32 // every slot before this PSN is counted in msnVal
	msnVal    uint32
	msnBadOff uint32
	msnBadSet bool

	overrunEnd uint32 // READ responses past a READ already reported are not reported again
	overrunSet bool

	// Counts for the summary.
	requests, newReqs, retrans, goBacks, missingPSNs int
	acks, naks, rnrNAKs, readResps, atomicAcks       int

	// Requests still awaiting their answer at the end of the capture (not
	// findings), and the oldest of them: set by finish.
	outstanding int
	outPSN      uint32
	outFrame    int
	outOp       opcode.Opcode
}

// suspect is a go-back-N run that started after the level its requester
// can have known: a BadRetransmission if the capture turns out to sit at the
// requester.
type suspect struct {
	frame      int
	psn        uint32
	level      uint32
	levelFrame int
	levelNAK   bool
}

// maxSuspects bounds the suspects kept per channel.
const maxSuspects = 64

func (ch *channel) init(q uint32) {
	ch.started = true
	ch.first, ch.frontier, ch.lastEnd, ch.evicted = q, q, q, q
	ch.level, ch.lack, ch.contig, ch.contigOK = q, q, q, true
}

// startAt sets the first PSN the CM announced, unless requests were seen.
func (ch *channel) startAt(q uint32) {
	if ch.started {
		return
	}
	ch.init(q)
	ch.startKnown = true
	ch.msnKnown, ch.msnCur, ch.msnVal = true, q, 0
}

func psnStr(q uint32) string { return fmt.Sprintf("0x%06x", q&rc.PSNMask) }

// request checks a request packet on fl.
func (c *Checker) request(fl *flow, n int, p *packet.Packet) {
	ch := &fl.req
	op := p.BTH.Opcode()
	q := p.BTH.PSN()
	ch.requests++
	if !ch.started {
		ch.init(q)
	}
	s := slot{psn: q, span: 1, spanKnown: true, op: op, ackReq: p.BTH.AckReq(), plen: uint32(p.PayloadLen()),
		pcrc: crc32.Checksum(p.Payload, crcTable()), frame: n, last: n}
	if p.Cut != 0 {
		s.pcut = len(p.Payload) < p.PayloadLen()
		info := op.Info()
		s.ethCut = p.RETH == nil && info.Has(opcode.RETH) || p.AtomicETH == nil && info.Has(opcode.AtomicETH)
	}
	if p.RETH != nil {
		s.va, s.rkey, s.dlen = p.RETH.VA(), p.RETH.RKey(), p.RETH.DMALen()
	}
	if p.AtomicETH != nil {
		s.va, s.rkey = p.AtomicETH.VA(), p.AtomicETH.RKey()
	}
	pad := p.BTH.PadCnt()

	if d := rc.DiffPSN(q, ch.frontier); d >= 0 {
		// A new request. A READ whose N is unknown may end here.
		if k := ch.slots.len(); k > 0 {
			if b := ch.slots.back(); !b.spanKnown && !b.obsNext && rc.DiffPSN(b.end(), ch.frontier) == 0 {
				hiEnd := rc.AddPSN(b.psn, b.spanHi)
				b.obsNext, b.nextFrame = true, n
				if rc.DiffPSN(q, hiEnd) <= 0 {
					b.span = rc.AddPSN(q-b.psn, 0)
					d = 0
				} else {
					b.span = b.spanHi
					d = rc.DiffPSN(q, hiEnd)
				}
				ch.contigOK = false // recomputed below
			}
		}
		if d > 0 {
			// PSNs before q were lost before the capture point (or the
			// requester skipped them: its retransmissions will tell).
			ch.missingPSNs += int(d)
			ch.lossBeforeTap = true
		}
		ch.newReqs++
		c.newSlot(fl, n, &s, pad, ch.slots.len())
		ch.frontier = ch.slots.back().end()
		ch.lastEnd = ch.frontier
		c.contig(ch)
		return
	}

	// Before the frontier: a retransmission, or a request into a hole.
	ch.retrans++
	if rc.DiffPSN(q, ch.evicted) < 0 {
		ch.lastEnd = rc.AddPSN(q, 1) // forgotten, or before the first PSN known
		return
	}
	if d := rc.DiffPSN(q, ch.lastEnd); d > 0 {
		// A jump forward inside a retransmission run: its packets went
		// missing before the capture point.
		ch.lossBeforeTap = true
	} else if d < 0 {
		// A jump back: a new go-back-N run starts.
		ch.goBacks++
		if rc.DiffPSN(q, ch.level) > 0 && !ch.lossBeforeTap && len(ch.suspects) < maxSuspects {
			// Decided at the end of the capture, when the evidence about
			// where requests get lost is complete.
			ch.suspects = append(ch.suspects, suspect{frame: n, psn: q, level: ch.level, levelFrame: ch.levelFrame, levelNAK: ch.levelNAK})
		}
	}
	i := ch.slots.find(q)
	if i >= 0 {
		// Inside a READ whose N is unknown but past the fewest PSNs it can
		// have reserved: the READ may end here and this fill a gap.
		if sl := ch.slots.at(i); !sl.spanKnown && sl.psn != q && uint32(rc.DiffPSN(q, sl.psn)) >= sl.spanLo {
			sl.span = uint32(rc.DiffPSN(q, sl.psn))
			i = -1
		}
	}
	if i < 0 {
		// Into a hole: the first time this PSN is seen.
		c.newSlot(fl, n, &s, pad, ch.slots.search(q)+1)
		ch.lastEnd = rc.AddPSN(q, 1)
		if j := ch.slots.find(q); j >= 0 {
			ch.lastEnd = ch.slots.at(j).end()
		}
		c.contig(ch)
		return
	}
	sl := ch.slots.at(i)
	c.resend(fl, n, sl, &s)
	sl.last = n
	ch.lastEnd = sl.end()
	c.contig(ch)
}

// sentEnd is the PSN after every PSN the requester has used: the frontier,
// or the most a READ of still unknown N can have reserved.
func (ch *channel) sentEnd() uint32 {
	if ch.slots.len() > 0 {
		if b := ch.slots.back(); b.open() {
			return rc.AddPSN(b.psn, b.spanHi)
		}
	}
	return ch.frontier
}

// newSlot records the first capture of PSN s.psn at index idx and checks
// it: sizes and pad (§5.2), then the opcode sequence with its neighbours in
// PSN order (§5.6).
func (c *Checker) newSlot(fl *flow, n int, s *slot, pad uint8, idx int) {
	ch := &fl.req
	if s.op.Operation() == opcode.RDMAReadRequest {
		if s.ethCut {
			// The capture cut the RETH: N is only bounded, and learnt from
			// the responses or the next request.
			s.spanLo, s.spanHi = 1, analysis.MaxReadPSNs(fl.pmtu)
			s.span, s.spanKnown = 1, false
		} else if fl.pmtu != 0 {
			s.span = rc.Packets(s.dlen, fl.pmtu)
		} else {
			s.spanLo, s.spanHi = rc.Packets(s.dlen, 4096), rc.Packets(s.dlen, 256)
			s.span, s.spanKnown = s.spanLo, s.spanLo == s.spanHi
		}
	}
	if pos := s.op.Position(); pos == opcode.First || pos == opcode.Only {
		s.accKnown, s.msgBytes, s.msgLen, s.msgStart, s.msgFrame = true, uint64(s.plen), s.dlen, s.psn, n
		s.msgLenCut = s.ethCut
	}
	c.checkPacket(fl, n, s, pad)
	ch.slots.insert(idx, s)
	if idx > 0 && adjacent(ch.slots.at(idx-1), ch.slots.at(idx)) {
		c.pairCheck(fl, idx-1, idx)
	} else if idx == 0 && ch.startKnown && s.psn == ch.first {
		c.pairCheck(fl, -1, idx)
	}
	if idx+1 < ch.slots.len() && adjacent(ch.slots.at(idx), ch.slots.at(idx+1)) {
		c.pairCheck(fl, idx, idx+1)
	}
}

func adjacent(a, b *slot) bool { return a.spanKnown && a.end() == b.psn }

// invalid marks s as a request the responder must NAK with invalid
// request, and remembers the oldest such request awaiting its NAK.
func (c *Checker) invalid(ch *channel, s *slot, why string) {
	if !s.invalid {
		s.invalid, s.why = true, why
	}
	if !ch.invalidSet || rc.DiffPSN(s.psn, ch.invalidPSN) < 0 {
		ch.invalidSet, ch.invalidPSN, ch.invalidFrame, ch.invalidWhy = true, s.psn, s.frame, why
	}
}

// checkPacket applies the per-packet rules of §5.2 to a request seen for
// the first time: payload plus pad a multiple of 4, no pad before the last
// packet, First and Middle exactly PMTU, Last 1..PMTU, Only at most PMTU, a
// WRITE Only carrying its RETH length. At most one finding per packet.
func (c *Checker) checkPacket(fl *flow, n int, s *slot, pad uint8) {
	pos := s.op.Position()
	fam := s.op.Family()
	name := s.op.String()
	body := s.plen + uint32(pad)
	switch {
	case body%4 != 0:
		c.report(n, PadCount, fmt.Sprintf("payload plus pad a multiple of 4 (PadCnt %d for %d payload bytes)", packet.PadFor(int(s.plen)), s.plen),
			fmt.Sprintf("PadCnt %d", pad), "%s at PSN %s: PadCnt %d with %d payload bytes makes %d bytes, not a multiple of 4",
			name, psnStr(s.psn), pad, s.plen, body)
		c.invalid(&fl.req, s, "PadCnt")
		return
	case (pos == opcode.First || pos == opcode.Middle) && pad != 0:
		c.report(n, PadCount, "PadCnt 0 (only a Last or Only packet pads)", fmt.Sprintf("PadCnt %d", pad),
			"%s at PSN %s carries PadCnt %d", name, psnStr(s.psn), pad)
		c.invalid(&fl.req, s, "PadCnt on a "+pos.String()+" packet")
		return
	}
	if !fam.Segmented() {
		if s.op.Operation() == opcode.AtomicWrite && (s.plen != 8 || s.dlen != 8 && !s.ethCut) {
			c.report(n, PayloadSize, "8 payload bytes and RETH DMA length 8", fmt.Sprintf("%d bytes, DMA length %d", s.plen, s.dlen),
				"ATOMIC WRITE at PSN %s carries %d bytes with DMA length %d", psnStr(s.psn), s.plen, s.dlen)
			c.invalid(&fl.req, s, "ATOMIC WRITE length")
		}
		return
	}
	mtu := fl.pmtu
	switch pos {
	case opcode.First, opcode.Middle:
		if mtu == 0 {
			if !rc.ValidMTU(int(s.plen)) {
				c.report(n, PayloadSize, "a path MTU size: 256, 512, 1024, 2048 or 4096 bytes", fmt.Sprintf("%d bytes", s.plen),
					"%s at PSN %s carries %d bytes, which is no path MTU", name, psnStr(s.psn), s.plen)
				c.invalid(&fl.req, s, "payload size")
				return
			}
			c.learnPMTU(fl, int(s.plen))
			mtu = fl.pmtu
		} else if s.plen != uint32(mtu) {
			c.report(n, PayloadSize, fmt.Sprintf("%d bytes (the PMTU)", mtu), fmt.Sprintf("%d bytes", s.plen),
				"%s at PSN %s carries %d bytes; a %s packet carries exactly the PMTU", name, psnStr(s.psn), s.plen, pos)
			c.invalid(&fl.req, s, "payload size")
			return
		}
	case opcode.Last:
		if s.plen == 0 || mtu != 0 && s.plen > uint32(mtu) {
			exp := "1 or more bytes"
			if mtu != 0 {
				exp = fmt.Sprintf("1 to %d bytes (PMTU)", mtu)
			}
			c.report(n, PayloadSize, exp, fmt.Sprintf("%d bytes", s.plen), "%s at PSN %s carries %d bytes", name, psnStr(s.psn), s.plen)
			c.invalid(&fl.req, s, "payload size")
			return
		}
	case opcode.Only:
		if mtu != 0 && s.plen > uint32(mtu) {
			c.report(n, PayloadSize, fmt.Sprintf("at most %d bytes (PMTU) in an Only packet", mtu), fmt.Sprintf("%d bytes", s.plen),
				"%s at PSN %s carries %d bytes, more than the PMTU", name, psnStr(s.psn), s.plen)
			c.invalid(&fl.req, s, "payload size")
			return
		}
	}
	if fam != opcode.FamilyWrite || s.ethCut {
		return
	}
	switch pos {
	case opcode.Only:
		if s.plen != s.dlen {
			c.writeLength(fl, n, s, pad, s.dlen, "RETH DMA length")
		}
	case opcode.First:
		if mtu != 0 && s.dlen <= uint32(mtu) {
			c.report(n, PayloadSize, fmt.Sprintf("an RDMA WRITE Only (DMA length %d fits one %d-byte packet)", s.dlen, mtu),
				fmt.Sprintf("%s, DMA length %d", name, s.dlen), "%s at PSN %s starts a multi-packet WRITE of only %d bytes",
				name, psnStr(s.psn), s.dlen)
			c.invalid(&fl.req, s, "payload size")
		}
	}
}

// writeLength reports a WRITE Last/Only whose payload differs from the
// bytes left of the RETH length: as a PadCnt error when the pad explains
// it, else as a size error.
func (c *Checker) writeLength(fl *flow, n int, s *slot, pad uint8, want uint32, what string) {
	if s.plen+uint32(pad) == want+uint32(packet.PadFor(int(want))) {
		c.report(n, PadCount, fmt.Sprintf("PadCnt %d (for %d payload bytes)", packet.PadFor(int(want)), want), fmt.Sprintf("PadCnt %d", pad),
			"%s at PSN %s: PadCnt %d leaves %d payload bytes, but the %s is %d", s.op, psnStr(s.psn), pad, s.plen, what, want)
		c.invalid(&fl.req, s, "PadCnt")
		return
	}
	c.report(n, PayloadSize, fmt.Sprintf("%d bytes (the %s)", want, what), fmt.Sprintf("%d bytes", s.plen),
		"%s at PSN %s carries %d bytes, but the %s is %d", s.op, psnStr(s.psn), s.plen, what, want)
	c.invalid(&fl.req, s, "WRITE length")
}

// pairCheck applies the opcode-sequence rule to the adjacent slots i and j
// (i = -1: j opens the connection) and carries the message's byte count
// forward (§5.2, §5.6).
func (c *Checker) pairCheck(fl *flow, i, j int) {
	ch := &fl.req
	cur := ch.slots.at(j)
	var prev *slot
	if i >= 0 {
		prev = ch.slots.at(i)
	}
	open := false
	pfam := opcode.FamilyNone
	if prev != nil {
		pp := prev.op.Position()
		open = pp == opcode.First || pp == opcode.Middle
		pfam = prev.op.Family()
	}
	cfam := cur.op.Family()
	name := cur.op.String()
	switch cur.op.Position() {
	case opcode.First, opcode.Only:
		if open {
			c.report(cur.frame, OpcodeSequence, pfam.String()+" Middle or Last (the message is open)", name,
				"%s at PSN %s while the %s message from PSN %s is still open", name, psnStr(cur.psn), pfam.String(), psnStr(msgStartOf(prev)))
			c.invalid(ch, cur, "opcode sequence")
		}
		return
	default:
		switch {
		case !open:
			c.report(cur.frame, OpcodeSequence, "a First or Only packet (no message is open)", name,
				"%s at PSN %s without a %s First", name, psnStr(cur.psn), cfam.String())
			c.invalid(ch, cur, "opcode sequence")
			return
		case pfam != cfam:
			c.report(cur.frame, OpcodeSequence, pfam.String()+" Middle or Last", name,
				"%s at PSN %s inside the %s message from PSN %s", name, psnStr(cur.psn), pfam.String(), psnStr(msgStartOf(prev)))
			c.invalid(ch, cur, "opcode sequence")
			return
		}
	}
	c.carry(fl, i, j)
}

func msgStartOf(s *slot) uint32 {
	if s.accKnown {
		return s.msgStart
	}
	return s.psn
}

// carry computes the message accounting of the Middle/Last slot j from its
// predecessor i and goes on while later slots wait for it; a WRITE's bytes
// must add up to its RETH length (§5.2).
func (c *Checker) carry(fl *flow, i, j int) {
	ch := &fl.req
	for {
		prev, cur := ch.slots.at(i), ch.slots.at(j)
		if !prev.accKnown || cur.accKnown {
			return
		}
		cur.accKnown = true
		cur.msgBytes = prev.msgBytes + uint64(cur.plen)
		cur.msgLen, cur.msgStart, cur.msgFrame = prev.msgLen, prev.msgStart, prev.msgFrame
		cur.msgLenCut = prev.msgLenCut
		if cur.op.Family() == opcode.FamilyWrite && fl.pmtu != 0 && !cur.invalid && !cur.msgLenCut {
			rem := int64(cur.msgLen) - int64(prev.msgBytes) // bytes left before this packet
			mtu := int64(fl.pmtu)
			switch cur.op.Position() {
			case opcode.Middle:
				if rem <= mtu {
					c.report(cur.frame, PayloadSize, "an RDMA WRITE Last carrying the remaining "+fmt.Sprint(max(rem, 0))+" bytes",
						cur.op.String(), "%s at PSN %s: only %d bytes of the WRITE's DMA length %d are left", cur.op, psnStr(cur.psn),
						max(rem, 0), cur.msgLen)
					c.invalid(ch, cur, "WRITE length")
				}
			case opcode.Last:
				if rem != int64(cur.plen) {
					if rem < 0 {
						rem = 0
					}
					// The pad of a Last packet is not kept: judge by size.
					c.report(cur.frame, PayloadSize, fmt.Sprintf("%d bytes (the rest of DMA length %d)", rem, cur.msgLen),
						fmt.Sprintf("%d bytes", cur.plen), "%s at PSN %s carries %d bytes, but %d of the WRITE's %d are left",
						cur.op, psnStr(cur.psn), cur.plen, rem, cur.msgLen)
					c.invalid(ch, cur, "WRITE length")
				}
			}
		}
		// The next slot may have been waiting for this one.
		k := j + 1
		if k >= ch.slots.len() || !adjacent(cur, ch.slots.at(k)) {
			return
		}
		nx := ch.slots.at(k)
		if p := nx.op.Position(); (p != opcode.Middle && p != opcode.Last) || nx.op.Family() != cur.op.Family() || nx.invalid {
			return
		}
		if p := cur.op.Position(); p != opcode.First && p != opcode.Middle {
			return
		}
		i, j = j, k
	}
}

// resend compares a request at an already seen PSN with the original: a
// go-back-N resends the same packet (§5.5); anything else reuses the PSN
// (§5.3). Inside a READ's reserved PSNs only that READ re-requesting its
// missing tail may appear (§5.5 READ retry).
func (c *Checker) resend(fl *flow, n int, sl, s *slot) {
	if sl.psn == s.psn {
		// What the capture cut of either packet is taken as the same.
		same := sl.op == s.op && sl.plen == s.plen &&
			(sl.pcrc == s.pcrc || sl.pcut || s.pcut) &&
			(sl.va == s.va && sl.rkey == s.rkey && sl.dlen == s.dlen || sl.ethCut || s.ethCut)
		if !same {
			what := "different payload bytes"
			switch {
			case sl.op != s.op || sl.plen != s.plen:
				what = fmt.Sprintf("%s with %d bytes", s.op, s.plen)
			case sl.va != s.va || sl.rkey != s.rkey || sl.dlen != s.dlen:
				what = fmt.Sprintf("%s for VA 0x%x R_Key 0x%x length %d", s.op, s.va, s.rkey, s.dlen)
			}
			c.report(n, PSNReuse, fmt.Sprintf("a retransmission identical to the %s with %d bytes first sent at frame %d", sl.op, sl.plen, sl.frame),
				what, "PSN %s, first used by %s (%d bytes) at frame %d, carries %s", psnStr(s.psn), sl.op, sl.plen, sl.frame, what)
			sl.op, sl.plen, sl.pcrc, sl.va, sl.rkey, sl.dlen = s.op, s.plen, s.pcrc, s.va, s.rkey, s.dlen
			sl.pcut, sl.ethCut = s.pcut, s.ethCut
		}
		sl.ackReq = sl.ackReq || s.ackReq
		if rc.AnsweredByRead(sl.op) {
			sl.replayAt, sl.replaySet = s.psn, true
		}
		return
	}
	// s.psn lies inside the READ sl's reserved PSNs.
	k := uint32(rc.DiffPSN(s.psn, sl.psn))
	if s.op.Operation() != opcode.RDMAReadRequest {
		c.report(n, ReadPSNReservation, fmt.Sprintf("no new request before PSN %s", psnStr(sl.end())), s.op.String()+" at PSN "+psnStr(s.psn),
			"%s at PSN %s is inside the %d PSNs the READ at PSN %s (frame %d) reserved", s.op, psnStr(s.psn), sl.span, psnStr(sl.psn), sl.frame)
		return
	}
	if sl.ethCut || s.ethCut {
		// The capture cut a RETH: the re-request cannot be compared.
		sl.replayAt, sl.replaySet = s.psn, true
		sl.ackReq = sl.ackReq || s.ackReq
		return
	}
	done := sl.dlen - min(s.dlen, sl.dlen)
	ok := s.rkey == sl.rkey && s.dlen < sl.dlen && s.va == sl.va+uint64(done)
	if ok && fl.pmtu != 0 {
		ok = uint64(done) == uint64(k)*uint64(fl.pmtu)
	} else if ok && done%k == 0 {
		c.learnPMTU(fl, int(done/k))
	}
	if !ok {
		exp := "the READ's remaining bytes"
		if fl.pmtu != 0 {
			d := uint64(k) * uint64(fl.pmtu)
			exp = fmt.Sprintf("VA 0x%x, %d bytes (the READ's remaining bytes)", sl.va+d, uint64(sl.dlen)-min(d, uint64(sl.dlen)))
		}
		c.report(n, ReadPSNReservation, exp, fmt.Sprintf("VA 0x%x, %d bytes", s.va, s.dlen),
			"READ at PSN %s inside the READ at PSN %s (frame %d) does not re-request that READ's tail", psnStr(s.psn), psnStr(sl.psn), sl.frame)
		return
	}
	sl.replayAt, sl.replaySet = s.psn, true
	sl.ackReq = sl.ackReq || s.ackReq
}

// contig moves the bound on the responder's expected PSN forward over the
// requests seen (since the last NAK) without a gap.
func (c *Checker) contig(ch *channel) {
	if !ch.contigOK {
		// Recompute from what the responder acknowledged.
		ch.contig, ch.contigOK = ch.lack, true
	}
	if rc.DiffPSN(ch.contig, ch.evicted) < 0 {
		ch.contig = ch.evicted
	}
	for {
		i := ch.slots.find(ch.contig)
		if i < 0 {
			return
		}
		s := ch.slots.at(i)
		if s.open() {
			ch.contigOK = false // up to spanHi PSNs: no bound until the next request
			return
		}
		if rc.DiffPSN(s.end(), ch.contig) <= 0 {
			return
		}
		ch.contig = s.end() // (from inside a READ's range too)
	}
}

// resolveReads fixes the N of the READs that waited for fl's PMTU and
// checks the request that followed each (§5.3).
func (c *Checker) resolveReads(fl *flow) {
	ch := &fl.req
	changed := false
	for i := 0; i < ch.slots.len(); i++ {
		s := ch.slots.at(i)
		if s.spanKnown || s.op.Operation() != opcode.RDMAReadRequest || s.ethCut {
			continue
		}
		c.fixSpan(fl, s, rc.Packets(s.dlen, fl.pmtu), fmt.Sprintf("%d bytes, PMTU %d", s.dlen, fl.pmtu))
		changed = true
	}
	if changed {
		ch.contigOK = false
		c.contig(ch)
	}
}

// fixSpan sets the N of the READ s, known at last (from the PMTU, or from
// the response that ends the READ), and checks the request that followed
// it: earlier than the READ's PSN + N reuses a reserved PSN (§5.3), later
// means PSNs went missing before the capture point.
func (c *Checker) fixSpan(fl *flow, s *slot, n uint32, why string) {
	ch := &fl.req
	if s.obsNext {
		switch d := rc.DiffPSN(rc.AddPSN(s.psn, s.span), rc.AddPSN(s.psn, n)); {
		case d < 0:
			saved := c.cur
			c.cur = fl
			c.report(s.nextFrame, ReadPSNReservation, fmt.Sprintf("the next request at PSN %s", psnStr(rc.AddPSN(s.psn, n))),
				"PSN "+psnStr(s.end()), "the request at PSN %s follows the READ at PSN %s (frame %d), which reserved %d PSNs (%s)",
				psnStr(s.end()), psnStr(s.psn), s.frame, n, why)
			c.cur = saved
		case d > 0:
			ch.lossBeforeTap = true
		}
	}
	s.span, s.spanKnown = n, true
	if end := s.end(); !s.obsNext && rc.DiffPSN(end, ch.frontier) > 0 {
		// The last request: the frontier was only its lower bound.
		if ch.lastEnd == ch.frontier {
			ch.lastEnd = end
		}
		ch.frontier = end
	}
}

// advance records a response level (the PSN after what it acknowledged) and
// forgets slots long acknowledged.
func (ch *channel) advance(lvl uint32, n int, nak bool) {
	if rc.DiffPSN(lvl, ch.level) > 0 || lvl == ch.level && nak {
		ch.level, ch.levelFrame, ch.levelNAK = lvl, n, nak
	}
	for ch.slots.len() > keepAcked {
		f := ch.slots.front()
		if f.open() || rc.DiffPSN(f.end(), ch.level) > 0 || rc.DiffPSN(ch.slots.at(keepAcked).end(), ch.level) > 0 {
			return
		}
		if f.unanswered() {
			if ch.slots.len() <= maxPinned {
				return // its answer may still come (a retry, a replay)
			}
			ch.noteOutstanding(f) // forgotten unanswered: outstanding for good
		}
		ch.evicted = f.end()
		if ch.msnKnown && rc.DiffPSN(ch.msnCur, ch.evicted) < 0 {
			ch.msnKnown = false
		}
		ch.slots.popFront()
	}
}

// response checks a response packet on fl: it answers the requests of fl's
// peer.
func (c *Checker) response(fl *flow, n int, p *packet.Packet) {
	q := p.BTH.PSN()
	peer := fl.Peer
	if peer == nil {
		peer = c.pairByPSN(fl, q, p.BTH.Opcode())
	}
	if peer == nil || !peer.req.started {
		return
	}
	if peer.errFrame != 0 {
		return
	}
	ch := &peer.req
	op := p.BTH.Opcode()
	if rc.DiffPSN(q, ch.evicted) < 0 {
		// Answers requests sent before the capture (or forgotten). A NAK
		// still says the responder lacks everything captured so far.
		if op.Operation() == opcode.Acknowledge && p.AETH != nil && p.AETH.Syndrome().Kind() != aeth.ACK {
			ch.resetFrame = n
		}
		return
	}
	if p.AETH == nil && op.Operation() == opcode.Acknowledge {
		// The capture cut the AETH: ACK or NAK is unknown. It is taken as
		// the ACK it most likely is (the requester learnt up to PSN q),
		// since a finding must be proved and this frame proves nothing.
		ch.advance(rc.AddPSN(q, 1), n, false)
		return
	}
	switch op.Operation() {
	case opcode.Acknowledge:
		c.acknowledge(fl, peer, n, p)
	case opcode.AtomicAcknowledge:
		c.atomicAck(fl, peer, n, p)
	case opcode.RDMAReadResponseFirst, opcode.RDMAReadResponseMiddle, opcode.RDMAReadResponseLast, opcode.RDMAReadResponseOnly:
		c.readResponse(fl, peer, n, p)
	}
}

// reached checks that the responder can have received every request before
// lvl: lvl must not lie past contig (§5.4). It returns a description of
// the first PSN it cannot have, or "".
func (ch *channel) unreached(lvl uint32) string {
	if !ch.contigOK || rc.DiffPSN(lvl, ch.contig) <= 0 {
		return ""
	}
	if rc.DiffPSN(ch.contig, ch.frontier) >= 0 {
		return fmt.Sprintf("no request with PSN %s was sent", psnStr(ch.contig))
	}
	return fmt.Sprintf("PSN %s never reached it", psnStr(ch.contig))
}

// acknowledge checks an ACK, RNR NAK or NAK (§5.3, §5.4, §5.6).
func (c *Checker) acknowledge(fl, peer *flow, n int, p *packet.Packet) {
	ch := &peer.req
	q := p.BTH.PSN()
	syn := p.AETH.Syndrome()
	msn := p.AETH.MSN()
	if !syn.Valid() || syn.Kind() == aeth.NAK && syn.NAKCode() == aeth.InvalidRDRequest {
		c.report(n, NAKCode, "an ACK, RNR NAK or NAK code 0-3 (§5.6)", fmt.Sprintf("syndrome 0x%02x", uint8(syn)),
			"AETH syndrome 0x%02x (%s) is not valid on RC", uint8(syn), syn)
		return
	}
	switch syn.Kind() {
	case aeth.ACK:
		ch.acks++
		lvl := rc.AddPSN(q, 1)
		switch {
		case rc.DiffPSN(lvl, ch.lack) < 0:
			c.report(n, ACKPSN, fmt.Sprintf("an ACK PSN of at least %s", psnStr(rc.AddPSN(ch.lack, rc.PSNMask))), "ACK PSN "+psnStr(q),
				"ACK PSN %s goes back before PSN %s, which frame %d already acknowledged", psnStr(q), psnStr(rc.AddPSN(ch.lack, rc.PSNMask)), ch.lackFrame)
			return
		case rc.DiffPSN(q, ch.sentEnd()) >= 0:
			c.report(n, ACKPSN, fmt.Sprintf("an ACK PSN before %s (the next PSN the requester would send)", psnStr(ch.sentEnd())),
				"ACK PSN "+psnStr(q), "ACK PSN %s acknowledges a request that was never sent", psnStr(q))
			return
		}
		if why := ch.unreached(lvl); why != "" {
			c.report(n, ACKPSN, fmt.Sprintf("an ACK PSN before %s", psnStr(ch.contig)), "ACK PSN "+psnStr(q),
				"ACK PSN %s acknowledges requests the responder cannot have received: %s", psnStr(q), why)
			// Take the responder at its word from here on, so that one
			// fault is reported once.
			ch.contig = lvl
		}
		if ch.invalidSet && rc.DiffPSN(ch.invalidPSN, lvl) < 0 && rc.DiffPSN(ch.invalidPSN, ch.lack) >= 0 {
			c.report(n, NAKCode, "NAK INVALID_REQUEST for PSN "+psnStr(ch.invalidPSN), "ACK PSN "+psnStr(q),
				"responder acknowledged PSN %s, past the request at PSN %s (frame %d, %s) it had to NAK with invalid request",
				psnStr(q), psnStr(ch.invalidPSN), ch.invalidFrame, ch.invalidWhy)
			ch.invalidSet = false
		}
		c.checkMSN(peer, n, lvl, msn, nil)
		if rc.DiffPSN(lvl, ch.lack) > 0 {
			ch.lack, ch.lackFrame = lvl, n
		}
		ch.advance(lvl, n, false)
		c.contig(ch)
	case aeth.RNRNAK, aeth.NAK:
		rnr := syn.Kind() == aeth.RNRNAK
		if rnr {
			ch.rnrNAKs++
		} else {
			ch.naks++
		}
		code := syn.NAKCode()
		seq := !rnr && code == aeth.PSNSequenceError
		what := "RNR NAK"
		if !rnr {
			what = "NAK " + code.String()
		}
		if rc.DiffPSN(q, ch.lack) < 0 {
			c.report(n, NAKPSN, fmt.Sprintf("a NAK PSN of at least %s (the responder already acknowledged up to %s)", psnStr(ch.lack),
				psnStr(rc.AddPSN(ch.lack, rc.PSNMask))), "PSN "+psnStr(q),
				"%s with PSN %s goes back before PSN %s, which frame %d already acknowledged", what, psnStr(q),
				psnStr(rc.AddPSN(ch.lack, rc.PSNMask)), ch.lackFrame)
			return
		}
		if end := ch.sentEnd(); rc.DiffPSN(q, end) >= 0 || seq && rc.DiffPSN(rc.AddPSN(q, 1), end) >= 0 {
			exp := fmt.Sprintf("a PSN before %s", psnStr(end))
			why := "no request with that PSN was sent"
			if seq {
				why = "no request after it was sent, so nothing arrived out of sequence"
				exp = fmt.Sprintf("a PSN before %s", psnStr(rc.AddPSN(end, rc.PSNMask)))
			}
			c.report(n, NAKPSN, exp, "PSN "+psnStr(q), "%s with PSN %s, but %s", what, psnStr(q), why)
			return
		}
		if i := ch.slots.find(q); i >= 0 && ch.slots.at(i).psn != q && ch.slots.at(i).spanKnown {
			s := ch.slots.at(i)
			c.report(n, NAKPSN, fmt.Sprintf("PSN %s or %s (a request boundary)", psnStr(s.psn), psnStr(s.end())), "PSN "+psnStr(q),
				"%s with PSN %s, inside the %d PSNs the READ at PSN %s reserved", what, psnStr(q), s.span, psnStr(s.psn))
			return
		}
		// A NAK judged impossible is still applied (the responder evidently
		// lacks PSN q), but does not stop the connection.
		fatal := !rnr && !seq
		if ch.contigOK {
			switch d := rc.DiffPSN(q, ch.contig); {
			case d > 0:
				c.report(n, NAKPSN, fmt.Sprintf("a PSN of at most %s (the responder's expected PSN)", psnStr(ch.contig)), "PSN "+psnStr(q),
					"%s with PSN %s, but %s", what, psnStr(q), ch.unreached(q))
				fatal = false
			case d == 0 && !seq:
				// The NAKed request never reached the responder: only a PSN
				// sequence error can name its PSN.
				c.report(n, NAKCode, "NAK PSN_SEQUENCE_ERROR for PSN "+psnStr(q), what,
					"%s for PSN %s, a request the responder cannot have received (%s)", what, psnStr(q), ch.unreached(rc.AddPSN(q, 1)))
				fatal = false
			}
		}
		if rnr {
			if i := ch.slots.find(q); i >= 0 && !rc.ConsumesWQE(ch.slots.at(i).op) {
				s := ch.slots.at(i)
				c.report(n, NAKCode, "an ACK or a NAK other than RNR (the request needs no receive WQE)", what,
					"RNR NAK for %s at PSN %s (frame %d), which consumes no receive WQE", s.op, psnStr(q), s.frame)
			}
		}
		if ch.invalidSet && ch.invalidPSN == q {
			ch.invalidSet = false
		}
		if rnr {
			ch.rnrPSN, ch.rnrFrame = q, n
		}
		if i := ch.slots.find(q); seq && i > 0 && ch.slots.at(i).psn == q && adjacent(ch.slots.at(i-1), ch.slots.at(i)) {
			// PSN q passed the capture point after its predecessor and after
			// the last NAK, and was not refused by an RNR NAK, yet the
			// responder still expects it: it was lost after the capture
			// point. (A capture at the responder cannot show this.)
			s := ch.slots.at(i)
			if s.last > ch.resetFrame && s.last > ch.slots.at(i-1).last && !(ch.rnrPSN == q && ch.rnrFrame > s.last) {
				ch.lossAfterTap = true
			}
		}
		c.checkMSN(peer, n, q, msn, nil)
		if rc.DiffPSN(q, ch.lack) > 0 {
			ch.lack, ch.lackFrame = q, n
		}
		ch.advance(q, n, true)
		if !fatal {
			// The responder lacks PSN q (go-back-N follows, §5.5).
			ch.contig, ch.contigOK, ch.resetFrame = q, true, n
			c.contig(ch)
			return
		}
		// Invalid request, remote access or operational error: the QP goes
		// to the Error state (§5.10); nothing after is checked.
		fl.errFrame, peer.errFrame = n, n
	}
}

// atomicAck checks an ATOMIC Acknowledge: it answers the atomic request with
// its PSN (§5.3).
func (c *Checker) atomicAck(fl, peer *flow, n int, p *packet.Packet) {
	ch := &peer.req
	q := p.BTH.PSN()
	ch.atomicAcks++
	i := ch.slots.find(q)
	if i < 0 || ch.slots.at(i).psn != q || ch.slots.at(i).op.Family() != opcode.FamilyAtomic {
		c.report(n, ACKPSN, "the PSN of an atomic request", "ATOMIC ACK PSN "+psnStr(q),
			"ATOMIC ACK with PSN %s, which no CmpSwap or FetchAdd request carries", psnStr(q))
		return
	}
	ch.slots.at(i).atomicAcked = true // answered (any fault in the answer is reported below)
	if why := ch.unreached(rc.AddPSN(q, 1)); why != "" {
		c.report(n, ACKPSN, fmt.Sprintf("an answer to a PSN before %s", psnStr(ch.contig)), "ATOMIC ACK PSN "+psnStr(q),
			"ATOMIC ACK for PSN %s, but %s", psnStr(q), why)
		return
	}
	if p.AETH == nil {
		// The capture cut the AETH: its syndrome and MSN are unknown.
		ch.advance(rc.AddPSN(q, 1), n, false)
		return
	}
	if syn := p.AETH.Syndrome(); syn.Kind() != aeth.ACK || !syn.Valid() {
		c.report(n, NAKCode, "an ACK syndrome", fmt.Sprintf("syndrome 0x%02x", uint8(syn)),
			"ATOMIC ACK for PSN %s carries syndrome 0x%02x (%s)", psnStr(q), uint8(syn), syn)
		return
	}
	c.checkMSN(peer, n, rc.AddPSN(q, 1), p.AETH.MSN(), ch.slots.at(i))
	ch.advance(rc.AddPSN(q, 1), n, false)
}

// readResponse checks a READ response against its READ (§5.2, §5.3).
func (c *Checker) readResponse(fl, peer *flow, n int, p *packet.Packet) {
	ch := &peer.req
	q := p.BTH.PSN()
	op := p.BTH.Opcode()
	ch.readResps++
	plen := uint32(p.PayloadLen())
	i := ch.slots.find(q)
	if i < 0 || !rc.AnsweredByRead(ch.slots.at(i).op) {
		if ch.overrunSet && q == ch.overrunEnd {
			ch.overrunEnd = rc.AddPSN(q, 1)
			return
		}
		c.report(n, ReadResponse, "a PSN inside an outstanding READ's reserved PSNs", op.String()+" PSN "+psnStr(q),
			"%s with PSN %s, which no READ request reserved", op, psnStr(q))
		return
	}
	s := ch.slots.at(i)
	if why := ch.unreached(rc.AddPSN(s.psn, 1)); why != "" && !s.respStarted {
		c.report(n, ReadResponse, "no response before the READ reaches the responder", op.String()+" PSN "+psnStr(q),
			"%s for the READ at PSN %s (frame %d), but %s", op, psnStr(s.psn), s.frame, why)
		s.respBad = true
	}
	k := uint32(rc.DiffPSN(q, s.psn))
	defer func() {
		s.respStarted = true
		s.respNext = rc.AddPSN(q, 1)
		pos := op.Position()
		if pos == opcode.Last || pos == opcode.Only {
			s.respDone = true
		}
		ch.advance(rc.AddPSN(q, 1), n, false)
	}()
	if s.respBad {
		return
	}
	bad := func(exp, got, format string, args ...any) {
		c.report(n, ReadResponse, exp, got, format, args...)
		s.respBad = true
		if s.spanKnown {
			ch.overrunEnd, ch.overrunSet = s.end(), true
		}
	}
	// Pad (§5.2): payload plus pad a multiple of 4, pad only on Last/Only.
	pos := op.Position()
	if pad := uint32(p.BTH.PadCnt()); (plen+pad)%4 != 0 || pad != 0 && (pos == opcode.First || pos == opcode.Middle) {
		exp := fmt.Sprintf("PadCnt %d (for %d payload bytes)", packet.PadFor(int(plen)), plen)
		if pos == opcode.First || pos == opcode.Middle {
			exp = "PadCnt 0 (only a Last or Only packet pads)"
		}
		c.report(n, PadCount, exp, fmt.Sprintf("PadCnt %d", pad), "%s at PSN %s: PadCnt %d with %d payload bytes", op, psnStr(q), pad, plen)
	}
	// Position by PSN: First at the READ's PSN, Last at its final PSN, Only
	// when it has one; a replay from inside the range may restart with First
	// (IBA) or go on with Middle (rxe).
	replay := s.replaySet && s.replayAt == q && k > 0 || s.respStarted && rc.DiffPSN(q, s.respNext) < 0 && k > 0
	var okPos bool
	var want string
	isRead := s.op.Operation() == opcode.RDMAReadRequest
	switch {
	case !isRead:
		okPos, want = pos == opcode.Only, "RDMA READ Response Only"
	case s.spanKnown && s.span == 1:
		okPos, want = pos == opcode.Only, "RDMA READ Response Only"
	case s.spanKnown && k == s.span-1:
		okPos, want = pos == opcode.Last || replay && pos == opcode.Only, "RDMA READ Response Last"
	case k == 0:
		okPos, want = pos == opcode.First || !s.spanKnown && pos == opcode.Only, "RDMA READ Response First"
	case s.spanKnown:
		okPos, want = pos == opcode.Middle || replay && pos == opcode.First, "RDMA READ Response Middle"
	default:
		okPos, want = pos == opcode.Middle || pos == opcode.Last || replay && pos == opcode.First, "RDMA READ Response Middle or Last"
	}
	if !okPos {
		switch {
		case s.spanKnown && pos == opcode.Last && k < s.span-1:
			bad(want, op.String(), "%s at PSN %s ends the READ at PSN %s (frame %d) after %d of its %d responses",
				op, psnStr(q), psnStr(s.psn), s.frame, k+1, s.span)
		case s.spanKnown && k == s.span-1:
			bad(want, op.String(), "%s at PSN %s, the last of the %d responses the READ at PSN %s (frame %d, %d bytes) needs",
				op, psnStr(q), s.span, psnStr(s.psn), s.frame, s.dlen)
		default:
			bad(want, op.String(), "%s at PSN %s, response %d of the READ at PSN %s (frame %d)", op, psnStr(q), k+1, psnStr(s.psn), s.frame)
		}
		return
	}
	// The Last (or Only) of a READ whose N was unknown tells N, and maybe
	// the PMTU.
	if !s.spanKnown && (pos == opcode.Last || pos == opcode.Only && k == 0) {
		c.fixSpan(peer, s, k+1, fmt.Sprintf("its response at PSN %s ends it", psnStr(q)))
		ch.contigOK = false
		c.contig(ch)
		if fl.pmtu == 0 && k > 0 && !s.ethCut {
			m, count := 0, 0
			for x := 256; x <= 4096; x <<= 1 {
				if rc.Packets(s.dlen, x) == k+1 {
					m, count = x, count+1
				}
			}
			if count == 1 {
				c.learnPMTU(fl, m)
			}
		}
	}
	// A First or Middle of a READ whose RETH the capture cut says more
	// responses follow: the READ reserved at least k+2 PSNs, so a request
	// before that re-requests its tail (§5.5) rather than starting anew.
	if !s.spanKnown && s.ethCut && (pos == opcode.First || pos == opcode.Middle) && s.spanLo < k+2 {
		s.spanLo = k + 2
		if !s.obsNext { // (else the next request bounded it already)
			s.span = s.spanLo
			if end := s.end(); rc.DiffPSN(end, ch.frontier) > 0 {
				if ch.lastEnd == ch.frontier {
					ch.lastEnd = end
				}
				ch.frontier = end
			}
		}
	}
	// Sizes: First and Middle exactly PMTU, Last the rest, Only all (§5.2).
	mtu := fl.pmtu
	if !isRead {
		if plen != 0 {
			bad("an empty RDMA READ Response Only", fmt.Sprintf("%d bytes", plen), "%s at PSN %s answers a %s with %d bytes",
				op, psnStr(q), s.op, plen)
			return
		}
	} else {
		switch pos {
		case opcode.First, opcode.Middle:
			if mtu == 0 {
				if !rc.ValidMTU(int(plen)) {
					bad("a path MTU size", fmt.Sprintf("%d bytes", plen), "%s at PSN %s carries %d bytes, which is no path MTU", op, psnStr(q), plen)
					return
				}
				c.learnPMTU(fl, int(plen))
				mtu = fl.pmtu
			} else if plen != uint32(mtu) {
				bad(fmt.Sprintf("%d bytes (the PMTU)", mtu), fmt.Sprintf("%d bytes", plen), "%s at PSN %s carries %d bytes", op, psnStr(q), plen)
				return
			}
		case opcode.Last, opcode.Only:
			if mtu != 0 && s.spanKnown && !s.ethCut {
				want := uint64(s.dlen) - min(uint64(s.span-1)*uint64(mtu), uint64(s.dlen))
				if pos == opcode.Only && k > 0 { // a replay restarting with Only
					want = uint64(s.dlen) - min(uint64(k)*uint64(mtu), uint64(s.dlen))
				}
				if uint64(plen) != want {
					bad(fmt.Sprintf("%d bytes (%d of %d bytes left)", want, want, s.dlen), fmt.Sprintf("%d bytes", plen),
						"%s at PSN %s carries %d bytes for the READ at PSN %s (frame %d) of %d bytes", op, psnStr(q), plen, psnStr(s.psn), s.frame, s.dlen)
					return
				}
			}
		}
	}
	if p.AETH != nil {
		syn := p.AETH.Syndrome()
		if syn.Kind() != aeth.ACK || !syn.Valid() {
			bad("an ACK syndrome in the AETH", fmt.Sprintf("syndrome 0x%02x", uint8(syn)),
				"%s at PSN %s carries AETH syndrome 0x%02x (%s)", op, psnStr(q), uint8(syn), syn)
			return
		}
		c.checkMSN(peer, n, rc.AddPSN(s.psn, 1), p.AETH.MSN(), s)
	}
}

// checkMSN compares an AETH MSN with the number of messages the responder
// completed before level lvl (§5.9); for a READ response or ATOMIC ACK, s
// is the request, whose own MSN counts.
func (c *Checker) checkMSN(fl *flow, n int, lvl, msn uint32, s *slot) {
	ch := &fl.req
	if !ch.msnKnown {
		// Learn the responder's count from its first AETH.
		if s != nil && !s.spanKnown {
			return
		}
		ch.msnKnown, ch.msnBadSet = true, false
		if s != nil {
			ch.msnCur, ch.msnVal = s.end(), msn
			s.msnAfter, s.msnSet = msn, true
		} else {
			ch.msnCur, ch.msnVal = lvl, msn
		}
		return
	}
	var want uint32
	switch {
	case s != nil:
		if rc.DiffPSN(ch.msnCur, s.end()) < 0 && !ch.countTo(s.end()) {
			return
		}
		if !s.msnSet {
			return
		}
		want = s.msnAfter
	case rc.DiffPSN(lvl, ch.msnCur) >= 0:
		if !ch.countTo(lvl) {
			return
		}
		want = ch.msnVal
	default:
		i := ch.slots.find(rc.AddPSN(lvl, rc.PSNMask))
		if i < 0 || !ch.slots.at(i).msnSet {
			return
		}
		want = ch.slots.at(i).msnAfter
	}
	if msn == want {
		ch.msnBadSet = false
		return
	}
	off := (msn - want) & rc.PSNMask
	if ch.msnBadSet && off == ch.msnBadOff && s == nil && lvl == ch.msnCur {
		// The same offset twice: the responder counts from elsewhere (or
		// counted a message we did not see). Follow it silently.
		ch.msnVal = msn
		ch.msnBadSet = false
		return
	}
	ch.msnBadOff, ch.msnBadSet = off, true
	c.report(n, MSN, fmt.Sprintf("MSN %d", want), fmt.Sprintf("MSN %d", msn),
		"AETH MSN %d, but the responder had completed %d messages by PSN %s", msn, want, psnStr(rc.AddPSN(lvl, rc.PSNMask)))
}

// countTo moves the MSN count over every slot that starts before lvl; it
// reports false when a gap or a READ of unknown N stops it.
func (ch *channel) countTo(lvl uint32) bool {
	for rc.DiffPSN(ch.msnCur, lvl) < 0 {
		i := ch.slots.find(ch.msnCur)
		if i < 0 {
			return false
		}
		s := ch.slots.at(i)
		if !s.spanKnown {
			return false
		}
		if s.psn != ch.msnCur {
			ch.msnCur = s.end() // inside a READ's range: it was counted
			continue
		}
		if rc.EndsMessage(s.op) {
			ch.msnVal = rc.AddPSN(ch.msnVal, 1)
		}
		s.msnAfter, s.msnSet = ch.msnVal, true
		ch.msnCur = s.end()
	}
	return true
}

// unanswered: a READ (FLUSH, ATOMIC WRITE) or atomic whose own answer the
// capture never showed. No ACK stands for it: a later response does not
// complete it (§5.3), a READ's last response does (a READ whose responses
// drew a finding counts as answered).
func (s *slot) unanswered() bool {
	switch {
	case rc.AnsweredByRead(s.op):
		return !s.respDone && !s.respBad
	case s.op.Family() == opcode.FamilyAtomic:
		return !s.atomicAcked
	}
	return false
}

// passedBy reports whether the responder answered a PSN after the
// unanswered READ or atomic s: level reaches past every PSN s reserved. The
// responder works in PSN order (§5.4: its expected PSN passes a READ only
// after the READ's last response is generated), so it had answered s by
// then.
func (ch *channel) passedBy(s *slot) bool {
	return rc.DiffPSN(ch.level, rc.AddPSN(s.psn, s.cover())) >= 0
}

// atResponder reports whether the capture is known to sit at the
// responder of the channel: requests were seen lost before the capture
// point (a PSN skipped) and never after it (no PSN sequence NAK for a PSN
// the capture saw in order). Nothing the responder sends can then be lost
// before the capture point.
func (ch *channel) atResponder() bool { return ch.lossBeforeTap && !ch.lossAfterTap }

// noteOutstanding counts s as a request awaiting its answer at the end of
// the capture.
func (ch *channel) noteOutstanding(s *slot) {
	if ch.outstanding == 0 || rc.DiffPSN(s.psn, ch.outPSN) < 0 {
		ch.outPSN, ch.outFrame, ch.outOp = s.psn, s.frame, s.op
	}
	ch.outstanding++
}

// finish reports the go-back-N runs that started too late, if the capture
// sits at the requester (§5.5), and the READs and atomics the responder
// passed without answering, if the capture sits at the responder (§5.3,
// §5.4); every other request still awaiting its answer is outstanding, not
// a finding.
func (c *Checker) finish(fl *flow) {
	ch := &fl.req
	c.cur = fl
	if ch.lossAfterTap && !ch.lossBeforeTap {
		for _, x := range ch.suspects {
			// Only if the skipped PSN was never sent again and never
			// acknowledged: a requester that resent it later, or whose
			// responder had it anyway, may only have lost that one packet
			// before the capture point.
			if i := ch.slots.find(x.level); i < 0 || ch.slots.at(i).last > x.frame || rc.DiffPSN(ch.level, x.level) > 0 {
				continue
			}
			exp := "the oldest unacknowledged PSN " + psnStr(x.level)
			if x.levelNAK {
				exp = fmt.Sprintf("PSN %s, where the NAK at frame %d said", psnStr(x.level), x.levelFrame)
			}
			c.report(x.frame, BadRetransmission, "go back to "+exp+" (or earlier)", "go-back to PSN "+psnStr(x.psn),
				"go-back-N retransmission starts at PSN %s, but nothing acknowledged PSN %s: PSNs %s..%s are never resent",
				psnStr(x.psn), psnStr(x.level), psnStr(x.level), psnStr(rc.AddPSN(x.psn, rc.PSNMask)))
		}
	}
	if !ch.started || fl.errFrame != 0 || fl.Peer != nil && fl.Peer.errFrame != 0 {
		// In the Error state every request completes in error (§5.10).
		ch.outstanding = 0
		return
	}
	if fl.Peer == nil && fl.PairedBy == analysis.Ambiguous {
		// Its answers cannot be told from another flow's: none is judged
		// missing.
		ch.outstanding = 0
		return
	}
	var first *slot
	count := 0
	for i := 0; i < ch.slots.len(); i++ {
		s := ch.slots.at(i)
		switch {
		case s.unanswered():
			if ch.passedBy(s) && ch.atResponder() {
				if first == nil {
					first = s
				}
				count++
				continue
			}
		case !s.ackReq || rc.NeedsResponse(s.op):
			continue // needs no answer, or got its own
		case rc.DiffPSN(s.psn, ch.level) < 0:
			continue // an ACK for it or a later PSN, or a NAK or response for a later PSN, covers it
		}
		ch.noteOutstanding(s)
	}
	if first == nil {
		return
	}
	more := ""
	if count > 1 {
		more = fmt.Sprintf(" (nor %d later READs or atomics)", count-1)
	}
	exp := "an ATOMIC ACK with PSN " + psnStr(first.psn) + " before any answer to a later PSN"
	if rc.AnsweredByRead(first.op) {
		exp = fmt.Sprintf("READ responses up to PSN %s before any answer to a later PSN", psnStr(rc.AddPSN(first.end(), rc.PSNMask)))
	}
	c.report(first.frame, MissingACK, exp, fmt.Sprintf("an answer up to PSN %s at frame %d", psnStr(rc.AddPSN(ch.level, rc.PSNMask)), ch.levelFrame),
		"%s at PSN %s was never answered%s, yet the responder went on to answer up to PSN %s (frame %d); the capture sits at the responder "+
			"(requests were lost before it, never after it), so no loss before the capture point explains the missing answer",
		first.op, psnStr(first.psn), more, psnStr(rc.AddPSN(ch.level, rc.PSNMask)), ch.levelFrame)
}
