package rc

// PSN arithmetic (ib-facts.md §5.1): 24-bit sequence numbers, modulo 2^24.

// PSNMask keeps the low 24 bits of a PSN.
const PSNMask = 1<<24 - 1

// MaxOutstandingPSNs is IBA's hard limit on the PSNs a requester may have
// outstanding: with at most 2^23 PSNs between the oldest unacknowledged one
// and the next one, every retransmission is a duplicate and every new packet
// is "after" at the responder (ib-facts.md §5.1).
const MaxOutstandingPSNs = 1 << 23

// AddPSN returns a+n modulo 2^24.
func AddPSN(a, n uint32) uint32 { return (a + n) & PSNMask }

// DiffPSN returns a-b read as a signed 24-bit number: positive when a is
// after b, zero when equal, negative when a is before b. A distance of
// exactly 2^23 counts as before (-2^23), as rxe's psn_compare does.
func DiffPSN(a, b uint32) int32 { return int32((a-b)<<8) >> 8 }

// ComparePSN returns +1 if a is after b, 0 if equal, -1 if a is before b.
func ComparePSN(a, b uint32) int {
	switch d := DiffPSN(a, b); {
	case d > 0:
		return 1
	case d < 0:
		return -1
	}
	return 0
}

// subPSN is the forward distance from b to a, modulo 2^24.
func subPSN(a, b uint32) uint32 { return (a - b) & PSNMask }
