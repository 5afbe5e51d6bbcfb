package main

import (
	"bytes"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/decode"
	"github.com/rocekit/rocekit/internal/svgtest"
	"github.com/rocekit/rocekit/plot"
	"github.com/rocekit/rocekit/rc"
)

// plotSVGTexts parses an SVG file as XML and returns the text of its
// <text> elements.
func plotSVGTexts(t *testing.T, b []byte) []string {
	t.Helper()
	texts, err := svgtest.Texts(b)
	require.NoError(t, err)
	return texts
}

// plotTrace writes the trace of a lossy simulated run into dir.
func plotTrace(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "x.pcap")
	code, _, errs := runCLI(t, "sim", "--messages", "20", "--loss", "0.02", "--trace", path)
	require.Equal(t, 0, code, errs)
	return path
}

// The PSN plot of a capture: the default output name, the title and
// series, and the PSNs behind it equal to those rocekit decode --format
// json prints for the QP's requests.
func TestPlotPSNAgainstDecodeJSON(t *testing.T) {
	dir := t.TempDir()
	path := plotTrace(t, dir)
	code, out, errs := runCLI(t, "plot", path)
	require.Equal(t, 0, code, errs)
	assert.Empty(t, out)
	svg, err := os.ReadFile(path + ".psn.svg")
	require.NoError(t, err)
	texts := plotSVGTexts(t, svg)
	assert.Contains(t, texts, "PSN over time: x.pcap")
	assert.Contains(t, texts, "PSN − first request PSN (packets)")

	c, err := plot.ReadCapture(path, decode.Options{})
	require.NoError(t, err)
	flows := c.Busiest(6, nil, false)
	require.Len(t, flows, 1)
	f := flows[0]
	for _, k := range []string{"requests", "retransmissions", "NAKs"} {
		assert.Contains(t, texts, k+" "+f.Label())
	}
	// 2% loss: retransmissions and NAKs were there to draw.
	require.NotEmpty(t, f.Events[plot.EvRetrans])
	require.NotEmpty(t, f.Events[plot.EvNAK])

	code, out, errs = runCLI(t, "decode", "--format", "json", "--qp", strconv.FormatUint(uint64(f.Dir.DstQP), 10), path)
	require.Equal(t, 0, code, errs)
	psnAt := map[int]uint32{}
	retrans := map[int]bool{}
	for _, m := range decodeJSON(t, out) {
		name, _ := field(m, "bth.opcode_name")
		if !strings.Contains(name.(string), "WRITE") {
			continue
		}
		n, _ := field(m, "frame")
		q, _ := field(m, "bth.psn")
		fn, _ := strconv.Atoi(string(n.(json.Number)))
		qv, _ := strconv.ParseUint(string(q.(json.Number)), 10, 32)
		psnAt[fn] = uint32(qv)
		w, _ := field(m, "warnings")
		for _, x := range w.([]any) {
			retrans[fn] = retrans[fn] || x == "retransmission" || x == "duplicate_psn"
		}
	}
	got := 0
	for _, k := range []int{plot.EvRequest, plot.EvRetrans} {
		for _, p := range f.Events[k] {
			want, ok := psnAt[p.Frame]
			require.True(t, ok, "frame %d is not a WRITE to the QP", p.Frame)
			assert.Equal(t, want, (f.FirstPSN+uint32(p.PSN))&rc.PSNMask, "frame %d", p.Frame)
			assert.Equal(t, k == plot.EvRetrans, retrans[p.Frame], "frame %d", p.Frame)
			got++
		}
	}
	assert.Equal(t, len(psnAt), got, "every WRITE is on the plot")
}

