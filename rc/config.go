package rc

import (
	"fmt"

	"github.com/rocekit/rocekit/aeth"
)

// Config holds a connected RC QP's attributes: what ibv_modify_qp sets on
// the way INIT -> RTR -> RTS (ib-facts.md §5.10), plus the few choices this
// model makes.
type Config struct {
	QPN     uint32 // this QP's number: incoming packets must carry it in BTH.DestQP
	DestQPN uint32 // the peer's QP number
	PKey    uint16 // P_Key sent and matched (§5.11); 0 means 0xFFFF

	// MTU is the path MTU in bytes: 256, 512, 1024, 2048 or 4096 (§5.2).
	MTU int

	SQPSN uint32 // first PSN this QP sends (sq_psn)
	RQPSN uint32 // first PSN this QP expects (rq_psn)

	// Timeout is the 5-bit local ACK timeout: 4.096 us x 2^Timeout, 0 for
	// no transport timer (§5.5).
	Timeout uint8
	// RetryCnt (0-7) is how many times the requester retransmits after a
	// timeout or a PSN-sequence-error NAK before failing the WR with
	// RETRY_EXC_ERR. 7 is seven retries (IBA, ipath), not infinite: see
	// RetryCnt7Infinite.
	RetryCnt uint8
	// RetryCnt7Infinite makes RetryCnt 7 mean "retry forever", as rxe does
	// (§5.5 disagreement).
	RetryCnt7Infinite bool
	// RNRRetry (0-7) is how many RNR NAKs the requester sits out before
	// failing with RNR_RETRY_EXC_ERR; 7 means infinite (§5.5).
	RNRRetry uint8
	// MinRNRTimer is the 5-bit RNR timer code this QP's responder puts in
	// its RNR NAKs (§5.7).
	MinRNRTimer uint8

	// MaxRdAtomic (ORD) bounds the READ/atomic operations in flight from
	// this requester; MaxDestRdAtomic (IRD) is the number of responder
	// resources kept for duplicate READ/atomic requests (§5.4, §5.5).
	MaxRdAtomic     int
	MaxDestRdAtomic int

	// Access is the QP's remote access (qp_access_flags): RemoteWrite,
	// RemoteRead, RemoteAtomic allow the operations at this responder. Like
	// ibverbs, zero allows only SEND.
	Access Access

	// SignalAll reports a completion for every WR (sq_sig_all), as if each
	// had the Signaled flag.
	SignalAll bool

	// Window bounds the PSNs in flight (from the oldest unacknowledged to
	// the next): 0 means IBA's 2^23 (§5.1); rxe uses 128. Below 128 the
	// requester sets AckReq at least every half window (§5.2).
	Window uint32

	// AdvertiseCredits makes the responder's ACKs carry the count of posted
	// receive WQEs (§5.8) instead of 0x1F "unlimited", which rxe always
	// sends. Either way the requester only records credits (see Credits).
	AdvertiseCredits bool

	// Memory is the protection domain remote operations reach.
	Memory *Memory
}

// DefaultConfig returns a configuration with usual values: MTU 1024,
// timeout 14 (67 ms), retry_cnt 7, rnr_retry 7, min_rnr_timer 12 (0.64 ms),
// ORD and IRD 16, every remote access allowed, every WR signalled.
// QPN, DestQPN, the PSNs and Memory are left for the caller.
func DefaultConfig() Config {
	return Config{
		PKey: 0xFFFF, MTU: 1024, Timeout: 14, RetryCnt: 7, RNRRetry: 7, MinRNRTimer: 12,
		MaxRdAtomic: 16, MaxDestRdAtomic: 16, Access: AccessAll, SignalAll: true,
	}
}

func (c *Config) check() error {
	if !ValidMTU(c.MTU) {
		return fmt.Errorf("rc: MTU %d: want 256, 512, 1024, 2048 or 4096", c.MTU)
	}
	switch {
	case c.QPN > 0xFFFFFF || c.DestQPN > 0xFFFFFF:
		return fmt.Errorf("rc: QP numbers are 24 bits")
	case c.SQPSN > PSNMask || c.RQPSN > PSNMask:
		return fmt.Errorf("rc: PSNs are 24 bits")
	case c.Timeout > 31 || c.MinRNRTimer > 31:
		return fmt.Errorf("rc: Timeout and MinRNRTimer are 5-bit codes")
	case c.RetryCnt > 7 || c.RNRRetry > 7:
		return fmt.Errorf("rc: RetryCnt and RNRRetry are 3-bit counts")
	case c.MaxRdAtomic < 0 || c.MaxDestRdAtomic < 0:
		return fmt.Errorf("rc: negative ORD/IRD")
	case c.Window > MaxOutstandingPSNs:
		return fmt.Errorf("rc: Window %d exceeds 2^23", c.Window)
	}
	return nil
}

// AckTimeout returns the local ACK timeout for the 5-bit code t:
// 4.096 us x 2^t, and 0 (no timer) for t = 0 (ib-facts.md §5.5).
func AckTimeout(t uint8) Time {
	if t == 0 {
		return 0
	}
	return 4096 * Nanosecond << (t & 31)
}

// RNRDelay returns the RNR NAK wait for the 5-bit timer code c (§5.7).
func RNRDelay(c uint8) Time { return Time(aeth.RNRDelay(c)) * Nanosecond }
