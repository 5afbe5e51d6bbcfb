package rc

import (
	"errors"
	"fmt"
	"math"
	"unsafe"

	"github.com/rocekit/rocekit/internal/heapsize"
	"github.com/rocekit/rocekit/internal/hugepage"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// QP is one end of a reliable connection: the requester that sends this
// end's work requests and the responder that serves the peer's. It is a pure
// state machine (ib-facts.md §5): no I/O, no clock, no goroutine, no
// randomness. The caller
//
//   - posts work: PostSend, PostRecv;
//   - feeds packets that arrived: Receive (a decoded packet.Packet view) or
//     ReceiveFields;
//   - tells it the time: Tick, at or after NextWake;
//   - drains its output: NextPacket / AppendOutgoing for packets to send,
//     AppendCompletions for work completions.
//
// Every call that takes now first runs the timers that expired by then.
// Time never goes backwards. A QP is not safe for concurrent use.
//
// Outgoing packets carry payload slices that point into WR buffers and
// memory regions: encode them before the next call on the QP and before the
// memory changes.
type QP struct {
	// The fields every call reads or writes come first, in one cache line:
	// with thousands of QPs each one is cold when its turn comes, and every
	// distinct line a packet touches is a miss. Below them the requester's
	// and the responder's per-packet state (TestLayout pins the lines), then
	// the rings' inline storage; the configuration and the rarer counters
	// are last. New aligns the QP to a line (qpAlloc).
	now        Time
	timeout    Time
	pktsSent   uint64 // Stats.PacketsSent
	pktsRecv   uint64 // Stats.PacketsReceived
	state      State
	preferResp bool // NextPacket alternates between responder and requester
	pkey       uint16
	qpn        uint32
	destQPN    uint32
	mtu        uint32
	window     uint32
	access     Access
	signalAll  bool
	advCredits bool
	memory     *Memory

	req   requester
	comps []Completion
	rsp   responder

	// Inline storage of the send and receive queues and the completions
	// while they are at most initRing deep (the responder holds that of its
	// jobs): no separate allocation, whose line would be one more miss.
	sqInline    [initRing]sendWQE
	rqInline    [initRing]RecvWR
	compsInline [initRing]Completion // comps' storage while at most initRing are pending

	rnrAt Time // requester: when the RNR wait ends

	cfg   Config
	stats Stats // but PacketsSent and PacketsReceived, kept above
}

// initRing is the capacity of the queues' inline storage: small, so that a
// QP touches few cache lines when thousands share a cache. A queue that
// outgrows it moves to a heap slice, doubling as it grows (ring.Ring).
const initRing = 4

// Stats counts what a QP did.
type Stats struct {
	PacketsSent     uint64 // packets handed out by NextPacket
	PacketsReceived uint64 // packets given to Receive
	Dropped         uint64 // received packets ignored: wrong QPN/P_Key/transport, stale or ghost responses, bad AETH
	Retransmitted   uint64 // request packets sent again
	Timeouts        uint64 // local ACK timer expiries that caused a retry
	Retries         uint64 // go-back-N restarts (timeouts and PSN-sequence NAKs)
	SeqNAKsReceived uint64
	RNRNAKsReceived uint64
	SeqNAKsSent     uint64
	RNRNAKsSent     uint64
	Duplicates      uint64 // duplicate requests seen by the responder
	OutOfSequence   uint64 // too-new requests dropped by the responder
}

// qpAlloc places a QP on a cache-line boundary: Go aligns allocations of
// 1 KiB and more to 64 bytes, but puts an 8-byte type header (a "malloc
// header") before the data of one that holds pointers. TestLayout checks
// that New's QPs are aligned. With the QP's fields ordered by use, a packet
// touches the fewest lines of a cold QP, which the many-connection figures
// of BENCHMARKS.md count on ("Simulator", "Many connections").
type qpAlloc struct {
	_ [64 - 8]byte
	q QP
}

// New returns a connected QP in the RTS state.
func New(cfg Config) (*QP, error) {
	cfg, err := cfg.checked()
	if err != nil {
		return nil, err
	}
	return newIn(&new(qpAlloc).q, cfg), nil
}

// checked returns cfg with its defaults filled in, or what is wrong with it.
func (cfg Config) checked() (Config, error) {
	if cfg.PKey == 0 {
		cfg.PKey = 0xFFFF
	}
	return cfg, cfg.check()
}

// newIn sets up *q, whose storage the caller allocated, as a new QP with a
// checked cfg.
func newIn(q *QP, cfg Config) *QP {
	*q = QP{cfg: cfg, state: StateRTS, mtu: uint32(cfg.MTU), timeout: AckTimeout(cfg.Timeout), window: cfg.Window,
		pkey: cfg.PKey, qpn: cfg.QPN, destQPN: cfg.DestQPN, access: cfg.Access, signalAll: cfg.SignalAll,
		advCredits: cfg.AdvertiseCredits, memory: cfg.Memory}
	if q.window == 0 {
		q.window = MaxOutstandingPSNs
	}
	q.comps = q.compsInline[:0]
	q.req.init(q)
	q.rsp.init(q)
	return q
}

// Slab allocates many QPs together, for a program that has thousands of
// them: their state is kept in one block of memory, laid out so that a
// packet for a QP whose state has left the cache costs as little as it
// can. QPs from a slab live as long as the slab is referenced.
type Slab struct {
	qs   []slabQP
	next int
}

// slabQP pads a QP to a whole number of cache lines, so that in a slab,
// which starts on a page (hugepage.Slice), every QP starts a line, as New's
// do (qpAlloc): a packet touches the fewest lines of its QP (TestLayout).
// The slab is hinted to be huge pages, so that with thousands of QPs a
// packet's turn at a cold QP misses the cache but not also the TLB. Both
// serve the many-connection figures of BENCHMARKS.md ("Simulator", "Many
// connections": ns per event of the 10,000-QP incast 1.71-1.82x the
// one-QP incast's).
type slabQP struct {
	q QP
	_ [(64 - unsafe.Sizeof(QP{})%64) % 64]byte
}

// NewSlab returns a slab with room for n QPs.
func NewSlab(n int) *Slab {
	qs := hugepage.Slice[slabQP](n)
	return &Slab{qs: qs[:cap(qs)]}
}

// New is New with the QP's storage taken from the slab, or allocated on its
// own once the slab is full.
func (s *Slab) New(cfg Config) (*QP, error) {
	if s.next == len(s.qs) {
		return New(cfg)
	}
	cfg, err := cfg.checked()
	if err != nil {
		return nil, err
	}
	q := &s.qs[s.next].q
	s.next++
	return newIn(q, cfg), nil
}

// Config returns the QP's configuration.
func (q *QP) Config() Config { return q.cfg }

// State returns RTS, or Error once the QP has failed.
func (q *QP) State() State { return q.state }

// Stats returns the counters.
func (q *QP) Stats() Stats {
	s := q.stats
	s.PacketsSent, s.PacketsReceived = q.pktsSent, q.pktsRecv
	return s
}

// Errors returned by PostSend and PostRecv.
var (
	ErrBadWR = errors.New("rc: invalid work request")
)

// PostSend queues a send work request. In the Error state the WR completes
// at once with WR_FLUSH_ERR (ib-facts.md §5.10).
func (q *QP) PostSend(wr WR) error {
	if err := q.checkWR(&wr); err != nil {
		return err
	}
	if q.state == StateError {
		q.complete(wr.ID, WRFlushErr, wr.Opcode.wcOpcode(), 0)
		return nil
	}
	q.req.post(&wr)
	return nil
}

func (q *QP) checkWR(wr *WR) error {
	op := wr.Opcode
	switch {
	case !op.valid():
		return fmt.Errorf("%w: opcode %d", ErrBadWR, uint8(op))
	case uint64(len(wr.Local)) > 1<<31:
		// IBA limit on a message length (ib-facts.md §1.5 RETH).
		return fmt.Errorf("%w: %d bytes exceed 2^31", ErrBadWR, len(wr.Local))
	case op.isAtomic() && len(wr.Local) < 8:
		return fmt.Errorf("%w: an atomic needs 8 local bytes for the result", ErrBadWR)
	case op == WRAtomicWrite && len(wr.Local) != 8:
		return fmt.Errorf("%w: ATOMIC WRITE carries exactly 8 bytes", ErrBadWR)
	case op == WRFlush && (wr.FlushLevel > 1 || wr.FlushType > 3):
		return fmt.Errorf("%w: FLUSH level %d type %d", ErrBadWR, wr.FlushLevel, wr.FlushType)
	case op.needsResponse() && q.cfg.MaxRdAtomic == 0:
		return fmt.Errorf("%w: %s with MaxRdAtomic 0", ErrBadWR, op)
	}
	return nil
}

// PostRecv queues a receive work request. In the Error state it completes
// at once with WR_FLUSH_ERR.
func (q *QP) PostRecv(wr RecvWR) error {
	if q.state == StateError {
		q.comps = append(q.comps, Completion{WRID: wr.ID, Status: WRFlushErr, Opcode: WCRecv, QPN: q.qpn})
		return nil
	}
	q.rsp.rq.Push(wr)
	return nil
}

// SetError moves the QP to the Error state (ibv_modify_qp to ERR): every
// outstanding and posted WR completes with WR_FLUSH_ERR.
func (q *QP) SetError() { q.enterError() }

// Tick runs the timers that expired by now.
func (q *QP) Tick(now Time) { q.advance(now) }

// NextWake returns when the QP next needs Tick, if ever: the local ACK
// timer or the end of an RNR wait.
func (q *QP) NextWake() (Time, bool) { return q.req.nextWake() }

func (q *QP) advance(now Time) {
	if now > q.now {
		q.now = now
	}
	q.req.tick()
}

// Receive processes a decoded packet (the transport part: BTH onwards) that
// arrived at time now. The packet's bytes may be reused when Receive
// returns: payloads are copied into memory.
func (q *QP) Receive(now Time, p *packet.Packet) {
	f := p.Fields()
	q.ReceiveFields(now, &f)
}

// ReceiveFields is Receive for a packet given as plain fields.
func (q *QP) ReceiveFields(now Time, f *packet.Fields) {
	q.advance(now)
	q.pktsRecv++
	op := f.BTH.Opcode
	// Checks made on every packet (ib-facts.md §5.11): RC opcode, TVer 0,
	// our QPN, matching P_Key. A failing packet is dropped silently, and so
	// is everything once the QP is in the Error state (§5.10).
	if q.state == StateError || op.Transport() != opcode.RC || !op.Valid() || f.BTH.TVer != 0 ||
		f.BTH.DestQP != q.qpn || !PKeyMatch(f.BTH.PKey, q.pkey) {
		q.stats.Dropped++
		return
	}
	if op.IsRequest() {
		q.rsp.receive(f)
	} else {
		q.req.receive(f)
	}
}

// PKeyMatch is the P_Key rule of ib-facts.md §5.11: the low 15 bits are
// equal and non-zero, and at least one key is a full member (bit 15).
func PKeyMatch(a, b uint16) bool {
	return a&0x7FFF == b&0x7FFF && a&0x7FFF != 0 && (a|b)&0x8000 != 0
}

// NextPacket writes the next packet to send into *f and reports whether
// there was one. Call it until it returns false after every other call
// (posting, receiving, ticking); a caller that paces a link may call it
// when the link is free instead. Responder and requester packets
// alternate.
func (q *QP) NextPacket(now Time, f *packet.Fields) bool {
	q.advance(now)
	ok := false
	if q.preferResp {
		ok = q.rsp.next(f) || q.req.next(f)
	} else {
		ok = q.req.next(f) || q.rsp.next(f)
	}
	if ok {
		q.preferResp = !q.preferResp
		q.pktsSent++
	}
	return ok
}

// RequestAck makes the next request packet carry AckReq: a sender that
// paces itself (a congestion window outside the QP) and is about to stop
// asks for the ACK that will let it go on, since the responder ACKs only
// AckReq packets (§5.2).
func (q *QP) RequestAck() { q.req.noAck = math.MaxInt32 - 1 } // as if ackEvery packets had gone without

// HasOutgoing reports whether NextPacket would return a packet now.
func (q *QP) HasOutgoing() bool { return q.rsp.jobs.Len() > 0 || q.req.canSend() }

// AppendOutgoing appends every packet ready at now to dst.
func (q *QP) AppendOutgoing(now Time, dst []packet.Fields) []packet.Fields {
	for {
		dst = append(dst, packet.Fields{})
		if !q.NextPacket(now, &dst[len(dst)-1]) {
			return dst[:len(dst)-1]
		}
	}
}

// AppendCompletions appends the completions produced since the last call
// to dst and forgets them. Send completions are in posting order, receive
// completions in receive-posting order.
func (q *QP) AppendCompletions(dst []Completion) []Completion {
	dst = append(dst, q.comps...)
	q.comps = q.comps[:0]
	return dst
}

// PendingCompletions reports how many completions AppendCompletions would
// return.
func (q *QP) PendingCompletions() int { return len(q.comps) }

func (q *QP) complete(id uint64, st Status, op WCOpcode, n uint32) {
	q.comps = append(q.comps, Completion{WRID: id, Status: st, Opcode: op, ByteLen: n, QPN: q.qpn})
}

// enterError moves the QP to Error: every send WR still queued and every
// posted receive completes with WR_FLUSH_ERR (ib-facts.md §5.5, §5.10).
// The WR that failed has already been completed with its own status.
func (q *QP) enterError() {
	if q.state == StateError {
		return
	}
	q.state = StateError
	q.req.flush()
	q.rsp.flush()
}

// NextPSN is the PSN of the next new request packet (sq_psn as it stands).
func (q *QP) NextPSN() uint32 { return q.req.hiPSN }

// UnackedPSN is the oldest request PSN not yet acknowledged.
func (q *QP) UnackedPSN() uint32 { return q.req.una }

// ExpectedPSN is the responder's ePSN.
func (q *QP) ExpectedPSN() uint32 { return q.rsp.epsn }

// MSN is the responder's message sequence number (ib-facts.md §5.9).
func (q *QP) MSN() uint32 { return q.rsp.msn }

// RemoteMSN is the MSN of the last ACK-kind AETH the requester accepted.
func (q *QP) RemoteMSN() uint32 { return q.req.remoteMSN }

// Credits is the credit count of that AETH (ib-facts.md §5.8): limited is
// false for "unlimited" (0x1F). The requester records credits but does not
// hold SENDs back for them.
func (q *QP) Credits() (n int, limited bool) { return int(q.req.credits), q.req.creditsLimit }

// SendQueueLen is the number of send WRs posted and not yet completed.
func (q *QP) SendQueueLen() int { return q.req.sq.Len() }

// RecvQueueLen is the number of receive WRs posted and not yet consumed.
func (q *QP) RecvQueueLen() int { return q.rsp.rq.Len() }

// SlabFootprint returns about how many bytes a QP with cfg takes when it
// comes from a Slab and its queues get at most so deep: sends work requests
// on its send queue, recvs on its receive queue, responses waiting in its
// responder. That is its slot in the slab, the responder's MaxDestRdAtomic
// resources, and the storage of the queues (and of the completions, at most
// sends+recvs pending) that outgrow what the QP holds inline, as the heap
// allocates them. It is computed from the types, so it stays true when they
// change.
func SlabFootprint(cfg Config, sends, recvs, responses int) int64 {
	b := int64(unsafe.Sizeof(slabQP{})) + heapsize.Alloc(int64(max(cfg.MaxDestRdAtomic, 0))*int64(unsafe.Sizeof(resource{})), true)
	return b + ringBytes[sendWQE](sends, true) + ringBytes[RecvWR](recvs, true) + ringBytes[job](responses, true) +
		ringBytes[Completion](sends+recvs, false)
}

// ringBytes is the heap storage of a ring (or of the completions' slice)
// that holds up to n elements, of a type with or without pointers: none
// while they fit inline, else the power of two it grows to (counted up to
// 2^40 elements).
func ringBytes[T any](n int, pointers bool) int64 {
	if n <= initRing {
		return 0
	}
	c := int64(initRing)
	for c < int64(n) && c < 1<<40 {
		c *= 2
	}
	var x T
	return heapsize.Alloc(c*int64(unsafe.Sizeof(x)), pointers)
}
