package sweep

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocekit/rocekit/roce"
)

// RunPoint runs one point in this process and returns its result row:
// the point's index, its parameter values and the metrics of its summary.
// A run whose data integrity or completion order check failed is an
// error, as it is for rocekit sim.
func (f *File) RunPoint(p Point) ([]string, error) {
	if f.coll != nil {
		out, err := f.coll(p.Scenario, true)
		if err != nil {
			return nil, err
		}
		return f.Row(p, out)
	}
	sc, err := roce.ParseScenario(p.Scenario)
	if err != nil {
		return nil, err
	}
	s, err := roce.New(sc, roce.Options{})
	if err != nil {
		return nil, err
	}
	sum, err := s.Run()
	if err != nil {
		return nil, err
	}
	if !sum.DataIntegrityOK || !sum.CompletionOrderOK {
		return nil, errors.New("data integrity or completion order check failed")
	}
	return f.Row(p, sum.JSON())
}

// Row is the result row of point p from its summary's JSON (rocekit sim
// --json): the point's index, its parameter values, then each metric's
// value (see the package documentation for how a value becomes a cell).
func (f *File) Row(p Point, summary []byte) ([]string, error) {
	dec := json.NewDecoder(bytes.NewReader(summary))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the summary: %v", err)
	}
	row := append([]string{strconv.Itoa(p.Index)}, p.Values...)
	for _, m := range f.Metrics {
		steps, _ := parseMetric(m)
		x, _ := lookup(v, steps)
		row = append(row, cellOf(x))
	}
	return row, nil
}

// Shard is the points of shard i of n (i from 0): every point whose index
// is i modulo n, so that neighbouring points, often alike in cost, go to
// different shards. The n shards partition the points.
func Shard(points []Point, i, n int) []Point {
	var out []Point
	for _, p := range points {
		if p.Index%n == i {
			out = append(out, p)
		}
	}
	return out
}

// ParseShard reads "I/N" (0 <= I < N).
func ParseShard(s string) (i, n int, err error) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("%q: want I/N with 0 <= I < N, e.g. 0/4", s)
	}
	return i, n, nil
}

// ShardFromEnv finds the shard from a scheduler's environment (getenv is
// os.Getenv in use): a SLURM job array's SLURM_ARRAY_TASK_ID and
// SLURM_ARRAY_TASK_COUNT (task ids counted from SLURM_ARRAY_TASK_MIN), or
// a Kubernetes Indexed Job's JOB_COMPLETION_INDEX with count, the job's
// completions (0: not given). ok is false when neither is set.
func ShardFromEnv(getenv func(string) string, count int) (i, n int, ok bool, err error) {
	if id := getenv("SLURM_ARRAY_TASK_ID"); id != "" {
		num := func(name string) (int, error) {
			v, err := strconv.Atoi(getenv(name))
			if err != nil {
				return 0, fmt.Errorf("%s=%q: want a whole number", name, getenv(name))
			}
			return v, nil
		}
		tid, err := num("SLURM_ARRAY_TASK_ID")
		if err != nil {
			return 0, 0, false, err
		}
		cnt, err := num("SLURM_ARRAY_TASK_COUNT")
		if err != nil {
			return 0, 0, false, err
		}
		lo, max := 0, cnt-1
		if getenv("SLURM_ARRAY_TASK_MIN") != "" {
			if lo, err = num("SLURM_ARRAY_TASK_MIN"); err != nil {
				return 0, 0, false, err
			}
		}
		if getenv("SLURM_ARRAY_TASK_MAX") != "" {
			if max, err = num("SLURM_ARRAY_TASK_MAX"); err != nil {
				return 0, 0, false, err
			}
		}
		if max-lo+1 != cnt {
			return 0, 0, false, fmt.Errorf("the job array's task ids %d-%d are not %d consecutive ids: give --array=0-%d (a step or a list of ids cannot be sharded)", lo, max, cnt, cnt-1)
		}
		if tid < lo || tid-lo >= cnt || cnt < 1 {
			return 0, 0, false, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is not one of %d tasks from %d", tid, cnt, lo)
		}
		return tid - lo, cnt, true, nil
	}
	if idx := getenv("JOB_COMPLETION_INDEX"); idx != "" {
		v, err := strconv.Atoi(idx)
		if err != nil || v < 0 {
			return 0, 0, false, fmt.Errorf("JOB_COMPLETION_INDEX=%q: want a whole number", idx)
		}
		if count < 1 {
			return 0, 0, false, fmt.Errorf("JOB_COMPLETION_INDEX=%d: give the number of shards (the job's completions) with --shards", v)
		}
		if v >= count {
			return 0, 0, false, fmt.Errorf("JOB_COMPLETION_INDEX=%d: not less than --shards %d", v, count)
		}
		return v, count, true, nil
	}
	return 0, 0, false, nil
}

// Progress is the state of a run, given to RunOptions.Progress.
type Progress struct {
	// Total is the points this run does (those done before not counted);
	// Done finished with a row, Failed without one, Running are running.
	Total, Done, Failed, Running int
	// Elapsed is the time since the run started; Left an estimate of the
	// time to the end from the mean time of a finished point (0: none yet).
	Elapsed, Left time.Duration
}

// RunOptions are a run's settings.
type RunOptions struct {
	// Jobs is the number of points run at once (at least 1).
	Jobs int
	// Progress, if set, is called when a point starts or ends.
	Progress func(Progress)
}

