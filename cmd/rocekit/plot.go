package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	gplot "gonum.org/v1/plot"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/decode"
	"github.com/rocekit/rocekit/plot"
	"github.com/rocekit/rocekit/roce"
)

const plotUsage = `usage: rocekit plot [flags] INPUT...

Plot a capture, or the outputs of a fabric simulation, as an SVG or PNG
image (by the -o file's extension), or every figure of the inputs on one
self-contained HTML page with a summary table (--html).

Inputs, told apart by their contents:
  capture            any file rocekit decode reads (pcap, pcapng, gzip)
  PREFIX.rates.csv   rocekit sim --samples PREFIX: time_ns,flow,gbps
  PREFIX.queues.csv  rocekit sim --samples PREFIX: time_ns,port,queue_bytes
  FCT CSV            rocekit sim --fct FILE
  JSON summary       rocekit sim --topology ... --json (a file ending .json)
  collective results rocekit coll --json (one object per line)
Several inputs of one kind are overlaid, each run named by its file, or by
NAME when given as NAME=FILE. A capture is plotted alone.

Kinds (--kind; the default is the first one the input gives):
  psn         capture: each QP's request PSNs against time (relative to its
              first PSN), like Wireshark's stevens graph, with the ACKs as a
              step line and retransmissions, NAKs, RNR NAKs and CNPs marked
  throughput  capture: each QP's payload throughput per --bin, in Gb/s
  rtt         capture: each request with AckReq to the first response that
              covers its PSN, per QP (retransmitted PSNs give no sample)
  rate        rates CSV: each flow's sending rate over time
  queue       queues CSV: each switch port's egress queue over time
  pause       JSON summary: each port's PFC paused time
  fct         FCT CSV or JSON summary: FCT slowdown p50, p95, p99 per flow
              size bucket (<10KB, 10KB-100KB, 100KB-1MB, 1MB-10MB, >=10MB)
  fctcdf      FCT CSV: CDF of the completed flows' FCTs
  busbw       collective results: busbw against message size, a line per
              algorithm (and per file)
  colltime    collective results: time against message size, log-log

Without --qp, --flow or --egress the --top busiest are plotted: QPs by
packets (throughput: by payload bytes), flows by mean rate, ports by
largest queue or longest pause.

Exit status: 0 when every image was written, 1 when an input could not be
read or an image not written, 2 for usage errors.

flags:
`

func init() {
	register("plot", "plot a capture (PSN, throughput, RTT), a fabric run (rates, queues, PFC, FCT) or collectives (busbw) as SVG, PNG or HTML", runPlot)
}

// Input types of rocekit plot.
const (
	inCapture = "a capture"
	inRates   = "a rates CSV"
	inQueues  = "a queues CSV"
	inFCT     = "an FCT CSV"
	inJSON    = "a JSON summary"
	inColl    = "collective results"
)

// plotKinds lists the kinds and the input types each draws from.
var plotKinds = []struct {
	kind string
	from []string
}{
	{"psn", []string{inCapture}},
	{"throughput", []string{inCapture}},
	{"rtt", []string{inCapture}},
	{"rate", []string{inRates}},
	{"queue", []string{inQueues}},
	{"pause", []string{inJSON}},
	{"fct", []string{inFCT, inJSON}},
	{"fctcdf", []string{inFCT}},
	{"busbw", []string{inColl}},
	{"colltime", []string{inColl}},
}

// plotInput is one input file: its run name, path and type.
type plotInput struct {
	name, path, typ string
}

// plotConfig holds the plot command's flags.
type plotConfig struct {
	kind, out, html string
	qps             map[uint32]bool
	flows, ports    map[string]bool
	top             int
	bin             time.Duration
	pmtu            int
	udp             []uint16 // extra RoCEv2 UDP ports
}

