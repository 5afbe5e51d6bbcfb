package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/roce"
)

const simUsage = `usage: rocekit sim [flags]

Simulate RoCEv2 RC traffic: hosts whose NICs run RC queue pairs exchange
real RoCEv2 frames (with ICRC) over simulated links with loss, burst loss,
reordering, duplication, corruption and dead intervals, optionally through a
switch with drop-tail queues, ECN marking and PFC. Work requests are generated
lazily and every payload is checked where it lands.

With no flags: two hosts on a 100 Gb/s link with 1 us propagation delay and
1% loss each way, one QP streaming 1 MiB RDMA WRITEs at 4 KiB MTU. Flags
change the default scenario, or the one given with --scenario (a JSON file;
--print-scenario shows the format). --trace writes every frame on every link
to a capture that rocekit decode and tshark read.

Exit status: 0 when the run finished (whatever the completion statuses),
1 when data integrity or completion order failed or the trace could not be
written, or with --strict when a work request did not complete with
SUCCESS, 2 for usage and scenario errors.

flags:
`

func init() {
	register("sim", "simulate RC queue pairs over a lossy network, with real frames (pcap trace, summary)", runSim)
}

func runSim(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sim", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, simUsage)
		fs.PrintDefaults()
	}
	scenario := fs.String("scenario", "", "scenario JSON `file` (default: the built-in two-host scenario)")
	loss := fs.Float64("loss", 0, "loss probability `p` per frame on every link, both directions (replaces the scenario's)")
	messages := fs.Int64("messages", 0, "work requests per QP (`n`)")
	size := fs.Int("size", 0, "message size in `bytes`")
	op := fs.String("op", "", "operation: write, send, read, atomic, fetch_add, cmp_swap or mix")
	mtu := fs.Int("mtu", 0, "path MTU: 256, 512, 1024, 2048 or 4096")
	seed := fs.Uint64("seed", 0, "random seed (faults and work)")
	qps := fs.Int("qps", 0, "connections (QP pairs) per scenario QP entry")
	bandwidth := fs.Float64("bandwidth", 0, "rate of every link in `Gb/s`")
	delay := fs.Float64("delay", 0, "propagation delay of every link in `ns`")
	outstanding := fs.Int("outstanding", 0, "work requests outstanding per QP at most")
	stop := fs.Duration("stop", 0, "stop at this simulated `time` (e.g. 10ms); default: when all work is done")
	trace := fs.String("trace", "", "write every frame on every link to `file` (pcapng if it ends in .pcapng, else pcap)")
	snaplen := fs.Int("snaplen", 0, "with --trace, keep at most `n` bytes of each frame (0: whole frames)")
	jsonOut := fs.Bool("json", false, "print the summary as one JSON object")
	printScenario := fs.Bool("print-scenario", false, "print the scenario (after flags) as JSON and exit")
	strict := fs.Bool("strict", false, "exit 1 unless every work request completed with SUCCESS")
	rest, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if len(rest) > 0 {
		fmt.Fprintf(stderr, "rocekit sim: unexpected argument %q (the scenario file goes after --scenario)\n", rest[0])
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var sc *roce.Scenario
	if *scenario != "" {
		if sc, err = roce.LoadScenario(*scenario); err != nil {
			fmt.Fprintf(stderr, "rocekit sim: %v\n", err)
			return 2
		}
	} else {
		sc = roce.DefaultScenario()
	}
	if err := applySimFlags(sc, set, simFlags{
		loss: *loss, messages: *messages, size: *size, op: *op, mtu: *mtu, seed: *seed, qps: *qps,
		bandwidth: *bandwidth, delay: *delay, outstanding: *outstanding, stop: *stop,
	}); err != nil {
		fmt.Fprintf(stderr, "rocekit sim: %v\n", err)
		return 2
	}
	if err := sc.Validate(); err != nil {
		fmt.Fprintf(stderr, "rocekit sim: %v\n", err)
		return 2
	}
	if *printScenario {
		stdout.Write(sc.MarshalIndent())
		return 0
	}
	if *snaplen < 0 {
		fmt.Fprintln(stderr, "rocekit sim: --snaplen must be 0 or more")
		return 2
	}

	opt := roce.Options{Snaplen: *snaplen}
	var traceFile *os.File
	if *trace != "" {
		if traceFile, err = os.Create(*trace); err != nil {
			fmt.Fprintf(stderr, "rocekit sim: %v\n", err)
			return 1
		}
		defer traceFile.Close()
		opt.Trace = traceFile
		opt.TraceFormat = pcap.FormatPcap
		if strings.HasSuffix(strings.ToLower(*trace), ".pcapng") {
			opt.TraceFormat = pcap.FormatPcapng
		}
	}
	bar := newProgressBar(stderr)
	if bar != nil {
		opt.Progress = bar.update
	}
	s, err := roce.New(sc, opt)
	if err != nil {
		fmt.Fprintf(stderr, "rocekit sim: %v\n", err)
		return 2
	}
	sum, runErr := s.Run()
	status := 0
	if runErr != nil {
		fmt.Fprintf(stderr, "rocekit sim: trace %s: %v\n", *trace, runErr)
		status = 1
	}
	if traceFile != nil {
		if err := traceFile.Close(); err != nil && runErr == nil {
			fmt.Fprintf(stderr, "rocekit sim: trace %s: %v\n", *trace, err)
			status = 1
		}
	}
	if *jsonOut {
		stdout.Write(sum.JSON())
	} else {
		sum.WriteText(stdout)
	}
	if !sum.DataIntegrityOK || !sum.CompletionOrderOK {
		fmt.Fprintln(stderr, "rocekit sim: data integrity or completion order check failed")
		status = 1
	}
	if *strict && !sum.AllSucceeded() {
		fmt.Fprintf(stderr, "rocekit sim: --strict: %d of %d work requests did not complete with SUCCESS\n",
			sum.WRTotal-int64(sum.WRCompleted["SUCCESS"]), sum.WRTotal)
		status = 1
	}
	return status
}

