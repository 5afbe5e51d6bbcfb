package plot

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	gplot "gonum.org/v1/plot"

	"github.com/rocekit/rocekit/decode"
	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/internal/svgtest"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/roce"
)

// simCapture runs the default two-host scenario (1% loss each way) with
// messages 1 MiB WRITEs and writes its trace to a pcap in a temporary
// folder.
func simCapture(t testing.TB, messages int64, op string) string {
	t.Helper()
	sc := roce.DefaultScenario()
	sc.QPs[0].Work.Count = messages
	if op != "" {
		sc.QPs[0].Work.Op = op
	}
	path := filepath.Join(t.TempDir(), "trace.pcap")
	f, err := os.Create(path)
	require.NoError(t, err)
	s, err := roce.New(sc, roce.Options{Trace: f, TraceFormat: pcap.FormatPcap})
	require.NoError(t, err)
	_, err = s.Run()
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return path
}

// The series of a simulated lossy capture agree with the analysis'
// per-direction counts (which its own tests pin) and with the PSNs, times
// and payloads of the frames read afresh.
func TestCaptureSeries(t *testing.T) {
	path := simCapture(t, 20, "")
	c, err := ReadCapture(path, decode.Options{})
	require.NoError(t, err)
	flows := c.Busiest(6, nil, false)
	require.Len(t, flows, 1, "one QP carries requests")
	f := flows[0]
	d := f.Dir
	var peer = func() (p *Flow) {
		for _, g := range c.Flows {
			if g != f {
				p = g
			}
		}
		return
	}()
	require.NotNil(t, peer)
	assert.Equal(t, d.Packets, uint64(len(f.Events[EvRequest])+len(f.Events[EvRetrans])))
	assert.Equal(t, d.Retransmissions+d.DuplicatePSNs, uint64(len(f.Events[EvRetrans])))
	assert.NotZero(t, d.Retransmissions, "1%% loss over 5,000 frames retransmits")
	assert.Equal(t, peer.Dir.NAKs.Total(), uint64(len(f.Events[EvNAK])))
	assert.NotZero(t, len(f.Events[EvNAK]))
	assert.Equal(t, peer.Dir.RNRNAKs, uint64(len(f.Events[EvRNRNAK])))
	assert.Equal(t, peer.Dir.ACKs, uint64(len(f.Events[EvACK])))
	var sum int
	for _, p := range f.Payload {
		sum += p.Bytes
	}
	assert.Equal(t, d.PayloadBytes, uint64(sum))
	assert.GreaterOrEqual(t, d.PayloadBytes, uint64(20<<20), "20 WRITEs of 1 MiB, and retransmissions")

	// RTT samples: the analysis' statistics from the same samples.
	require.Equal(t, d.RTT.Samples, int64(len(f.RTT)))
	require.NotZero(t, len(f.RTT))
	lo, hi, tot := time.Duration(math.MaxInt64), time.Duration(0), time.Duration(0)
	for _, s := range f.RTT {
		lo, hi, tot = min(lo, s.RTT), max(hi, s.RTT), tot+s.RTT
	}
	assert.Equal(t, d.RTT.Min, lo)
	assert.Equal(t, d.RTT.Max, hi)
	assert.Equal(t, d.RTT.Mean, tot/time.Duration(len(f.RTT)))
	// Every sample lies between 0 and the retransmission timeout (67 ms).
	assert.Greater(t, lo, time.Duration(0))
	assert.Less(t, hi, 67*time.Millisecond)

	// The requests' PSNs and times, read afresh: every frame to the
	// responder QP, in order.
	var want []PSNPoint
	var start time.Time
	_, err = decode.Decode(path, decode.Options{}, func(fr *decode.Frame) error {
		if start.IsZero() {
			start = fr.Record.Time
		}
		b := fr.Packet.Transport.BTH
		if b != nil && b.DestQP() == d.DstQP && b.Opcode().IsRequest() {
			want = append(want, PSNPoint{T: fr.Record.Time.Sub(start), PSN: int64(b.PSN()), Frame: fr.Record.Index})
		}
		return nil
	})
	require.NoError(t, err)
	got := append(slices.Clone(f.Events[EvRequest]), f.Events[EvRetrans]...)
	slices.SortFunc(got, func(a, b PSNPoint) int { return a.Frame - b.Frame })
	require.Equal(t, len(want), len(got))
	for i := range want {
		require.Equal(t, want[i].Frame, got[i].Frame)
		require.Equal(t, want[i].T, got[i].T, "frame %d", want[i].Frame)
		require.Equal(t, uint32(want[i].PSN), (f.FirstPSN+uint32(got[i].PSN))&rc.PSNMask, "frame %d", want[i].Frame)
	}
	// No PSN wrap in 5,000 packets from the default start: the relative
	// PSNs run from 0 to the number of distinct PSNs less one.
	assert.Equal(t, int64(0), got[0].PSN)
	assert.Equal(t, int64(20*256-1), slices.MaxFunc(got, func(a, b PSNPoint) int { return int(a.PSN - b.PSN) }).PSN, "20 MiB at 4 KiB MTU is 5,120 PSNs")
}

