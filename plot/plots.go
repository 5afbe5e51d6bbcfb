package plot

import (
	"fmt"
	"image/color"
	"math"
	"sort"
	"strings"
	"time"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Named is a value with the name its series carry in legends: an input
// file, or the NAME of a NAME=FILE argument.
type Named[T any] struct {
	Name  string
	Value T
}

// palette colours the flows, ports and runs; red, orange, purple and green
// are kept for the PSN graph's event marks.
var palette = []color.Color{
	color.RGBA{31, 119, 180, 255},  // blue
	color.RGBA{140, 86, 75, 255},   // brown
	color.RGBA{23, 190, 207, 255},  // cyan
	color.RGBA{127, 127, 127, 255}, // grey
	color.RGBA{188, 189, 34, 255},  // olive
	color.RGBA{227, 119, 194, 255}, // pink
	color.RGBA{0, 0, 128, 255},     // navy
	color.RGBA{255, 127, 14, 255},  // orange
	color.RGBA{44, 160, 44, 255},   // green
	color.RGBA{148, 103, 189, 255}, // purple
}

func colour(i int) color.Color { return palette[i%len(palette)] }

// dashes distinguish runs overlaid on one plot.
var dashes = [][]vg.Length{nil, {vg.Points(6), vg.Points(3)}, {vg.Points(2), vg.Points(2)}, {vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)}}

func dash(i int) []vg.Length { return dashes[i%len(dashes)] }

// eventStyle is how the PSN graph marks each event kind.
var eventStyle = [numEvents]struct {
	c     color.Color
	shape draw.GlyphDrawer
	r     vg.Length
}{
	EvRequest: {nil, draw.CircleGlyph{}, 1.3},
	EvRetrans: {color.RGBA{214, 39, 40, 255}, draw.CrossGlyph{}, 3},
	EvACK:     {nil, nil, 0},
	EvNAK:     {color.RGBA{255, 127, 14, 255}, draw.TriangleGlyph{}, 3.2},
	EvRNRNAK:  {color.RGBA{148, 103, 189, 255}, draw.SquareGlyph{}, 3},
	EvCNP:     {color.RGBA{44, 160, 44, 255}, draw.PyramidGlyph{}, 3},
}

// timeUnit picks the unit of a time axis spanning span ns: the divisor
// from ns and its name.
func timeUnit(span float64) (float64, string) {
	switch {
	case span < 10e3:
		return 1, "ns"
	case span < 10e6:
		return 1e3, "µs"
	case span < 10e9:
		return 1e6, "ms"
	}
	return 1e9, "s"
}

func newPlot(title, x, y string) *gplot.Plot {
	p := gplot.New()
	p.Title.Text = title
	p.Title.TextStyle.Font.Size = vg.Points(13)
	p.X.Label.Text = x
	p.Y.Label.Text = y
	p.X.Label.TextStyle.Font.Size = vg.Points(11)
	p.Y.Label.TextStyle.Font.Size = vg.Points(11)
	p.Add(plotter.NewGrid())
	p.Legend.Top = true
	p.Legend.TextStyle.Font.Size = vg.Points(9)
	p.X.Tick.Marker = cleanTicks{}
	p.Y.Tick.Marker = cleanTicks{}
	return p
}

// cleanTicks are gonum's default ticks labelled without trailing zeros
// (5000, not 5000.00).
type cleanTicks struct{}

// Ticks implements gplot.Ticker.
func (cleanTicks) Ticks(lo, hi float64) []gplot.Tick {
	t := gplot.DefaultTicks{}.Ticks(lo, hi)
	for i := range t {
		if l := t[i].Label; strings.Contains(l, ".") && !strings.ContainsAny(l, "eE") {
			l = strings.TrimRight(l, "0")
			t[i].Label = strings.TrimSuffix(l, ".")
		}
	}
	return t
}

