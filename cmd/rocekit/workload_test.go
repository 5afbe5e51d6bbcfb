package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A small DDP step on star:hosts=4: 1.5 million floats in 4 MB buckets are
// a 4 MB and a 2 MB all-reduce, issued after 100 + 200 x 4/6 us and 100 +
// 200 us. Each takes longer than the backward pass it overlaps, so the
// barrier waits for the second, which queues behind the first: the step
// ends 10 us (the optimizer) after the second ends, and step time =
// compute + exposed communication to the picosecond.
func TestWorkloadCLI(t *testing.T) {
	spec := "ddp:params=1.5e6,bucket=4MB,fwd_us=100,bwd_us=200,opt_us=10,steps=2"
	code, out, errs := simCLI("workload", "--topology", "star:hosts=4", "--ranks", "4", "--json", spec)
	require.Equal(t, 0, code, errs)
	var m struct {
		Complete    bool             `json:"complete"`
		Wrong       int              `json:"wrong"`
		TotalPS     int64            `json:"total_ps"`
		Collectives []map[string]any `json:"collectives"`
		Steps       []map[string]any `json:"steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	assert.True(t, m.Complete)
	assert.Equal(t, 0, m.Wrong)
	require.Len(t, m.Collectives, 2)
	ps := func(o map[string]any, k string) int64 {
		v, ok := o[k].(float64)
		require.True(t, ok, "%s in %v", k, o)
		return int64(v)
	}
	c0, c1 := m.Collectives[0], m.Collectives[1]
	assert.EqualValues(t, 4000000, c0["bytes"])
	assert.EqualValues(t, 2000000, c1["bytes"])
	assert.EqualValues(t, 0, c0["wrong"])
	assert.EqualValues(t, 0, c1["wrong"])
	assert.Equal(t, "ring", c0["algo"]) // auto at 4 MB
	assert.Equal(t, int64(233333333), ps(c0, "issued_ps"))
	assert.Equal(t, int64(300000000), ps(c1, "issued_ps"))
	assert.Equal(t, ps(c0, "end_ps"), ps(c1, "start_ps"))
	require.Len(t, m.Steps, 2)
	for k, st := range m.Steps {
		assert.Equal(t, int64(310e6), ps(st, "compute_ps"))
		assert.Equal(t, ps(c1, "end_ps")+10e6, ps(st, "time_ps"))
		assert.Equal(t, ps(st, "time_ps"), ps(st, "compute_ps")+ps(st, "exposed_ps"), "step %d", k+1)
		assert.Equal(t, ps(c0, "duration_ps")+ps(c1, "duration_ps"), ps(st, "comm_ps"))
		assert.Equal(t, int64(k)*ps(st, "time_ps"), ps(st, "start_ps"))
	}
	assert.Equal(t, 2*ps(m.Steps[0], "time_ps"), m.TotalPS)

	// The tables: #wrong 0 on every collective's row, and each step's
	// step time the sum of its compute and exposed columns.
	code, out, errs = simCLI("workload", "--topology", "star:hosts=4", "--ranks", "4", spec)
	require.Equal(t, 0, code, errs)
	var colls, steps int
	section := ""
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case strings.HasPrefix(l, "# collectives"), strings.HasPrefix(l, "# steps"):
			section = l
			continue
		case strings.HasPrefix(l, "#"):
			continue
		}
		f := strings.Fields(l)
		if strings.HasPrefix(section, "# collectives") {
			require.Len(t, f, 10, l)
			assert.Equal(t, []string{"allreduce", "ring"}, []string{f[1], f[3]})
			assert.Equal(t, "0", f[9], "#wrong: %s", l)
			colls++
			continue
		}
		require.Len(t, f, 7, l)
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			return v
		}
		assert.Equal(t, "310.000", f[3])
		assert.InDelta(t, num(f[2]), num(f[3])+num(f[5]), 0.0015, l)
		assert.InDelta(t, 100*num(f[5])/num(f[2]), num(f[6]), 0.01, l)
		steps++
	}
	assert.Equal(t, 2, colls, out)
	assert.Equal(t, 2, steps, out)
}

// A JSON workload: the ranks come from the file, the all-gather the
// compute waits for is issued at 0, the all-reduce 50 us after it ends,
// and the barrier waits for the all-reduce: both are wholly exposed.
func TestWorkloadCLIFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "fsdp.json")
	require.NoError(t, os.WriteFile(name, []byte(`{"ranks": 4, "items": [
  {"op": "allgather", "bytes": "1MB", "wait": true},
  {"compute_us": 50},
  {"op": "allreduce", "bytes": "1MB", "algo": "ring"},
  {"barrier": true},
  {"compute_us": 10}]}`), 0o644))
	code, out, errs := simCLI("workload", "--json", name)
	require.Equal(t, 0, code, errs)
	var m struct {
		Ranks       int `json:"ranks"`
		Collectives []struct {
			Issued   int64 `json:"issued_ps"`
			End      int64 `json:"end_ps"`
			Duration int64 `json:"duration_ps"`
		} `json:"collectives"`
		Steps []struct {
			Time    int64 `json:"time_ps"`
			Compute int64 `json:"compute_ps"`
			Exposed int64 `json:"exposed_ps"`
		} `json:"steps"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &m), out)
	assert.Equal(t, 4, m.Ranks)
	require.Len(t, m.Collectives, 2)
	ag, ar := m.Collectives[0], m.Collectives[1]
	assert.Equal(t, int64(0), ag.Issued)
	assert.Equal(t, ag.End+50e6, ar.Issued)
	require.Greater(t, ar.Duration, int64(0))
	st := m.Steps[0]
	assert.Equal(t, int64(60e6), st.Compute)
	assert.Equal(t, ag.Duration+ar.Duration, st.Exposed)
	assert.Equal(t, ar.End+10e6, st.Time)
	assert.Equal(t, st.Time, st.Compute+st.Exposed)
}