// Each capture kind writes a PNG that decodes, and --html a page with the
// three figures (SVG data URIs that parse) and the per-QP table.
func TestPlotCaptureKinds(t *testing.T) {
	dir := t.TempDir()
	path := plotTrace(t, dir)
	for _, k := range []string{"psn", "throughput", "rtt"} {
		out := filepath.Join(dir, k+".png")
		code, _, errs := runCLI(t, "plot", "--kind", k, "-o", out, "--bin", "20us", path)
		require.Equal(t, 0, code, errs)
		b, err := os.ReadFile(out)
		require.NoError(t, err)
		img, err := png.Decode(bytes.NewReader(b))
		require.NoError(t, err, k)
		assert.Equal(t, 756, img.Bounds().Dx(), k)
	}
	page := filepath.Join(dir, "x.html")
	code, _, errs := runCLI(t, "plot", "--html", page, path)
	require.Equal(t, 0, code, errs)
	titles := plotHTMLFigures(t, page)
	require.Len(t, titles, 3)
	assert.Contains(t, titles[0], "PSN over time: x.pcap")
	assert.Contains(t, titles[1], "Payload throughput per 2ms bin: x.pcap")
	assert.Contains(t, titles[2], "ACK round-trip time: x.pcap")
	html, err := os.ReadFile(page)
	require.NoError(t, err)
	assert.Contains(t, string(html), "<td>10.0.0.1 → 10.0.0.2 QP 0x12</td><td>RC</td>")
	assert.NotContains(t, string(html), "src=\"x")
}

// plotHTMLFigures returns the text of the title of every figure of an
// HTML page, checking each is an SVG data URI that parses.
func plotHTMLFigures(t *testing.T, page string) [][]string {
	t.Helper()
	b, err := os.ReadFile(page)
	require.NoError(t, err)
	var out [][]string
	for _, m := range regexp.MustCompile(`src="data:image/svg\+xml;base64,([^"]*)"`).FindAllStringSubmatch(string(b), -1) {
		svg, err := base64.StdEncoding.DecodeString(m[1])
		require.NoError(t, err)
		out = append(out, plotSVGTexts(t, svg))
	}
	return out
}