// headroom raises the top of the Y axis so that a legend of n
// entries at the top of the plot does not cover the data.
// A plot without any series says so in its title.
func headroom(p *gplot.Plot, n int) {
	if n == 0 && !strings.HasSuffix(p.Title.Text, ")") {
		p.Title.Text += " (nothing to plot)"
	}
	// Axes without data have no range: give them one (gonum's ticks
	// need finite bounds).
	for _, a := range []*gplot.Axis{&p.X, &p.Y} {
		if math.IsInf(a.Min, 0) || math.IsInf(a.Max, 0) || math.IsNaN(a.Min) || math.IsNaN(a.Max) || a.Max < a.Min {
			a.Min, a.Max = 0, 1
			if _, ok := a.Scale.(gplot.LogScale); ok {
				a.Min, a.Max = 1, 10
			}
		}
	}
	if n == 0 || !p.Legend.Top {
		return
	}
	frac := 0.05*float64(n) + 0.04
	if _, ok := p.Y.Scale.(gplot.LogScale); ok {
		if top := p.Y.Max * math.Pow(p.Y.Max/p.Y.Min, frac); p.Y.Min > 0 && p.Y.Max > p.Y.Min && !math.IsInf(top, 0) {
			p.Y.Max = top
		}
		return
	}
	span := p.Y.Max - p.Y.Min
	if span <= 0 {
		span = max(math.Abs(p.Y.Max), 1)
	}
	if top := p.Y.Max + span*frac; !math.IsInf(top, 0) {
		p.Y.Max = top
	}
}

// flowName is a flow's legend name: its label, or only its QP when space
// is short.
func flowName(f *Flow) string { return f.Label() }

// PSNPlot draws the PSN of each flow's requests against time, as
// Wireshark's stevens graph draws TCP sequence numbers (PSNs relative to
// each flow's first request), with the ACKs as a step line (as tcptrace
// draws them) and retransmissions, NAKs, RNR NAKs and CNPs as distinct
// marks.
func PSNPlot(c *Capture, flows []*Flow) (*gplot.Plot, error) {
	div, unit := timeUnit(float64(c.Span))
	p := newPlot(fmt.Sprintf("PSN over time: %s", baseName(c.Name)), "time since the first frame ("+unit+")", "PSN − first request PSN (packets)")
	entries := 0
	p.Legend.Left = true
	for i, f := range flows {
		name := flowName(f)
		for k := range numEvents {
			ev := f.Events[k]
			if len(ev) == 0 {
				continue
			}
			xy := make(plotter.XYs, len(ev))
			for j, e := range ev {
				xy[j] = plotter.XY{X: float64(e.T) / div, Y: float64(e.PSN)}
			}
			label := eventNames[k] + " " + name
			if k == EvACK {
				l, err := plotter.NewLine(xy)
				if err != nil {
					return nil, err
				}
				l.StepStyle = plotter.PostStep
				l.Color = colour(i)
				l.Dashes = []vg.Length{vg.Points(3), vg.Points(2)}
				l.Width = vg.Points(1)
				p.Add(l)
				entries++
				p.Legend.Add(label, l)
				continue
			}
			s, err := plotter.NewScatter(xy)
			if err != nil {
				return nil, err
			}
			st := eventStyle[k]
			s.GlyphStyle = draw.GlyphStyle{Color: st.c, Shape: st.shape, Radius: st.r}
			if st.c == nil {
				s.GlyphStyle.Color = colour(i)
			}
			p.Add(s)
			entries++
			p.Legend.Add(label, s)
		}
	}
	headroom(p, entries)
	return p, nil
}

// Throughput returns the payload bytes f carried in each bin of width bin
// from the capture's first frame, over span.
func Throughput(f *Flow, span, bin time.Duration) []int64 {
	n := int(span/bin) + 1
	out := make([]int64, n)
	for _, pp := range f.Payload {
		i := min(int(pp.T/bin), n-1)
		out[i] += int64(pp.Bytes)
	}
	return out
}

// AutoBin is the bin width of the throughput plot when none is asked:
// about a hundredth of the span, rounded up to 1, 2 or 5 times a power of
// ten nanoseconds (at least 1 µs).
func AutoBin(span time.Duration) time.Duration {
	want := max(float64(span)/100, 1000)
	m := math.Pow(10, math.Floor(math.Log10(want)))
	for _, f := range []float64{1, 2, 5, 10} {
		if f*m >= want {
			return time.Duration(f * m)
		}
	}
	return time.Duration(10 * m)
}

