package rc

import (
	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/internal/ring"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// maxPktPerAck: the requester sets AckReq at least every 64 packets
// (rxe RXE_MAX_PKT_PER_ACK, ib-facts.md §5.2).
const maxPktPerAck = 64

// ackEvery is how many packets may go out in a row before one must carry
// AckReq: 64, or half the window (rounded up) when that is less. The
// responder ACKs only AckReq packets (§5.2), so a requester that filled its
// window with packets that ask for no ACK would wait for its local ACK timer
// on a perfect link. Half the window is rxe's own ratio (AckReq every 64
// packets in its 128-PSN window, §5.1, §5.2): the ACK for the middle of the
// window comes back while the second half is sent, and ACKs coalesce
// (§5.3), so asking more often buys nothing.
func ackEvery(window uint32) int32 {
	return int32(max(1, min(maxPktPerAck, (window+1)/2)))
}

// sendWQE is a send WR on the send queue.
type sendWQE struct {
	wr     WR
	length uint32 // message length in bytes
	npsn   uint32 // PSNs the message uses: its packets, or a READ's responses (§5.3)
	first  uint32 // first PSN, set when the WR is first transmitted
	recv   uint32 // READ: response packets received in order
}

func (w *sendWQE) last() uint32 { return AddPSN(w.first, w.npsn-1) }

// requester is the send side of a QP (ib-facts.md §5.2, §5.3, §5.5).
//
// Send-queue WQEs [0, sent) have been transmitted at least once and occupy
// contiguous PSNs from sq[0].first; cur/curPkt is the (re)transmit position
// and npsn its PSN; hiPSN is one past the highest PSN ever sent; una is the
// oldest PSN not yet acknowledged. Go-back-N moves cur back; responses
// complete WQEs from the head, in order.
type requester struct {
	// What an idle requester's checks read (canSend, tick, nextWake) shares
	// a cache line: first in the struct, which starts a line.
	q       *QP
	sq      ring.Ring[sendWQE]
	cur     int32
	sent    int32
	timerAt Time
	timerOn bool
	rnrOn   bool // waiting out an RNR NAK: no sending, no transport timer
	// retrying is rxe's started_retry: a go-back-N has been started and no
	// progress seen since; a further NAK or skipped READ response does not
	// start another (only a timeout does).
	retrying     bool
	retryLeft    uint8
	rnrLeft      uint8
	creditsLimit bool
	retryCnt     uint8 // Config.RetryCnt
	rnrRetry     uint8 // Config.RNRRetry

	curPkt uint32
	npsn   uint32
	hiPSN  uint32
	una    uint32

	ordInUse int32 // READ/atomic WQEs transmitted and not completed
	noAck    int32 // packets sent since the last one with AckReq
	maxRd    int32 // Config.MaxRdAtomic

	remoteMSN uint32
	credits   int32

	rnrPSN uint32
	// rnrAt, when the RNR wait ends, is QP.rnrAt: here it would push the
	// responder's fields off their cache-line boundary.
}

func (r *requester) init(q *QP) {
	r.q = q
	r.npsn, r.hiPSN, r.una = q.cfg.SQPSN, q.cfg.SQPSN, q.cfg.SQPSN
	r.retryCnt, r.rnrRetry = q.cfg.RetryCnt, q.cfg.RNRRetry
	r.retryLeft, r.rnrLeft = r.retryCnt, r.rnrRetry
	r.maxRd = int32(min(q.cfg.MaxRdAtomic, 1<<31-1))
	r.sq.Init(q.sqInline[:])
}

func (r *requester) post(wr *WR) {
	w := r.sq.PushSlot()
	w.wr = *wr
	w.length = uint32(len(wr.Local))
	mtu := r.q.mtu
	switch {
	case wr.Opcode == WRRDMARead || wr.Opcode.isSend() || wr.Opcode.isWrite():
		// n = max(1, ceil(L/PMTU)) packets, or READ responses (§5.2, §5.3).
		w.npsn = Packets(w.length, int(mtu))
	default:
		w.npsn = 1
	}
	if wr.Opcode.isAtomic() {
		w.length = 8
	}
	if wr.Opcode == WRFlush {
		w.length = wr.Length
	}
}

// outstanding reports whether some transmitted PSN is not yet acknowledged.
func (r *requester) outstanding() bool { return DiffPSN(r.una, r.hiPSN) < 0 }

// canSend reports whether next would produce a packet.
func (r *requester) canSend() bool {
	q := r.q
	if q.state != StateRTS || r.rnrOn || int(r.cur) >= r.sq.Len() {
		return false
	}
	w := r.sq.At(int(r.cur))
	span := uint32(1)
	if w.wr.Opcode == WRRDMARead {
		span = w.npsn - r.curPkt
	}
	// Window: PSNs in flight stay within Config.Window <= 2^23 (§5.1). A
	// READ wider than the window goes alone, once all else is acknowledged.
	if inFlight := subPSN(r.npsn, r.una); inFlight > 0 && inFlight+span > q.window {
		return false
	}
	if r.cur < r.sent {
		return true // retransmission
	}
	// Fence: wait for every earlier READ/atomic (ibv IBV_SEND_FENCE).
	if w.wr.Flags&Fence != 0 && r.ordInUse > 0 {
		return false
	}
	// ORD: at most max_rd_atomic READ/atomics in flight (§5.5).
	if w.wr.Opcode.needsResponse() && r.ordInUse >= r.maxRd {
		return false
	}
	return true
}

// next builds the next request packet.
func (r *requester) next(f *packet.Fields) bool {
	if !r.canSend() {
		return false
	}
	q := r.q
	w := r.sq.At(int(r.cur))
	if r.cur == r.sent {
		w.first = r.npsn
		r.sent++
		if w.wr.Opcode.needsResponse() {
			r.ordInUse++
		}
	}
	psn := AddPSN(w.first, r.curPkt)
	*f = packet.Fields{}
	f.BTH.PKey = q.pkey
	f.BTH.DestQP = q.destQPN
	f.BTH.PSN = psn
	ackReq := false
	wr := &w.wr
	switch op := wr.Opcode; {
	case op.isSend() || op.isWrite():
		off := r.curPkt * q.mtu
		n := min(q.mtu, w.length-off)
		f.Payload = wr.Local[off : off+n]
		f.SetPad()
		pos := position(r.curPkt, w.npsn)
		f.BTH.Opcode = requestOpcode(op, pos)
		if op.isWrite() && (pos == opcode.First || pos == opcode.Only) {
			// RETH only on First/Only, with the whole length (§5.2).
			f.RETH.VA, f.RETH.RKey, f.RETH.DMALen = wr.RemoteAddr, wr.RKey, w.length
		}
		if pos == opcode.Last || pos == opcode.Only {
			ackReq = true
			f.ImmDt.Imm = wr.Imm
			f.IETH.RKey = wr.InvRKey
			// SE on the last packet of a SEND or WRITE with immediate (§5.2).
			f.BTH.SE = wr.Flags&Solicited != 0 && (op.isSend() || op == WRRDMAWriteWithImm)
		}
		r.curPkt++
		if r.curPkt == w.npsn {
			r.cur, r.curPkt = r.cur+1, 0
		}
		r.npsn = AddPSN(psn, 1)
	case op == WRRDMARead:
		// A retried READ asks only for the responses still missing: VA
		// advanced and length reduced by what arrived (§5.5).
		off := r.curPkt * q.mtu
		f.BTH.Opcode = opcode.RCRDMAReadRequest
		f.RETH.VA, f.RETH.RKey, f.RETH.DMALen = wr.RemoteAddr+uint64(off), wr.RKey, w.length-off
		ackReq = true
		r.npsn = AddPSN(w.first, w.npsn) // the READ reserves N PSNs (§5.3)
		r.cur, r.curPkt = r.cur+1, 0
	case op.isAtomic():
		f.BTH.Opcode = opcode.RCCompareSwap
		f.AtomicETH.VA, f.AtomicETH.RKey = wr.RemoteAddr, wr.RKey
		if op == WRAtomicCmpSwap {
			f.AtomicETH.SwapAdd, f.AtomicETH.Compare = wr.Swap, wr.CompareAdd
		} else {
			f.BTH.Opcode = opcode.RCFetchAdd
			f.AtomicETH.SwapAdd = wr.CompareAdd
		}
		ackReq = true
		r.npsn = AddPSN(psn, 1)
		r.cur++
	case op == WRAtomicWrite:
		f.BTH.Opcode = opcode.RCAtomicWrite
		f.RETH.VA, f.RETH.RKey, f.RETH.DMALen = wr.RemoteAddr, wr.RKey, 8
		f.Payload = wr.Local[:8]
		ackReq = true
		r.npsn = AddPSN(psn, 1)
		r.cur++
	case op == WRFlush:
		f.BTH.Opcode = opcode.RCFlush
		f.FETH.SEL, f.FETH.PLT = wr.FlushLevel, wr.FlushType
		f.RETH.VA, f.RETH.RKey, f.RETH.DMALen = wr.RemoteAddr, wr.RKey, wr.Length
		ackReq = true
		r.npsn = AddPSN(psn, 1)
		r.cur++
	}
	// AckReq on Last/Only, and at least every 64 packets or half window
	// (§5.2, ackEvery).
	if !ackReq && r.noAck+1 >= ackEvery(q.window) {
		ackReq = true
	}
	f.BTH.AckReq = ackReq
	if ackReq {
		r.noAck = 0
	} else {
		r.noAck++
	}
	if DiffPSN(r.npsn, r.hiPSN) > 0 {
		r.hiPSN = r.npsn
	} else {
		q.stats.Retransmitted++
	}
	// The local ACK timer runs while something is unacknowledged; sending
	// starts it if it is not running (rxe update_state).
	if !r.timerOn && q.timeout > 0 {
		r.timerOn, r.timerAt = true, q.now+q.timeout
	}
	return true
}

// position returns where packet i of an n-packet message stands.
func position(i, n uint32) opcode.Position {
	switch {
	case n == 1:
		return opcode.Only
	case i == 0:
		return opcode.First
	case i == n-1:
		return opcode.Last
	}
	return opcode.Middle
}

// requestOpcode picks the SEND/WRITE opcode for a WR opcode and position:
// immediate and invalidate variants exist only on Last/Only (§2.2, §5.2).
func requestOpcode(op WROpcode, pos opcode.Position) opcode.Opcode {
	type row [5]opcode.Opcode // indexed by Position
	var t row
	switch op {
	case WRSend:
		t = row{0, opcode.RCSendFirst, opcode.RCSendMiddle, opcode.RCSendLast, opcode.RCSendOnly}
	case WRSendWithImm:
		t = row{0, opcode.RCSendFirst, opcode.RCSendMiddle, opcode.RCSendLastWithImmediate, opcode.RCSendOnlyWithImmediate}
	case WRSendWithInv:
		t = row{0, opcode.RCSendFirst, opcode.RCSendMiddle, opcode.RCSendLastWithInvalidate, opcode.RCSendOnlyWithInvalidate}
	case WRRDMAWrite:
		t = row{0, opcode.RCRDMAWriteFirst, opcode.RCRDMAWriteMiddle, opcode.RCRDMAWriteLast, opcode.RCRDMAWriteOnly}
	case WRRDMAWriteWithImm:
		t = row{0, opcode.RCRDMAWriteFirst, opcode.RCRDMAWriteMiddle, opcode.RCRDMAWriteLastWithImmediate, opcode.RCRDMAWriteOnlyWithImmediate}
	}
	return t[pos]
}

// seek puts the transmit position at psn, which lies in [una, hiPSN]:
// go-back-N retransmits from there (§5.5).
func (r *requester) seek(psn uint32) {
	for i := int32(0); i < r.sent; i++ {
		w := r.sq.At(int(i))
		if DiffPSN(psn, AddPSN(w.first, w.npsn)) < 0 {
			r.cur, r.curPkt, r.npsn = i, subPSN(psn, w.first), psn
			return
		}
	}
	r.cur, r.curPkt, r.npsn = r.sent, 0, psn
}

// progress records that everything before una is acknowledged. Progress
// reloads both retry counters (§5.5, rxe reset_retry_counters), ends a
// started retry and restarts the local ACK timer if anything is still
// outstanding.
func (r *requester) progress(una uint32) {
	if DiffPSN(una, r.una) <= 0 {
		return
	}
	q := r.q
	r.una = una
	r.retryLeft, r.rnrLeft = r.retryCnt, r.rnrRetry
	r.retrying = false
	r.timerOn = false
	if r.outstanding() && q.timeout > 0 && !r.rnrOn {
		r.timerOn, r.timerAt = true, q.now+q.timeout
	}
	if DiffPSN(r.una, r.npsn) > 0 {
		r.seek(r.una) // acknowledged beyond the retransmit position
	}
}

// completeHead completes the oldest WQE with st.
func (r *requester) completeHead(st Status) {
	q := r.q
	w := r.sq.At(0)
	end := AddPSN(w.first, w.npsn)
	if w.wr.Opcode.needsResponse() {
		r.ordInUse--
	}
	if st != Success || q.signalAll || w.wr.Flags&Signaled != 0 {
		// A failed completion is reported even if unsignalled (§5.5).
		q.complete(w.wr.ID, st, w.wr.Opcode.wcOpcode(), w.length)
	}
	r.sq.Drop()
	r.sent--
	r.cur--
	if r.cur < 0 {
		r.cur, r.curPkt = 0, 0
		r.npsn = end
	}
	if st == Success {
		r.progress(end)
	}
}

// fail completes the head WQE with st and moves the QP to Error.
func (r *requester) fail(st Status) {
	if r.sq.Len() > 0 && r.sent > 0 {
		r.completeHead(st)
	}
	r.q.enterError()
}

// flush completes every queued WQE with WR_FLUSH_ERR (§5.10).
func (r *requester) flush() {
	q := r.q
	for r.sq.Len() > 0 {
		w := r.sq.At(0)
		q.complete(w.wr.ID, WRFlushErr, w.wr.Opcode.wcOpcode(), 0)
		r.sq.Drop()
	}
	r.sent, r.cur, r.curPkt, r.ordInUse = 0, 0, 0, 0
	r.timerOn, r.rnrOn = false, false
}

// retry starts go-back-N from psn after a timeout or a NAK (§5.5): it uses
// one unit of retry_cnt, and fails the head WQE with RETRY_EXC_ERR when none
// is left. While a non-timeout retry is under way without progress, another
// NAK-triggered retry is ignored (rxe started_retry).
func (r *requester) retry(psn uint32, timeout bool) {
	q := r.q
	if !timeout && r.retrying {
		return
	}
	if r.retryLeft == 0 {
		r.fail(RetryExcErr)
		return
	}
	if !(q.cfg.RetryCnt7Infinite && q.cfg.RetryCnt == 7) {
		r.retryLeft--
	}
	q.stats.Retries++
	r.retrying = true
	r.seek(psn)
	r.timerOn = false // restarted by the first retransmitted packet
}

func (r *requester) nextWake() (Time, bool) {
	switch {
	case r.rnrOn:
		return r.q.rnrAt, true
	case r.timerOn:
		return r.timerAt, true
	}
	return 0, false
}

func (r *requester) tick() {
	q := r.q
	if q.state != StateRTS {
		return
	}
	if r.rnrOn && q.now >= q.rnrAt {
		// RNR wait over: retransmit from the NAKed PSN (§5.5).
		r.rnrOn = false
		psn := r.rnrPSN
		if DiffPSN(psn, r.una) < 0 {
			psn = r.una
		}
		r.seek(psn)
	}
	if r.timerOn && q.now >= r.timerAt {
		r.timerOn = false
		if r.outstanding() {
			q.stats.Timeouts++
			r.retry(r.una, true)
		}
	}
}

// receive handles a response packet (§5.3, §5.5, §5.6).
func (r *requester) receive(f *packet.Fields) {
	q := r.q
	op := f.BTH.Opcode
	p := f.BTH.PSN
	// A response must name a PSN in [una, hiPSN): older ones are stale
	// duplicates, newer ones were never sent.
	if r.sent == 0 || DiffPSN(p, r.una) < 0 || DiffPSN(p, r.hiPSN) >= 0 {
		q.stats.Dropped++
		return
	}
	info := op.Info()
	if info.Has(opcode.AETH) && !f.AETH.Syndrome.Valid() {
		q.stats.Dropped++
		return
	}
	// Implicit ACK (§5.3): a response for PSN p completes every earlier
	// SEND/WRITE; an earlier READ/atomic still unanswered means its
	// responses were lost: retry from it.
	for r.sent > 0 {
		w := r.sq.At(0)
		if DiffPSN(p, w.last()) <= 0 {
			break
		}
		if w.wr.Opcode.needsResponse() {
			r.retry(r.una, false)
			return
		}
		r.completeHead(Success)
	}
	if r.sent == 0 {
		q.stats.Dropped++
		return
	}
	w := r.sq.At(0)
	if info.Has(opcode.AETH) {
		r.noteAETH(f)
	}
	switch op {
	case opcode.RCAcknowledge:
		r.ack(f, w)
	case opcode.RCRDMAReadResponseFirst, opcode.RCRDMAReadResponseMiddle, opcode.RCRDMAReadResponseLast, opcode.RCRDMAReadResponseOnly:
		r.readResponse(f, w)
	case opcode.RCAtomicAcknowledge:
		if !w.wr.Opcode.isAtomic() || p != w.first {
			r.fail(BadRespErr)
			return
		}
		storeU64(w.wr.Local[:8], f.AtomicAckETH.OrigRemDt)
		r.completeHead(Success)
	default:
		q.stats.Dropped++
	}
}

func (r *requester) noteAETH(f *packet.Fields) {
	s := f.AETH.Syndrome
	if s.Kind() != aeth.ACK {
		return
	}
	// MSN and credits (§5.8, §5.9): recorded, not used to hold back SENDs.
	r.remoteMSN = f.AETH.MSN
	n, limited := s.Credits()
	r.credits, r.creditsLimit = int32(n), limited
}

// ack handles an Acknowledge: ACK, RNR NAK or NAK with PSN p, where p lies
// in the head WQE w.
func (r *requester) ack(f *packet.Fields, w *sendWQE) {
	q := r.q
	p := f.BTH.PSN
	s := f.AETH.Syndrome
	switch s.Kind() {
	case aeth.ACK:
		if w.wr.Opcode.needsResponse() {
			// An ACK inside a READ's range does not complete it: the data
			// comes in READ responses (rxe check_psn).
			return
		}
		if p == w.last() {
			r.completeHead(Success)
		} else {
			r.progress(AddPSN(p, 1))
		}
	case aeth.RNRNAK:
		q.stats.RNRNAKsReceived++
		if r.rnrOn {
			return // already waiting (a duplicated RNR NAK)
		}
		r.progress(p) // everything before p is acknowledged
		if r.rnrLeft == 0 {
			r.fail(RNRRetryExcErr)
			return
		}
		if r.rnrLeft != 7 { // 7 = infinite (§5.5)
			r.rnrLeft--
		}
		// Wait the RNR time, with the transport timer off so it cannot cut
		// the wait short (§5.5, rxe "Fix rnr retry behavior").
		r.rnrOn, q.rnrAt, r.rnrPSN = true, q.now+RNRDelay(s.RNRTimer()), p
		r.timerOn = false
	case aeth.NAK:
		switch s.NAKCode() {
		case aeth.PSNSequenceError:
			q.stats.SeqNAKsReceived++
			r.progress(p) // implicit ACK of everything before p (§5.5)
			if r.rnrOn {
				return // the RNR wait ends in the same go-back-N
			}
			r.retry(p, false)
		case aeth.InvalidRequest:
			r.fail(RemInvReqErr)
		case aeth.RemoteAccessError:
			r.fail(RemAccessErr)
		default: // remote operational error, or an unexpected code (§5.5)
			r.fail(RemOpErr)
		}
	}
}

// readResponse handles a READ response (or the empty READ Response Only
// that answers FLUSH and ATOMIC WRITE, §2.2) for the head WQE w.
func (r *requester) readResponse(f *packet.Fields, w *sendWQE) {
	q := r.q
	p := f.BTH.PSN
	op := f.BTH.Opcode
	if f.AETH.Syndrome.Kind() != aeth.ACK && op.Info().Has(opcode.AETH) {
		r.fail(BadRespErr)
		return
	}
	switch w.wr.Opcode {
	case WRRDMARead:
	case WRFlush, WRAtomicWrite:
		if op != opcode.RCRDMAReadResponseOnly || len(f.Payload) != 0 || p != w.first {
			r.fail(BadRespErr)
			return
		}
		r.completeHead(Success)
		return
	default:
		r.fail(BadRespErr)
		return
	}
	want := AddPSN(w.first, w.recv)
	if p != want {
		// A response past the expected one: those between were lost. Drop
		// it and re-request the READ from the first missing response at
		// once, as a NAK PSN sequence error would (§5.5): a new READ
		// request with that PSN, VA advanced and length reduced by what
		// arrived. rxe drops it and waits for its timer (check_psn); the
		// rdmavt drivers (qib, hfi1) restart at once (rdma_seq_err). Until
		// the first missing response arrives, further gaps start no other
		// retry (retrying, like their RDMAR_SEQ).
		if DiffPSN(p, want) > 0 {
			q.stats.Dropped++
			r.retry(want, false)
		}
		return
	}
	// The opcode and length follow from the PSN (§5.2, §5.3): First/Middle
	// carry PMTU bytes, Last the rest, Only the whole (possibly empty) READ.
	off := w.recv * q.mtu
	pos := position(w.recv, w.npsn)
	wantLen := min(q.mtu, w.length-off)
	okOp := false
	switch pos {
	case opcode.Only:
		okOp = op == opcode.RCRDMAReadResponseOnly
	case opcode.First:
		okOp = op == opcode.RCRDMAReadResponseFirst
	case opcode.Middle:
		okOp = op == opcode.RCRDMAReadResponseMiddle
	case opcode.Last:
		okOp = op == opcode.RCRDMAReadResponseLast
	}
	if !okOp || uint32(len(f.Payload)) != wantLen {
		r.fail(BadRespErr)
		return
	}
	copy(w.wr.Local[off:], f.Payload)
	w.recv++
	if w.recv == w.npsn {
		r.completeHead(Success)
		return
	}
	r.progress(AddPSN(p, 1))
}
