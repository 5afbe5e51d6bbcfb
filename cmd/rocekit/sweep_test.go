package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/sweep"
)

// sweepFile is examples/slurm/incast.json: 4 points of a 2-to-1 incast on
// a 3-host star, DCQCN and HPCC.
const sweepFile = "../../examples/slurm/incast.json"

func readCSV(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open(name)
	require.NoError(t, err)
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	require.NoError(t, err)
	return recs
}

// Each row of `rocekit sweep run` equals what `rocekit sim --json` prints
// for the same point: the same scenario given as the flags and keys the
// sweep file names.
func TestSweepRowsEqualSim(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out.csv")
	var stdout, stderr bytes.Buffer
	code := run([]string{"sweep", "run", sweepFile, "-j", "2", "-o", out}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	assert.Equal(t, "rocekit sweep: "+out+": 4 points: 4 run now, 0 done before, 0 failed\n", stderr.String())
	recs := readCSV(t, out)
	require.Len(t, recs, 5)
	header := recs[0]
	assert.Equal(t, []string{"point", "traffic", "cc.algorithm", "seed", "goodput_gbps", "sim_time_ns",
		"fct_slowdown[bucket=100KB-1MB].p99", "pfc_pauses", "ecn_marks", "max_queue_bytes"}, header)
	for _, rec := range recs[1:] {
		// The point by hand, as rocekit sim flags.
		var sum bytes.Buffer
		stderr.Reset()
		code := run([]string{"sim", "--topology", "star:hosts=3", "--traffic", rec[1], "--cc", rec[2], "--seed", rec[3], "--json"}, &sum, &stderr)
		require.Equal(t, 0, code, stderr.String())
		var v map[string]any
		dec := jsonDecoder(sum.Bytes())
		require.NoError(t, dec.Decode(&v))
		slow := v["fct_slowdown"].([]any)[0].(map[string]any)
		require.Equal(t, "100KB-1MB", slow["bucket"])
		want := []string{str(v["goodput_gbps"]), str(v["sim_time_ns"]), str(slow["p99"]), str(v["pfc_pauses"]), str(v["ecn_marks"]), str(v["max_queue_bytes"])}
		assert.Equal(t, want, rec[4:], "point %s", rec[0])
	}
	// Both 100KB points deliver 200,000 bytes in 2 flows: a goodput over
	// 50 Gb/s and below the 100 Gb/s of the receiver's link.
	for _, rec := range recs[1:] {
		assert.Regexp(t, `^[5-9][0-9]\.[0-9]+$`, rec[4])
	}
}

// str is a summary number as the summary writes it.
func str(v any) string {
	if n, ok := v.(json.Number); ok {
		return string(n)
	}
	return ""
}

func jsonDecoder(b []byte) *json.Decoder {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d
}

func sweepProgress(total, done, failed, running int, left time.Duration) sweep.Progress {
	return sweep.Progress{Total: total, Done: done, Failed: failed, Running: running, Left: left}
}

func TestSweepCLIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(bad, []byte("{\"sim\": \"--topology star:hosts=3 --traffic incast:n=2,size=1KB\",\n \"grid\": {\"cc.algorithm\": [\"dcqcn\", \"tcp\"]}}\n"), 0o644))
	badFlags := filepath.Join(dir, "flags.json")
	require.NoError(t, os.WriteFile(badFlags, []byte(`{"sim": ["--topology", "star:hosts=3", "--bogus"]}`), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sweep", "run", bad}, "rocekit sweep: " + bad + `: grid.cc.algorithm[1]: cc.algorithm=tcp: the scenario is refused: cc.algorithm: "tcp": want none, dcqcn or hpcc at line 2 column 37` + "\n"},
		{[]string{"sweep", "run", badFlags}, "rocekit sweep: " + badFlags + ": sim: flag provided but not defined: --bogus at line 1 column 9\n"},
		{[]string{"sweep", "run", sweepFile, "--shard", "4/4"}, "rocekit sweep: --shard \"4/4\": want I/N with 0 <= I < N, e.g. 0/4\nrun 'rocekit sweep -h' for usage\n"},
		{[]string{"sweep", "run", sweepFile, "-j", "0"}, "rocekit sweep: -j 0: want 1 or more\nrun 'rocekit sweep -h' for usage\n"},
		{[]string{"sweep", "walk"}, "rocekit sweep: unknown subcommand \"walk\": want run or merge\nrun 'rocekit sweep -h' for usage\n"},
		{[]string{"sweep", "merge", sweepFile}, "rocekit sweep: merge wants the sweep file and one results file or more\nrun 'rocekit sweep -h' for usage\n"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(c.args, &stdout, &stderr)
		assert.Equal(t, 2, code, c.args)
		assert.Equal(t, c.want, stderr.String(), c.args)
	}
	// Under a Kubernetes Indexed Job the count must be given.
	t.Setenv("JOB_COMPLETION_INDEX", "1")
	var stdout, stderr bytes.Buffer
	assert.Equal(t, 2, run([]string{"sweep", "run", sweepFile, "-o", filepath.Join(dir, "k.csv")}, &stdout, &stderr))
	assert.Contains(t, stderr.String(), "JOB_COMPLETION_INDEX=1: give the number of shards (the job's completions) with --shards")
	stderr.Reset()
	out := filepath.Join(dir, "k.csv")
	require.Equal(t, 0, run([]string{"sweep", "run", sweepFile, "--shards", "2", "-o", out}, &stdout, &stderr), stderr.String())
	recs := readCSV(t, out)
	require.Len(t, recs, 3)
	assert.Equal(t, []string{"1", "3"}, []string{recs[1][0], recs[2][0]})
}

// The progress bar's line.
func TestSweepBarLine(t *testing.T) {
	assert.Equal(t, "[===============               ] 2/4 points, 2 running, 0 failed, 3s left",
		sweepBarLine(sweepProgress(4, 2, 0, 2, 3*time.Second)))
	assert.Equal(t, "[                              ] 0/4 points, 2 running, 0 failed, ? left",
		sweepBarLine(sweepProgress(4, 0, 0, 2, 0)))
	// Not a terminal: no bar.
	assert.Nil(t, newSweepBar(&bytes.Buffer{}))
}

// The example job array on a real SLURM cluster: submitted with sbatch
// --array, waited for, its shards merged: the same rows as one sweep run
// on this machine. It needs a cluster whose sbatch and sinfo answer (the
// CI starts one with examples/slurm/single-node.sh); without one it skips,
// except under ROCEKIT_REQUIRE_ORACLES=1 where it fails.
func TestSweepSLURMJobArray(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the SLURM job array takes about 15 s")
	}
	must := os.Getenv("ROCEKIT_REQUIRE_ORACLES") == "1"
	skip := func(why string) {
		if must {
			t.Fatalf("ROCEKIT_REQUIRE_ORACLES=1 and no SLURM cluster: %s", why)
		}
		t.Skipf("no SLURM cluster: %s (start one: examples/slurm/single-node.sh start DIR)", why)
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		skip("sbatch is not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	state, err := exec.CommandContext(ctx, "sinfo", "-h", "-o", "%T").CombinedOutput()
	if err != nil || !strings.Contains(string(state), "idle") && !strings.Contains(string(state), "mix") {
		skip("sinfo shows no idle node: " + strings.TrimSpace(string(state)))
	}

	dir := t.TempDir()
	bin := filepath.Join(dir, "rocekit")
	build := exec.Command("go", "build", "-o", bin, ".")
	out, err := build.CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	sweepAbs, err := filepath.Abs(sweepFile)
	if err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../../examples/slurm/sweep.sbatch")
	if err != nil {
		t.Fatal(err)
	}
	results := filepath.Join(dir, "results")
	ctx, cancel = context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	sb := exec.CommandContext(ctx, "sbatch", "--wait", "--array=0-3", "--chdir", dir,
		"--output", filepath.Join(dir, "task-%a.log"), script, sweepAbs, results)
	sb.Env = append(os.Environ(), "ROCEKIT="+bin)
	out, err = sb.CombinedOutput()
	if err != nil {
		logs, _ := filepath.Glob(filepath.Join(dir, "task-*.log"))
		var text []string
		for _, l := range logs {
			b, _ := os.ReadFile(l)
			text = append(text, l+":\n"+string(b))
		}
		t.Fatalf("sbatch --wait: %v\n%s\n%s", err, out, strings.Join(text, "\n"))
	}
	shards, err := filepath.Glob(filepath.Join(results, "shard-*.csv"))
	if err != nil || len(shards) != 4 {
		t.Fatalf("the job array wrote %d shard files, want 4: %v", len(shards), shards)
	}
	merged := filepath.Join(dir, "merged.csv")
	var stdout, stderr bytes.Buffer
	if code := run(append([]string{"sweep", "merge", sweepFile, "-o", merged}, shards...), &stdout, &stderr); code != 0 {
		t.Fatalf("merge: exit %d: %s", code, stderr.String())
	}
	local := filepath.Join(dir, "local.csv")
	if code := run([]string{"sweep", "run", sweepFile, "-j", "2", "-o", local}, &stdout, &stderr); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr.String())
	}
	// The same rows; the merged file is in point order, the local one in
	// the order points finished.
	m, l := readCSV(t, merged), readCSV(t, local)
	assert.Len(t, m, 5)
	assert.Equal(t, m[0], l[0])
	assert.ElementsMatch(t, m[1:], l[1:])
	for i, rec := range m[1:] {
		assert.Equal(t, []string{string(rune('0' + i))}, rec[:1])
	}
}