// ThroughputPlot draws each flow's payload throughput over time: the
// payload bytes of each bin of width bin, as Gb/s.
func ThroughputPlot(c *Capture, flows []*Flow, bin time.Duration) (*gplot.Plot, error) {
	div, unit := timeUnit(float64(c.Span))
	p := newPlot(fmt.Sprintf("Payload throughput per %v bin: %s", bin, baseName(c.Name)), "time since the first frame ("+unit+")", "payload throughput (Gb/s)")
	entries := 0
	p.Y.Min = 0
	for i, f := range flows {
		bins := Throughput(f, c.Span, bin)
		xy := make(plotter.XYs, 0, len(bins)+1)
		for j, b := range bins {
			xy = append(xy, plotter.XY{X: float64(time.Duration(j)*bin) / div, Y: float64(b) * 8 / float64(bin)})
		}
		xy = append(xy, plotter.XY{X: float64(time.Duration(len(bins))*bin) / div, Y: xy[len(xy)-1].Y})
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PostStep
		l.Color = colour(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		entries++
		p.Legend.Add(flowName(f), l)
	}
	headroom(p, entries)
	return p, nil
}

// RTTPlot draws each flow's ACK round trips against the time of the
// request.
func RTTPlot(c *Capture, flows []*Flow) (*gplot.Plot, error) {
	div, unit := timeUnit(float64(c.Span))
	var top time.Duration
	for _, f := range flows {
		for _, s := range f.RTT {
			top = max(top, s.RTT)
		}
	}
	ydiv, yunit := timeUnit(float64(top))
	p := newPlot(fmt.Sprintf("ACK round-trip time: %s", baseName(c.Name)), "time of the request ("+unit+")", "request to its ACK ("+yunit+")")
	entries := 0
	p.Y.Min = 0
	for i, f := range flows {
		if len(f.RTT) == 0 {
			continue
		}
		xy := make(plotter.XYs, len(f.RTT))
		for j, s := range f.RTT {
			xy[j] = plotter.XY{X: float64(s.T) / div, Y: float64(s.RTT) / ydiv}
		}
		l, sc, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		l.Color = colour(i)
		l.Width = vg.Points(0.8)
		sc.Color = colour(i)
		sc.Shape = draw.CircleGlyph{}
		sc.Radius = vg.Points(2)
		p.Add(l, sc)
		entries++
		p.Legend.Add(fmt.Sprintf("%s (%s)", flowName(f), count(len(f.RTT), "sample")), l, sc)
	}
	headroom(p, entries)
	return p, nil
}

// Pick returns up to n series of every run: those named in names when it
// is not empty (in file order), else the n with the largest key, largest
// first, leaving out those whose key is 0 (flows that never sent, queues
// that stayed empty). The result keeps the runs' order.
func Pick(runs []Named[[]*Series], names map[string]bool, n int, key func(*Series) float64) []Named[[]*Series] {
	out := make([]Named[[]*Series], len(runs))
	for i, r := range runs {
		out[i].Name = r.Name
		var sel []*Series
		for _, s := range r.Value {
			if len(names) == 0 || names[s.Name] {
				sel = append(sel, s)
			}
		}
		if len(names) == 0 {
			// Flows that never sent and queues that stayed empty are left out.
			k := 0
			for _, s := range sel {
				if key(s) > 0 {
					sel[k] = s
					k++
				}
			}
			sel = sel[:k]
			sort.SliceStable(sel, func(a, b int) bool { return key(sel[a]) > key(sel[b]) })
			if len(sel) > n {
				sel = sel[:n]
			}
		}
		out[i].Value = sel
	}
	return out
}

// seriesPlot draws series of several runs against time (ns in the files):
// one colour per series, one dash pattern per run.
func seriesPlot(title, y string, scale float64, runs []Named[[]*Series], name func(string) string) (*gplot.Plot, error) {
	span := 0.0
	for _, r := range runs {
		for _, s := range r.Value {
			if len(s.T) > 0 {
				span = max(span, s.T[len(s.T)-1])
			}
		}
	}
	div, unit := timeUnit(span)
	p := newPlot(title, "time ("+unit+")", y)
	entries := 0
	p.Y.Min = 0
	p.Legend.Left = false
	for ri, r := range runs {
		for si, s := range r.Value {
			xy := make(plotter.XYs, len(s.T))
			for j := range s.T {
				xy[j] = plotter.XY{X: s.T[j] / div, Y: s.V[j] / scale}
			}
			l, err := plotter.NewLine(xy)
			if err != nil {
				return nil, err
			}
			l.Color = colour(si)
			l.Dashes = dash(ri)
			l.Width = vg.Points(1.5)
			p.Add(l)
			label := name(s.Name)
			if len(runs) > 1 {
				label = r.Name + ": " + label
			}
			entries++
			p.Legend.Add(label, l)
		}
	}
	headroom(p, entries)
	return p, nil
}

// RatePlot draws each flow's sending rate over time (the simulator's
// PREFIX.rates.csv), as the DCQCN and HPCC papers draw them.
func RatePlot(runs []Named[[]*Series]) (*gplot.Plot, error) {
	return seriesPlot("Sending rate per flow"+runNames(runs), "sending rate (Gb/s)", 1, runs, func(s string) string { return "flow " + s })
}

// QueuePlot draws each port's egress queue length over time (the
// simulator's PREFIX.queues.csv), in KB (1000 bytes).
func QueuePlot(runs []Named[[]*Series]) (*gplot.Plot, error) {
	return seriesPlot("Switch egress queue length"+runNames(runs), "queue length (KB)", 1000, runs, func(s string) string { return "port " + s })
}

// runNames is the title's suffix naming a single run.
func runNames(runs []Named[[]*Series]) string {
	if len(runs) == 1 {
		return ": " + runs[0].Name
	}
	return ""
}

// PausePorts returns up to n ports, those named in names when it is not
// empty, else the ports paused longest in any run (ports never paused
// left out), longest first.
func PausePorts(runs []Named[*Run], names map[string]bool, n int) []string {
	longest := map[string]float64{}
	var order []string
	for _, r := range runs {
		for _, pt := range r.Value.Ports {
			if _, ok := longest[pt.Port]; !ok {
				order = append(order, pt.Port)
			}
			longest[pt.Port] = max(longest[pt.Port], pt.PausedNS)
		}
	}
	var out []string
	for _, p := range order {
		if len(names) > 0 && names[p] || len(names) == 0 && longest[p] > 0 {
			out = append(out, p)
		}
	}
	if len(names) == 0 {
		sort.SliceStable(out, func(a, b int) bool { return longest[out[a]] > longest[out[b]] })
		if len(out) > n {
			out = out[:n]
		}
	}
	return out
}

// PausePlot draws the time each port spent paused by PFC (the --json
// "ports" paused_ns), one bar per port and run.
func PausePlot(runs []Named[*Run], ports []string) (*gplot.Plot, error) {
	title := "PFC paused time per port"
	if len(runs) == 1 {
		title += ": " + runs[0].Name
	}
	if len(ports) == 0 {
		title += " (no port was paused)"
	}
	top := 0.0
	for _, r := range runs {
		for _, pt := range r.Value.Ports {
			top = max(top, pt.PausedNS)
		}
	}
	div, unit := timeUnit(top)
	p := newPlot(title, "port (egress, paused by its peer)", "paused time ("+unit+")")
	entries := 0
	p.Legend.Left = false
	if len(ports) == 0 {
		p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = 0, 1, 0, 1
		headroom(p, entries)
		return p, nil
	}
	w := vg.Points(min(40, 360/float64(len(ports)*len(runs))))
	for ri, r := range runs {
		by := map[string]float64{}
		for _, pt := range r.Value.Ports {
			by[pt.Port] = pt.PausedNS
		}
		vals := make(plotter.Values, len(ports))
		for i, name := range ports {
			vals[i] = by[name] / div
		}
		b, err := plotter.NewBarChart(vals, w)
		if err != nil {
			return nil, err
		}
		b.Color = colour(ri)
		b.LineStyle.Width = 0
		b.Offset = w * vg.Length(float64(ri)-float64(len(runs)-1)/2)
		p.Add(b)
		if len(runs) > 1 {
			entries++
			p.Legend.Add(r.Name, b)
		}
	}
	p.NominalX(ports...)
	p.Y.Min = 0
	headroom(p, entries)
	return p, nil
}

// SlowdownPlot draws the FCT slowdown p50, p95 and p99 of each flow-size
// bucket, one colour per run and one dash pattern and mark per percentile, as HPCC's
// FCT slowdown plots do; the slowdown axis is logarithmic when the values
// span more than a factor of 20.
func SlowdownPlot(runs []Named[[]Bucket]) (*gplot.Plot, error) {
	title := "FCT slowdown by flow size"
	if len(runs) == 1 {
		title += ": " + runs[0].Name
	}
	// The buckets in size order.
	var names []string
	idx := map[string]int{}
	for _, want := range bucketNames {
		for _, r := range runs {
			for _, b := range r.Value {
				if b.Name == want {
					if _, ok := idx[want]; !ok {
						idx[want] = len(names)
						names = append(names, want)
					}
				}
			}
		}
	}
	for _, r := range runs {
		for _, b := range r.Value {
			if _, ok := idx[b.Name]; !ok {
				idx[b.Name] = len(names)
				names = append(names, b.Name)
			}
		}
	}
	p := newPlot(title, "flow size", "FCT slowdown (FCT / ideal FCT)")
	entries := 0
	p.Legend.Left = true
	lo, hi := math.Inf(1), 0.0
	for _, r := range runs {
		for _, b := range r.Value {
			lo, hi = min(lo, b.P50), max(hi, b.P99)
		}
	}
	if hi > 0 && lo > 0 && hi/lo > 20 {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = gplot.LogTicks{Prec: -1}
	} else {
		p.Y.Min = 0
	}
	shapes := []draw.GlyphDrawer{draw.CircleGlyph{}, draw.TriangleGlyph{}, draw.SquareGlyph{}}
	for ri, r := range runs {
		if len(r.Value) == 0 {
			continue
		}
		for pi, pc := range []string{"p50", "p95", "p99"} {
			xy := make(plotter.XYs, len(r.Value))
			for j, b := range r.Value {
				v := [3]float64{b.P50, b.P95, b.P99}[pi]
				xy[j] = plotter.XY{X: float64(idx[b.Name]), Y: v}
			}
			sort.Slice(xy, func(a, b int) bool { return xy[a].X < xy[b].X })
			l, sc, err := plotter.NewLinePoints(xy)
			if err != nil {
				return nil, err
			}
			// One colour per run and one dash pattern and mark per
			// percentile; a single run gets a colour per percentile too.
			c := colour(ri)
			if len(runs) == 1 {
				c = colour(pi)
			}
			l.Color, sc.Color = c, c
			l.Dashes = dash(pi)
			l.Width = vg.Points(1.5)
			sc.Shape, sc.Radius = shapes[pi], vg.Points(3.5)
			p.Add(l, sc)
			label := pc
			if len(runs) > 1 {
				label = r.Name + " " + pc
			}
			entries++
			p.Legend.Add(label, l, sc)
		}
	}
	if len(names) > 0 {
		p.NominalX(names...)
	}
	if len(names) == 1 {
		p.X.Min, p.X.Max = -0.5, 0.5
	}
	headroom(p, entries)
	return p, nil
}

// FCTs returns the FCTs (ns) of the flows that completed, sorted.
func FCTs(flows []FlowFCT) []float64 {
	var v []float64
	for _, f := range flows {
		if f.OK && f.FCT > 0 {
			v = append(v, f.FCT)
		}
	}
	sort.Float64s(v)
	return v
}

// CDFPlot draws the CDF of the completed flows' FCTs of each run; the FCT
// axis is logarithmic when the FCTs span more than a factor of 100.
func CDFPlot(runs []Named[[]FlowFCT]) (*gplot.Plot, error) {
	title := "FCT CDF"
	if len(runs) == 1 {
		title += ": " + runs[0].Name
	}
	lo, hi := math.Inf(1), 0.0
	sets := make([][]float64, len(runs))
	for i, r := range runs {
		sets[i] = FCTs(r.Value)
		if n := len(sets[i]); n > 0 {
			lo, hi = min(lo, sets[i][0]), max(hi, sets[i][n-1])
		}
	}
	div, unit := timeUnit(hi)
	p := newPlot(title, "flow completion time ("+unit+")", "fraction of completed flows")
	entries := 0
	p.Legend.Left = false
	p.Legend.Top = false
	p.Y.Min, p.Y.Max = 0, 1
	if hi > 0 && hi/lo > 100 {
		p.X.Scale = gplot.LogScale{}
		p.X.Tick.Marker = gplot.LogTicks{Prec: -1}
	}
	for i, r := range runs {
		v := sets[i]
		if len(v) == 0 {
			continue
		}
		xy := make(plotter.XYs, 0, len(v)+1)
		xy = append(xy, plotter.XY{X: v[0] / div, Y: 0})
		for j, x := range v {
			xy = append(xy, plotter.XY{X: x / div, Y: float64(j+1) / float64(len(v))})
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, err
		}
		l.StepStyle = plotter.PreStep
		l.Color = colour(i)
		l.Dashes = dash(i)
		l.Width = vg.Points(1.8)
		p.Add(l)
		entries++
		p.Legend.Add(fmt.Sprintf("%s (%s)", r.Name, count(len(v), "flow")), l)
	}
	headroom(p, entries)
	return p, nil
}

// count is "1 flow", "2 flows".
func count(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
