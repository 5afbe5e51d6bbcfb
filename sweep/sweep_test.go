package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// incast is a small fabric sweep: 2 sizes x 2 Kmin x 2 seeds = 8 points of
// a 2-to-1 incast on a 3-host star, each a few hundred events.
const incast = `{
  "scenario": {"seed": 1, "topology": "star:hosts=3"},
  "grid": {
    "traffic": ["incast:n=2,size=100KB", "incast:n=2,size=200KB"],
    "fabric.ecn.kmax_bytes": 400000,
    "fabric.ecn.kmin_bytes": {"from": 100000, "to": 300000, "step": 200000}
  },
  "seeds": 2,
  "metrics": ["bytes_delivered", "flows_completed", "fct_slowdown[bucket=100KB-1MB].flows", "latency_ns.count", "wr_completed", "fct_slowdown[bucket=1MB-10MB].p99"]
}`

func parse(t *testing.T, text string) *File {
	t.Helper()
	f, err := Parse("s.json", []byte(text), Options{})
	require.NoError(t, err)
	return f
}

func pointValues(f *File) []string {
	var out []string
	for _, p := range f.Points {
		out = append(out, strings.Join(p.Values, " "))
	}
	return out
}

func TestProductOrderAndRanges(t *testing.T) {
	f := parse(t, strings.Replace(incast, `, "fct_slowdown[bucket=1MB-10MB].p99"`, "", 1))
	assert.Equal(t, []string{"traffic", "fabric.ecn.kmax_bytes", "fabric.ecn.kmin_bytes", "seed"}, f.Params)
	assert.Equal(t, []string{"point", "traffic", "fabric.ecn.kmax_bytes", "fabric.ecn.kmin_bytes", "seed",
		"bytes_delivered", "flows_completed", "fct_slowdown[bucket=100KB-1MB].flows", "latency_ns.count", "wr_completed"}, f.Header())
	// The first key changes slowest, the seed fastest.
	assert.Equal(t, []string{
		"incast:n=2,size=100KB 400000 100000 1", "incast:n=2,size=100KB 400000 100000 2",
		"incast:n=2,size=100KB 400000 300000 1", "incast:n=2,size=100KB 400000 300000 2",
		"incast:n=2,size=200KB 400000 100000 1", "incast:n=2,size=200KB 400000 100000 2",
		"incast:n=2,size=200KB 400000 300000 1", "incast:n=2,size=200KB 400000 300000 2",
	}, pointValues(f))
	// The point's scenario has the keys set, the objects on the way made.
	var sc struct {
		Seed    uint64
		Traffic string
		Fabric  struct {
			ECN struct {
				KMin int `json:"kmin_bytes"`
				KMax int `json:"kmax_bytes"`
			} `json:"ecn"`
		}
	}
	require.NoError(t, json.Unmarshal(f.Points[5].Scenario, &sc))
	assert.Equal(t, uint64(2), sc.Seed)
	assert.Equal(t, "incast:n=2,size=200KB", sc.Traffic)
	assert.Equal(t, 100000, sc.Fabric.ECN.KMin)
	assert.Equal(t, 400000, sc.Fabric.ECN.KMax)
}

func TestRangesZipSeeds(t *testing.T) {
	f := parse(t, `{"grid": {"links[0].faults.loss": {"from": 0, "to": 0.3, "step": 0.1},
		"qps[0].work.size": {"from": 1024, "to": 8192, "factor": 2}}, "mode": "zip", "seeds": [7, 9]}`)
	assert.Equal(t, []string{
		"0.0 1024 7", "0.0 1024 9", "0.1 2048 7", "0.1 2048 9",
		"0.2 4096 7", "0.2 4096 9", "0.3 8192 7", "0.3 8192 9",
	}, pointValues(f))
	f = parse(t, `{"grid": {"seed": {"from": 3, "to": 5, "step": 1}}}`)
	assert.Equal(t, []string{"seed"}, f.Params)
	assert.Equal(t, []string{"3", "4", "5"}, pointValues(f))
	// No grid: one point with the base scenario's seed.
	f = parse(t, `{"scenario": {"seed": 42, "topology": "star:hosts=3", "traffic": "incast:n=2,size=1KB"}}`)
	assert.Equal(t, []string{"42"}, pointValues(f))
	f = parse(t, `{"seeds": {"from": 10, "to": 12, "step": 1}}`)
	assert.Equal(t, []string{"10", "11", "12"}, pointValues(f))
}

