package analysis

import (
	"math/bits"

	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/rc"
)

// mtuSource says where a flow's PMTU came from (see learnMTU).
type mtuSource uint8

const (
	fromNone mtuSource = iota
	fromOption
	fromCM
	fromPackets
)

// Message kinds.
type kind uint8

const (
	kindSend kind = iota
	kindWrite
	kindRead
	kindAtomic
	kindFlush
	kindAtomicWrite
	numKinds
)

var kindNames = [numKinds]string{"send", "write", "read", "atomic", "flush", "atomic_write"}

// kindOf is the message kind of request op; SEND for anything else.
func kindOf(op opcode.Opcode) kind {
	switch op.Family() {
	case opcode.FamilyWrite:
		return kindWrite
	case opcode.FamilyRead:
		return kindRead
	case opcode.FamilyAtomic:
		return kindAtomic
	case opcode.FamilyFlush:
		return kindFlush
	case opcode.FamilyAtomicWrite:
		return kindAtomicWrite
	}
	return kindSend
}

// Position of the requester's stream between packets.
type posState uint8

const (
	posUnknown posState = iota // first packet, or after a gap or go-back
	posIdle                    // between messages
	posInSend                  // after a SEND First/Middle
	posInWrite                 // after an RDMA WRITE First/Middle
)

// histBuckets: bucket i holds sizes n with bits.Len64(n) == i (0; 1; 2-3;
// 4-7; ...; the last bucket also holds everything larger).
const histBuckets = 34

type msgStats struct {
	count, bytes, min, max uint64
	hist                   [histBuckets]uint64
}

func (m *msgStats) add(n uint64) {
	if m.count == 0 || n < m.min {
		m.min = n
	}
	if n > m.max {
		m.max = n
	}
	m.count++
	m.bytes += n
	b := bits.Len64(n)
	if b >= histBuckets {
		b = histBuckets - 1
	}
	m.hist[b]++
}

type opStats struct{ packets, bytes, payload uint64 }

type rttStats struct{ n, sum, min, max int64 }

func (r *rttStats) add(d int64) {
	if d < 0 {
		return
	}
	if r.n == 0 || d < r.min {
		r.min = d
	}
	if d > r.max {
		r.max = d
	}
	r.n++
	r.sum += d
}

// maxReads bounds the READ (and FLUSH, ATOMIC WRITE) requests a flow keeps
// outstanding; the oldest is forgotten beyond it (rxe's ORD limit is 128,
// real NICs use 16 or fewer).
const maxReads = 64

type readEntry struct {
	used     bool
	retried  bool // re-requested: repeated responses are expected
	holes    bool // a response was missing
	lenCut   bool // the capture cut the RETH: length is unknown
	kind     kind
	psn      uint32
	n        uint32 // responses expected, 0 while the PMTU is unknown
	nMax     uint32 // upper bound on n while it is unknown
	length   uint32
	nextResp uint32
	got      uint64
}

func (e *readEntry) span() uint32 {
	if e.n != 0 {
		return e.n
	}
	return e.nMax
}

// ackQLen bounds the AckReq requests waiting for an ACK (for RTT).
const ackQLen = 128

type ackEntry struct {
	psn uint32
	ts  int64
}

// reqStream is the requester side of a flow: the requests it carries.
type reqStream struct {
	expect  bool // next/nextHi hold an expectation (from a packet or CM)
	started bool // a request was seen
	maxSet  bool
	first   uint32 // first request PSN (or CM starting PSN)
	next    uint32 // lowest acceptable next PSN
	nextHi  uint32 // highest acceptable next PSN (> next after a READ of unknown N)
	maxNext uint32 // the latest next PSN ever expected (go-back detection)

	acked      uint32 // latest PSN the responder acknowledged
	ackedValid bool
	lastTS     int64

	pos      posState
	msgBytes uint64
	msgValid bool // the open message's First was seen

	recTo, readRecTo   uint32 // PSN of the latest message (READ) recorded
	recSet, readRecSet bool

	gaps, missing, dups, retrans, seqErrs uint64

	reads       [maxReads]readEntry // ring, oldest at rHead, in request order
	rHead, rLen int
	openRead    *readEntry // the latest READ, while its PSN count is unknown

	ackq        [ackQLen]ackEntry
	aHead, aLen int
	rtt         rttStats
}