func runPlot(args []string, stdout, stderr io.Writer) int {
	var cfg plotConfig
	fs := flag.NewFlagSet("plot", flag.ContinueOnError)
	fs.StringVar(&cfg.kind, "kind", "", "what to plot: psn, throughput, rtt, rate, queue, pause, fct, fctcdf, busbw or colltime (default: the first the input gives)")
	fs.StringVar(&cfg.out, "o", "", "image file to write, SVG or PNG by its extension (default: INPUT.KIND.svg, unless --html is given)")
	fs.StringVar(&cfg.html, "html", "", "write every figure of the inputs and a summary table to this HTML page (default: none)")
	qp := fs.String("qp", "", "capture: only these QPs (destination or source QP), comma-separated, decimal or 0x hex (default: the --top busiest)")
	flows := fs.String("flow", "", "rates: only these flows, comma-separated numbers (default: the --top busiest)")
	egress := fs.String("egress", "", "queues, pause: only these egress ports, comma-separated names such as s0/1 (default: the --top busiest)")
	fs.IntVar(&cfg.top, "top", 6, "how many QPs, flows or ports to plot when not chosen")
	fs.DurationVar(&cfg.bin, "bin", 0, "throughput: bin width, such as 10us (default 0: about a hundredth of the capture, rounded up to 1, 2 or 5 times a power of ten, at least 1us)")
	fs.IntVar(&cfg.pmtu, "pmtu", 0, "capture: path MTU to assume for READ response matching until CM or full-size packets say (0: infer)")
	udp := fs.String("port", "", "capture: extra UDP destination ports to decode as RoCEv2, comma-separated (4791 always is; default: none)")
	rest, code, ok := parseArgs(fs, plotUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) == 0 {
		return usageError(stderr, "plot", "no input given")
	}
	if cfg.top < 1 {
		return usageError(stderr, "plot", "--top %d: want at least 1", cfg.top)
	}
	if cfg.bin < 0 {
		return usageError(stderr, "plot", "--bin %v: want a positive width or 0", cfg.bin)
	}
	for _, s := range splitList(*qp) {
		v, err := strconv.ParseUint(s, 0, 32)
		if err != nil || v > 0xFFFFFF {
			return usageError(stderr, "plot", "--qp %q: want a 24-bit QP number", s)
		}
		if cfg.qps == nil {
			cfg.qps = map[uint32]bool{}
		}
		cfg.qps[uint32(v)] = true
	}
	cfg.flows, cfg.ports = nameSet(*flows), nameSet(*egress)
	var err error
	if cfg.udp, err = parsePorts(*udp); err != nil {
		return usageError(stderr, "plot", "%v", err)
	}
	if cfg.kind != "" && kindFrom(cfg.kind) == nil {
		return usageError(stderr, "plot", "--kind %q: want psn, throughput, rtt, rate, queue, pause, fct, fctcdf, busbw or colltime", cfg.kind)
	}
	if cfg.out != "" {
		if _, err := plot.Format(cfg.out); err != nil {
			return usageError(stderr, "plot", "-o %v", err)
		}
	}
	var inputs []plotInput
	for _, a := range rest {
		in := plotInput{name: a, path: a}
		if name, path, ok := strings.Cut(a, "="); ok && name != "" {
			if _, err := os.Stat(a); err != nil {
				in.name, in.path = name, path
			}
		}
		typ, err := inputType(in.path)
		if err != nil {
			fmt.Fprintf(stderr, "rocekit plot: %v\n", err)
			return 1
		}
		in.typ = typ
		inputs = append(inputs, in)
	}
	if cfg.html != "" && cfg.out == "" && cfg.kind == "" {
		return plotHTML(&cfg, inputs, stderr)
	}
	typ := inputs[0].typ
	kind := cfg.kind
	if kind == "" {
		for _, k := range plotKinds {
			if contains(k.from, typ) {
				kind = k.kind
				break
			}
		}
	}
	k := kindFrom(kind)
	var sel []plotInput
	for _, in := range inputs {
		switch {
		case contains(k.from, in.typ):
			sel = append(sel, in)
		case cfg.html == "" && cfg.kind == "":
			return usageError(stderr, "plot", "%s is %s and %s %s: one kind of input at a time (or --html)", inputs[0].path, typ, in.path, in.typ)
		case cfg.html == "":
			return usageError(stderr, "plot", "--kind %s plots %s, and %s is %s", kind, strings.Join(k.from, " or "), in.path, in.typ)
		}
	}
	if len(sel) == 0 {
		return usageError(stderr, "plot", "--kind %s plots %s, and no input is one", kind, strings.Join(k.from, " or "))
	}
	if typ == inCapture && len(sel) > 1 {
		return usageError(stderr, "plot", "one capture at a time (or --html for several)")
	}
	out := cfg.out
	if out == "" {
		out = sel[0].path + "." + kind + ".svg"
	}
	p, err := plotKind(&cfg, kind, sel)
	if err != nil {
		fmt.Fprintf(stderr, "rocekit plot: %v\n", err)
		return 1
	}
	if err := plot.Save(p, out); err != nil {
		fmt.Fprintf(stderr, "rocekit plot: %v\n", err)
		return 1
	}
	if cfg.html != "" {
		return plotHTML(&cfg, inputs, stderr)
	}
	return 0
}

