package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/roce"
	"github.com/rocekit/rocekit/sim"
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
--print-scenario shows the format); the defaults shown below are the
built-in scenario's, and a flag not given keeps the scenario's value.
--trace writes every frame on every link to a capture that rocekit decode
and tshark read.

Fabrics: --topology (fat-tree:k=8, leaf-spine:leaves=4,spines=2,hosts=8,
dragonfly:a=4,p=2,h=2, star:hosts=3, or an HPCC ns-3 or rocekit JSON
topology file) with --traffic (permutation:size=10MB, incast:n=15,size=2MB,
all-to-all:size=1MB, poisson:load=0.3,cdf=websearch,duration=10ms, or an
HPCC ns-3 flow file; default permutation:size=1MB) runs one RC connection
of RDMA WRITEs per flow over switches with per-priority queues, a shared
buffer, RED ECN marking, PFC at every hop (RoCE in lossless priority 3) and
ECMP on the RoCEv2 UDP source port. --fct writes each flow's completion
time, --samples queue lengths and flow rates over time; --trace records the
links --trace-links names (default: the first flow's two host links).

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
	// The defaults shown are the built-in scenario's; a flag that is not
	// given leaves the scenario's value as it is.
	def := roce.DefaultScenario()
	dq := def.QPs[0]
	defLoss := 0.0
	if f := def.Links[0].Faults; f != nil {
		defLoss = f.Loss
	}
	scenario := fs.String("scenario", "", "scenario JSON `file` (default: the built-in two-host scenario)")
	loss := fs.Float64("loss", defLoss, "loss probability `p` per frame on every link, both directions (replaces the scenario's)")
	messages := fs.Int64("messages", dq.Work.Count, "work requests per QP (`n`)")
	size := fs.Int("size", dq.Work.Size, "message size in `bytes`")
	op := fs.String("op", dq.Work.Op, "operation: write, send, read, atomic, fetch_add, cmp_swap or mix")
	mtu := fs.Int("mtu", dq.MTU, "path MTU: 256, 512, 1024, 2048 or 4096")
	seed := fs.Uint64("seed", def.Seed, "random seed (faults and work)")
	qps := fs.Int("qps", max(dq.Count, 1), "connections (QP pairs) per scenario QP entry")
	bandwidth := fs.Float64("bandwidth", def.Links[0].BandwidthGbps, "rate of every link in `Gb/s`")
	delay := fs.Float64("delay", def.Links[0].DelayNS, "propagation delay of every link in `ns`")
	outstanding := fs.Int("outstanding", dq.Outstanding, "work requests outstanding per QP at most")
	stop := fs.Duration("stop", time.Duration(def.StopNS), "stop at this simulated `time` (e.g. 10ms); 0: when all work is done")
	trace := fs.String("trace", "", "write every frame on every link to `file` (pcapng if it ends in .pcapng, else pcap; default: no trace)")
	snaplen := fs.Int("snaplen", 0, "with --trace, keep at most `n` bytes of each frame (0: whole frames)")
	jsonOut := fs.Bool("json", false, "print the summary as one JSON object")
	printScenario := fs.Bool("print-scenario", false, "print the scenario (after flags) as JSON and exit")
	strict := fs.Bool("strict", false, "exit 1 unless every work request completed with SUCCESS")
	ccFlag := fs.String("cc", "none", "congestion control `algorithm[:preset]`: none, dcqcn or hpcc, e.g. dcqcn:ns3-mellanox (presets: dcqcn paper, ns3-mellanox, htsim; hpcc ns3, paper)")
	var ccParams paramList
	fs.Var(&ccParams, "cc-param", "a congestion-control parameter, repeatable (`KEY=VALUE`; keys: go doc github.com/rocekit/rocekit/cc DCQCNParams, HPCCParams; default: the preset's)")
	topology := fs.String("topology", "", "run a fabric: a topology `spec` or file (see above; default: no fabric)")
	trafficSpec := fs.String("traffic", "", "the fabric's flows: a `pattern` or HPCC flow file (default permutation:size=1MB)")
	hostGbps := fs.Float64("host-gbps", roce.DefaultHostGbps, "fabric: rate of host links in `Gb/s`")
	fabricGbps := fs.Float64("fabric-gbps", 0, "fabric: rate of switch-to-switch links in `Gb/s` (0: --host-gbps)")
	fctFile := fs.String("fct", "", "fabric: write every flow's completion time to this CSV `file` (default: none)")
	samples := fs.String("samples", "", "fabric: write PREFIX.queues.csv and PREFIX.rates.csv every --sample-interval (`PREFIX`; default: no samples)")
	sampleEvery := fs.Duration("sample-interval", 10*time.Microsecond, "fabric: simulated `time` between samples")
	traceLinks := fs.String("trace-links", "", "fabric: links --trace records: all, hosts, or node and a--b link `names`, comma-separated (default: the first flow's host links)")
	rest, code, ok := parseArgs(fs, simUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(stderr, "sim", "unexpected argument %q (the scenario file goes after --scenario)", rest[0])
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })

	var sc *roce.Scenario
	var err error
	switch {
	case *scenario != "":
		if sc, err = roce.LoadScenario(*scenario); err != nil {
			return usageError(stderr, "sim", "%v", err)
		}
	case set["topology"]:
		sc = &roce.Scenario{Seed: def.Seed, Topology: *topology, Traffic: roce.DefaultTraffic}
	default:
		sc = roce.DefaultScenario()
	}
	if set["topology"] || sc.IsFabric() {
		err = applyFabricFlags(sc, set, fabricFlags{
			topology: *topology, traffic: *trafficSpec, hostGbps: *hostGbps, fabricGbps: *fabricGbps,
			loss: *loss, op: *op, mtu: *mtu, seed: *seed, delay: *delay, outstanding: *outstanding, stop: *stop,
		})
	} else {
		for _, f := range []string{"traffic", "host-gbps", "fabric-gbps", "fct", "samples", "sample-interval", "trace-links"} {
			if set[f] {
				return usageError(stderr, "sim", "--%s is for fabric runs: give --topology, or a scenario with a topology", f)
			}
		}
		err = applySimFlags(sc, set, simFlags{
			loss: *loss, messages: *messages, size: *size, op: *op, mtu: *mtu, seed: *seed, qps: *qps,
			bandwidth: *bandwidth, delay: *delay, outstanding: *outstanding, stop: *stop,
		})
	}
	if err != nil {
		return usageError(stderr, "sim", "%v", err)
	}
	if set["cc"] || set["cc-param"] {
		if err := applyCCFlags(sc, set, *ccFlag, ccParams); err != nil {
			return usageError(stderr, "sim", "%v", err)
		}
	}
	if err := sc.Validate(); err != nil {
		return usageError(stderr, "sim", "%v", flagValueError(err, fs, set))
	}
	if *printScenario {
		stdout.Write(sc.MarshalIndent())
		return 0
	}
	if *snaplen < 0 {
		return usageError(stderr, "sim", "--snaplen %d: want 0 or more", *snaplen)
	}
	if me := (*roce.MemoryError)(nil); errors.As(sc.CheckMemory(0), &me) {
		fmt.Fprintf(stderr, "rocekit sim: %s; lower %s\n", me.Need(), memoryHint(me.Estimate.Key, set, *scenario))
		return 2
	}

	opt := roce.Options{Snaplen: *snaplen, TraceLinks: *traceLinks}
	if set["sample-interval"] && *sampleEvery <= 0 {
		return usageError(stderr, "sim", "--sample-interval %v: want more than 0", *sampleEvery)
	}
	if *samples != "" {
		opt.SampleInterval = sim.FromDuration(*sampleEvery)
		for _, x := range []struct {
			ext string
			w   *io.Writer
		}{{".queues.csv", &opt.SampleQueues}, {".rates.csv", &opt.SampleRates}} {
			f, err := os.Create(*samples + x.ext)
			if err != nil {
				fmt.Fprintf(stderr, "rocekit sim: %v\n", err)
				return 1
			}
			defer f.Close()
			bw := bufio.NewWriterSize(f, 1<<16)
			defer bw.Flush()
			*x.w = bw
		}
	}
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
		return usageError(stderr, "sim", "%v", err)
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
	if *fctFile != "" {
		if err := writeFCT(*fctFile, s.Flows()); err != nil {
			fmt.Fprintf(stderr, "rocekit sim: --fct: %v\n", err)
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

type fabricFlags struct {
	topology, traffic, op string
	hostGbps, fabricGbps  float64
	loss, delay           float64
	mtu, outstanding      int
	seed                  uint64
	stop                  time.Duration
}

// applyFabricFlags changes a fabric scenario as the flags that were given
// say; the flags about hosts, links and QPs of the other kind of scenario
// are refused.
func applyFabricFlags(sc *roce.Scenario, set map[string]bool, f fabricFlags) error {
	for _, name := range []string{"messages", "size", "qps", "bandwidth"} {
		if set[name] {
			return fmt.Errorf("--%s does not apply to a fabric run: its flows come from --traffic and its rates from --host-gbps and --fabric-gbps", name)
		}
	}
	if set["topology"] {
		sc.Topology = f.topology
	}
	if set["traffic"] {
		sc.Traffic = f.traffic
	}
	if set["host-gbps"] {
		if !(f.hostGbps > 0) {
			return fmt.Errorf("--host-gbps %v: want more than 0", f.hostGbps)
		}
		sc.HostGbps = f.hostGbps
	}
	if set["fabric-gbps"] {
		if !(f.fabricGbps > 0) {
			return fmt.Errorf("--fabric-gbps %v: want more than 0", f.fabricGbps)
		}
		sc.FabricGbps = f.fabricGbps
	}
	if set["delay"] {
		d := f.delay
		sc.DelayNS = &d
	}
	if err := applyRunFlags(sc, set, f.seed, f.stop); err != nil {
		return err
	}
	if set["op"] || set["mtu"] || set["outstanding"] {
		if sc.Flow == nil {
			sc.Flow = &roce.FlowSpec{}
		}
		if set["op"] {
			sc.Flow.Op = f.op
		}
		if set["mtu"] {
			sc.Flow.MTU = f.mtu
		}
		if set["outstanding"] {
			if f.outstanding < 1 {
				return fmt.Errorf("--outstanding %d: want 1 or more", f.outstanding)
			}
			sc.Flow.Outstanding = f.outstanding
		}
	}
	if set["loss"] {
		if sc.Fabric == nil {
			sc.Fabric = &roce.FabricSpec{}
		}
		if sc.Fabric.LinkFaults == nil {
			sc.Fabric.LinkFaults = &roce.FaultSpec{}
		}
		sc.Fabric.LinkFaults.Loss = f.loss
	}
	return nil
}

// paramList is a repeatable KEY=VALUE flag.
type paramList []string

func (p *paramList) String() string { return strings.Join(*p, " ") }

func (p *paramList) Set(v string) error {
	if k, _, ok := strings.Cut(v, "="); !ok || k == "" {
		return fmt.Errorf("%q is not KEY=VALUE", v)
	}
	*p = append(*p, v)
	return nil
}

// applyCCFlags sets the scenario's congestion control from --cc and
// --cc-param.
func applyCCFlags(sc *roce.Scenario, set map[string]bool, algo string, params paramList) error {
	if set["cc"] {
		name, preset, _ := strings.Cut(algo, ":")
		sc.CC = &roce.CCSpec{Algorithm: name, Preset: preset}
		if name == "none" && preset == "" {
			sc.CC = nil
		}
	}
	if len(params) > 0 {
		if sc.CC == nil {
			return fmt.Errorf("--cc-param needs --cc dcqcn or hpcc (or a scenario with cc)")
		}
		if sc.CC.Params == nil {
			sc.CC.Params = map[string]string{}
		}
		for _, kv := range params {
			k, v, _ := strings.Cut(kv, "=")
			sc.CC.Params[k] = v
		}
	}
	return nil
}

// applyRunFlags sets what --seed and --stop give, for either kind of
// scenario.
func applyRunFlags(sc *roce.Scenario, set map[string]bool, seed uint64, stop time.Duration) error {
	if set["seed"] {
		sc.Seed = seed
	}
	if set["stop"] {
		if stop < 0 {
			return fmt.Errorf("--stop %v: negative", stop)
		}
		sc.StopNS = float64(stop.Nanoseconds())
	}
	return nil
}

// writeFCT writes the flows' completion times as CSV.
func writeFCT(name string, flows []roce.FlowResult) error {
	f, err := os.Create(name)
	if err != nil {
		return err
	}
	b := append([]byte(roce.FCTHeader), '\n')
	for _, r := range flows {
		b = r.AppendCSV(b)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
	if err := applyRunFlags(sc, set, f.seed, f.stop); err != nil {
		return err
	}
	for i := range sc.QPs {
		q := &sc.QPs[i]
		w := &q.Work
		if set["messages"] {
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

// memoryHint names what to lower for a scenario that needs too much memory:
// the flag that sets the value at JSON key path key (e.g. qps[0].count) if
// it was given or there is no scenario file, else the key in the file.
func memoryHint(key string, set map[string]bool, file string) string {
	if f := simFlagFields[indices.ReplaceAllString(key, "[]")]; f != "" && (set[f] || file == "") {
		return flagName(f)
	}
	if file != "" {
		return key + " in " + file
	}
	return key
}

// simFlagFields names the flag that sets each scenario value (indices
// left out), for Validate's errors about values a flag gave.
var simFlagFields = map[string]string{
	"links[].bandwidth_gbps": "bandwidth", "links[].delay_ns": "delay",
	"links[].faults.loss": "loss", "links[].a_to_b.loss": "loss", "links[].b_to_a.loss": "loss",
	"stop_ns": "stop", "qps[].count": "qps", "topology": "topology", "traffic": "traffic",
	"host_gbps": "host-gbps", "fabric_gbps": "fabric-gbps", "delay_ns": "delay", "flow.mtu": "mtu",
	"flow.op": "op", "flow.outstanding": "outstanding", "fabric.link_faults.loss": "loss",
	"cc.algorithm": "cc", "cc.preset": "cc", "qps[].mtu": "mtu", "qps[].outstanding": "outstanding",
	"qps[].work.count": "messages", "qps[].work.size": "size", "qps[].work.op": "op",
}

var indices = regexp.MustCompile(`\[\d+\]`)

// flagValueError rewrites the scenario's error about a value that a flag
// given on the command line set, to name the flag as written: --bandwidth
// 0, not links[0].bandwidth_gbps.
func flagValueError(err error, fs *flag.FlagSet, set map[string]bool) error {
	var ve *roce.ValueError
	if !errors.As(err, &ve) {
		return err
	}
	name := simFlagFields[indices.ReplaceAllString(ve.Path, "[]")]
	if !set[name] {
		return err
	}
	v := fs.Lookup(name).Value.String()
	msg := strings.TrimPrefix(strings.TrimPrefix(ve.Msg, v+": "), strconv.Quote(v)+": ")
	return fmt.Errorf("%s %s: %s", flagName(name), v, msg)
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

// isTerminal reports whether w is a terminal: progress bars draw only there.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// newProgressBar returns a bar if stderr is a terminal, else nil.
func newProgressBar(stderr io.Writer) *progressBar {
	if !isTerminal(stderr) {
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