func (s *reqStream) init() { s.pos = posUnknown }

// abandon drops the message being reassembled (after a gap, a go-back or a
// sequence error); it counts as partial if its First was seen.
func (s *reqStream) abandon(fl *flow) {
	if s.msgValid && (s.pos == posInSend || s.pos == posInWrite) {
		fl.partial++
	}
	s.pos, s.msgValid = posUnknown, false
}

// setExpect sets the PSN the first request should carry (from CM).
func (s *reqStream) setExpect(psn uint32) {
	s.expect, s.maxSet = true, true
	s.first, s.next, s.nextHi, s.maxNext = psn, psn, psn, psn
	s.pos = posIdle
}

// contains reports whether q is a PSN the stream has used.
func (s *reqStream) contains(q uint32) bool {
	end := s.maxNext
	if rc.DiffPSN(s.nextHi, end) > 0 {
		end = s.nextHi
	}
	return rc.DiffPSN(q, s.first) >= 0 && rc.DiffPSN(q, end) < 0
}

// ack records that the responder acknowledged everything up to q and takes
// RTT samples for the AckReq requests it covers.
func (s *reqStream) ack(q uint32, now int64) {
	if !s.ackedValid || rc.DiffPSN(q, s.acked) > 0 {
		s.acked, s.ackedValid = q, true
	}
	for s.aLen > 0 {
		e := &s.ackq[s.aHead]
		if rc.DiffPSN(e.psn, q) > 0 {
			break
		}
		s.rtt.add(now - e.ts)
		s.aHead = (s.aHead + 1) % ackQLen
		s.aLen--
	}
}

func (s *reqStream) pushAck(q uint32, now int64) {
	if s.aLen == ackQLen {
		s.aHead = (s.aHead + 1) % ackQLen
		s.aLen--
	}
	s.ackq[(s.aHead+s.aLen)%ackQLen] = ackEntry{q, now}
	s.aLen++
}

// karn forgets what a go-back to q makes ambiguous: RTT samples for PSNs
// from q on (Karn's rule) and READs from q on (they are requested again).
func (s *reqStream) karn(q uint32) {
	for s.aLen > 0 {
		e := &s.ackq[(s.aHead+s.aLen-1)%ackQLen]
		if rc.DiffPSN(e.psn, q) < 0 {
			break
		}
		s.aLen--
	}
	for i := 0; i < s.rLen; i++ {
		if e := s.read(i); e.used && rc.DiffPSN(e.psn, q) >= 0 {
			e.used = false
		}
	}
	s.trimReads()
	s.openRead = nil
}

// settle takes up the READs at or before q, the PSN of the response that
// settled an ambiguous pairing: the responses seen before may have answered
// part of them, so they count as partial, and their responses are expected
// from q on.
func (s *reqStream) settle(q uint32) {
	for i := 0; i < s.rLen; i++ {
		e := s.read(i)
		if !e.used || rc.DiffPSN(e.psn, q) > 0 {
			continue
		}
		e.holes = true
		if rc.DiffPSN(e.nextResp, q) < 0 {
			e.nextResp = q
		}
	}
}

// read returns the i-th outstanding READ, oldest first.
func (s *reqStream) read(i int) *readEntry { return &s.reads[(s.rHead+i)%maxReads] }

// trimReads drops finished entries from both ends of the ring.
func (s *reqStream) trimReads() {
	for s.rLen > 0 && !s.reads[s.rHead].used {
		s.rHead = (s.rHead + 1) % maxReads
		s.rLen--
	}
	for s.rLen > 0 && !s.read(s.rLen-1).used {
		s.rLen--
	}
}