func nameSet(s string) map[string]bool {
	var m map[string]bool
	for _, x := range splitList(s) {
		if m == nil {
			m = map[string]bool{}
		}
		m[x] = true
	}
	return m
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func kindFrom(kind string) *struct {
	kind string
	from []string
} {
	for i := range plotKinds {
		if plotKinds[i].kind == kind {
			return &plotKinds[i]
		}
	}
	return nil
}

// inputType tells an input file's type: a .json file is a JSON summary, a
// file whose first line is one of the simulator's CSV headers that CSV,
// anything else a capture (which decoding will check).
func inputType(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return "", fmt.Errorf("%s is a directory", path)
	}
	line, _ := bufio.NewReaderSize(f, 4096).ReadString('\n')
	if plot.IsColl([]byte(line)) {
		return inColl, nil
	}
	if strings.EqualFold(filepath.Ext(path), ".json") {
		return inJSON, nil
	}
	switch strings.TrimRight(line, "\r\n") {
	case plot.RatesHeader:
		return inRates, nil
	case plot.QueuesHeader:
		return inQueues, nil
	case roce.FCTHeader:
		return inFCT, nil
	}
	if strings.EqualFold(filepath.Ext(path), ".csv") {
		return "", fmt.Errorf("%s:1: header %q is none of the simulator's: %q, %q or %q", path, strings.TrimRight(line, "\r\n"), plot.RatesHeader, plot.QueuesHeader, roce.FCTHeader)
	}
	return inCapture, nil
}

