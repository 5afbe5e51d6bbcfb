package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/rocekit/rocekit/roce"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/workload"
)

const workloadUsage = `usage: rocekit workload [flags] FILE|SPEC

Simulate a training step: compute stretches and collectives on two streams,
as a framework overlaps them over one NCCL communicator, with every
collective's duration simulated as rocekit coll simulates it (real frames,
real data, checked) on the fabric of the flags. The workload is a JSON file

  {"steps": 1, "ranks": 8, "items": [
    {"compute_us": 500},
    {"op": "allreduce", "bytes": "25MB", "algo": "auto", "wait": false},
    {"barrier": true},
    {"compute_us": 100}]}

(a collective is issued when the compute before it is done; "wait": true
makes the compute wait for it; a barrier waits for every collective), or
PyTorch DDP's step generated from a spec:

  ddp:params=1.3e9,dtype=bf16,bucket=25MiB,fwd_us=30000,bwd_us=60000,opt_us=5000

(keys params, dtype, bucket, fwd_us, bwd_us, opt_us, algo, steps; buckets of
gradients in reverse order, the backward split over them by size, each
all-reduced as soon as it is ready). Each distinct collective is simulated
once, alone on the idle fabric: the communication stream runs one at a time.

Prints the collectives of a step (times in us from the step's start: issued,
start, end; busbw in GB/s as nccl-tests; #wrong) and per step the step time,
the compute, the communication, and the exposed communication (the time the
compute waits on the network) in us and as a share of the step time.

Exit status: 0 when every collective completed with every result right, 1
otherwise, 2 for usage errors.

flags:
`

func init() {
	register("workload", "simulate a training step of compute and collectives (DDP, FSDP): step time, exposed communication", runWorkload)
}

