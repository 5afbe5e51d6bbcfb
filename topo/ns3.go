package topo

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/sim"
)

// ReadNS3 reads a topology in the HPCC ns-3 format (simulation/mix/*.txt
// of High-Precision-Congestion-Control):
//
//	<nodes> <switches> <links>
//	<switch id> <switch id> ...
//	<src> <dst> <rate> <delay> <error rate>     (one line per link)
//
// Node ids are 0 .. nodes-1; ids not listed as switches are hosts. Rates
// take the suffixes bps, Kbps, Mbps, Gbps (decimal: 1 Kbps = 1000 b/s),
// delays ps, ns, us, ms, s; the number may have a fraction ("2.5Gbps") but
// must come to a whole number of b/s and ps. Blank lines are skipped; the
// switch line is absent when there are no switches. Node i is named by its
// decimal id ("0", "1", ...). name is used in errors, which read
// "name:line: message"; validation errors (see Builder.Build) name the line
// of the offending link, or line 1 (where the nodes are declared) for a
// node.
func ReadNS3(r io.Reader, name string) (*Topology, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16<<20)
	lineNo := 0
	next := func() ([]string, bool) {
		for sc.Scan() {
			lineNo++
			if f := strings.Fields(sc.Text()); len(f) > 0 {
				return f, true
			}
		}
		return nil, false
	}
	fail := func(line int, f string, a ...any) error {
		return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(f, a...))
	}
	eof := func(what string) error {
		if err := sc.Err(); err != nil {
			return fmt.Errorf("%s:%d: %v", name, lineNo+1, err)
		}
		return fmt.Errorf("%s:%d: unexpected end of file, want %s", name, lineNo+1, what)
	}
	hdr, ok := next()
	if !ok {
		return nil, eof("the header line <nodes> <switches> <links>")
	}
	if len(hdr) != 3 {
		return nil, fail(lineNo, "header has %d fields, want 3: <nodes> <switches> <links>", len(hdr))
	}
	var counts [3]int
	for i, what := range []string{"nodes", "switches", "links"} {
		v, err := strconv.Atoi(hdr[i])
		if err != nil || v < 0 {
			return nil, fail(lineNo, "%s %q is not a non-negative integer", what, hdr[i])
		}
		counts[i] = v
	}
	nodes, nsw, nlinks := counts[0], counts[1], counts[2]
	if nodes > maxNodes {
		return nil, fail(lineNo, "%d nodes, more than %d", nodes, maxNodes)
	}
	if nsw > nodes {
		return nil, fail(lineNo, "%d switches but only %d nodes", nsw, nodes)
	}
	isSwitch := make([]bool, nodes)
	if nsw > 0 {
		ids, ok := next()
		if !ok {
			return nil, eof("the switch id line")
		}
		if len(ids) != nsw {
			return nil, fail(lineNo, "%d switch ids, the header says %d", len(ids), nsw)
		}
		for _, s := range ids {
			v, err := strconv.Atoi(s)
			if err != nil || v < 0 || v >= nodes {
				return nil, fail(lineNo, "switch id %q is not a node id 0..%d", s, nodes-1)
			}
			if isSwitch[v] {
				return nil, fail(lineNo, "switch id %d listed twice", v)
			}
			isSwitch[v] = true
		}
	}
	var b Builder
	for i := 0; i < nodes; i++ {
		if isSwitch[i] {
			b.AddSwitch(strconv.Itoa(i))
		} else {
			b.AddHost(strconv.Itoa(i))
		}
	}
	linkLine := make([]int, 0, min(nlinks, 1<<20))
	for i := 0; i < nlinks; i++ {
		f, ok := next()
		if !ok {
			return nil, eof(fmt.Sprintf("link %d of %d", i+1, nlinks))
		}
		if len(f) != 5 {
			return nil, fail(lineNo, "%d fields, want 5: <src> <dst> <rate> <delay> <error rate>", len(f))
		}
		var ends [2]NodeID
		for j, what := range []string{"src", "dst"} {
			v, err := strconv.Atoi(f[j])
			if err != nil {
				return nil, fail(lineNo, "%s %q is not a node id", what, f[j])
			}
			if v < 0 || v >= nodes {
				return nil, fail(lineNo, "unknown node %d (nodes are 0..%d)", v, nodes-1)
			}
			ends[j] = NodeID(v)
		}
		rate, err := ParseRate(f[2])
		if err != nil {
			return nil, fail(lineNo, "%v", err)
		}
		delay, err := ParseDelay(f[3])
		if err != nil {
			return nil, fail(lineNo, "%v", err)
		}
		er, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			return nil, fail(lineNo, "error rate %q is not a number", f[4])
		}
		b.SetErrorRate(b.Connect(ends[0], ends[1], rate, delay), er)
		linkLine = append(linkLine, lineNo)
	}
	if _, more := next(); more {
		return nil, fail(lineNo, "more links than the %d the header says", nlinks)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, lineNo+1, err)
	}
	t, err := b.Build()
	if err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			if ve.Link >= 0 {
				return nil, fail(linkLine[ve.Link], "%s", ve.Msg)
			}
			return nil, fail(1, "node %d: %s", ve.Node, ve.Msg)
		}
		return nil, err
	}
	return t, nil
}

