package sim

import "fmt"

// MaxINTHops is the most INT records a frame carries: a switch with INT on
// adds none to a frame that already has this many (Switch.INTOverflows
// counts them). Eight covers the five switch hops of a three-tier fat tree
// and the longest Dragonfly paths with room to spare.
const MaxINTHops = 8

// INTHop is the in-band network telemetry one switch records for a frame as
// the frame starts transmission on one of its egress ports: what HPCC reads
// of every hop to estimate the inflight bytes of the path (fabric-facts §5;
// Li et al., SIGCOMM 2019).
type INTHop struct {
	TS      Time   // when the frame started transmission on the port
	QLen    int    // bytes waiting at the port then, all priorities, not counting this frame
	TxBytes uint64 // data bytes the port has put on its link so far, this frame included (PFC frames not counted)
	RateBps int64  // the link's rate, bits per second
}

// INTEndpoint is an Endpoint that wants the INT records of the frames it
// receives: its host calls ReceiveINT instead of Receive for every arriving
// frame, with the frame's records (none for a frame that collected or
// carried none). frame and hops are the network's own and are valid only
// during the call; copy what is kept (Frame.SetINT copies hops into a reply).
type INTEndpoint interface {
	ReceiveINT(now Time, frame []byte, hops []INTHop)
}

// SetCollectINT asks (on true) that every switch with INT on append a record
// to f as f leaves it, after any records f already carries; false stops
// further records. A frame from the pool does not collect until asked.
func (f *Frame) SetCollectINT(on bool) { f.collect = on }

// SetINT replaces f's INT records with a copy of hops, e.g. the records a
// receiver echoes to the sender in an acknowledgement. It does not change
// whether f collects more (SetCollectINT). It panics if hops has more than
// MaxINTHops records, which no frame collects.
func (f *Frame) SetINT(hops []INTHop) {
	if len(hops) > MaxINTHops {
		panic(fmt.Sprintf("sim: Frame.SetINT: %d records, at most MaxINTHops (%d)", len(hops), MaxINTHops))
	}
	f.nINT = uint8(copy(f.hops[:], hops))
}

// INT returns f's INT records, in path order. The slice is f's own and is
// valid until f is freed or sent.
func (f *Frame) INT() []INTHop { return f.hops[:f.nINT:f.nINT] }

// SetINT turns in-band network telemetry on or off (the default) on every
// port of the switch: when on, a frame that collects INT (Frame.SetCollectINT)
// gets one INTHop appended as it starts transmission on one of the switch's
// ports, unless it already has MaxINTHops. The records travel beside the
// frame as simulator metadata: the frame's bytes, and what the Tap sees, are
// those of the plain frame.
func (s *Switch) SetINT(on bool) {
	s.intOn = on
	for _, p := range s.ports {
		p.intOn = on
	}
}

// INT reports whether the switch records INT.
func (s *Switch) INT() bool { return s.intOn }

// INTOverflows returns the number of frames that collect INT but left the
// switch without a record because they already had MaxINTHops, summed over
// its ports (see PortStats.INTOverflows).
func (s *Switch) INTOverflows() uint64 {
	var n uint64
	for _, p := range s.ports {
		n += p.intOverflows
	}
	return n
}

// stampINT appends port p's record to frame f, which starts transmission at
// now; the link counters already include f.
func (p *Port) stampINT(now Time, f *Frame) {
	if f.nINT >= MaxINTHops {
		p.intOverflows++
		return
	}
	l := p.link
	f.hops[f.nINT] = INTHop{
		TS:      now,
		QLen:    p.qb,
		TxBytes: l.dir[p.dir].c.SentBytes,
		RateBps: l.bandwidth,
	}
	f.nINT++
}