// addRead records an outstanding READ (FLUSH, ATOMIC WRITE) request; a
// request repeating an outstanding one's PSN replaces it. Beyond maxReads
// the oldest is forgotten.
func (s *reqStream) addRead(q, length uint32, lenCut bool, lo, hi uint32, k kind, retried bool) *readEntry {
	var e *readEntry
	if retried {
		for i := 0; i < s.rLen; i++ {
			if x := s.read(i); x.used && x.psn == q {
				e = x
				break
			}
		}
	}
	if e == nil {
		if s.rLen == maxReads {
			if s.openRead == &s.reads[s.rHead] {
				s.openRead = nil
			}
			s.rHead = (s.rHead + 1) % maxReads
			s.rLen--
		}
		e = s.read(s.rLen)
		s.rLen++
	}
	n := uint32(0)
	if lo == hi {
		n = lo
	}
	*e = readEntry{used: true, retried: retried, lenCut: lenCut, kind: k, psn: q, n: n, nMax: hi, length: length, nextResp: q}
	return e
}

// findRead returns the newest outstanding READ whose PSN range holds q.
func (s *reqStream) findRead(q uint32) *readEntry {
	for i := s.rLen - 1; i >= 0; i-- {
		e := s.read(i)
		if !e.used {
			continue
		}
		if off := rc.DiffPSN(q, e.psn); off >= 0 && uint32(off) < e.span() {
			return e
		}
	}
	return nil
}

// matchRead is findRead for a READ response at PSN q in position pos,
// with what the response tells of a READ whose length the capture cut (its
// PSN count unknown): a First or Only starts the responses to a READ at
// its own PSN, so one past that READ's PSN answers a later READ and the
// READ ended before q; a First or Middle says more responses follow, so
// the READ reserved at least the PSNs up to q+1, and a request before that
// re-requests its tail.
func (s *reqStream) matchRead(q uint32, pos opcode.Position) *readEntry {
	e := s.findRead(q)
	if e == nil || !e.lenCut || e.n != 0 {
		return e
	}
	off := rc.DiffPSN(q, e.psn)
	if off > 0 && (pos == opcode.First || pos == opcode.Only) {
		s.resolve(e, uint32(off))
		return s.findRead(q)
	}
	if s.openRead == e && (pos == opcode.First || pos == opcode.Middle) {
		if lo := (q + 2) & rc.PSNMask; rc.DiffPSN(lo, s.next) > 0 {
			s.next = lo
			if rc.DiffPSN(s.next, s.maxNext) > 0 {
				s.maxNext = s.next
			}
		}
	}
	return e
}

func (s *reqStream) removeRead(e *readEntry) {
	e.used = false
	if s.openRead == e {
		s.openRead = nil
	}
	s.trimReads()
}

// resolve fixes the PSN count of a READ once it is known; if it is the
// latest request, the next expected PSN becomes exact.
func (s *reqStream) resolve(e *readEntry, n uint32) {
	if n == 0 {
		n = 1
	}
	e.n = n
	if s.openRead == e {
		s.next = (e.psn + n) & rc.PSNMask
		s.nextHi = s.next
		if rc.DiffPSN(s.next, s.maxNext) > 0 {
			s.maxNext = s.next
		}
		s.openRead = nil
	}
}

// resolveOpenRead handles the request after a READ of unknown PSN count
// arriving with PSN q: the READ used q - its PSN PSNs. If one PMTU alone
// gives that count it is learnt.
func (s *reqStream) resolveOpenRead(q uint32, fl *flow) {
	e := s.openRead
	if e == nil {
		return
	}
	n := uint32(rc.DiffPSN(q, e.psn))
	match, count := 0, 0
	for m := 256; m <= 4096 && !e.lenCut; m <<= 1 {
		if rc.Packets(e.length, m) == n {
			match, count = m, count+1
		}
	}
	if count == 1 {
		fl.learnMTU(match, fromPackets)
	}
	s.resolve(e, n)
}