// Every error a bad sweep file can cause is one line naming the file, the
// key path and the line and column.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.json"), []byte(`{"seed": "x"}`), 0o644))
	for _, c := range []struct{ name, text, want string }{
		{"syntax", "{\n  \"grid\": {,}\n}", `s.json: invalid character ',' at line 2 column 12`},
		{"not an object", `[1]`, `s.json: the sweep file must be an object, got a list at line 1 column 1`},
		{"unknown key", "{\n \"grids\": {}}", `s.json: grids: unknown key (keys: scenario, sim, coll, grid, mode, seeds, metrics) at line 2 column 11`},
		{"twice", `{"grid": {"seed": 1, "seed": 2}}`, `s.json: grid.seed: key given twice at line 1 column 22`},
		{"empty list", `{"grid": {"seed": []}}`, `s.json: grid.seed: an empty list: want one value or more at line 1 column 19`},
		{"range step", `{"grid": {"seed": {"from": 1, "to": 3, "step": 0}}}`, `s.json: grid.seed.step: 0: want more than 0 at line 1 column 48`},
		{"range key", `{"grid": {"seed": {"from": 1, "to": 3, "by": 1}}}`, `s.json: grid.seed.by: unknown key in a range (keys: from, to, step or factor) at line 1 column 46`},
		{"range both", `{"grid": {"seed": {"from": 1, "to": 3}}}`, `s.json: grid.seed: a range needs step or factor (one of them) at line 1 column 19`},
		{"zip lengths", `{"grid": {"seed": [1, 2], "stop_ns": [1]}, "mode": "zip"}`, `s.json: grid.stop_ns: 1 values, but seed has 2: zip needs lists of one length at line 1 column 38`},
		{"mode", `{"mode": "cross"}`, `s.json: mode: want "product" (every combination) or "zip" (the lists side by side) at line 1 column 10`},
		{"bad value", "{\"scenario\": {\"topology\": \"star:hosts=3\", \"traffic\": \"incast:n=2,size=1KB\"},\n \"grid\": {\"cc.algorithm\": [\"dcqcn\", \"tcp\"]}}",
			`s.json: grid.cc.algorithm[1]: cc.algorithm=tcp: the scenario is refused: cc.algorithm: "tcp": want none, dcqcn or hpcc at line 2 column 37`},
		{"no list there", `{"grid": {"qps[3].mtu": 1024}}`, `s.json: grid.qps[3].mtu: the base scenario has no element [3] there at line 1 column 25`},
		{"bad path", `{"grid": {"qps[x].mtu": 1024}}`, `s.json: grid.qps[x].mtu: key path "qps[x].mtu": [x] is not an index at line 1 column 25`},
		{"seed and seeds", `{"grid": {"seed": 1}, "seeds": 2}`, `s.json: seeds: the grid sets seed already at line 1 column 32`},
		{"seed count", `{"seeds": 0}`, `s.json: seeds: 0: want a count of seeds, 1 or more (seeds 1 to n), a list or a range at line 1 column 11`},
		{"seed value", `{"seeds": [1, -2]}`, `s.json: seeds[1]: -2: a seed is a whole number, 0 or more at line 1 column 15`},
		{"metric", `{"metrics": ["goodput"]}`, `s.json: metrics[0]: "goodput": the summary (rocekit sim --json) has no key "goodput" at line 1 column 14`},
		{"metric twice", `{"metrics": ["pfc_pauses", "pfc_pauses"]}`, `s.json: metrics[1]: "pfc_pauses": a column of that name is there already at line 1 column 28`},
		{"inline scenario", "{\"scenario\": {\n  \"seed\": \"x\"}}", `s.json: scenario.seed: expected an integer, 0 or more, got a string at line 2 column 11`},
		{"scenario file", `{"scenario": "bad.json"}`, `s.json: scenario: bad.json: scenario: seed: expected an integer, 0 or more, got a string at line 1 column 10`},
		{"sim without flags", `{"sim": "--loss 0.1"}`, `s.json: sim: sim flags are not available here at line 1 column 9`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(filepath.Join(dir, "s.json"), []byte(c.text), Options{})
			require.Error(t, err)
			msg := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
			assert.NotContains(t, msg, "\n")
			assert.True(t, strings.HasPrefix(msg, c.want), "got  %s\nwant %s", msg, c.want)
		})
	}
}