func runWorkload(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("workload", flag.ContinueOnError)
	ranks := fs.Int("ranks", 0, "ranks (`N`), --gpus per host (default: the file's \"ranks\", else 8)")
	fab := addCollFabric(fs)
	jsonOut := fs.Bool("json", false, "print one JSON object instead of the tables")
	rest, code, ok := parseArgs(fs, workloadUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		if len(rest) == 0 {
			return usageError(stderr, "workload", "no workload: give a FILE or a ddp: SPEC")
		}
		return usageError(stderr, "workload", "unexpected argument %q", rest[1])
	}
	w, err := workload.Open(rest[0])
	if err != nil {
		return usageError(stderr, "workload", "%s", strings.TrimPrefix(err.Error(), "workload: "))
	}
	ranksSet := false
	fs.Visit(func(f *flag.Flag) { ranksSet = ranksSet || f.Name == "ranks" })
	switch {
	case ranksSet:
		if *ranks < 2 || *ranks > 4096 {
			return usageError(stderr, "workload", "--ranks %d: want 2 to 4096", *ranks)
		}
		w.Ranks = *ranks
	case w.Ranks == 0:
		w.Ranks = 8
	}
	sc, node, err := fab.build(w.Ranks)
	if err != nil {
		return usageError(stderr, "workload", "%v", err)
	}
	if err := w.Check(w.Ranks); err != nil {
		return usageError(stderr, "workload", "%v", err)
	}
	start := time.Now()
	res, err := workload.Run(w, sc, node, roce.Options{})
	if err != nil {
		return usageError(stderr, "workload", "%s", strings.TrimPrefix(err.Error(), "workload: "))
	}
	wall := time.Since(start)
	var events uint64
	for _, c := range res.Colls {
		r := res.Runs[c]
		events += r.Summary.Events
		if !r.Complete {
			fmt.Fprintf(stderr, "rocekit workload: %s: the collective did not complete: %d of %d work requests failed (%s)\n",
				c, r.Summary.Failed(), r.Summary.WRTotal, failedStatuses(r.Summary.WRCompleted))
		}
	}
	if *jsonOut {
		b, _ := json.Marshal(workloadJSON(rest[0], w, res))
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		fmt.Fprintf(stdout, "# rocekit workload: %s, %s %s, simulated time\n", rest[0], fab.placed(w.Ranks), fab.where(sc))
		if err := workloadTables(stdout, w, res); err != nil {
			fmt.Fprintf(stderr, "rocekit workload: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "# %d distinct collectives simulated, wall %.3f s, %d events\n", len(res.Colls), wall.Seconds(), events)
	}
	if n := res.Wrong(); n > 0 {
		fmt.Fprintf(stderr, "rocekit workload: %d wrong elements\n", n)
		return 1
	}
	if !res.Complete() {
		return 1
	}
	return 0
}

// usFmt formats a time in microseconds to the nanosecond.
func usFmt(t sim.Time) string { return strconv.FormatFloat(t.Microseconds(), 'f', 3, 64) }

// algoRan is the algorithm a collective ran: "sharp", or Auto resolved.
func algoRan(r *roce.CollResult) string {
	if r.Sharp {
		return "sharp"
	}
	return r.Algo.String()
}

// workloadTables prints the collectives of a step and the steps, in
// columns of fixed width as nccl-tests prints its table.
func workloadTables(out io.Writer, w *workload.Workload, res *workload.Result) error {
	ew := &errWriter{w: out}
	const (
		collRow  = "%6s %13s %13s %9s %13s %13s %13s %13s %8s %7s\n"
		stepRow  = "%6s %13s %13s %13s %13s %13s %8s\n"
		na       = "N/A"
		noTiming = "# no step time: a collective did not complete\n"
	)
	ew.printf("# collectives of a step (times from the step's start)\n")
	ew.printf("#%5s"+collRow[3:], "item", "op", "bytes", "algo", "issued", "start", "end", "duration", "busbw", "#wrong")
	ew.printf("#%5s"+collRow[3:], "", "", "(B)", "", "(us)", "(us)", "(us)", "(us)", "(GB/s)", "")
	tl := res.Timeline
	if tl == nil {
		// No timeline: each distinct collective once, with what is known.
		for _, c := range res.Colls {
			r := res.Runs[c]
			d, bw := na, na
			if r.Complete {
				d, bw = usFmt(r.Time), strconv.FormatFloat(r.BusBW, 'f', 2, 64)
			}
			ew.printf(collRow, "-", c.Op, strconv.FormatInt(c.Bytes, 10), algoRan(r), na, na, na, d, bw, strconv.Itoa(r.Wrong))
		}
		ew.printf(noTiming)
		return ew.err
	}
	for _, ct := range tl.Colls {
		c := w.Items[ct.Item].Coll
		r := res.Runs[c]
		ew.printf(collRow, strconv.Itoa(ct.Item), c.Op, strconv.FormatInt(c.Bytes, 10), algoRan(r), usFmt(ct.Issued),
			usFmt(ct.Start), usFmt(ct.End), usFmt(ct.End-ct.Start), strconv.FormatFloat(r.BusBW, 'f', 2, 64), strconv.Itoa(r.Wrong))
	}
	ew.printf("# steps\n")
	ew.printf("#%5s"+stepRow[3:], "step", "start", "step time", "compute", "comm", "exposed", "exposed")
	ew.printf("#%5s"+stepRow[3:], "", "(us)", "(us)", "(us)", "(us)", "(us)", "(%)")
	for k, st := range tl.Steps {
		ew.printf(stepRow, strconv.Itoa(k+1), usFmt(st.Start), usFmt(st.Time), usFmt(st.Compute), usFmt(st.Comm),
			usFmt(st.Exposed), strconv.FormatFloat(100*st.ExposedShare(), 'f', 2, 64))
	}
	st := tl.Steps[0]
	ew.printf("# %d steps in %s us; a step's communication hidden behind compute: %s of %s us\n",
		len(tl.Steps), usFmt(tl.Total), usFmt(st.Comm-st.Exposed), usFmt(st.Comm))
	return ew.err
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}

// workloadJSON is the --json object: times in picoseconds (exact) and
// microseconds.
func workloadJSON(name string, w *workload.Workload, res *workload.Result) map[string]any {
	us := func(t sim.Time) float64 { return t.Microseconds() }
	m := map[string]any{"workload": name, "ranks": w.Ranks, "complete": res.Complete(), "wrong": res.Wrong()}
	var colls []map[string]any
	if tl := res.Timeline; tl != nil {
		for _, ct := range tl.Colls {
			c := w.Items[ct.Item].Coll
			r := res.Runs[c]
			colls = append(colls, map[string]any{"item": ct.Item, "op": c.Op.String(), "bytes": c.Bytes, "algo": algoRan(r),
				"type": c.DType.String(), "wait": w.Items[ct.Item].Wait,
				"issued_ps": ct.Issued, "start_ps": ct.Start, "end_ps": ct.End, "duration_ps": ct.End - ct.Start,
				"issued_us": us(ct.Issued), "start_us": us(ct.Start), "end_us": us(ct.End), "duration_us": us(ct.End - ct.Start),
				"busbw_gbps": r.BusBW, "wrong": r.Wrong})
		}
		var steps []map[string]any
		for k, st := range tl.Steps {
			steps = append(steps, map[string]any{"step": k + 1, "start_ps": st.Start, "time_ps": st.Time, "compute_ps": st.Compute,
				"comm_ps": st.Comm, "exposed_ps": st.Exposed, "time_us": us(st.Time), "compute_us": us(st.Compute),
				"comm_us": us(st.Comm), "exposed_us": us(st.Exposed), "exposed_share": st.ExposedShare()})
		}
		m["steps"], m["total_ps"] = steps, tl.Total
	} else {
		for _, c := range res.Colls {
			r := res.Runs[c]
			colls = append(colls, map[string]any{"op": c.Op.String(), "bytes": c.Bytes, "algo": algoRan(r), "type": c.DType.String(),
				"complete": r.Complete, "wrong": r.Wrong})
		}
	}
	m["collectives"] = colls
	return m
}