// WriteNS3 writes t in the HPCC ns-3 format ReadNS3 reads. Node ids are
// t's ids; rates are written in the largest exact unit ("100Gbps") and
// delays in ns ("1000ns"), or ps when not whole nanoseconds.
func WriteNS3(w io.Writer, t *Topology) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%d %d %d\n", t.NumNodes(), len(t.switches), len(t.links))
	for i, s := range t.switches {
		if i > 0 {
			bw.WriteByte(' ')
		}
		bw.WriteString(strconv.Itoa(int(s)))
	}
	if len(t.switches) > 0 {
		bw.WriteByte('\n')
	}
	for _, l := range t.links {
		fmt.Fprintf(bw, "%d %d %s %s %s\n", l.A, l.B, FormatRate(l.RateBps), FormatDelay(l.Delay),
			strconv.FormatFloat(l.ErrorRate, 'f', -1, 64))
	}
	return bw.Flush()
}

var rateUnits = []struct {
	s string
	m int64
}{{"Gbps", 1e9}, {"Mbps", 1e6}, {"Kbps", 1e3}, {"bps", 1}}

var delayUnits = []struct {
	s string
	m sim.Time
}{{"ms", sim.Millisecond}, {"us", sim.Microsecond}, {"ns", sim.Nanosecond}, {"ps", sim.Picosecond}, {"s", sim.Second}}

// ParseRate parses a rate with a unit suffix, as in the HPCC ns-3 file:
// "100Gbps", "2.5Gbps", "400Mbps", "10Kbps", "1000bps". It returns bits per
// second.
func ParseRate(s string) (int64, error) {
	for _, u := range rateUnits {
		if num, ok := strings.CutSuffix(s, u.s); ok {
			v, err := scaled(num, float64(u.m))
			if err != nil || v <= 0 {
				return 0, fmt.Errorf("rate %q: want a positive whole number of b/s", s)
			}
			return v, nil
		}
	}
	return 0, fmt.Errorf("rate %q: unknown unit, want Gbps, Mbps, Kbps or bps", s)
}

// ParseDelay parses a delay with a unit suffix: "1000ns", "1us", "0.5ms",
// "1s", "80ps". It returns picoseconds.
func ParseDelay(s string) (sim.Time, error) {
	for _, u := range delayUnits {
		if num, ok := strings.CutSuffix(s, u.s); ok {
			v, err := scaled(num, float64(u.m))
			if err != nil || v < 0 {
				return 0, fmt.Errorf("delay %q: want a non-negative whole number of ps", s)
			}
			return sim.Time(v), nil
		}
	}
	return 0, fmt.Errorf("delay %q: unknown unit, want s, ms, us, ns or ps", s)
}

// scaled returns num*m, rejecting non-numbers, overflow and results that
// are not whole (to within rounding of a decimal fraction).
func scaled(num string, m float64) (int64, error) {
	if i, err := strconv.ParseInt(num, 10, 64); err == nil {
		mi := int64(m)
		if i > math.MaxInt64/mi || i < math.MinInt64/mi {
			return 0, errors.New("out of range")
		}
		return i * mi, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errors.New("not a number")
	}
	r := math.Round(f * m)
	if r >= math.MaxInt64 || r <= math.MinInt64 || math.Abs(r-f*m) > 1e-6*math.Max(1, math.Abs(r)) {
		return 0, errors.New("not whole")
	}
	return int64(r), nil
}

// FormatRate formats b/s in the largest unit of ParseRate that keeps it
// exact.
func FormatRate(bps int64) string {
	for _, u := range rateUnits {
		if bps%u.m == 0 {
			return strconv.FormatInt(bps/u.m, 10) + u.s
		}
	}
	return strconv.FormatInt(bps, 10) + "bps"
}

// FormatDelay formats a delay in ns when whole nanoseconds (as HPCC's files
// do), else in ps.
func FormatDelay(d sim.Time) string {
	if d%sim.Nanosecond == 0 {
		return strconv.FormatInt(int64(d/sim.Nanosecond), 10) + "ns"
	}
	return strconv.FormatInt(int64(d), 10) + "ps"
}