// The n shards of a sweep partition its points, for every n.
func TestShardsPartition(t *testing.T) {
	f := parse(t, `{"grid": {"seed": {"from": 0, "to": 22, "step": 1}}}`)
	for n := 1; n <= 7; n++ {
		seen := map[int]int{}
		for i := 0; i < n; i++ {
			for _, p := range Shard(f.Points, i, n) {
				seen[p.Index]++
				assert.Equal(t, i, p.Index%n)
			}
		}
		assert.Len(t, seen, len(f.Points), "n=%d", n)
		for idx, c := range seen {
			assert.Equal(t, 1, c, "point %d, n=%d", idx, n)
		}
	}
	i, n, err := ParseShard("2/5")
	require.NoError(t, err)
	assert.Equal(t, [2]int{2, 5}, [2]int{i, n})
	for _, bad := range []string{"5/5", "-1/3", "1", "a/b", "0/0"} {
		_, _, err := ParseShard(bad)
		assert.Error(t, err, bad)
	}
}

func TestShardFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return func(k string) string { return m[k] }
	}
	for _, c := range []struct {
		env   func(string) string
		count int
		i, n  int
		ok    bool
		err   string
	}{
		{env(), 0, 0, 0, false, ""},
		{env("SLURM_ARRAY_TASK_ID", "3", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "3"), 0, 3, 4, true, ""},
		{env("SLURM_ARRAY_TASK_ID", "5", "SLURM_ARRAY_TASK_COUNT", "4", "SLURM_ARRAY_TASK_MIN", "2", "SLURM_ARRAY_TASK_MAX", "5"), 0, 3, 4, true, ""},
		{env("SLURM_ARRAY_TASK_ID", "4", "SLURM_ARRAY_TASK_COUNT", "3", "SLURM_ARRAY_TASK_MIN", "0", "SLURM_ARRAY_TASK_MAX", "4"), 0, 0, 0, false, "not 3 consecutive ids"},
		{env("SLURM_ARRAY_TASK_ID", "1"), 0, 0, 0, false, `SLURM_ARRAY_TASK_COUNT="": want a whole number`},
		{env("JOB_COMPLETION_INDEX", "2"), 3, 2, 3, true, ""},
		{env("JOB_COMPLETION_INDEX", "2"), 0, 0, 0, false, "give the number of shards"},
		{env("JOB_COMPLETION_INDEX", "3"), 3, 0, 0, false, "not less than --shards 3"},
	} {
		i, n, ok, err := ShardFromEnv(c.env, c.count)
		if c.err != "" {
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, []any{c.i, c.n, c.ok}, []any{i, n, ok})
	}
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	return string(b)
}

