package plot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/roce"
)

// The headers of the simulator's CSV outputs (README "Fabrics").
const (
	RatesHeader  = "time_ns,flow,gbps"
	QueuesHeader = "time_ns,port,queue_bytes"
)

// Series is one named time series of a fabric run: a flow's sending rate
// or a port's queue length, sample by sample.
type Series struct {
	Name string    // the flow number or the port name, as the CSV gives it
	T    []float64 // sample times, ns
	V    []float64 // Gb/s or bytes
}

// Max returns the largest value of s (0 when empty).
func (s *Series) Max() float64 {
	m := 0.0
	for _, v := range s.V {
		m = max(m, v)
	}
	return m
}

// Sum returns the sum of the values of s.
func (s *Series) Sum() float64 {
	t := 0.0
	for _, v := range s.V {
		t += v
	}
	return t
}

// csvFile reads a CSV file whose first line must be header, calling row
// with each later line's fields (line numbers from 1). Fields are plain:
// the simulator writes no quotes.
func csvFile(path, header string, row func(line int, f []string) error) error {
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimRight(sc.Text(), "\r")
		if line == 1 {
			if text != header {
				return fmt.Errorf("%s:1: header %q, want %q", path, text, header)
			}
			continue
		}
		if text == "" {
			continue
		}
		if err := row(line, strings.Split(text, ",")); err != nil {
			return fmt.Errorf("%s:%d: %v", path, line, err)
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s:%d: %v", path, line+1, err)
	}
	if line == 0 {
		return fmt.Errorf("%s: empty file, want the header %q", path, header)
	}
	return nil
}

// number parses field i of f, named name, as a finite float of at least
// 0: times, rates, queue lengths and slowdowns are never negative.
func number(f []string, i int, name string) (float64, error) {
	v, err := strconv.ParseFloat(f[i], 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%s %q is not a number", name, f[i])
	}
	if v < 0 {
		return 0, fmt.Errorf("%s %s is negative", name, f[i])
	}
	return v, nil
}

// ReadSamples reads a PREFIX.rates.csv (header RatesHeader) or
// PREFIX.queues.csv (QueuesHeader) the simulator's --samples wrote: one
// Series per flow or port, in order of first appearance.
func ReadSamples(path, header string) ([]*Series, error) {
	cols := strings.Split(header, ",")
	by := map[string]*Series{}
	var out []*Series
	err := csvFile(path, header, func(line int, f []string) error {
		if len(f) != 3 {
			return fmt.Errorf("%d fields, want 3 (%s)", len(f), header)
		}
		t, err := number(f, 0, cols[0])
		if err != nil {
			return err
		}
		v, err := number(f, 2, cols[2])
		if err != nil {
			return err
		}
		s := by[f[1]]
		if s == nil {
			s = &Series{Name: f[1]}
			by[f[1]] = s
			out = append(out, s)
		}
		s.T = append(s.T, t)
		s.V = append(s.V, v)
		return nil
	})
	return out, err
}

// FlowFCT is one line of the simulator's --fct CSV (roce.FCTHeader).
type FlowFCT struct {
	Flow     int
	Src, Dst string
	Size     int64
	FCT      float64 // ns; 0 when the flow did not finish
	Ideal    float64 // ns
	Slowdown float64 // 0 when not finished
	OK       bool
}

// ReadFCT reads the simulator's --fct CSV.
func ReadFCT(path string) ([]FlowFCT, error) {
	var out []FlowFCT
	err := csvFile(path, roce.FCTHeader, func(line int, f []string) error {
		if want := strings.Count(roce.FCTHeader, ",") + 1; len(f) != want {
			return fmt.Errorf("%d fields, want %d (%s)", len(f), want, roce.FCTHeader)
		}
		var r FlowFCT
		var err error
		if r.Flow, err = strconv.Atoi(f[0]); err != nil {
			return fmt.Errorf("flow %q is not a number", f[0])
		}
		r.Src, r.Dst = f[1], f[2]
		if r.Size, err = strconv.ParseInt(f[3], 10, 64); err != nil || r.Size < 0 {
			return fmt.Errorf("size_bytes %q is not a byte count", f[3])
		}
		opt := func(i int, name string) (float64, error) {
			if f[i] == "" {
				return 0, nil
			}
			return number(f, i, name)
		}
		if r.FCT, err = opt(6, "fct_ns"); err != nil {
			return err
		}
		if r.Ideal, err = opt(7, "ideal_fct_ns"); err != nil {
			return err
		}
		if r.Slowdown, err = opt(8, "slowdown"); err != nil {
			return err
		}
		if r.OK, err = strconv.ParseBool(f[9]); err != nil {
			return fmt.Errorf("ok %q is not true or false", f[9])
		}
		out = append(out, r)
		return nil
	})
	return out, err
}

