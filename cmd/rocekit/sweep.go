package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rocekit/rocekit/sweep"
)

const sweepUsage = `usage: rocekit sweep run FILE [-j N] [-o OUT.csv] [--shard I/N | --shards N]
       rocekit sweep merge FILE [-o OUT.csv] SHARD.csv...

Run a parameter sweep of the simulator: the sweep file (JSON, or YAML if
its name ends in .yaml or .yml) names a base scenario (a scenario file, an
inline scenario, or the flags of rocekit sim), a grid of scenario key paths
and their values (lists and ranges, every combination or the lists side by
side) and the seeds of each point. Each
point runs in this process and gives one CSV row: the point's number, its
parameters and the figures of its summary (rocekit sim --json keys). The
format: go doc github.com/rocekit/rocekit/sweep.

run writes the rows to OUT.csv as points finish, N at a time. Points that
OUT.csv has already are skipped, so a run stopped by a crash or Ctrl-C (which
lets the running points finish and write their rows) resumes where it was.
--shard I/N runs every point whose number is I modulo N; under a SLURM job
array (SLURM_ARRAY_TASK_ID, SLURM_ARRAY_TASK_COUNT) or a Kubernetes Indexed
Job (JOB_COMPLETION_INDEX, with --shards N) the shard comes from the
environment. merge joins the shards' files, in point order, and names the
points none of them has.

Exit status: 0 when every point has its row, 1 when a point failed or is
missing or a file could not be written, 2 for usage and sweep file errors,
130 when interrupted.

flags of run:
`

func init() {
	register("sweep", "run a parameter sweep of the simulator on this machine or as a job array; merge the shards", runSweep)
}

func runSweep(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "run":
			return runSweepRun(args[1:], stdout, stderr)
		case "merge":
			return runSweepMerge(args[1:], stdout, stderr)
		case "-h", "--help", "-help", "help":
			fs, _, _ := sweepRunFlags()
			printUsage(stdout, fs, sweepUsage)
			return 0
		}
		return usageError(stderr, "sweep", "unknown subcommand %q: want run or merge", args[0])
	}
	return usageError(stderr, "sweep", "want a subcommand: run or merge")
}

type sweepRunOpts struct {
	jobs   *int
	out    *string
	shard  *string
	shards *int
}

func sweepRunFlags() (*flag.FlagSet, sweepRunOpts, *bool) {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	o := sweepRunOpts{
		jobs:   fs.Int("j", 1, "points run at once (`N`; e.g. the cores)"),
		out:    fs.String("o", "", "results CSV `file` (default: the sweep file's name with .csv)"),
		shard:  fs.String("shard", "", "run shard `I/N` only: the points whose number is I modulo N (default: from SLURM_ARRAY_TASK_ID or JOB_COMPLETION_INDEX, else all)"),
		shards: fs.Int("shards", 0, "the number of shards of a Kubernetes Indexed Job (its completions), with JOB_COMPLETION_INDEX"),
	}
	quiet := fs.Bool("q", false, "no progress bar")
	return fs, o, quiet
}

// loadSweep reads a sweep file; its "sim" key runs rocekit sim's own flag
// handling.
func loadSweep(name string) (*sweep.File, error) {
	return sweep.Load(name, sweep.Options{SimFlags: func(args []string) ([]byte, error) {
		var out, errb bytes.Buffer
		if code := runSim(append(append([]string{}, args...), "--print-scenario"), &out, &errb); code != 0 {
			msg, _, _ := strings.Cut(errb.String(), "\n")
			return nil, fmt.Errorf("%s", strings.TrimPrefix(msg, "rocekit sim: "))
		}
		return out.Bytes(), nil
	}, Coll: collFlags})
}

// collFlags runs rocekit coll on the flags in the JSON object flags (a
// sweep point): each key a flag name, each value its value (true alone for
// a boolean flag); with run false it only checks them.
func collFlags(flags []byte, run bool) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(flags))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var args []string
	for _, k := range keys {
		name := "--" + strings.TrimLeft(k, "-")
		switch v := m[k].(type) {
		case bool:
			args = append(args, fmt.Sprintf("%s=%t", name, v))
		case string:
			args = append(args, name+"="+v)
		case json.Number:
			args = append(args, name+"="+v.String())
		default:
			return nil, fmt.Errorf("%s: want a string, number or boolean", k)
		}
	}
	var out, errb bytes.Buffer
	if code := collCommand(append(args, "--json"), &out, &errb, !run); code != 0 {
		msg, _, _ := strings.Cut(errb.String(), "\n")
		return nil, fmt.Errorf("%s", strings.TrimPrefix(msg, "rocekit coll: "))
	}
	return out.Bytes(), nil
}