type simFlags struct {
	loss             float64
	messages         int64
	size, mtu        int
	op               string
	seed             uint64
	qps, outstanding int
	bandwidth, delay float64
	stop             time.Duration
}

// applySimFlags changes the scenario as the flags that were given say.
func applySimFlags(sc *roce.Scenario, set map[string]bool, f simFlags) error {
	if set["loss"] {
		if !(f.loss >= 0 && f.loss <= 1) {
			return fmt.Errorf("--loss %v: want a probability in [0, 1]", f.loss)
		}
		for i := range sc.Links {
			l := &sc.Links[i]
			for _, p := range []**roce.FaultSpec{&l.Faults, &l.AToB, &l.BToA} {
				if *p == nil {
					if p != &l.Faults {
						continue
					}
					*p = &roce.FaultSpec{}
				}
				(*p).Loss = f.loss
			}
		}
	}
	if set["bandwidth"] {
		for i := range sc.Links {
			sc.Links[i].BandwidthGbps = f.bandwidth
		}
	}
	if set["delay"] {
		for i := range sc.Links {
			sc.Links[i].DelayNS = f.delay
		}
	}
	if set["seed"] {
		sc.Seed = f.seed
	}
	if set["stop"] {
		if f.stop < 0 {
			return fmt.Errorf("--stop %v: negative", f.stop)
		}
		sc.StopNS = float64(f.stop.Nanoseconds())
	}
	for i := range sc.QPs {
		q := &sc.QPs[i]
		w := &q.Work
		if set["messages"] {
			if f.messages < 0 {
				return fmt.Errorf("--messages %d: negative", f.messages)
			}
			w.Count = f.messages
		}
		if (set["size"] || set["op"]) && len(w.WRs) > 0 {
			return fmt.Errorf("--size and --op do not apply to qps[%d], whose work is an explicit wrs list", i)
		}
		if set["size"] {
			w.Size = f.size
			if w.SizeMax < w.Size {
				w.SizeMax = 0
			}
		}
		if set["op"] {
			w.Op = f.op
			if f.op != "mix" {
				w.Mix = nil
			}
		}
		if set["mtu"] {
			q.MTU = f.mtu
		}
		if set["qps"] {
			if f.qps < 1 {
				return fmt.Errorf("--qps %d: want 1 or more", f.qps)
			}
			q.Count = f.qps
		}
		if set["outstanding"] {
			if f.outstanding < 1 {
				return fmt.Errorf("--outstanding %d: want 1 or more", f.outstanding)
			}
			q.Outstanding = f.outstanding
		}
	}
	return nil
}

// progressBar draws a progress line on a terminal's standard error during
// long runs: nothing in the first half second, then at most ten updates a
// second.
type progressBar struct {
	w     io.Writer
	start time.Time
	last  time.Time
	shown bool
}

// progressDelay is how long a run goes before its bar shows (tests set it
// to 0).
var progressDelay = 500 * time.Millisecond

// newProgressBar returns a bar if stderr is a terminal, else nil.
func newProgressBar(stderr io.Writer) *progressBar {
	f, ok := stderr.(*os.File)
	if !ok {
		return nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &progressBar{w: stderr, start: time.Now()}
}

func (b *progressBar) update(p roce.Progress) {
	now := time.Now()
	if p.Done {
		if b.shown {
			fmt.Fprint(b.w, "\r\033[K")
		}
		return
	}
	if now.Sub(b.start) < progressDelay || now.Sub(b.last) < 100*time.Millisecond {
		return
	}
	b.last, b.shown = now, true
	const width = 30
	frac := 0.0
	if p.Total > 0 {
		frac = float64(p.Completed) / float64(p.Total)
	}
	n := int(frac * width)
	fmt.Fprintf(b.w, "\r[%s%s] %5.1f%%  %d/%d WRs  sim %v  %.1fs",
		strings.Repeat("=", n), strings.Repeat(" ", width-n), 100*frac, p.Completed, p.Total,
		p.SimTime, now.Sub(b.start).Seconds())
}
