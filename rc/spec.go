package rc

import "github.com/rocekit/rocekit/opcode"

// Rules of the RC protocol that are pure arithmetic on the specification
// (ib-facts.md §5). The protocol engine here, the capture checker, the
// capture analysis and the stimulus generator all apply them through these
// functions; PSN arithmetic is in psn.go.

// ValidMTU reports whether n is a path MTU IBA allows: 256, 512, 1024, 2048
// or 4096 bytes (§5.2).
func ValidMTU(n int) bool {
	switch n {
	case 256, 512, 1024, 2048, 4096:
		return true
	}
	return false
}

// Packets returns the packets a message of length bytes takes at path MTU
// pmtu: N = max(1, ceil(length/pmtu)). A SEND or RDMA WRITE of that length
// uses N PSNs, and an RDMA READ request of that DMA length reserves N PSNs,
// one per READ response (§5.2, §5.3). It returns 0 when pmtu is not
// positive.
func Packets(length uint32, pmtu int) uint32 {
	if pmtu <= 0 {
		return 0
	}
	return max(1, uint32((uint64(length)+uint64(pmtu)-1)/uint64(pmtu)))
}

// EndsMessage reports whether request op is the last packet of its message,
// the one the responder's MSN counts (§5.9): a Last or Only packet, which
// every single-packet request (READ, atomics, FLUSH, ATOMIC WRITE) is.
func EndsMessage(op opcode.Opcode) bool {
	p := op.Position()
	return op.IsRequest() && (p == opcode.Last || p == opcode.Only)
}

// ConsumesWQE reports whether request op takes a receive WQE at the
// responder, so that an RNR NAK can answer it (§5.4): the First or Only
// packet of a SEND, and an RDMA WRITE with immediate (Last or Only).
func ConsumesWQE(op opcode.Opcode) bool {
	switch op.Family() {
	case opcode.FamilySend:
		p := op.Position()
		return p == opcode.First || p == opcode.Only
	case opcode.FamilyWrite:
		return op.HasImmediate()
	}
	return false
}

// AnsweredByRead reports whether request op is answered by RDMA READ
// responses: an RDMA READ by as many as it reserved PSNs, FLUSH and ATOMIC
// WRITE by one empty READ Response Only (ib-facts.md §2.2).
func AnsweredByRead(op opcode.Opcode) bool {
	switch op.Family() {
	case opcode.FamilyRead, opcode.FamilyFlush, opcode.FamilyAtomicWrite:
		return true
	}
	return false
}

// NeedsResponse reports whether request op is always answered, whether or
// not it asks for an acknowledgement: READs, FLUSH, ATOMIC WRITE and the
// atomics (§5.3).
func NeedsResponse(op opcode.Opcode) bool {
	return AnsweredByRead(op) || op.Family() == opcode.FamilyAtomic
}