// A READ workload: the payload is on the responder's direction, and the
// READ responses give the RTT samples.
func TestCaptureReads(t *testing.T) {
	path := simCapture(t, 4, "read")
	c, err := ReadCapture(path, decode.Options{})
	require.NoError(t, err)
	req := c.Busiest(6, nil, false)
	require.Len(t, req, 1)
	assert.Zero(t, len(req[0].Payload), "READ requests carry no payload")
	tp := c.Busiest(6, nil, true)
	require.Len(t, tp, 1)
	assert.NotSame(t, req[0], tp[0])
	assert.Equal(t, req[0].Dir.RTT.Samples, int64(len(req[0].RTT)))
	assert.NotZero(t, len(req[0].RTT))
	// --qp picks by either QP of the direction.
	assert.Equal(t, req, c.Busiest(6, map[uint32]bool{req[0].Dir.DstQP: true}, false))
	assert.Equal(t, req, c.Busiest(6, map[uint32]bool{req[0].Dir.SrcQP: true}, false))
	assert.Empty(t, c.Busiest(6, map[uint32]bool{0xABCDEF: true}, false))
}

// The real Soft-RoCE capture: one WRITE (18 bytes) and one READ of 4096
// bytes in four responses (MANIFEST.md).
func TestRealCapture(t *testing.T) {
	dir := oracle.Captures(t)
	c, err := ReadCapture(filepath.Join(dir, "montybeatnik-rdma-roce-lab_test.pcap"), decode.Options{})
	require.NoError(t, err)
	req := c.Busiest(6, nil, false)
	require.Len(t, req, 1)
	assert.Len(t, req[0].Events[EvRequest], 2, "WRITE Only and READ Request")
	var payload int
	for _, f := range c.Busiest(6, nil, true) {
		if f.Dir.Transport != "RC" {
			continue // the CM MADs, on UD
		}
		for _, p := range f.Payload {
			payload += p.Bytes
		}
	}
	assert.Equal(t, 18+4096, payload)
}

func TestThroughputBins(t *testing.T) {
	f := &Flow{Payload: []PayloadPoint{{0, 100}, {5 * time.Microsecond, 200}, {10 * time.Microsecond, 50}, {29 * time.Microsecond, 7}}}
	assert.Equal(t, []int64{300, 50, 7}, Throughput(f, 29*time.Microsecond, 10*time.Microsecond))
	assert.Equal(t, []int64{350, 7}, Throughput(f, 29*time.Microsecond, 15*time.Microsecond))
	// The last frame, at the end of the span, has a bin of its own.
	g := &Flow{Payload: []PayloadPoint{{0, 1}, {10 * time.Microsecond, 2}, {20 * time.Microsecond, 4}}}
	assert.Equal(t, []int64{1, 2, 4}, Throughput(g, 20*time.Microsecond, 10*time.Microsecond))
}

func TestAutoBin(t *testing.T) {
	for _, c := range []struct{ span, want time.Duration }{
		{0, time.Microsecond},
		{time.Millisecond, 10 * time.Microsecond},
		{3 * time.Millisecond, 50 * time.Microsecond},
		{15 * time.Millisecond, 200 * time.Microsecond},
		{time.Second, 10 * time.Millisecond},
	} {
		assert.Equal(t, c.want, AutoBin(c.span), "span %v", c.span)
	}
}

