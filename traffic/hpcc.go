package traffic

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/sim"
)

// ReadHPCCFlows reads a flow file in the HPCC ns-3 format
// (simulation/mix/flow.txt of High-Precision-Congestion-Control;
// fabric-facts §1):
//
//	<number of flows>
//	<src> <dst> <priority group> <dst port> <size bytes> <start seconds>
//	...                                    (one line per flow)
//
// src and dst are host indices 0 .. hosts-1 (HPCC's files use node ids,
// which are the same numbers when the hosts are nodes 0 .. hosts-1, as in
// its fat.txt), different from each other; size is a positive integer;
// start is a plain decimal number of seconds ("2", "0.000001500") that
// comes to whole picoseconds, and starts never decrease from one line to
// the next. The priority group (0 .. 7) and destination port (0 .. 65535)
// are checked and then not kept: a Flow has neither, and WriteHPCCFlows
// writes 3 and 100 as traffic_gen does. Blank lines are skipped. The count
// must match the flow lines exactly: HPCC's own reader stops after the
// count, but here text after the last flow is an error, not ignored (HPCC's
// sample flow.txt, which ends with prose, is refused). At most MaxFlows
// flows; hosts must be 2 .. MaxHosts. Flows are returned in file order.
// name is used in errors, which read "name:line: message".
func ReadHPCCFlows(r io.Reader, name string, hosts int) ([]Flow, error) {
	if hosts < 2 || hosts > MaxHosts {
		return nil, fmt.Errorf("traffic: reading %s: %d hosts, want 2 .. %d", name, hosts, MaxHosts)
	}
	sc := bufio.NewScanner(r)
	line := 0
	next := func() ([]string, bool) {
		for sc.Scan() {
			line++
			if f := strings.Fields(sc.Text()); len(f) > 0 {
				return f, true
			}
		}
		return nil, false
	}
	fail := func(f string, a ...any) ([]Flow, error) {
		return nil, fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(f, a...))
	}
	eof := func(what string) ([]Flow, error) {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", name, line+1, err)
		}
		return nil, fmt.Errorf("%s:%d: unexpected end of file, want %s", name, line+1, what)
	}
	hdr, ok := next()
	if !ok {
		return eof("the number of flows")
	}
	if len(hdr) != 1 {
		return fail("%d fields, want 1: <number of flows>", len(hdr))
	}
	count, err := strconv.Atoi(hdr[0])
	if err != nil || count < 0 {
		return fail("number of flows %q is not a non-negative integer", hdr[0])
	}
	if count > MaxFlows {
		return fail("%d flows, more than MaxFlows (%d)", count, MaxFlows)
	}
	flows := make([]Flow, 0, min(count, 1<<16))
	for i := 0; i < count; i++ {
		f, ok := next()
		if !ok {
			return eof(fmt.Sprintf("flow %d of %d", i+1, count))
		}
		if len(f) != 6 {
			return fail("%d fields, want 6: <src> <dst> <priority group> <dst port> <size> <start seconds>", len(f))
		}
		var fl Flow
		for j, spec := range []struct {
			what string
			max  int
			dst  *int
		}{{"src", hosts - 1, &fl.Src}, {"dst", hosts - 1, &fl.Dst}, {"priority group", 7, nil}, {"dst port", 65535, nil}} {
			v, err := strconv.Atoi(f[j])
			if err != nil || v < 0 || v > spec.max {
				return fail("%s %q is not an integer 0 .. %d", spec.what, f[j], spec.max)
			}
			if spec.dst != nil {
				*spec.dst = v
			}
		}
		if fl.Src == fl.Dst {
			return fail("src and dst are both host %d", fl.Src)
		}
		fl.Size, err = strconv.ParseInt(f[4], 10, 64)
		if err != nil || fl.Size <= 0 {
			return fail("size %q is not a positive integer number of bytes", f[4])
		}
		ps, err := scaled(f[5], int64(sim.Second))
		if err != nil {
			return fail("start %q is not a non-negative decimal number of seconds in whole picoseconds (%v)", f[5], err)
		}
		fl.Start = sim.Time(ps)
		if len(flows) > 0 && fl.Start < flows[len(flows)-1].Start {
			return fail("start %ss is before the previous flow's %ss (flows must be in ascending start time)", f[5], formatSeconds(flows[len(flows)-1].Start))
		}
		flows = append(flows, fl)
	}
	if _, more := next(); more {
		return fail("more lines than the %d flows the first line says", count)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	return flows, nil
}

// WriteHPCCFlows writes flows in the format ReadHPCCFlows reads, with
// priority group 3 and destination port 100 on every line (what HPCC's
// traffic_gen writes) and start times in seconds with 9 decimals, or 12
// when not whole nanoseconds. It first checks every flow (Src and Dst
// non-negative and different, Size > 0, Start >= 0 and ascending) and
// writes nothing if one fails; the error names the flow's index.
func WriteHPCCFlows(w io.Writer, flows []Flow) error {
	for i, f := range flows {
		msg := ""
		switch {
		case f.Src < 0 || f.Dst < 0:
			msg = fmt.Sprintf("negative host (src %d, dst %d)", f.Src, f.Dst)
		case f.Src == f.Dst:
			msg = fmt.Sprintf("src and dst are both host %d", f.Src)
		case f.Size <= 0:
			msg = fmt.Sprintf("size %d, want > 0", f.Size)
		case f.Start < 0:
			msg = fmt.Sprintf("start %v is negative", f.Start)
		case i > 0 && f.Start < flows[i-1].Start:
			msg = fmt.Sprintf("start %v is before the previous flow's %v (flows must be in ascending start time)", f.Start, flows[i-1].Start)
		}
		if msg != "" {
			return fmt.Errorf("traffic: WriteHPCCFlows: flow %d: %s", i, msg)
		}
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(strconv.Itoa(len(flows)))
	bw.WriteByte('\n')
	var buf []byte
	for _, f := range flows {
		buf = strconv.AppendInt(buf[:0], int64(f.Src), 10)
		buf = append(buf, ' ')
		buf = strconv.AppendInt(buf, int64(f.Dst), 10)
		buf = append(buf, " 3 100 "...)
		buf = strconv.AppendInt(buf, f.Size, 10)
		buf = append(buf, ' ')
		buf = append(buf, formatSeconds(f.Start)...)
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

// formatSeconds writes a non-negative time in seconds, exactly: 9
// decimals when whole nanoseconds ("2.000000000"), else 12.
func formatSeconds(t sim.Time) string {
	sec, ps := int64(t/sim.Second), int64(t%sim.Second)
	if ps%1000 == 0 {
		return fmt.Sprintf("%d.%09d", sec, ps/1000)
	}
	return fmt.Sprintf("%d.%012d", sec, ps)
}
