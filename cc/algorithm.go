package cc

import (
	"errors"

	"github.com/rocekit/rocekit/sim"
)

// Algorithm is a congestion controller for one QP, as a NIC model drives
// it: it reports the events of the QP (bytes sent, CNPs, ACKs with their
// INT records), calls Advance at NextWake, and paces the QP at Rate,
// keeping at most Window bytes unacknowledged when Window is positive.
// *DCQCN, *HPCC and *None implement it. None of the methods allocate, so
// a NIC can hold one Algorithm per QP and call it for every packet.
type Algorithm interface {
	// OnSent reports bytes of the QP put on the wire at now. DCQCN's byte
	// counter counts them; HPCC only numbers its sequence with them, so
	// what it needs is that OnSent and OnAck count alike (package roce
	// tells it the MTU for every new PSN, as its ACKs tell PSNs).
	OnSent(now sim.Time, bytes int)
	// OnCNP reports a CNP for the QP arriving at now.
	OnCNP(now sim.Time)
	// OnAck reports an ACK arriving at now that acknowledges every byte
	// before ackedSeq (bytes counted as OnSent counts them), with the
	// INT records it echoes, one per switch hop in path order (nil when
	// the fabric stamps none). The slice is not kept.
	OnAck(now sim.Time, ackedSeq uint64, ints []INTHop)
	// Advance runs the timers due at or before now.
	Advance(now sim.Time)
	// NextWake returns when Advance next has something to do, or
	// sim.MaxTime.
	NextWake() sim.Time
	// Rate returns the sending rate in bits/s.
	Rate() int64
	// Window returns the window in bytes, or 0 for none.
	Window() int
}

// INTHop is the in-band telemetry one switch hop stamps on a data packet
// and the receiver echoes in the ACK (fabric-facts §5): when the packet
// left the hop's egress port, that port's queue length and transmitted
// byte counter then, and the port's line rate. rocekit carries it beside
// the frame as simulator metadata; real NICs carry it in a vendor header.
type INTHop struct {
	// TS is when the packet left the egress port.
	TS sim.Time
	// QLen is the egress queue length in bytes.
	QLen int
	// TxBytes is the port's count of bytes transmitted so far.
	TxBytes uint64
	// RateBps is the port's line rate in bits/s.
	RateBps int64
}

// None is no congestion control: the line rate, no window.
type None struct {
	line int64
}

// NewNone returns None for a link of lineRateBps bits/s.
func NewNone(lineRateBps int64) (*None, error) {
	if lineRateBps <= 0 {
		return nil, errors.New("cc: line rate must be positive")
	}
	return &None{line: lineRateBps}, nil
}

// OnSent does nothing.
func (n *None) OnSent(now sim.Time, bytes int) {}

// OnCNP does nothing.
func (n *None) OnCNP(now sim.Time) {}

// OnAck does nothing.
func (n *None) OnAck(now sim.Time, ackedSeq uint64, ints []INTHop) {}

// Advance does nothing.
func (n *None) Advance(now sim.Time) {}

// NextWake returns sim.MaxTime.
func (n *None) NextWake() sim.Time { return sim.MaxTime }

// Rate returns the line rate.
func (n *None) Rate() int64 { return n.line }

// Window returns 0.
func (n *None) Window() int { return 0 }

var (
	_ Algorithm = (*None)(nil)
	_ Algorithm = (*DCQCN)(nil)
	_ Algorithm = (*HPCC)(nil)
)
