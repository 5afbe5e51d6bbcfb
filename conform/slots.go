package conform

import (
	"github.com/rocekit/rocekit/internal/ring"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/rc"
)

// slot is what the checker remembers of one request PSN (or, for a READ,
// of the PSNs it reserved): the packet as first sent, where it was seen and
// what the responder owes for it.
type slot struct {
	psn uint32
	// span is the PSNs the request uses: 1, or a READ's N. While the PMTU
	// is unknown a READ's N is only bounded: spanKnown is false, span is
	// spanLo until the next request shows where the READ ended (obsNext).
	span      uint32
	spanLo    uint32
	spanHi    uint32
	spanKnown bool
	obsNext   bool // the next new request came at psn+span (tentative span)
	nextFrame int  // its frame

	op     opcode.Opcode
	ackReq bool
	plen   uint32 // payload bytes (on the wire)
	pcrc   uint32 // CRC-32C of the payload (of the bytes captured when pcut)
	va     uint64 // RETH or AtomicETH
	rkey   uint32
	dlen   uint32 // RETH DMA length
	// What a capture that cut the packet did not keep (packet.Packet.Cut):
	// pcut, part of the payload (pcrc covers only what was kept); ethCut,
	// the RETH or AtomicETH the opcode carries (va, rkey, dlen unknown).
	pcut, ethCut bool

	frame int // first capture
	last  int // latest capture

	// Message accounting in PSN order: known once the previous packets of
	// the message are.
	accKnown  bool
	msgBytes  uint64 // bytes of the message up to and including this packet
	msgLen    uint32 // WRITE: RETH DMA length of the message
	msgLenCut bool   // ... unknown: the capture cut the First's RETH
	msgStart  uint32 // PSN of the message's first packet
	msgFrame  int    // its frame

	// invalid: the model says the responder must NAK this packet with
	// invalid request; why says why.
	invalid bool
	why     string

	msnAfter uint32 // responder MSN after this request, once counted
	msnSet   bool

	// READ (FLUSH, ATOMIC WRITE) responses.
	respNext    uint32 // PSN after the latest response seen
	respStarted bool
	respDone    bool // a Last or Only was seen
	respBad     bool // a finding was reported: no more for this READ
	replayAt    uint32
	replaySet   bool // a re-request asked for responses from replayAt

	atomicAcked bool // an atomic's ATOMIC ACK was seen
}

// end is the PSN after the slot's range (tentative for a READ of unknown N).
func (s *slot) end() uint32 { return rc.AddPSN(s.psn, s.span) }

// open reports whether the slot is a READ whose N is unknown and that no
// later request has bounded yet.
func (s *slot) open() bool { return !s.spanKnown && !s.obsNext }

// cover is the number of PSNs the slot may use: its span, or for an open
// READ the most it can have reserved.
func (s *slot) cover() uint32 {
	if s.open() {
		return s.spanHi
	}
	return max(s.span, 1)
}

// contains reports whether psn lies in the slot's range.
func (s *slot) contains(psn uint32) bool {
	d := rc.DiffPSN(psn, s.psn)
	return d >= 0 && uint32(d) < s.cover()
}

// slotRing holds a channel's slots in PSN order: a ring.Ring, which grows
// to the largest number outstanding and then allocates nothing, with
// insertion in the middle and search by PSN, which a FIFO does not offer.
type slotRing struct {
	q ring.Ring[slot]
}

// firstSlots is the number of slots a channel first has room for.
const firstSlots = 64

func (r *slotRing) len() int              { return r.q.Len() }
func (r *slotRing) at(i int) *slot        { return r.q.At(i) }
func (r *slotRing) front() *slot          { return r.q.Front() }
func (r *slotRing) back() *slot           { return r.q.Back() }
func (r *slotRing) popFront()             { r.q.Drop() }
func (r *slotRing) pushBack(s *slot)      { r.insert(r.len(), s) }
func (r *slotRing) reset()                { r.q.Reset() }
func (r *slotRing) validIndex(i int) bool { return i >= 0 && i < r.len() }

// insert puts s at index i, moving the later slots up (holes are filled
// rarely: the common insertion is at the back).
func (r *slotRing) insert(i int, s *slot) {
	if r.q.Cap() == 0 {
		r.q.Init(make([]slot, firstSlots))
	}
	r.q.PushSlot()
	for j := r.len() - 1; j > i; j-- {
		*r.at(j) = *r.at(j - 1)
	}
	*r.at(i) = *s
}

// search returns the index of the last slot whose PSN is not after psn, or
// -1 (slots are in PSN order within a window shorter than 2^23).
func (r *slotRing) search(psn uint32) int {
	lo, hi := 0, r.len() // first index with slot.psn after psn
	for lo < hi {
		m := (lo + hi) / 2
		if rc.DiffPSN(r.at(m).psn, psn) > 0 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo - 1
}

// find returns the index of the slot whose range holds psn, or -1.
func (r *slotRing) find(psn uint32) int {
	i := r.search(psn)
	if i >= 0 && r.at(i).contains(psn) {
		return i
	}
	return -1
}