// abandonOpenRead gives up on learning the PSN count of the open READ from
// the next request (a gap followed it).
func (s *reqStream) abandonOpenRead() { s.openRead = nil }

// flow is one direction of a conversation.
type flow struct {
	Link[flow]
	created uint64 // position, in everything observed, of the frame that made the flow known

	transport    opcode.Transport
	transportSet bool

	firstFrame, lastFrame int
	firstTS, lastTS       int64
	packets, bytes, pay   uint64
	ops                   [256]opStats

	req     reqStream
	msgs    [numKinds]msgStats
	partial uint64 // messages (or READs) not seen whole

	readReqs, readsDone                   uint64 // READ requests sent, READs completed by the peer's responses
	readResps, readMatched, readUnmatched uint64 // READ responses carried
	gaps, missing, dups, seqErrs          uint64 // on the READ responses carried

	acks, rnrNAKs uint64
	naks          [6]uint64 // codes 0-4, then reserved codes

	cnps, ecnCE, icrcBad, vcrcBad uint64

	pmtu     int
	pmtuFrom mtuSource

	udSrcQP               uint32
	udSrcKnown, udManySrc bool

	warn [numWarnings]uint64
}

// FlowLink returns the flow's place in the Tracker's Conns.
func (fl *flow) FlowLink() *Link[flow] { return &fl.Link }

// Requested reports whether the flow has carried a request that a
// response resp with PSN q can answer: one that used q, an outstanding
// READ, FLUSH or ATOMIC WRITE for a READ response.
func (fl *flow) Requested(q uint32, resp opcode.Opcode) bool {
	s := &fl.req
	if !s.started || !s.contains(q) {
		return false
	}
	return resp.Family() != opcode.FamilyReadResponse || s.findRead(q) != nil
}

func (fl *flow) mtu() int { return fl.pmtu }

// maxMessage is the largest message IBA allows, 2^31 bytes: the most a READ
// whose RETH the capture cut can have asked for.
const maxMessage = 1 << 31

// MaxReadPSNs bounds the PSNs a READ of unknown length (its RETH cut by
// the capture) reserves: the count for the largest message, 2^31 bytes, at
// path MTU pmtu (256 when pmtu is 0, unknown), but at most 2^22, a quarter
// of the PSN space. The largest message at PMTU 256 needs 2^23 PSNs, and
// 24-bit PSN arithmetic could not then tell the PSNs before the READ from
// those it reserves.
func MaxReadPSNs(pmtu int) uint32 {
	if pmtu <= 0 {
		pmtu = 256
	}
	return min(rc.Packets(maxMessage, pmtu), 1<<22)
}

// learnMTU records a path MTU for fl and its peer: from a full First or
// Middle packet's payload (which is exactly the PMTU, so it overrides
// anything else), from a CM REQ (which overrides the option), or from the
// option. It reports whether fl now has a PMTU.
func (fl *flow) learnMTU(n int, from mtuSource) bool {
	if rc.ValidMTU(n) && n != fl.pmtu && (from == fromPackets || from >= fl.pmtuFrom) {
		fl.pmtu, fl.pmtuFrom = n, from
		if fl.Peer != nil {
			fl.Peer.pmtu, fl.Peer.pmtuFrom = n, from
		}
	}
	return fl.pmtu != 0
}

// count adds a packet to the flow's totals.
func (fl *flow) count(o *obs) {
	op, frameNo, now := o.op, o.frameNo, o.ts
	if fl.packets == 0 {
		fl.firstFrame, fl.firstTS = frameNo, now
	}
	fl.lastFrame, fl.lastTS = frameNo, now
	if !fl.transportSet && op.Transport() != opcode.CNPT {
		fl.transport, fl.transportSet = op.Transport(), true
	}
	n := uint64(o.payload)
	b := uint64(12+op.HeaderLen()) + n + uint64(o.pad) + 4
	fl.packets++
	fl.bytes += b
	fl.pay += n
	st := &fl.ops[op]
	st.packets++
	st.bytes += b
	st.payload += n
}