// The fabric kinds against the simulator's own files: the queue series
// are the CSV's rows, the FCT slowdown from the FCT CSV equals the --json
// fct_slowdown, and several runs overlay under their names.
func TestPlotFabric(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	code, out, errs := runCLI(t, "sim", "--topology", "star:hosts=5", "--traffic", "incast:n=4,size=1MB",
		"--fct", "f.csv", "--samples", "p", "--sample-interval", "5us", "--json")
	require.Equal(t, 0, code, errs)
	require.NoError(t, os.WriteFile("s.json", []byte(out), 0o666))

	// Queues: every row of the CSV, per port, in order.
	fh, err := os.Open("p.queues.csv")
	require.NoError(t, err)
	rows, err := csv.NewReader(fh).ReadAll()
	fh.Close()
	require.NoError(t, err)
	want := map[string][][2]float64{}
	for _, r := range rows[1:] {
		tv, _ := strconv.ParseFloat(r[0], 64)
		v, _ := strconv.ParseFloat(r[2], 64)
		want[r[1]] = append(want[r[1]], [2]float64{tv, v})
	}
	series, err := plot.ReadSamples("p.queues.csv", plot.QueuesHeader)
	require.NoError(t, err)
	require.Len(t, series, len(want))
	for _, s := range series {
		require.Len(t, s.T, len(want[s.Name]), s.Name)
		for i := range s.T {
			assert.Equal(t, want[s.Name][i], [2]float64{s.T[i], s.V[i]}, "%s row %d", s.Name, i)
		}
	}
	code, _, errs = runCLI(t, "plot", "p.queues.csv")
	require.Equal(t, 0, code, errs)
	b, err := os.ReadFile("p.queues.csv.queue.svg")
	require.NoError(t, err)
	texts := plotSVGTexts(t, b)
	assert.Contains(t, texts, "Switch egress queue length: p.queues.csv")
	assert.Contains(t, texts, "port s0/0", "the incast's bottleneck: the port to h0")
	assert.NotContains(t, texts, "port s0/1", "a queue that stayed empty")

	// Slowdowns: the FCT CSV's, computed here, and the run's own.
	var run struct {
		Slowdown []struct {
			Bucket        string
			Flows         int
			P50, P95, P99 float64
		} `json:"fct_slowdown"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &run))
	fl, err := plot.ReadFCT("f.csv")
	require.NoError(t, err)
	got := plot.Slowdowns(fl)
	require.Len(t, got, len(run.Slowdown))
	require.NotEmpty(t, got)
	for i, b := range run.Slowdown {
		assert.Equal(t, b.Bucket, got[i].Name)
		assert.Equal(t, b.Flows, got[i].Flows)
		// The CSV rounds slowdowns to 4 decimals.
		assert.InDelta(t, b.P50, got[i].P50, 5e-5)
		assert.InDelta(t, b.P95, got[i].P95, 5e-5)
		assert.InDelta(t, b.P99, got[i].P99, 5e-5)
	}

	// Several runs, named, as PNG and SVG.
	for _, c := range [][]string{
		{"plot", "-o", "fct.svg", "one=f.csv", "two=s.json"},
		{"plot", "--kind", "fctcdf", "-o", "cdf.svg", "one=f.csv", "f.csv"},
		{"plot", "-o", "rate.svg", "a=p.rates.csv", "b=p.rates.csv"},
		{"plot", "-o", "pause.png", "s.json"},
	} {
		code, _, errs := runCLI(t, c...)
		require.Equal(t, 0, code, "%v: %s", c, errs)
	}
	b, _ = os.ReadFile("fct.svg")
	texts = plotSVGTexts(t, b)
	for _, s := range []string{"FCT slowdown by flow size", "one p50", "one p99", "two p95", "1MB-10MB", "FCT slowdown (FCT / ideal FCT)"} {
		assert.Contains(t, texts, s)
	}
	b, _ = os.ReadFile("cdf.svg")
	texts = plotSVGTexts(t, b)
	assert.Contains(t, texts, "one (4 flows)")
	assert.Contains(t, texts, "f.csv (4 flows)")
	b, _ = os.ReadFile("rate.svg")
	texts = plotSVGTexts(t, b)
	assert.Contains(t, texts, "a: flow 0")
	assert.Contains(t, texts, "b: flow 3")
	assert.Contains(t, texts, "sending rate (Gb/s)")

	// --html with a run's files: every figure, the run's figures.
	code, _, errs = runCLI(t, "plot", "--html", "run.html", "p.rates.csv", "p.queues.csv", "s.json", "f.csv")
	require.Equal(t, 0, code, errs)
	figs := plotHTMLFigures(t, "run.html")
	require.Len(t, figs, 5)
	for i, title := range []string{"Sending rate per flow: p.rates.csv", "Switch egress queue length: p.queues.csv",
		"PFC paused time per port: s.json (no port was paused)", "FCT slowdown by flow size: f.csv", "FCT CDF: f.csv"} {
		assert.Contains(t, figs[i], title)
	}
	page, _ := os.ReadFile("run.html")
	assert.Contains(t, string(page), "<tr><td>topology</td><td>star:hosts=5</td></tr>")
	assert.Contains(t, string(page), "<tr><td>drops.queue</td><td>0</td></tr>")
}

// Bad inputs: one line, exit status 1 for an input that cannot be read,
// 2 (and the pointer to the help) for usage errors.
func TestPlotErrors(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	require.NoError(t, os.WriteFile("bad.csv", []byte("time,flow,rate\n1,2,3\n"), 0o666))
	require.NoError(t, os.WriteFile("r.csv", []byte(plot.RatesHeader+"\n1,0,fast\n"), 0o666))
	require.NoError(t, os.WriteFile("q.csv", []byte(plot.QueuesHeader+"\n1,s0/0,3\n"), 0o666))
	require.NoError(t, os.WriteFile("junk.pcap", []byte("not a capture at all"), 0o666))
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"nosuch.pcap"}, 1, "rocekit plot: open nosuch.pcap: no such file or directory\n"},
		{[]string{"bad.csv"}, 1, `rocekit plot: bad.csv:1: header "time,flow,rate" is none of the simulator's: "time_ns,flow,gbps", "time_ns,port,queue_bytes" or "flow,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,ok,cnps"` + "\n"},
		{[]string{"r.csv"}, 1, `rocekit plot: r.csv:2: gbps "fast" is not a number` + "\n"},
		{[]string{"junk.pcap"}, 1, "rocekit plot: junk.pcap: "},
		{[]string{"--kind", "stevens", "q.csv"}, 2, `rocekit plot: --kind "stevens": want psn, throughput, rtt, rate, queue, pause, fct, fctcdf, busbw or colltime` + "\nrun 'rocekit plot -h' for usage\n"},
		{[]string{"--kind", "psn", "q.csv"}, 2, "rocekit plot: --kind psn plots a capture, and q.csv is a queues CSV\nrun 'rocekit plot -h' for usage\n"},
		{[]string{"-o", "x.gif", "q.csv"}, 2, `rocekit plot: -o "x.gif": extension .gif, want .svg or .png` + "\nrun 'rocekit plot -h' for usage\n"},
		{[]string{"q.csv", "r.csv"}, 2, "rocekit plot: q.csv is a queues CSV and r.csv a rates CSV: one kind of input at a time (or --html)\nrun 'rocekit plot -h' for usage\n"},
		{[]string{}, 2, "rocekit plot: no input given\nrun 'rocekit plot -h' for usage\n"},
		{[]string{"--qp", "0x1000000", "x.pcap"}, 2, `rocekit plot: --qp "0x1000000": want a 24-bit QP number` + "\nrun 'rocekit plot -h' for usage\n"},
		{[]string{"--top", "0", "q.csv"}, 2, "rocekit plot: --top 0: want at least 1\nrun 'rocekit plot -h' for usage\n"},
	} {
		code, out, errs := runCLI(t, append([]string{"plot"}, c.args...)...)
		assert.Equal(t, c.code, code, "%v: %s", c.args, errs)
		assert.Empty(t, out, "%v", c.args)
		assert.True(t, strings.HasPrefix(errs, c.want), "%v: %q", c.args, errs)
		assert.Equal(t, c.code, strings.Count(errs, "\n"), "%v: one line, and the help pointer for usage: %q", c.args, errs)
	}
	_, err := os.Stat("q.csv.psn.svg")
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Help goes to standard output, exit 0, and every flag shows its default.
func TestPlotHelp(t *testing.T) {
	for _, args := range [][]string{{"plot", "-h"}, {"plot", "--help"}, {"help", "plot"}} {
		code, out, errs := runCLI(t, args...)
		assert.Equal(t, 0, code)
		assert.Empty(t, errs)
		assert.True(t, strings.HasPrefix(out, "usage: rocekit plot [flags] INPUT...\n"), "%q", out)
	}
	_, out, _ := runCLI(t, "plot", "-h")
	flagLine := regexp.MustCompile(`^  (-\w|--[\w-]+)( \S+)?$`)
	lines := strings.Split(out, "\n")
	n := 0
	for i, l := range lines {
		if flagLine.MatchString(l) {
			n++
			assert.Contains(t, lines[i+1], "default", l)
			assert.NotContains(t, lines[i+1], `(default "")`, l)
		}
	}
	assert.Equal(t, 10, n)
}

// rocekit plot draws rocekit coll --json: busbw by size, one line per
// algorithm, the legend naming them, and the points the JSON's.
func TestPlotColl(t *testing.T) {
	dir := t.TempDir()
	var files []string
	for _, a := range []string{"ring", "rhd"} {
		code, out, errs := runCLI(t, "coll", "--ranks", "4", "--algo", a, "--min-bytes", "64KB", "--max-bytes", "256KB", "--json")
		require.Equal(t, 0, code, errs)
		f := filepath.Join(dir, a+".json")
		require.NoError(t, os.WriteFile(f, []byte(out), 0o644))
		files = append(files, f)
	}
	svg := filepath.Join(dir, "busbw.svg")
	code, _, errs := runCLI(t, "plot", "--kind", "busbw", "-o", svg, files[0], files[1])
	require.Equal(t, 0, code, errs)
	b, err := os.ReadFile(svg)
	require.NoError(t, err)
	require.NoError(t, xml.Unmarshal(b, new(struct{})))
	for _, s := range []string{"Bus bandwidth", "busbw (GB/s)", "message size (bytes)", ">ring<", ">rhd<"} {
		require.Contains(t, string(b), s)
	}
	pngFile := filepath.Join(dir, "time.png")
	code, _, errs = runCLI(t, "plot", "--kind", "colltime", "-o", pngFile, files[0])
	require.Equal(t, 0, code, errs)
	f, err := os.Open(pngFile)
	require.NoError(t, err)
	defer f.Close()
	_, err = png.Decode(f)
	require.NoError(t, err)
}