// Slowdown percentiles by nearest rank, checked by hand: ten flows of one
// bucket with slowdowns 1..10 give p50 5 (rank 5), p95 and p99 10 (rank
// 10); size 9,999 is below 10 KB, 10,000 is not; unfinished flows (no
// slowdown) are left out.
func TestSlowdowns(t *testing.T) {
	var flows []FlowFCT
	for i := 10; i >= 1; i-- {
		flows = append(flows, FlowFCT{Size: 50_000, Slowdown: float64(i), OK: true})
	}
	flows = append(flows, FlowFCT{Size: 9_999, Slowdown: 2, OK: true}, FlowFCT{Size: 10_000, Slowdown: 11, OK: true},
		FlowFCT{Size: 20_000_000, Slowdown: 0, OK: false})
	got := Slowdowns(flows)
	assert.Equal(t, []Bucket{
		{Name: "<10KB", Flows: 1, P50: 2, P95: 2, P99: 2},
		{Name: "10KB-100KB", Flows: 11, P50: 6, P95: 11, P99: 11},
	}, got)
	// Twenty flows: p95 is rank 19.
	flows = flows[:0]
	for i := 1; i <= 20; i++ {
		flows = append(flows, FlowFCT{Size: 2_000_000, Slowdown: float64(i), OK: true})
	}
	assert.Equal(t, []Bucket{{Name: "1MB-10MB", Flows: 20, P50: 10, P95: 19, P99: 20}}, Slowdowns(flows))
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(text), 0o666))
	return p
}

func TestReadSamples(t *testing.T) {
	p := writeFile(t, "r.rates.csv", "time_ns,flow,gbps\n5000,0,100.5\n5000,1,0\n10000,0,50\n")
	s, err := ReadSamples(p, RatesHeader)
	require.NoError(t, err)
	require.Len(t, s, 2)
	assert.Equal(t, Series{Name: "0", T: []float64{5000, 10000}, V: []float64{100.5, 50}}, *s[0])
	assert.Equal(t, Series{Name: "1", T: []float64{5000}, V: []float64{0}}, *s[1])

	for _, c := range []struct{ text, want string }{
		{"time_ns,port,queue_bytes\n", ":1: header \"time_ns,port,queue_bytes\", want \"time_ns,flow,gbps\""},
		{"time_ns,flow,gbps\n5000,0,1\n6000,0,fast\n", ":3: gbps \"fast\" is not a number"},
		{"time_ns,flow,gbps\n5000,0\n", ":2: 2 fields, want 3 (time_ns,flow,gbps)"},
		{"time_ns,flow,gbps\nNaN,0,1\n", ":2: time_ns \"NaN\" is not a number"},
		{"", ": empty file"},
		{"time_ns,flow,gbps\n5000,0,-2\n", ":2: gbps -2 is negative"},
	} {
		p := writeFile(t, "bad.csv", c.text)
		_, err := ReadSamples(p, RatesHeader)
		require.Error(t, err)
		assert.Equal(t, p+c.want, strings.SplitN(err.Error(), ", want the header", 2)[0])
		assert.NotContains(t, err.Error(), "\n")
	}
	_, err = ReadSamples(filepath.Join(t.TempDir(), "none.csv"), RatesHeader)
	assert.ErrorIs(t, err, os.ErrNotExist)
}

func TestReadFCT(t *testing.T) {
	p := writeFile(t, "f.csv", roce.FCTHeader+"\n0,h1,h0,1000000,0.000,328918.400,328918.400,85499.360,3.8470,true,0\n1,h2,h0,500,10.000,,,1000.000,,false,0\n")
	f, err := ReadFCT(p)
	require.NoError(t, err)
	assert.Equal(t, []FlowFCT{
		{Flow: 0, Src: "h1", Dst: "h0", Size: 1000000, FCT: 328918.4, Ideal: 85499.36, Slowdown: 3.847, OK: true},
		{Flow: 1, Src: "h2", Dst: "h0", Size: 500, Ideal: 1000},
	}, f)
	assert.Equal(t, []float64{328918.4}, FCTs(f))
	p = writeFile(t, "f.csv", roce.FCTHeader+"\n0,h1,h0,1000000,0.000,1,1,1,1,maybe,0\n")
	_, err = ReadFCT(p)
	assert.EqualError(t, err, p+":2: ok \"maybe\" is not true or false")
}