// A sweep of collectives: the grid sets rocekit coll flags; every row
// equals rocekit coll --json run by hand with the same flags.
func TestSweepColl(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "coll.json")
	require.NoError(t, os.WriteFile(file, []byte(`{"coll": {"ranks": 4}, "grid": {"algo": ["ring", "sharp"], "min-bytes": ["64KB", "256KB"]}}`), 0o644))
	out := filepath.Join(dir, "out.csv")
	var stdout, stderr bytes.Buffer
	code := run([]string{"sweep", "run", file, "-q", "-o", out}, &stdout, &stderr)
	require.Equal(t, 0, code, stderr.String())
	recs := readCSV(t, out)
	require.Len(t, recs, 5)
	assert.Equal(t, []string{"point", "algo", "min-bytes", "seed", "size", "time_us", "algbw_gbps", "busbw_gbps", "wrong", "frames"}, recs[0])
	for _, rec := range recs[1:] {
		var js bytes.Buffer
		stderr.Reset()
		code := run([]string{"coll", "--ranks", "4", "--algo", rec[1], "--min-bytes", rec[2], "--seed", rec[3], "--json"}, &js, &stderr)
		require.Equal(t, 0, code, stderr.String())
		var v map[string]any
		require.NoError(t, jsonDecoder(js.Bytes()).Decode(&v))
		assert.Equal(t, []string{str(v["size"]), str(v["time_us"]), str(v["algbw_gbps"]), str(v["busbw_gbps"]), "0", str(v["frames"])}, rec[4:], "point %s", rec[0])
	}
	// A flag the collective refuses stops the sweep before it runs.
	require.NoError(t, os.WriteFile(file, []byte(`{"coll": {"ranks": 4}, "grid": {"algo": ["ring", "bogus"]}}`), 0o644))
	stderr.Reset()
	code = run([]string{"sweep", "run", file, "-q", "-o", filepath.Join(dir, "x.csv")}, &stdout, &stderr)
	assert.Equal(t, 2, code)
	assert.Contains(t, stderr.String(), "the collective is refused: --algo bogus")
}
