package rc

// Time is an instant or a duration in integer picoseconds: what a QP is
// told (Tick, Receive, NextPacket) and what it answers (NextWake) and
// configures (AckTimeout, RNRDelay). Only differences of times matter to a
// QP, so any origin will do. It counts the same unit as a simulator's
// picosecond clock, such as package sim's, which converts with rc.Time(t).
type Time int64

// Nanosecond and Microsecond are the units the IBA timers are given in.
const (
	Nanosecond  Time = 1000
	Microsecond Time = 1000 * Nanosecond
)