// Bucket is the FCT slowdown of one flow-size bucket: its name, how many
// completed flows fell in it and their 50th, 95th and 99th percentiles.
type Bucket struct {
	Name          string  `json:"bucket"`
	Flows         int     `json:"flows"`
	P50, P95, P99 float64 `json:"-"`
}

// bucketNames name roce.SizeBuckets as the simulator's JSON does.
var bucketNames = roce.BucketNames

// Slowdowns summarises the completed flows' slowdowns per size bucket as
// the simulator's summary does (roce.Slowdowns, the one home of the rule).
func Slowdowns(flows []FlowFCT) []Bucket {
	var out []Bucket
	for _, b := range roce.Slowdowns(len(flows), func(i int) int64 { return flows[i].Size }, func(i int) float64 { return flows[i].Slowdown }) {
		out = append(out, Bucket{Name: b.Bucket, Flows: b.Flows, P50: b.P50, P95: b.P95, P99: b.P99})
	}
	return out
}

// PortStats is one port of the simulator's --json "ports".
type PortStats struct {
	Port     string  `json:"port"`
	Peer     string  `json:"peer"`
	PausedNS float64 `json:"paused_ns"`
	MaxQueue float64 `json:"max_queue_bytes"`
}

// Run is what the plots take from a simulator --json summary: the ports'
// statistics, the FCT slowdown buckets and every top-level figure in file
// order (nested objects of figures flattened as "drops.queue"), for the
// summary table.
type Run struct {
	Ports    []PortStats
	Slowdown []Bucket
	Figures  [][2]string
}

// ReadRun reads a simulator --json summary. It must be one JSON object
// with a "ports" array (the summary of a fabric run).
func ReadRun(path string) (*Run, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw struct {
		Ports    []PortStats `json:"ports"`
		Slowdown []struct {
			Bucket string  `json:"bucket"`
			Flows  int     `json:"flows"`
			P50    float64 `json:"p50"`
			P95    float64 `json:"p95"`
			P99    float64 `json:"p99"`
		} `json:"fct_slowdown"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: %v", path, jsonErr(b, err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: more than one JSON value", path)
	}
	if raw.Ports == nil {
		return nil, fmt.Errorf("%s: no \"ports\" key: not the --json summary of a fabric run (rocekit sim --topology ... --json)", path)
	}
	r := &Run{Ports: raw.Ports}
	for _, s := range raw.Slowdown {
		r.Slowdown = append(r.Slowdown, Bucket{s.Bucket, s.Flows, s.P50, s.P95, s.P99})
	}
	r.Figures, err = figures(b)
	return r, err
}

// jsonErr adds the line to a JSON syntax error.
func jsonErr(b []byte, err error) error {
	var off int64
	switch e := err.(type) {
	case *json.SyntaxError:
		off = e.Offset
	case *json.UnmarshalTypeError:
		return fmt.Errorf("key %s: %s where %s was expected", e.Field, e.Value, e.Type)
	default:
		return err
	}
	line := 1 + bytes.Count(b[:min(int(off), len(b))], []byte("\n"))
	return fmt.Errorf("line %d: %v", line, err)
}

// figures lists the scalars of the top-level object in file order, with
// the scalars of nested objects as "key.sub"; arrays are left out.
func figures(b []byte) ([][2]string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out [][2]string
	var walk func(prefix string) error
	walk = func(prefix string) error {
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key := prefix + kt.(string)
			v, err := dec.Token()
			if err != nil {
				return err
			}
			switch v := v.(type) {
			case json.Delim:
				if v == '{' {
					if err := walk(key + "."); err != nil {
						return err
					}
				} else {
					// Skip the array.
					for depth := 1; depth > 0; {
						t, err := dec.Token()
						if err != nil {
							return err
						}
						if d, ok := t.(json.Delim); ok {
							if d == '[' || d == '{' {
								depth++
							} else {
								depth--
							}
						}
					}
				}
			case json.Number:
				out = append(out, [2]string{key, v.String()})
			case string:
				out = append(out, [2]string{key, v})
			case bool:
				out = append(out, [2]string{key, strconv.FormatBool(v)})
			case nil:
				out = append(out, [2]string{key, "null"})
			}
		}
		_, err := dec.Token() // the closing brace
		return err
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, walk("")
}