// Run writes a row per point with the hand-known figures of a 2-to-1
// incast; a second run skips exactly the points done; shards merged give
// the same rows as one run.
func TestRunResumeMerge(t *testing.T) {
	f := parse(t, incast)
	dir := t.TempDir()
	out := filepath.Join(dir, "all.csv")

	// First the points of shard 0/3, then all: the second run skips
	// exactly those.
	res, err := f.Run(context.Background(), Shard(f.Points, 0, 3), out, RunOptions{Jobs: 2})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Done)
	assert.Equal(t, 0, res.Skipped)
	var got []Progress
	res, err = f.Run(context.Background(), f.Points, out, RunOptions{Jobs: 2, Progress: func(p Progress) { got = append(got, p) }})
	require.NoError(t, err)
	assert.Equal(t, 3, res.Skipped)
	assert.Equal(t, 5, res.Done)
	assert.Empty(t, res.Failed)
	last := got[len(got)-1]
	assert.Equal(t, Progress{Total: 5, Done: 5}, Progress{Total: last.Total, Done: last.Done, Failed: last.Failed, Running: last.Running})

	lines := strings.Split(strings.TrimSpace(readFile(t, out)), "\n")
	require.Len(t, lines, 9)
	assert.Equal(t, `point,traffic,fabric.ecn.kmax_bytes,fabric.ecn.kmin_bytes,seed,bytes_delivered,flows_completed,fct_slowdown[bucket=100KB-1MB].flows,latency_ns.count,wr_completed,fct_slowdown[bucket=1MB-10MB].p99`, lines[0])
	byPoint := map[string]string{}
	for _, l := range lines[1:] {
		byPoint[l[:strings.IndexByte(l, ',')]] = l
	}
	// Two flows of 100,000 or 200,000 bytes each, both complete, both
	// in the 100KB-1MB bucket; a key the summary lacks is an empty cell.
	for i := 0; i < 8; i++ {
		size := []string{"100KB", "200KB"}[i/4]
		bytes := []string{"200000", "400000"}[i/4]
		want := fmt.Sprintf(`%d,"incast:n=2,size=%s",400000,%s,%d,%s,2,2,2,"{""SUCCESS"":2}",`, i, size, []string{"100000", "300000"}[i/2%2], i%2+1, bytes)
		assert.Equal(t, want, byPoint[fmt.Sprint(i)])
	}

	// A third run has nothing to do and leaves the file as it was.
	before := readFile(t, out)
	res, err = f.Run(context.Background(), f.Points, out, RunOptions{Jobs: 1})
	require.NoError(t, err)
	assert.Equal(t, 8, res.Skipped)
	assert.Equal(t, 0, res.Done)
	assert.Equal(t, before, readFile(t, out))

	// A half-written last line is removed and its point run again.
	cut := strings.LastIndex(before[:len(before)-1], "\n") + 1
	lastPoint := before[cut : cut+1]
	require.NoError(t, os.WriteFile(out, []byte(before[:len(before)-10]), 0o644))
	res, err = f.Run(context.Background(), f.Points, out, RunOptions{Jobs: 1})
	require.NoError(t, err)
	assert.Equal(t, 7, res.Skipped)
	assert.Equal(t, 1, res.Done)
	assert.Equal(t, before[cut:len(before)-10], res.Dropped)
	assert.Equal(t, byPoint[lastPoint]+"\n", readFile(t, out)[cut:])

	// Three shards merged equal the one run, in point order.
	var shards []string
	for i := 0; i < 3; i++ {
		name := filepath.Join(dir, fmt.Sprintf("shard-%d.csv", i))
		_, err := f.Run(context.Background(), Shard(f.Points, i, 3), name, RunOptions{Jobs: 1})
		require.NoError(t, err)
		shards = append(shards, name)
	}
	var merged strings.Builder
	missing, err := f.Merge(shards, &merged)
	require.NoError(t, err)
	assert.Empty(t, missing)
	want := lines[0] + "\n"
	for i := 0; i < 8; i++ {
		want += byPoint[fmt.Sprint(i)] + "\n"
	}
	assert.Equal(t, want, merged.String())

	// Without shard 1, its points are missing: 1, 4 and 7.
	merged.Reset()
	missing, err = f.Merge([]string{shards[0], shards[2], out}, &merged)
	require.NoError(t, err)
	assert.Empty(t, missing, "the whole run's file has every point")
	missing, err = f.Merge([]string{shards[0], shards[2]}, &merged)
	require.NoError(t, err)
	var idx []int
	for _, p := range missing {
		idx = append(idx, p.Index)
	}
	assert.Equal(t, []int{1, 4, 7}, idx)

	// A row that differs from another file's row of the same point.
	bad := strings.Replace(readFile(t, shards[0]), ",200000,", ",199999,", 1)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.csv"), []byte(bad), 0o644))
	_, err = f.Merge([]string{out, filepath.Join(dir, "bad.csv")}, &merged)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad.csv:2: point 0 (traffic=incast:n=2,size=100KB fabric.ecn.kmax_bytes=400000 fabric.ecn.kmin_bytes=100000 seed=1) differs from its row at ")

	// An output file of another sweep is refused, untouched.
	other := filepath.Join(dir, "other.csv")
	require.NoError(t, os.WriteFile(other, []byte("point,seed,goodput_gbps\n0,1,5\n"), 0o644))
	_, err = f.Run(context.Background(), f.Points, other, RunOptions{Jobs: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "other.csv:1: the columns point,seed,goodput_gbps are not the sweep's point,traffic,")
	assert.Equal(t, "point,seed,goodput_gbps\n0,1,5\n", readFile(t, other))
}

// A context that has ended starts no point; the file gets its header only.
func TestRunInterrupted(t *testing.T) {
	f := parse(t, incast)
	out := filepath.Join(t.TempDir(), "x.csv")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := f.Run(ctx, f.Points, out, RunOptions{Jobs: 2})
	require.NoError(t, err)
	assert.True(t, res.Interrupted)
	assert.Equal(t, 0, res.Done)
	assert.Equal(t, strings.Join(f.Header(), ",")+"\n", readFile(t, out))
}

// A context that ends while points run: those running finish and write
// their rows, no other starts, and a second run does the rest.
func TestRunInterruptedWhileRunning(t *testing.T) {
	f := parse(t, incast)
	out := filepath.Join(t.TempDir(), "x.csv")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	doneAtCancel := -1
	res, err := f.Run(ctx, f.Points, out, RunOptions{Jobs: 2, Progress: func(p Progress) {
		if p.Running == 2 && doneAtCancel < 0 {
			doneAtCancel = p.Done
			cancel()
		}
	}})
	require.NoError(t, err)
	require.GreaterOrEqual(t, doneAtCancel, 0)
	assert.True(t, res.Interrupted)
	assert.Equal(t, doneAtCancel+2, res.Done, "the points done, and the two running, finished")
	lines := strings.Split(readFile(t, out), "\n")
	assert.Len(t, lines, res.Done+2, "the header, a row per point done and the empty string after the last line end")
	res2, err := f.Run(context.Background(), f.Points, out, RunOptions{Jobs: 2})
	require.NoError(t, err)
	assert.Equal(t, res.Done, res2.Skipped)
	assert.Equal(t, 8-res.Done, res2.Done)
}