func runSweepRun(args []string, stdout, stderr io.Writer) int {
	fs, o, quiet := sweepRunFlags()
	fs.Init("sweep run", flag.ContinueOnError)
	rest, code, ok := parseArgs(fs, sweepUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) != 1 {
		return usageError(stderr, "sweep", "run wants one sweep file, got %d arguments", len(rest))
	}
	if *o.jobs < 1 {
		return usageError(stderr, "sweep", "-j %d: want 1 or more", *o.jobs)
	}
	if *o.shards < 0 {
		return usageError(stderr, "sweep", "--shards %d: want 1 or more", *o.shards)
	}
	f, err := loadSweep(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "rocekit sweep: %v\n", err)
		return 2
	}
	points := f.Points
	shardNote := ""
	switch {
	case *o.shard != "":
		i, n, err := sweep.ParseShard(*o.shard)
		if err != nil {
			return usageError(stderr, "sweep", "--shard %v", err)
		}
		points, shardNote = sweep.Shard(points, i, n), fmt.Sprintf(" (shard %d/%d)", i, n)
	default:
		i, n, ok, err := sweep.ShardFromEnv(os.Getenv, *o.shards)
		if err != nil {
			return usageError(stderr, "sweep", "%v", err)
		}
		if ok {
			points, shardNote = sweep.Shard(points, i, n), fmt.Sprintf(" (shard %d/%d from the environment)", i, n)
		} else if *o.shards > 0 {
			return usageError(stderr, "sweep", "--shards %d needs JOB_COMPLETION_INDEX (a Kubernetes Indexed Job); elsewhere give --shard I/N", *o.shards)
		}
	}
	out := *o.out
	if out == "" {
		out = strings.TrimSuffix(rest[0], filepath.Ext(rest[0])) + ".csv"
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var bar *sweepBar
	if !*quiet {
		bar = newSweepBar(stderr)
	}
	opt := sweep.RunOptions{Jobs: *o.jobs}
	if bar != nil {
		opt.Progress = bar.update
	}
	res, err := f.Run(ctx, points, out, opt)
	if bar != nil {
		bar.clear()
	}
	if err != nil {
		fmt.Fprintf(stderr, "rocekit sweep: %v\n", err)
		if res == nil {
			return 2
		}
		return 1
	}
	if res.Dropped != "" {
		fmt.Fprintf(stderr, "rocekit sweep: %s: removed a last line without its end (a run stopped while writing it): %q\n", out, res.Dropped)
	}
	for _, e := range res.Errors {
		fmt.Fprintf(stderr, "rocekit sweep: %v\n", e)
	}
	fmt.Fprintf(stderr, "rocekit sweep: %s: %d points%s: %d run now, %d done before, %d failed\n",
		out, len(points), shardNote, res.Done, res.Skipped, len(res.Failed))
	if res.Interrupted {
		fmt.Fprintf(stderr, "rocekit sweep: interrupted: the running points finished; run the same command again to resume\n")
		return 130
	}
	if len(res.Failed) > 0 {
		return 1
	}
	return 0
}

func runSweepMerge(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sweep merge", flag.ContinueOnError)
	out := fs.String("o", "", "merged CSV `file` (default: standard output)")
	rest, code, ok := parseArgs(fs, sweepUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) < 2 {
		return usageError(stderr, "sweep", "merge wants the sweep file and one results file or more")
	}
	f, err := loadSweep(rest[0])
	if err != nil {
		fmt.Fprintf(stderr, "rocekit sweep: %v\n", err)
		return 2
	}
	var buf bytes.Buffer
	missing, err := f.Merge(rest[1:], &buf)
	if err != nil {
		fmt.Fprintf(stderr, "rocekit sweep: %v\n", err)
		return 2
	}
	if *out == "" {
		stdout.Write(buf.Bytes())
	} else if err := writeFileAtomic(*out, buf.Bytes()); err != nil {
		fmt.Fprintf(stderr, "rocekit sweep: %v\n", err)
		return 1
	}
	if len(missing) > 0 {
		fmt.Fprintf(stderr, "rocekit sweep: %d of %d points missing:\n", len(missing), len(f.Points))
		for _, p := range missing {
			fmt.Fprintf(stderr, "  point %d: %s\n", p.Index, p.Label(f.Params))
		}
		return 1
	}
	return 0
}

// writeFileAtomic writes name whole or not at all.
func writeFileAtomic(name string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), name)
}

// sweepBar draws a sweep's progress on a terminal: points done, running
// and failed, and the time left.
type sweepBar struct {
	mu    sync.Mutex
	w     io.Writer
	last  time.Time
	shown bool
}

// newSweepBar returns a bar if stderr is a terminal, else nil.
func newSweepBar(stderr io.Writer) *sweepBar {
	if !isTerminal(stderr) {
		return nil
	}
	return &sweepBar{w: stderr}
}

func (b *sweepBar) update(p sweep.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	if now.Sub(b.last) < 100*time.Millisecond && p.Done+p.Failed < p.Total {
		return
	}
	b.last, b.shown = now, true
	fmt.Fprint(b.w, "\r\033[K"+sweepBarLine(p))
}

// sweepBarLine is the bar's text for p.
func sweepBarLine(p sweep.Progress) string {
	const width = 30
	frac := 1.0
	if p.Total > 0 {
		frac = float64(p.Done+p.Failed) / float64(p.Total)
	}
	n := int(frac * width)
	left := "?"
	if p.Done+p.Failed > 0 {
		left = p.Left.Round(time.Second).String()
	}
	return fmt.Sprintf("[%s%s] %d/%d points, %d running, %d failed, %s left",
		strings.Repeat("=", n), strings.Repeat(" ", width-n), p.Done, p.Total, p.Running, p.Failed, left)
}

func (b *sweepBar) clear() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.shown {
		fmt.Fprint(b.w, "\r\033[K")
	}
}