// Result says what a run did.
type Result struct {
	// Skipped counts the points the output had already; Done those run
	// now with a row; Failed those whose run failed (no row), with their
	// errors in Errors by point.
	Skipped, Done int
	Failed        []Point
	Errors        []error
	// Interrupted is true when the context ended before every point
	// started; the points running then finished and have their rows.
	Interrupted bool
	// Dropped is a last line the output had without its end (a run
	// stopped while writing it), removed before the run appended.
	Dropped string
}

// Run runs the points (those of one shard, or all) that the output file
// out does not have yet, Jobs at a time, appending each row to out as its
// point ends. A file out that exists must have the sweep's header; its
// rows name the points done (by their parameter values). When ctx ends,
// no new point starts; those running finish and write their rows, so the
// file never holds half a row and a run with the same arguments resumes.
func (f *File) Run(ctx context.Context, points []Point, out string, opt RunOptions) (*Result, error) {
	res := &Result{}
	header := f.Header()
	file, err := os.OpenFile(out, os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		return nil, err
	}
	defer file.Close()
	rows, size, dropped, err := readRows(file, out, header)
	if err != nil {
		return nil, err
	}
	res.Dropped = dropped
	if err := file.Truncate(size); err != nil {
		return nil, err
	}
	if _, err := file.Seek(size, io.SeekStart); err != nil {
		return nil, err
	}
	if size == 0 {
		if _, err := file.Write(csvLine(header)); err != nil {
			return nil, err
		}
	}
	done := map[string]bool{}
	for _, r := range rows {
		done[rowKey(r.cells[1:1+len(f.Params)])] = true
	}
	var todo []Point
	for _, p := range points {
		if done[rowKey(p.Values)] {
			res.Skipped++
		} else {
			todo = append(todo, p)
		}
	}

	jobs := max(opt.Jobs, 1)
	var mu sync.Mutex
	var writeErr error
	prog := Progress{Total: len(todo)}
	start := time.Now()
	report := func() {
		if opt.Progress == nil {
			return
		}
		prog.Elapsed = time.Since(start)
		prog.Left = 0
		if finished := prog.Done + prog.Failed; finished > 0 {
			per := prog.Elapsed / time.Duration(finished)
			prog.Left = per * time.Duration(prog.Total-finished) / time.Duration(min(jobs, max(prog.Total-finished, 1)))
		}
		opt.Progress(prog)
	}
	work := make(chan Point)
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				row, err := f.RunPoint(p)
				mu.Lock()
				prog.Running--
				if err != nil {
					prog.Failed++
					res.Failed = append(res.Failed, p)
					res.Errors = append(res.Errors, fmt.Errorf("point %d (%s): %v", p.Index, p.Label(f.Params), err))
				} else if writeErr == nil {
					if _, err := file.Write(csvLine(row)); err != nil {
						writeErr = err
					} else {
						prog.Done++
						res.Done++
					}
				}
				report()
				mu.Unlock()
			}
		}()
	}
	mu.Lock()
	report()
	mu.Unlock()
feed:
	for _, p := range todo {
		mu.Lock()
		stop := writeErr != nil
		mu.Unlock()
		if stop {
			break
		}
		if ctx.Err() != nil {
			res.Interrupted = true
			break
		}
		select {
		case <-ctx.Done():
			res.Interrupted = true
			break feed
		case work <- p:
			mu.Lock()
			prog.Running++
			report()
			mu.Unlock()
		}
	}
	close(work)
	wg.Wait()
	if writeErr != nil {
		return res, fmt.Errorf("%s: %v", out, writeErr)
	}
	return res, file.Close()
}

// csvLine is one CSV record with its line end.
func csvLine(cells []string) []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(cells)
	w.Flush()
	return b.Bytes()
}

// rowKey identifies a point by its parameter values.
func rowKey(values []string) string { return string(csvLine(values)) }

// row is one result row read back, with its line.
type row struct {
	cells []string
	line  int
}

// readRows reads a results file: its header must be header. size is the
// length of its whole lines; a last line without its end is not a row and
// is returned as dropped. An empty file has no rows.
func readRows(r io.Reader, name string, header []string) (rows []row, size int64, dropped string, err error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, 0, "", err
	}
	size = int64(len(data))
	if size > 0 && data[size-1] != '\n' {
		cut := bytes.LastIndexByte(data, '\n') + 1
		dropped = string(data[cut:])
		size = int64(cut)
		data = data[:cut]
	}
	if size == 0 {
		return nil, 0, dropped, nil
	}
	cr := csv.NewReader(bufio.NewReader(bytes.NewReader(data)))
	cr.FieldsPerRecord = -1
	first := true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		if err != nil {
			return nil, 0, "", fmt.Errorf("%s: %v", name, err)
		}
		if first {
			first = false
			if !equal(rec, header) {
				return nil, 0, "", fmt.Errorf("%s:%d: the columns %s are not the sweep's %s: give another output file", name, line, strings.Join(rec, ","), strings.Join(header, ","))
			}
			continue
		}
		if len(rec) != len(header) {
			return nil, 0, "", fmt.Errorf("%s:%d: %d cells, the header has %d", name, line, len(rec), len(header))
		}
		rows = append(rows, row{rec, line})
	}
	return rows, size, dropped, nil
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
