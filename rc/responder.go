package rc

import (
	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/internal/ring"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// jobKind is a queued response.
type jobKind uint8

const (
	jobAck       jobKind = iota // Acknowledge: ACK, RNR NAK or NAK
	jobRead                     // READ responses (empty Only for FLUSH and ATOMIC WRITE)
	jobAtomicAck                // ATOMIC Acknowledge
)

// job is one response waiting to go out. Responses leave in the order the
// requests were processed, so they stay in PSN order; a READ job produces
// its packets one NextPacket at a time, reading memory as it goes.
type job struct {
	kind    jobKind
	syn     aeth.Syndrome
	started bool   // READ: a response went out (next ones are Middle/Last)
	psn     uint32 // PSN of the next packet
	msn     uint32
	last    uint32 // READ: the PSN of the last response
	data    []byte // READ: bytes still to send (a view of the memory region)
	orig    uint64 // ATOMIC ACK: original remote data
}

// resKind is what a responder resource saved (ib-facts.md §5.4).
type resKind uint8

const (
	resNone   resKind = iota
	resRead           // READ: range to replay
	resAtomic         // CmpSwap/FetchAdd: the original value, never re-executed
	resEmpty          // FLUSH, ATOMIC WRITE: answered by an empty READ Response Only
)

// resource is one entry of the IRD ring (max_dest_rd_atomic, §5.4).
type resource struct {
	kind        resKind
	first, last uint32
	va          uint64
	rkey        uint32
	length      uint32
	data        []byte // READ: the whole range in the memory region
	orig        uint64
	msn         uint32
}

type seqState uint8

const (
	seqNone  seqState = iota // expecting First or Only
	seqSend                  // inside a multi-packet SEND
	seqWrite                 // inside a multi-packet WRITE
)

// responder is the receive side of a QP (ib-facts.md §5.4, §5.6, §5.9).
type responder struct {
	// Two cache lines (the struct starts one) hold what a request packet
	// reads and writes, and the ACK fields of the first job slot.
	q       *QP
	jobs    ring.Ring[job]
	epsn    uint32
	msn     uint32
	nakSent bool // one PSN-sequence NAK per gap (§5.4 rule 2)
	seq     seqState
	wlen    uint32 // WRITE: DMA length
	// The region the last check found (by key, while the Memory's
	// generation is mrGen): a QP's requests mostly name one region, and
	// this saves the map's cache lines.
	mrKey uint32
	wdata []byte // WRITE: target bytes still to fill
	mr    *MR
	mrGen uint64

	jobsInline [initRing]job

	sendOff uint32 // bytes of the current SEND written into rq[0].Buf
	resNext int
	rq      ring.Ring[RecvWR]
	res     []resource
}

func (r *responder) init(q *QP) {
	r.q = q
	r.epsn = q.cfg.RQPSN
	r.res = make([]resource, q.cfg.MaxDestRdAtomic)
	r.jobs.Init(r.jobsInline[:])
	r.rq.Init(q.rqInline[:])
}

// check is Memory.check on the QP's memory, through the one-region cache.
func (r *responder) check(rkey uint32, va uint64, n uint64, need Access) (*MR, []byte, bool) {
	m := r.q.memory
	if m == nil {
		return nil, nil, false
	}
	if r.mr == nil || r.mrKey != rkey || r.mrGen != m.gen {
		mr := m.byKey[rkey]
		if mr == nil {
			return nil, nil, false
		}
		r.mr, r.mrKey, r.mrGen = mr, rkey, m.gen
	}
	return m.checkMR(r.mr, va, n, need)
}

// ackSyndrome is the syndrome of a positive ACK: "unlimited" 0x1F as rxe
// sends, or the posted receive count with Config.AdvertiseCredits (§5.8).
func (r *responder) ackSyndrome() aeth.Syndrome {
	if r.q.advCredits {
		return aeth.ACKSyndrome(aeth.CreditCodeFor(r.rq.Len()))
	}
	return aeth.ACKSyndrome(aeth.Unlimited)
}

// queueAck queues an ACK for psn. ACKs coalesce: if the last queued
// response is an ACK not yet sent, it is replaced by this later one, which
// acknowledges everything it did (§5.3).
func (r *responder) queueAck(psn uint32, syn aeth.Syndrome) {
	if r.jobs.Len() > 0 {
		if t := r.jobs.Back(); t.kind == jobAck && t.syn.Kind() == aeth.ACK {
			t.psn, t.syn, t.msn = psn, syn, r.msn
			return
		}
	}
	r.queueNAK(psn, syn)
}

func (r *responder) queueNAK(psn uint32, syn aeth.Syndrome) {
	// The slot is zero (popped slots are cleared): only the ACK's fields
	// need writing.
	j := r.jobs.PushSlot()
	j.kind, j.syn, j.psn, j.msn = jobAck, syn, psn, r.msn
}

// classC handles a class C error (§5.6): NAK the packet, optionally
// complete the receive WQE in use with recvStatus, and move to Error.
func (r *responder) classC(psn uint32, code aeth.NAKCode, recvStatus Status) {
	r.queueNAK(psn, aeth.NAKSyndrome(code))
	if recvStatus != Success && r.rq.Len() > 0 {
		w := r.rq.Pop()
		r.q.comps = append(r.q.comps, Completion{WRID: w.ID, Status: recvStatus, Opcode: WCRecv, QPN: r.q.qpn})
	}
	r.q.enterError()
}

// rnr answers a SEND or WRITE with immediate that finds no receive WQE:
// RNR NAK with the packet's PSN and min_rnr_timer; the packet is dropped
// and ePSN stays (§5.4, §5.6 class B).
func (r *responder) rnr(psn uint32) {
	r.q.stats.RNRNAKsSent++
	r.queueNAK(psn, aeth.RNRNAKSyndrome(r.q.cfg.MinRNRTimer))
}

// flush completes every posted receive with WR_FLUSH_ERR. Responses
// already queued still go out.
func (r *responder) flush() {
	for r.rq.Len() > 0 {
		w := r.rq.Pop()
		r.q.comps = append(r.q.comps, Completion{WRID: w.ID, Status: WRFlushErr, Opcode: WCRecv, QPN: r.q.qpn})
	}
	r.seq = seqNone
}

func (r *responder) receive(f *packet.Fields) {
	q := r.q
	p := f.BTH.PSN
	// PSN check (§5.4).
	switch d := DiffPSN(p, r.epsn); {
	case d > 0:
		// Too new: one NAK "PSN sequence error" carrying ePSN per gap, then
		// silence until the expected PSN arrives.
		q.stats.OutOfSequence++
		if !r.nakSent {
			r.nakSent = true
			q.stats.SeqNAKsSent++
			r.queueNAK(r.epsn, aeth.NAKSyndrome(aeth.PSNSequenceError))
		}
		return
	case d < 0:
		q.stats.Duplicates++
		r.duplicate(f)
		return
	}
	r.nakSent = false
	op := f.BTH.Opcode
	// Opcode sequence (§5.6 class C): Middle/Last only inside a message of
	// the same kind, First/Only only between messages.
	want := seqNone
	switch op {
	case opcode.RCSendMiddle, opcode.RCSendLast, opcode.RCSendLastWithImmediate, opcode.RCSendLastWithInvalidate:
		want = seqSend
	case opcode.RCRDMAWriteMiddle, opcode.RCRDMAWriteLast, opcode.RCRDMAWriteLastWithImmediate:
		want = seqWrite
	}
	if r.seq != want {
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	switch op.Family() {
	case opcode.FamilySend:
		r.send(f)
	case opcode.FamilyWrite:
		r.write(f)
	case opcode.FamilyRead:
		r.read(f)
	case opcode.FamilyAtomic:
		r.atomic(f)
	case opcode.FamilyAtomicWrite:
		r.atomicWrite(f)
	case opcode.FamilyFlush:
		r.flushOp(f)
	}
}

// lengthOK is the PMTU/PadCnt rule for SEND packets (§5.2): First and
// Middle carry exactly PMTU bytes and no pad, Last 1..PMTU and Only 0..PMTU,
// each with PadCnt = (-len) mod 4.
func (r *responder) lengthOK(pos opcode.Position, f *packet.Fields) bool {
	n := uint32(len(f.Payload))
	pad := f.BTH.PadCnt
	switch pos {
	case opcode.First, opcode.Middle:
		return n == r.q.mtu && pad == 0
	case opcode.Last:
		return n >= 1 && n <= r.q.mtu && pad == packet.PadFor(int(n))
	}
	return n <= r.q.mtu && pad == packet.PadFor(int(n))
}

// done finishes an in-order request packet: ePSN advances, and an AckReq
// packet is acknowledged (ACKs only on AckReq, §5.2).
func (r *responder) done(f *packet.Fields) {
	r.epsn = AddPSN(f.BTH.PSN, 1)
	if f.BTH.AckReq {
		r.queueAck(f.BTH.PSN, r.ackSyndrome())
	}
}

func (r *responder) send(f *packet.Fields) {
	q := r.q
	p := f.BTH.PSN
	op := f.BTH.Opcode
	pos := op.Position()
	if !r.lengthOK(pos, f) {
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	if ConsumesWQE(op) {
		if r.rq.Len() == 0 {
			r.rnr(p)
			return
		}
		r.sendOff = 0
	}
	buf := r.rq.At(0).Buf
	n := uint32(len(f.Payload))
	if uint64(r.sendOff)+uint64(n) > uint64(len(buf)) {
		// Longer than the receive buffer: class C, LOC_LEN_ERR (§5.6).
		r.classC(p, aeth.InvalidRequest, LocLenErr)
		return
	}
	copy(buf[r.sendOff:], f.Payload)
	r.sendOff += n
	if pos == opcode.First {
		r.seq = seqSend
	}
	if EndsMessage(op) {
		r.seq = seqNone
		c := Completion{WRID: r.rq.At(0).ID, Opcode: WCRecv, ByteLen: r.sendOff, QPN: q.qpn}
		if op.HasImmediate() {
			c.Flags |= WithImm
			c.Imm = f.ImmDt.Imm
		}
		if op.HasInvalidate() {
			// Invalidate the named R_Key; failure is class J: the receive
			// completes with REM_INV_REQ_ERR and the QP fails (§5.6). We
			// also NAK invalid request so the requester learns of it (the
			// wire reaction is not in our sources).
			if !q.memory.invalidate(f.IETH.RKey) {
				r.queueNAK(p, aeth.NAKSyndrome(aeth.InvalidRequest))
				c.Status = RemInvReqErr
				r.rq.Pop()
				q.comps = append(q.comps, c)
				q.enterError()
				return
			}
			c.Flags |= WithInv
			c.InvRKey = f.IETH.RKey
		}
		r.rq.Pop()
		q.comps = append(q.comps, c)
		r.msn = AddPSN(r.msn, 1) // MSN counts completed messages (§5.9)
	}
	r.done(f)
}

func (r *responder) write(f *packet.Fields) {
	q := r.q
	p := f.BTH.PSN
	op := f.BTH.Opcode
	pos := op.Position()
	if pos == opcode.First || pos == opcode.Only {
		if q.access&RemoteWrite == 0 {
			r.classC(p, aeth.InvalidRequest, Success) // not allowed on this QP (§5.6)
			return
		}
		dl := f.RETH.DMALen
		if dl > 1<<31 {
			r.classC(p, aeth.InvalidRequest, Success)
			return
		}
		var data []byte
		if dl > 0 { // a zero-length WRITE needs no valid R_Key (IBA C9-88, rxe)
			var ok bool
			if _, data, ok = r.check(f.RETH.RKey, f.RETH.VA, uint64(dl), RemoteWrite); !ok {
				r.classC(p, aeth.RemoteAccessError, Success)
				return
			}
		}
		r.wdata, r.wlen = data, dl
	}
	// Length rule for WRITE packets (§5.2): while more than PMTU remains
	// the packet is full with PadCnt 0 (and cannot end the message);
	// otherwise it carries exactly the rest, padded to 4.
	rem := uint32(len(r.wdata))
	n := uint32(len(f.Payload))
	pad := f.BTH.PadCnt
	var ok bool
	switch pos {
	case opcode.First, opcode.Middle:
		ok = rem > q.mtu && n == q.mtu && pad == 0
	case opcode.Last:
		ok = rem <= q.mtu && n == rem && n >= 1 && pad == packet.PadFor(int(n))
	case opcode.Only:
		ok = rem <= q.mtu && n == rem && pad == packet.PadFor(int(n))
	}
	if !ok {
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	imm := op.HasImmediate()
	if ConsumesWQE(op) && r.rq.Len() == 0 {
		r.rnr(p) // WRITE with immediate needs a receive WQE (§5.4)
		return
	}
	copy(r.wdata, f.Payload)
	r.wdata = r.wdata[n:]
	if pos == opcode.First {
		r.seq = seqWrite
	}
	if EndsMessage(op) {
		r.seq = seqNone
		r.wdata = nil
		if imm {
			w := r.rq.Pop()
			q.comps = append(q.comps, Completion{WRID: w.ID, Opcode: WCRecvRDMAWithImm, ByteLen: r.wlen,
				Flags: WithImm, Imm: f.ImmDt.Imm, QPN: q.qpn})
		}
		r.msn = AddPSN(r.msn, 1)
	}
	r.done(f)
}

// takeResource returns the next IRD ring entry, overwriting the oldest
// (rxe trusts the requester to respect the limit, §5.4).
func (r *responder) takeResource() *resource {
	e := &r.res[r.resNext]
	r.resNext = (r.resNext + 1) % len(r.res)
	return e
}

// findResource returns the newest saved resource of kind k whose PSN range
// holds p.
func (r *responder) findResource(k resKind, p uint32) *resource {
	n := len(r.res)
	for i := 1; i <= n; i++ {
		e := &r.res[(r.resNext-i+n)%n]
		if e.kind == k && DiffPSN(p, e.first) >= 0 && DiffPSN(p, e.last) <= 0 {
			return e
		}
	}
	return nil
}

// nPSN is the PSNs a READ of n bytes uses (§5.3).
func (r *responder) nPSN(n uint32) uint32 { return Packets(n, int(r.q.mtu)) }

// needIRD rejects READ/atomic requests when max_dest_rd_atomic is 0 (§5.4).
func (r *responder) needIRD(p uint32) bool {
	if len(r.res) == 0 {
		r.classC(p, aeth.InvalidRequest, Success)
		return false
	}
	return true
}

func (r *responder) read(f *packet.Fields) {
	q := r.q
	p := f.BTH.PSN
	if q.access&RemoteRead == 0 {
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	if !r.needIRD(p) {
		return
	}
	dl := f.RETH.DMALen
	if dl > 1<<31 {
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	var data []byte
	if dl > 0 {
		var ok bool
		if _, data, ok = r.check(f.RETH.RKey, f.RETH.VA, uint64(dl), RemoteRead); !ok {
			r.classC(p, aeth.RemoteAccessError, Success)
			return
		}
	}
	n := r.nPSN(dl)
	last := AddPSN(p, n-1)
	r.msn = AddPSN(r.msn, 1) // READs count when accepted (§5.9, C9-148)
	*r.takeResource() = resource{kind: resRead, first: p, last: last, va: f.RETH.VA, rkey: f.RETH.RKey,
		length: dl, data: data, msn: r.msn}
	*r.jobs.PushSlot() = job{kind: jobRead, psn: p, last: last, msn: r.msn, data: data}
	r.epsn = AddPSN(p, n) // the READ's N PSNs (§5.3, §5.4 rule 1)
}

func (r *responder) atomic(f *packet.Fields) {
	q := r.q
	p := f.BTH.PSN
	if q.access&RemoteAtomic == 0 {
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	if !r.needIRD(p) {
		return
	}
	a := &f.AtomicETH
	if a.VA%8 != 0 { // misaligned atomic: invalid request (§1.5, §5.6)
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	_, b, ok := r.check(a.RKey, a.VA, 8, RemoteAtomic)
	if !ok {
		r.classC(p, aeth.RemoteAccessError, Success)
		return
	}
	orig := loadU64(b)
	if f.BTH.Opcode == opcode.RCCompareSwap {
		if orig == a.Compare {
			storeU64(b, a.SwapAdd)
		}
	} else {
		storeU64(b, orig+a.SwapAdd)
	}
	r.msn = AddPSN(r.msn, 1)
	*r.takeResource() = resource{kind: resAtomic, first: p, last: p, orig: orig, msn: r.msn}
	*r.jobs.PushSlot() = job{kind: jobAtomicAck, psn: p, msn: r.msn, orig: orig}
	r.epsn = AddPSN(p, 1)
}

// atomicWrite executes an IBA 1.5 ATOMIC WRITE: 8 bytes to an aligned
// address with REMOTE_WRITE, answered by an empty READ Response Only, and
// saved so a duplicate is answered, not re-executed (§2.2, §5.4).
func (r *responder) atomicWrite(f *packet.Fields) {
	q := r.q
	p := f.BTH.PSN
	if q.access&RemoteWrite == 0 {
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	if !r.needIRD(p) {
		return
	}
	if f.RETH.DMALen != 8 || len(f.Payload) != 8 || f.BTH.PadCnt != 0 || f.RETH.VA%8 != 0 {
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	_, b, ok := r.check(f.RETH.RKey, f.RETH.VA, 8, RemoteWrite)
	if !ok {
		r.classC(p, aeth.RemoteAccessError, Success)
		return
	}
	copy(b, f.Payload)
	r.emptyResponse(p)
}

// flushOp checks an IBA 1.5 FLUSH (§1.5 FETH): SEL 0 a range, 1 the whole
// region; PLT bit 0 needs FLUSH_GLOBAL, bit 1 FLUSH_PERSISTENT access. Our
// memory has nothing to flush, so success is an empty READ Response Only.
func (r *responder) flushOp(f *packet.Fields) {
	q := r.q
	p := f.BTH.PSN
	if !r.needIRD(p) {
		return
	}
	var need Access
	if f.FETH.PLT&1 != 0 {
		need |= FlushGlobal
	}
	if f.FETH.PLT&2 != 0 {
		need |= FlushPersistent
	}
	switch f.FETH.SEL {
	case 0:
		if f.RETH.DMALen > 0 {
			if _, _, ok := r.check(f.RETH.RKey, f.RETH.VA, uint64(f.RETH.DMALen), need); !ok {
				r.classC(p, aeth.RemoteAccessError, Success)
				return
			}
		}
	case 1:
		mr := q.memory.Lookup(f.RETH.RKey)
		if mr == nil || !mr.Valid() || mr.Access&need != need {
			r.classC(p, aeth.RemoteAccessError, Success)
			return
		}
	default:
		r.classC(p, aeth.InvalidRequest, Success)
		return
	}
	r.emptyResponse(p)
}

func (r *responder) emptyResponse(p uint32) {
	r.msn = AddPSN(r.msn, 1)
	*r.takeResource() = resource{kind: resEmpty, first: p, last: p, msn: r.msn}
	*r.jobs.PushSlot() = job{kind: jobRead, psn: p, last: p, msn: r.msn}
	r.epsn = AddPSN(p, 1)
}

// duplicate answers a request with a PSN before ePSN (§5.4 rule 3) without
// executing it again.
func (r *responder) duplicate(f *packet.Fields) {
	p := f.BTH.PSN
	switch op := f.BTH.Opcode.Operation(); op {
	case opcode.RDMAReadRequest:
		// Replay from the saved resource, if the duplicate asks for a
		// sub-range of it with the same R_Key; else drop (class D).
		e := r.findResource(resRead, p)
		if e == nil {
			return
		}
		va, dl := f.RETH.VA, uint64(f.RETH.DMALen)
		if f.RETH.RKey != e.rkey || va < e.va || va-e.va > uint64(e.length) || dl > uint64(e.length)-(va-e.va) {
			return
		}
		var data []byte
		if e.data != nil {
			off := va - e.va
			data = e.data[off : off+dl]
		}
		r.replayRead(job{kind: jobRead, psn: p, started: p != e.first, last: AddPSN(p, r.nPSN(uint32(dl))-1),
			msn: e.msn, data: data})
	case opcode.CompareSwap, opcode.FetchAdd:
		// Answer from the saved original value: never execute twice.
		if e := r.findResource(resAtomic, p); e != nil && e.first == p {
			*r.jobs.PushSlot() = job{kind: jobAtomicAck, psn: p, msn: e.msn, orig: e.orig}
		}
	case opcode.AtomicWrite, opcode.Flush:
		if e := r.findResource(resEmpty, p); e != nil && e.first == p {
			*r.jobs.PushSlot() = job{kind: jobRead, psn: p, last: p, msn: e.msn}
		}
	default:
		// SEND/WRITE: ACK again with the PSN of the last completed request
		// and "unlimited credits" (C9-105), whatever AckReq says.
		r.queueAck(AddPSN(r.epsn, PSNMask), aeth.ACKSyndrome(aeth.Unlimited))
	}
}

// replayRead queues rep, the replay of a READ from its PSN p, as the
// rdmavt responders (qib, hfi1) rewind their response queue to a duplicate
// READ (rc_rcv_error): the responses of that READ still queued are dropped,
// since the requester has every one before p and drops any past the one it
// expects (§5.3), so they would cross the wire for nothing ahead of the
// replay it waits for; the responses of later READs (and the empty ones of
// FLUSH and ATOMIC WRITE) still queued follow the replay instead of
// preceding it. ACKs, NAKs and atomic ACKs stay where they are.
func (r *responder) replayRead(rep job) {
	n := r.jobs.Len()
	*r.jobs.PushSlot() = rep
	for i := 0; i < n; i++ {
		if j := *r.jobs.At(i); j.kind == jobRead && DiffPSN(j.last, rep.last) > 0 {
			*r.jobs.PushSlot() = j // At(i) is not used after PushSlot: it may grow the ring
		}
	}
	k := 0
	for i := 0; i < r.jobs.Len(); i++ {
		j := r.jobs.At(i)
		if i < n && j.kind == jobRead && DiffPSN(j.last, rep.psn) >= 0 {
			continue // this READ's (replaced), or a later READ's (moved)
		}
		if k != i {
			*r.jobs.At(k) = *j
		}
		k++
	}
	r.jobs.Truncate(k)
}

// next builds the next response packet.
func (r *responder) next(f *packet.Fields) bool {
	if r.jobs.Len() == 0 {
		return false
	}
	q := r.q
	j := r.jobs.At(0)
	*f = packet.Fields{}
	f.BTH.PKey = q.pkey
	f.BTH.DestQP = q.destQPN
	f.BTH.PSN = j.psn
	switch j.kind {
	case jobAck:
		f.BTH.Opcode = opcode.RCAcknowledge
		f.AETH.Syndrome, f.AETH.MSN = j.syn, j.msn
		r.jobs.Drop()
	case jobAtomicAck:
		f.BTH.Opcode = opcode.RCAtomicAcknowledge
		f.AETH.Syndrome, f.AETH.MSN = r.ackSyndrome(), j.msn
		f.AtomicAckETH.OrigRemDt = j.orig
		r.jobs.Drop()
	case jobRead:
		n := min(int(q.mtu), len(j.data))
		switch {
		case !j.started && j.psn == j.last:
			f.BTH.Opcode = opcode.RCRDMAReadResponseOnly
		case !j.started:
			f.BTH.Opcode = opcode.RCRDMAReadResponseFirst
		case j.psn == j.last:
			f.BTH.Opcode = opcode.RCRDMAReadResponseLast
		default:
			f.BTH.Opcode = opcode.RCRDMAReadResponseMiddle
		}
		f.Payload = j.data[:n:n]
		f.SetPad()
		// AETH on First/Last/Only (§2.2), with the MSN after the READ.
		f.AETH.Syndrome, f.AETH.MSN = r.ackSyndrome(), j.msn
		j.data = j.data[n:]
		if j.psn == j.last {
			r.jobs.Drop()
		} else {
			j.psn = AddPSN(j.psn, 1)
			j.started = true
		}
	}
	return true
}
