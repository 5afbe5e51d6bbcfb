package sim

import (
	"math"
	"math/bits"
	"strconv"
	"time"
)

// Time is a simulated instant, or a duration, in integer picoseconds.
//
// An int64 of picoseconds spans about 106 days, far more than any scenario
// needs, and keeps every timing exact: a byte at 100 Gb/s is 80 ps, at
// 25 Gb/s 320 ps.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond       = 1000 * Picosecond
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// MaxTime is the largest Time. Run(MaxTime) runs until no event is left.
const MaxTime Time = math.MaxInt64

// String formats t in the largest unit (ps, ns, us, ms, s) in which its
// magnitude is at least 1, with as many decimals as needed to be exact and
// no trailing zeros: 81920 ps is "81.92ns", 1234000 ps is "1.234us", 0 is
// "0s".
func (t Time) String() string {
	if t == 0 {
		return "0s"
	}
	u := uint64(t)
	sign := ""
	if t < 0 {
		u = -u
		sign = "-"
	}
	var unit uint64
	var suffix string
	var digits int
	switch {
	case u < 1e3:
		return sign + strconv.FormatUint(u, 10) + "ps"
	case u < 1e6:
		unit, suffix, digits = 1e3, "ns", 3
	case u < 1e9:
		unit, suffix, digits = 1e6, "us", 6
	case u < 1e12:
		unit, suffix, digits = 1e9, "ms", 9
	default:
		unit, suffix, digits = 1e12, "s", 12
	}
	b := make([]byte, 0, 32)
	b = append(b, sign...)
	b = strconv.AppendUint(b, u/unit, 10)
	if frac := u % unit; frac != 0 {
		var fb [12]byte
		for i := digits - 1; i >= 0; i-- {
			fb[i] = byte('0' + frac%10)
			frac /= 10
		}
		n := digits
		for fb[n-1] == '0' {
			n--
		}
		b = append(b, '.')
		b = append(b, fb[:n]...)
	}
	b = append(b, suffix...)
	return string(b)
}

// Picoseconds returns t as an integer count of picoseconds.
func (t Time) Picoseconds() int64 { return int64(t) }

// Nanoseconds returns t in nanoseconds as a float64 (81920 ps is 81.92).
func (t Time) Nanoseconds() float64 { return float64(t) / float64(Nanosecond) }

// Microseconds returns t in microseconds as a float64.
func (t Time) Microseconds() float64 { return float64(t) / float64(Microsecond) }

// Seconds returns t in seconds as a float64.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// Duration converts t to a time.Duration, truncating toward zero to whole
// nanoseconds.
func (t Time) Duration() time.Duration { return time.Duration(t / Nanosecond) }

// FromDuration converts a time.Duration to Time. It saturates at MaxTime and
// -MaxTime instead of overflowing (a Duration of more than about 106 days).
func FromDuration(d time.Duration) Time {
	const lim = time.Duration(MaxTime / Nanosecond)
	switch {
	case d > lim:
		return MaxTime
	case d < -lim:
		return -MaxTime
	}
	return Time(d) * Nanosecond
}

// FromSeconds converts seconds to Time, rounding to the nearest picosecond and
// saturating at ±MaxTime.
func FromSeconds(s float64) Time {
	ps := math.Round(s * 1e12)
	switch {
	case ps >= math.MaxInt64:
		return MaxTime
	case ps <= -math.MaxInt64:
		return -MaxTime
	case ps != ps: // NaN
		return 0
	}
	return Time(ps)
}

// TxTime is the time to serialise bytes octets at bitsPerSecond, exact in
// integer picoseconds and rounded up: ceil(bytes*8*1e12 / bitsPerSecond).
// A 1024-byte frame at 100 Gb/s takes 81920 ps. The product is computed in
// 128 bits, so it never overflows for any int byte count; a result beyond
// MaxTime saturates. TxTime panics if bytes < 0 or bitsPerSecond <= 0.
func TxTime(bytes int, bitsPerSecond int64) Time {
	if bytes < 0 {
		panic("sim: TxTime: negative byte count")
	}
	if bitsPerSecond <= 0 {
		panic("sim: TxTime: bit rate must be positive")
	}
	hi, lo := bits.Mul64(uint64(bytes), 8e12)
	d := uint64(bitsPerSecond)
	if hi >= d {
		return MaxTime
	}
	q, r := bits.Div64(hi, lo, d)
	if r != 0 {
		q++
	}
	if q > math.MaxInt64 {
		return MaxTime
	}
	return Time(q)
}