func TestReadRun(t *testing.T) {
	p := writeFile(t, "s.json", `{"topology":"star:hosts=3","flows":2,"drops":{"queue":1,"loss":0},"ports":[{"port":"s0/0","peer":"h0","paused_ns":1500,"max_queue_bytes":9000}],"fct_slowdown":[{"bucket":"<10KB","flows":2,"p50":1.5,"p95":2,"p99":2.5}]}`)
	r, err := ReadRun(p)
	require.NoError(t, err)
	assert.Equal(t, []PortStats{{Port: "s0/0", Peer: "h0", PausedNS: 1500, MaxQueue: 9000}}, r.Ports)
	assert.Equal(t, []Bucket{{Name: "<10KB", Flows: 2, P50: 1.5, P95: 2, P99: 2.5}}, r.Slowdown)
	assert.Equal(t, [][2]string{{"topology", "star:hosts=3"}, {"flows", "2"}, {"drops.queue", "1"}, {"drops.loss", "0"}}, r.Figures)

	p = writeFile(t, "s.json", `{"complete":true}`)
	_, err = ReadRun(p)
	assert.ErrorContains(t, err, p+`: no "ports" key`)
	p = writeFile(t, "s.json", "{\n\"ports\": [\n}")
	_, err = ReadRun(p)
	assert.ErrorContains(t, err, p+": line 3: invalid character '}'")
	p = writeFile(t, "s.json", `{"ports":[{"port":"a","paused_ns":"long"}]}`)
	_, err = ReadRun(p)
	assert.ErrorContains(t, err, p+": key ports.paused_ns: string where float64 was expected")
}

// svgTexts returns the text of every <text> element of an SVG document,
// which must parse as XML.
func svgTexts(t *testing.T, b []byte) []string {
	t.Helper()
	texts, err := svgtest.Texts(b)
	require.NoError(t, err)
	return texts
}

// Every plot renders as SVG that parses and carries its title, axis
// labels and series names, and as a PNG that decodes at the figure size.
func TestRender(t *testing.T) {
	runs := []Named[[]*Series]{
		{Name: "a", Value: []*Series{{Name: "s0/1", T: []float64{0, 50000}, V: []float64{0, 20000}}, {Name: "s0/2", T: []float64{0}, V: []float64{0}}}},
		{Name: "b", Value: []*Series{{Name: "s0/1", T: []float64{0, 50000}, V: []float64{1000, 3000}}}},
	}
	q, err := QueuePlot(Pick(runs, nil, 6, (*Series).Max))
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, Render(&b, q, "svg"))
	texts := svgTexts(t, b.Bytes())
	assert.Contains(t, texts, "Switch egress queue length")
	assert.Contains(t, texts, "queue length (KB)")
	assert.Contains(t, texts, "time (µs)")
	assert.Contains(t, texts, "a: port s0/1")
	assert.Contains(t, texts, "b: port s0/1")
	assert.NotContains(t, texts, "a: port s0/2", "a queue that stayed empty is left out")

	b.Reset()
	require.NoError(t, Render(&b, q, "png"))
	img, err := png.Decode(&b)
	require.NoError(t, err)
	// 20 cm by 12 cm at gonum's 96 dpi.
	assert.Equal(t, 756, img.Bounds().Dx())
	assert.Equal(t, 454, img.Bounds().Dy())

	path := filepath.Join(t.TempDir(), "x.svg")
	require.NoError(t, Save(q, path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, svgTexts(t, data), "a: port s0/1")
	gif := filepath.Join(t.TempDir(), "x.gif")
	assert.EqualError(t, Save(q, gif), fmt.Sprintf("%q: extension .gif, want .svg or .png", gif))
	assert.NoFileExists(t, gif)
}

func TestFormat(t *testing.T) {
	f, err := Format("a/b.SVG")
	assert.NoError(t, err)
	assert.Equal(t, "svg", f)
	f, err = Format("b.png")
	assert.NoError(t, err)
	assert.Equal(t, "png", f)
	_, err = Format("b.gif")
	assert.EqualError(t, err, `"b.gif": extension .gif, want .svg or .png`)
	_, err = Format("plot")
	assert.EqualError(t, err, `"plot" has no extension: want .svg or .png`)
}

// The PSN plot of a capture names each event kind it has; the HTML page
// holds every figure as an SVG data URI that parses.
func TestCapturePlotsAndHTML(t *testing.T) {
	path := simCapture(t, 4, "")
	c, err := ReadCapture(path, decode.Options{})
	require.NoError(t, err)
	flows := c.Busiest(6, nil, false)
	p, err := PSNPlot(c, flows)
	require.NoError(t, err)
	var b bytes.Buffer
	require.NoError(t, Render(&b, p, "svg"))
	texts := svgTexts(t, b.Bytes())
	assert.Contains(t, texts, "PSN over time: trace.pcap")
	label := flows[0].Label()
	for k := range numEvents {
		if len(flows[0].Events[k]) > 0 {
			assert.Contains(t, texts, eventNames[k]+" "+label)
		} else {
			assert.NotContains(t, texts, eventNames[k]+" "+label)
		}
	}
	tp, err := ThroughputPlot(c, c.Busiest(6, nil, true), AutoBin(c.Span))
	require.NoError(t, err)
	rt, err := RTTPlot(c, flows)
	require.NoError(t, err)
	var h bytes.Buffer
	require.NoError(t, WriteHTML(&h, "run <1>", []Figure{{"psn", p}, {"throughput", tp}, {"rtt", rt}},
		[]Table{{Title: "t", Header: []string{"a", "b"}, Rows: [][]string{{"x&y", "1"}}}}))
	page := h.String()
	assert.Contains(t, page, "<title>run &lt;1&gt;</title>")
	assert.Contains(t, page, "<td>x&amp;y</td><td>1</td>")
	assert.Equal(t, 3, strings.Count(page, `src="data:image/svg+xml;base64,`))
}

