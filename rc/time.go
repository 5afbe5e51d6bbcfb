package rc

// Time is an instant or a duration in integer picoseconds: what a QP is
// told (Tick, Receive, NextPacket) and what it answers (NextWake) and
// configures (AckTimeout, RNRDelay). Only differences of times matter to a
// QP, so any origin will do. It counts the same unit as a simulator's
// picosecond clock, such as package sim's, which converts with rc.Time(t).
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond       = 1000 * Picosecond
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)