// plotKind draws one kind from inputs of the one type it takes.
func plotKind(cfg *plotConfig, kind string, ins []plotInput) (*gplot.Plot, error) {
	switch kind {
	case "psn", "throughput", "rtt":
		c, err := readCapture(cfg, ins[0].path)
		if err != nil {
			return nil, err
		}
		return capturePlot(cfg, kind, c)
	case "rate", "queue":
		header, key := plot.RatesHeader, func(s *plot.Series) float64 { return s.Sum() }
		if kind == "queue" {
			header, key = plot.QueuesHeader, (*plot.Series).Max
		}
		var runs []plot.Named[[]*plot.Series]
		for _, in := range ins {
			s, err := plot.ReadSamples(in.path, header)
			if err != nil {
				return nil, err
			}
			runs = append(runs, plot.Named[[]*plot.Series]{Name: runName(in), Value: s})
		}
		if kind == "rate" {
			return plot.RatePlot(plot.Pick(runs, cfg.flows, cfg.top, key))
		}
		return plot.QueuePlot(plot.Pick(runs, cfg.ports, cfg.top, key))
	case "pause":
		runs, err := readRuns(ins)
		if err != nil {
			return nil, err
		}
		return plot.PausePlot(runs, plot.PausePorts(runs, cfg.ports, cfg.top))
	case "fct":
		var runs []plot.Named[[]plot.Bucket]
		for _, in := range ins {
			var b []plot.Bucket
			if in.typ == inJSON {
				r, err := plot.ReadRun(in.path)
				if err != nil {
					return nil, err
				}
				b = r.Slowdown
			} else {
				f, err := plot.ReadFCT(in.path)
				if err != nil {
					return nil, err
				}
				b = plot.Slowdowns(f)
			}
			runs = append(runs, plot.Named[[]plot.Bucket]{Name: runName(in), Value: b})
		}
		return plot.SlowdownPlot(runs)
	case "fctcdf":
		var runs []plot.Named[[]plot.FlowFCT]
		for _, in := range ins {
			f, err := plot.ReadFCT(in.path)
			if err != nil {
				return nil, err
			}
			runs = append(runs, plot.Named[[]plot.FlowFCT]{Name: runName(in), Value: f})
		}
		return plot.CDFPlot(runs)
	case "busbw", "colltime":
		var runs []plot.Named[[]plot.CollRow]
		for _, in := range ins {
			rows, err := plot.ReadColl(in.path)
			if err != nil {
				return nil, err
			}
			runs = append(runs, plot.Named[[]plot.CollRow]{Name: runName(in), Value: rows})
		}
		if kind == "busbw" {
			return plot.BusBWPlot(runs)
		}
		return plot.CollTimePlot(runs)
	}
	return nil, fmt.Errorf("unknown kind %q", kind)
}

// runName is an input's name in legends: NAME of NAME=FILE, else the
// file's name.
func runName(in plotInput) string {
	if in.name != in.path {
		return in.name
	}
	return filepath.Base(in.path)
}

func readRuns(ins []plotInput) ([]plot.Named[*plot.Run], error) {
	var runs []plot.Named[*plot.Run]
	for _, in := range ins {
		r, err := plot.ReadRun(in.path)
		if err != nil {
			return nil, err
		}
		runs = append(runs, plot.Named[*plot.Run]{Name: runName(in), Value: r})
	}
	return runs, nil
}

func readCapture(cfg *plotConfig, path string) (*plot.Capture, error) {
	c, err := plot.ReadCapture(path, decode.Options{PMTU: cfg.pmtu, Ports: cfg.udp})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(cfg.qps) > 0 && len(c.Busiest(cfg.top, cfg.qps, true))+len(c.Busiest(cfg.top, cfg.qps, false)) == 0 {
		return nil, fmt.Errorf("%s: no QP of --qp carried requests or payload", path)
	}
	return c, nil
}

func capturePlot(cfg *plotConfig, kind string, c *plot.Capture) (*gplot.Plot, error) {
	switch kind {
	case "psn":
		return plot.PSNPlot(c, c.Busiest(cfg.top, cfg.qps, false))
	case "rtt":
		return plot.RTTPlot(c, c.Busiest(cfg.top, cfg.qps, false))
	}
	bin := cfg.bin
	if bin == 0 {
		bin = plot.AutoBin(c.Span)
	}
	return plot.ThroughputPlot(c, c.Busiest(cfg.top, cfg.qps, true), bin)
}

