package plot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sort"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// CollRow is one line of `rocekit coll --json`: one collective of one size.
type CollRow struct {
	Op     string  `json:"op"`
	Algo   string  `json:"algo"`
	Ranks  int     `json:"ranks"`
	Size   int64   `json:"size"`
	TimeUS float64 `json:"time_us"`
	AlgBW  float64 `json:"algbw_gbps"`
	BusBW  float64 `json:"busbw_gbps"`
	Wrong  int     `json:"wrong"`
}

// IsColl reports whether the first line of a file is a line of `rocekit
// coll --json`.
func IsColl(first []byte) bool {
	var m map[string]json.RawMessage
	if json.Unmarshal(bytes.TrimSpace(first), &m) != nil {
		return false
	}
	_, ok := m["busbw_gbps"]
	return ok
}

// ReadColl reads `rocekit coll --json` output: one object per line, each
// with a size, a time and the bandwidths. Errors name the file and line.
func ReadColl(path string) ([]CollRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []CollRow
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var r CollRow
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		for _, k := range []string{"size", "time_us", "busbw_gbps", "algbw_gbps", "algo"} {
			if _, ok := m[k]; !ok {
				return nil, fmt.Errorf("%s:%d: no %q key: not a line of rocekit coll --json", path, line, k)
			}
		}
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %v", path, line, err)
		}
		if r.Size <= 0 || !(r.TimeUS > 0) {
			return nil, fmt.Errorf("%s:%d: size %d and time_us %v: want both positive", path, line, r.Size, r.TimeUS)
		}
		rows = append(rows, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no line of rocekit coll --json", path)
	}
	return rows, nil
}

// collSeries splits runs into one series per run and algorithm, by size.
// A series is named by its algorithm when that tells them apart (one run,
// or runs of one algorithm each, all different), else by its run, and by
// both for a run of several algorithms.
func collSeries(runs []Named[[]CollRow]) []Named[[]CollRow] {
	type split struct {
		algos []string
		by    map[string][]CollRow
	}
	splits := make([]split, len(runs))
	byAlgo := len(runs) == 1
	seen := map[string]bool{}
	for i, r := range runs {
		sp := split{by: map[string][]CollRow{}}
		for _, row := range r.Value {
			if _, ok := sp.by[row.Algo]; !ok {
				sp.algos = append(sp.algos, row.Algo)
			}
			sp.by[row.Algo] = append(sp.by[row.Algo], row)
		}
		splits[i] = sp
		if len(sp.algos) == 1 && !seen[sp.algos[0]] {
			seen[sp.algos[0]] = true
		} else if len(runs) > 1 {
			byAlgo = false
		}
	}
	if len(runs) > 1 && len(seen) == len(runs) {
		byAlgo = true
	}
	var out []Named[[]CollRow]
	for i, r := range runs {
		for _, a := range splits[i].algos {
			rows := splits[i].by[a]
			sort.Slice(rows, func(i, j int) bool { return rows[i].Size < rows[j].Size })
			name := r.Name
			switch {
			case byAlgo:
				name = a
			case len(splits[i].algos) > 1:
				name = r.Name + " " + a
			}
			out = append(out, Named[[]CollRow]{Name: name, Value: rows})
		}
	}
	return out
}

// BusBWPlot draws nccl-tests' bus bandwidth against message size, one line
// per run and algorithm, the size on a log axis.
func BusBWPlot(runs []Named[[]CollRow]) (*gplot.Plot, error) {
	return collPlot(runs, "Bus bandwidth", "busbw (GB/s)", func(r CollRow) float64 { return r.BusBW }, false)
}

// CollTimePlot draws the collective's time against message size, both axes
// logarithmic (latency-bound small sizes, bandwidth-bound large ones).
func CollTimePlot(runs []Named[[]CollRow]) (*gplot.Plot, error) {
	return collPlot(runs, "Collective time", "time (µs)", func(r CollRow) float64 { return r.TimeUS }, true)
}

func collPlot(runs []Named[[]CollRow], title, ylabel string, y func(CollRow) float64, logY bool) (*gplot.Plot, error) {
	series := collSeries(runs)
	if len(runs) == 1 && len(runs[0].Value) > 0 {
		r := runs[0].Value[0]
		title += fmt.Sprintf(": %s, %d ranks", r.Op, r.Ranks)
	}
	p := newPlot(title, "message size (bytes)", ylabel)
	p.X.Scale = gplot.LogScale{}
	p.X.Tick.Marker = gplot.LogTicks{Prec: -1}
	if logY {
		p.Y.Scale = gplot.LogScale{}
		p.Y.Tick.Marker = gplot.LogTicks{Prec: -1}
	} else {
		p.Y.Min = 0
	}
	p.Legend.Left, p.Legend.Top = true, true
	for i, s := range series {
		xy := make(plotter.XYs, len(s.Value))
		for j, r := range s.Value {
			xy[j] = plotter.XY{X: float64(r.Size), Y: y(r)}
		}
		l, pts, err := plotter.NewLinePoints(xy)
		if err != nil {
			return nil, err
		}
		l.Color, l.Dashes, l.Width = colour(i), dash(i), vg.Points(1.8)
		pts.Color = colour(i)
		p.Add(l, pts)
		p.Legend.Add(s.Name, l, pts)
	}
	return p, nil
}