// The same sweep in YAML gives the same points, scenarios included.
func TestYAMLEqualsJSON(t *testing.T) {
	const y = `# the incast sweep
scenario:
  seed: 1
  topology: "star:hosts=3"
grid:
  traffic: ["incast:n=2,size=100KB", "incast:n=2,size=200KB"]
  fabric.ecn.kmax_bytes: 400000
  fabric.ecn.kmin_bytes: {from: 100000, to: 300000, step: 200000}
seeds: 2
metrics:
  - bytes_delivered
  - flows_completed
  - fct_slowdown[bucket=100KB-1MB].flows
  - latency_ns.count
  - wr_completed
  - fct_slowdown[bucket=1MB-10MB].p99
`
	fy, err := Parse("s.yaml", []byte(y), Options{})
	require.NoError(t, err)
	fj := parse(t, incast)
	assert.Equal(t, fj.Header(), fy.Header())
	require.Len(t, fy.Points, len(fj.Points))
	for i := range fj.Points {
		assert.Equal(t, fj.Points[i].Values, fy.Points[i].Values)
		assert.JSONEq(t, string(fj.Points[i].Scenario), string(fy.Points[i].Scenario))
	}
	// YAML's own number forms become JSON numbers; 0.1 steps stay exact.
	fy, err = Parse("s.yml", []byte("grid:\n  qps[0].work.size: [0x400, 2_048]\n  links[0].faults.loss: {from: 0, to: 0.2, step: 0.1}\n"), Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"1024 0.0 1", "1024 0.1 1", "1024 0.2 1", "2048 0.0 1", "2048 0.1 1", "2048 0.2 1"}, pointValues(fy))
}

func TestYAMLErrors(t *testing.T) {
	for _, c := range []struct{ text, want string }{
		{"grid:\n  seed: 1\nmode: a: b\n", "s.yaml: mapping values are not allowed in this context at line 3"},
		{"grid:\n  seed: {from: 1, to: 3, step: 0}\n", "s.yaml: grid.seed.step: 0: want more than 0 at line 2 column 32"},
		{"grids: {}\n", "s.yaml: grids: unknown key (keys: scenario, sim, coll, grid, mode, seeds, metrics) at line 1 column 8"},
		{"grid:\n  seed: 1\n  seed: 2\n", "s.yaml: grid.seed: key given twice at line 3 column 3"},
		{"scenario:\n  seed: x\n", "s.yaml: scenario: seed: expected an integer, 0 or more, got a string at line 2 column 3"},
		{"grid:\n  seed: .inf\n", "s.yaml: grid.seed: .inf: not a finite number at line 2 column 9"},
		{"", "s.yaml: no YAML value: the file is empty"},
	} {
		_, err := Parse("s.yaml", []byte(c.text), Options{})
		require.Error(t, err, c.text)
		assert.Equal(t, c.want, err.Error(), c.text)
	}
}

// A base scenario file is found beside the sweep file.
func TestScenarioFileBase(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "base.json"), []byte(`{"seed": 5, "topology": "star:hosts=3", "traffic": "incast:n=2,size=10KB"}`), 0o644))
	name := filepath.Join(dir, "s.json")
	require.NoError(t, os.WriteFile(name, []byte(`{"scenario": "base.json", "grid": {"host_gbps": [25, 50]}}`), 0o644))
	f, err := Load(name, Options{})
	require.NoError(t, err)
	assert.Equal(t, []string{"25 5", "50 5"}, pointValues(f))
	var sc struct {
		HostGbps float64 `json:"host_gbps"`
		Traffic  string
	}
	require.NoError(t, json.Unmarshal(f.Points[1].Scenario, &sc))
	assert.Equal(t, 50.0, sc.HostGbps)
	assert.Equal(t, "incast:n=2,size=10KB", sc.Traffic)
	row, err := f.RunPoint(f.Points[1])
	require.NoError(t, err)
	// Two 10,000-byte flows delivered; both complete.
	assert.Equal(t, "1", row[0])
	assert.Equal(t, "true", row[3])
}