// plotHTML writes the --html page: every figure each input gives, and the
// summary tables.
func plotHTML(cfg *plotConfig, inputs []plotInput, stderr io.Writer) int {
	var figs []plot.Figure
	var tables []plot.Table
	fail := func(err error) int {
		fmt.Fprintf(stderr, "rocekit plot: %v\n", err)
		return 1
	}
	add := func(title string, p *gplot.Plot, err error) error {
		if err != nil {
			return err
		}
		figs = append(figs, plot.Figure{Title: title, Plot: p})
		return nil
	}
	byType := map[string][]plotInput{}
	for _, in := range inputs {
		if in.typ == inCapture {
			c, err := readCapture(cfg, in.path)
			if err != nil {
				return fail(err)
			}
			for _, k := range []string{"psn", "throughput", "rtt"} {
				p, err := capturePlot(cfg, k, c)
				if err := add(runName(in)+": "+k, p, err); err != nil {
					return fail(err)
				}
			}
			tables = append(tables, captureTable(runName(in), c))
			continue
		}
		byType[in.typ] = append(byType[in.typ], in)
	}
	for _, k := range []struct{ typ, kind string }{
		{inRates, "rate"}, {inQueues, "queue"}, {inJSON, "pause"}, {inFCT, "fct"}, {inJSON, "fct"}, {inFCT, "fctcdf"},
		{inColl, "busbw"}, {inColl, "colltime"},
	} {
		ins := byType[k.typ]
		if len(ins) == 0 || k.typ == inJSON && k.kind == "fct" && len(byType[inFCT]) > 0 {
			continue
		}
		p, err := plotKind(cfg, k.kind, ins)
		if err := add(k.kind, p, err); err != nil {
			return fail(err)
		}
	}
	if ins := byType[inJSON]; len(ins) > 0 {
		runs, err := readRuns(ins)
		if err != nil {
			return fail(err)
		}
		tables = append(tables, runTable(runs))
	}
	f, err := os.Create(cfg.html)
	if err != nil {
		return fail(err)
	}
	title := "rocekit plot: " + runName(inputs[0])
	if len(inputs) > 1 {
		title += fmt.Sprintf(" and %d more", len(inputs)-1)
	}
	err = plot.WriteHTML(f, title, figs, tables)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fail(fmt.Errorf("%s: %v", cfg.html, err))
	}
	return 0
}

// captureTable is a capture's per-QP lines, as rocekit decode --summary
// gives them.
func captureTable(name string, c *plot.Capture) plot.Table {
	t := plot.Table{
		Title:  name + fmt.Sprintf(": %d frames, %d IB, %d connections", c.Summary.Frames, c.Summary.IBFrames, len(c.Summary.Connections)),
		Header: []string{"conn", "flow", "transport", "packets", "payload bytes", "retransmissions", "NAKs", "RNR NAKs", "CNPs", "ECN CE", "ACK RTT samples", "RTT min", "RTT mean", "RTT max"},
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	for _, cn := range c.Summary.Connections {
		for _, d := range []*analysis.Direction{cn.A, cn.B} {
			if d == nil || d.Packets == 0 {
				continue
			}
			row := []string{strconv.Itoa(cn.ID), fmt.Sprintf("%s → %s QP %#x", d.Src, d.Dst, d.DstQP), d.Transport,
				u(d.Packets), u(d.PayloadBytes), u(d.Retransmissions), u(d.NAKs.Total()), u(d.RNRNAKs), u(d.CNPs), u(d.ECNCE),
				strconv.FormatInt(d.RTT.Samples, 10), "", "", ""}
			if d.RTT.Samples > 0 {
				row[11], row[12], row[13] = d.RTT.Min.String(), d.RTT.Mean.String(), d.RTT.Max.String()
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// runTable is the figures of the fabric runs' --json summaries, one column
// per run.
func runTable(runs []plot.Named[*plot.Run]) plot.Table {
	t := plot.Table{Title: "Run summary (rocekit sim --json)", Header: []string{"figure"}}
	var keys []string
	vals := map[string][]string{}
	for i, r := range runs {
		t.Header = append(t.Header, r.Name)
		for _, f := range r.Value.Figures {
			if _, ok := vals[f[0]]; !ok {
				keys = append(keys, f[0])
				vals[f[0]] = make([]string, len(runs))
			}
			vals[f[0]][i] = f[1]
		}
	}
	for _, k := range keys {
		t.Rows = append(t.Rows, append([]string{k}, vals[k]...))
	}
	return t
}