// Inputs with nothing to draw give a plot that says so, not a panic or a
// hang (gonum's ticks need finite axis bounds).
func TestEmptyInputs(t *testing.T) {
	var plots []*gplot.Plot
	add := func(p *gplot.Plot, err error) {
		t.Helper()
		require.NoError(t, err)
		plots = append(plots, p)
	}
	c := &Capture{Name: "empty.pcap"}
	add(PSNPlot(c, nil))
	add(ThroughputPlot(c, nil, AutoBin(0)))
	add(RTTPlot(c, nil))
	add(RatePlot([]Named[[]*Series]{{Name: "r"}}))
	add(QueuePlot([]Named[[]*Series]{{Name: "q"}}))
	add(PausePlot([]Named[*Run]{{Name: "s", Value: &Run{}}}, nil))
	add(SlowdownPlot([]Named[[]Bucket]{{Name: "f"}}))
	add(CDFPlot([]Named[[]FlowFCT]{{Name: "f"}}))
	for _, p := range plots {
		var b bytes.Buffer
		require.NoError(t, Render(&b, p, "svg"))
		texts := svgTexts(t, b.Bytes())
		assert.True(t, strings.HasSuffix(texts[0], "(nothing to plot)") || strings.HasSuffix(texts[0], "(no port was paused)"), texts[0])
	}
}

// ReadColl reads rocekit coll --json lines; the series are split by
// algorithm and sorted by size; errors name file and line.
func TestReadColl(t *testing.T) {
	p := writeFile(t, "c.json", `{"op":"allreduce","algo":"tree","ranks":8,"size":4000,"time_us":20,"algbw_gbps":0.2,"busbw_gbps":0.35,"wrong":0}
{"op":"allreduce","algo":"ring","ranks":8,"size":16000,"time_us":30,"algbw_gbps":0.5,"busbw_gbps":0.9,"wrong":0}
{"op":"allreduce","algo":"ring","ranks":8,"size":4000,"time_us":25,"algbw_gbps":0.16,"busbw_gbps":0.28,"wrong":0}
`)
	require.True(t, IsColl([]byte(`{"size":1,"busbw_gbps":2}`)))
	require.False(t, IsColl([]byte(`{"ports":[]}`)))
	rows, err := ReadColl(p)
	require.NoError(t, err)
	require.Len(t, rows, 3)
	s := collSeries([]Named[[]CollRow]{{Name: "c.json", Value: rows}})
	require.Len(t, s, 2)
	require.Equal(t, "tree", s[0].Name)
	require.Equal(t, "ring", s[1].Name)
	require.Equal(t, []int64{4000, 16000}, []int64{s[1].Value[0].Size, s[1].Value[1].Size})
	two := collSeries([]Named[[]CollRow]{{Name: "a", Value: rows[:1]}, {Name: "b", Value: rows[1:]}})
	require.Equal(t, []string{"tree", "ring"}, []string{two[0].Name, two[1].Name}, "one algorithm each, different: named by it")
	same := collSeries([]Named[[]CollRow]{{Name: "a", Value: rows[1:2]}, {Name: "b", Value: rows[2:]}})
	require.Equal(t, []string{"a", "b"}, []string{same[0].Name, same[1].Name}, "the same algorithm: named by run")
	d := writeFile(t, "d.json", `{"size":1,"busbw_gbps":2}`+"\n")
	_, err = ReadColl(d)
	require.EqualError(t, err, d+`:1: no "time_us" key: not a line of rocekit coll --json`)
	pl, err := BusBWPlot([]Named[[]CollRow]{{Name: "c.json", Value: rows}})
	require.NoError(t, err)
	require.Equal(t, "Bus bandwidth: allreduce, 8 ranks", pl.Title.Text)
}
