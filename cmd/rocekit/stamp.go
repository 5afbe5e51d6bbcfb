package main

import (
	"strconv"
	"time"
)

// timeFormat is how a one-line text frame gives its time (--time), like
// tcpdump's -t options. Times are in UTC, whatever the local time zone:
// the same capture prints the same lines everywhere.
type timeFormat uint8

const (
	timeAbs   timeFormat = iota // 15:04:05.000000000, the time of day (tcpdump's default, in UTC)
	timeDate                    // 2006-01-02 15:04:05.000000000 (tcpdump -tttt, in UTC)
	timeEpoch                   // 1700000000.000000000, seconds since 1970-01-01 UTC (tcpdump -tt)
	timeRel                     // 00:00:01.000000000 since the first frame printed (tcpdump -ttttt)
	timeDelta                   // 00:00:00.000100000 since the previous frame printed (tcpdump -ttt)
	timeNone                    // no time (tcpdump -t)
)

// timeNames are the --time values, in timeFormat order.
var timeNames = [...]string{"abs", "date", "epoch", "rel", "delta", "none"}

func parseTimeFormat(s string) (timeFormat, bool) {
	for i, n := range timeNames {
		if s == n {
			return timeFormat(i), true
		}
	}
	return 0, false
}

// stamper writes the time of each text line. The rel and delta forms
// depend on the frames printed before, so the pipeline formats their lines
// in its write turn, in order; the others depend on the frame alone.
type stamper struct {
	format      timeFormat
	first, prev time.Time
	started     bool
}

// sequential reports whether a line's time depends on the lines before it.
func (s *stamper) sequential() bool { return s.format == timeRel || s.format == timeDelta }

// append appends the time t of a frame that is printed and a space; "-"
// for a frame without a time (a capture format that has none); nothing
// with --time none.
func (s *stamper) append(b []byte, t time.Time) []byte {
	if s.format == timeNone {
		return b
	}
	if t.IsZero() {
		return append(b, '-', ' ')
	}
	switch s.format {
	case timeAbs:
		b = appendHMS(b, t.Unix(), t.Nanosecond(), false)
	case timeDate:
		y, m, d := t.UTC().Date()
		b = strconv.AppendInt(b, int64(y), 10)
		b = append(b, '-', byte('0'+m/10), byte('0'+m%10), '-', byte('0'+d/10), byte('0'+d%10), ' ')
		b = appendHMS(b, t.Unix(), t.Nanosecond(), false)
	case timeEpoch:
		sec, ns := t.Unix(), t.Nanosecond()
		if sec < 0 && ns > 0 { // before 1970: -1.5 s is Unix -2 plus 0.5 s
			b = append(b, '-')
			sec, ns = -(sec + 1), 1e9-ns
		}
		b = strconv.AppendInt(b, sec, 10)
		b = append(b, '.')
		b = appendNanos(b, ns)
	case timeRel, timeDelta:
		if !s.started {
			s.first, s.prev, s.started = t, t, true
		}
		from := s.first
		if s.format == timeDelta {
			from = s.prev
		}
		s.prev = t
		b = appendSince(b, t, from)
	}
	return append(b, ' ')
}

// appendHMS appends the time of day of Unix time sec (UTC), or with
// elapsed the hours, minutes and seconds of sec seconds (hours not
// wrapped), then the nanoseconds: 15:04:05.000000000.
func appendHMS(b []byte, sec int64, ns int, elapsed bool) []byte {
	h := sec / 3600
	if !elapsed {
		sec %= 86400
		if sec < 0 {
			sec += 86400
		}
		h = sec / 3600
	}
	if h < 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, h, 10)
	m, s := sec/60%60, sec%60
	b = append(b, ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+s/10), byte('0'+s%10), '.')
	return appendNanos(b, ns)
}

// appendSince appends t - from as [-]HH:MM:SS.nnnnnnnnn.
func appendSince(b []byte, t, from time.Time) []byte {
	sec, ns := t.Unix()-from.Unix(), t.Nanosecond()-from.Nanosecond()
	if ns < 0 {
		sec, ns = sec-1, ns+1e9
	}
	if sec < 0 { // t before from: a capture out of time order
		b = append(b, '-')
		sec = -sec
		if ns > 0 {
			sec, ns = sec-1, 1e9-ns
		}
	}
	return appendHMS(b, sec, ns, true)
}

// appendNanos appends ns (0..999999999) as nine digits.
func appendNanos(b []byte, ns int) []byte {
	var d [9]byte
	d[0] = byte('0' + ns/100000000)
	*(*[4]byte)(d[1:5]) = digits4[ns/10000%10000]
	*(*[4]byte)(d[5:9]) = digits4[ns%10000]
	return append(b, d[:]...)
}