// A workload file's errors name the key path and the line and column,
// with exit status 2; so do bad flags and specs.
func TestWorkloadCLIErrors(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "step.json")
	require.NoError(t, os.WriteFile(name, []byte("{\"ranks\": 4, \"items\": [\n  {\"compute_us\": 100},\n  {\"op\": \"allreduce\", \"bytes\": \"1ZB\"}\n]}\n"), 0o644))
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{name}, "rocekit workload: " + name + `: workload: items[1].bytes: size "1ZB": want a positive whole number of bytes with unit B, KB, MB, GB, KiB, MiB or GiB (not a plain decimal number) at line 3 column 32` + "\n"},
		{[]string{}, "rocekit workload: no workload: give a FILE or a ddp: SPEC\n"},
		{[]string{"--ranks", "1", "ddp:params=1e6,fwd_us=1,bwd_us=1"}, "rocekit workload: --ranks 1: want 2 to 4096\n"},
		{[]string{"ddp:params=1e6,fwd_us=1"}, `rocekit workload: spec "ddp:params=1e6,fwd_us=1": bwd_us is missing` + "\n"},
		{[]string{"--ranks", "3", "--loss", "2", "ddp:params=1e6,fwd_us=1,bwd_us=1"}, "rocekit workload: --loss 2: want a probability\n"},
		{[]string{"--ranks", "8", "--topology", "star:hosts=4", "ddp:params=1e6,fwd_us=1,bwd_us=1"},
			"rocekit workload: bucket 0 of ddp:params=1e6,fwd_us=1,bwd_us=1: allreduce 4MB auto float: scenario: topology: 4 hosts, fewer than the ranks\n"},
	} {
		code, out, errs := simCLI(append([]string{"workload"}, c.args...)...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Empty(t, out, "%v", c.args)
		assert.Equal(t, c.want+"run 'rocekit workload -h' for usage\n", errs, "%v", c.args)
	}
}

// A collective whose connections give up (50% loss) has no duration: the
// step has no time, and the exit status is 1.
func TestWorkloadCLIIncomplete(t *testing.T) {
	code, out, errs := simCLI("workload", "--ranks", "4", "--loss", "0.5", "ddp:params=16000,bucket=64KB,fwd_us=10,bwd_us=10")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "rocekit workload: allreduce 64KB auto float: the collective did not complete:")
	assert.Contains(t, out, "# no step time: a collective did not complete\n")
	assert.Regexp(t, `(?m)^ +- +allreduce +64000 +tree +N/A +N/A +N/A +N/A +N/A +[1-9][0-9]*$`, out)
}
