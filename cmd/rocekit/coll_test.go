package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCollCLI: rocekit coll prints nccl-tests' table, one row per size,
// with #wrong 0, and --json one object per size with the same figures.
func TestCollCLI(t *testing.T) {
	code, out, errs := simCLI("coll", "--ranks", "4", "--min-bytes", "62500", "--max-bytes", "1MB", "--step-factor", "4", "--algo", "ring")
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var rows []string
	for _, l := range lines {
		if !strings.HasPrefix(l, "#") {
			rows = append(rows, l)
		}
	}
	require.Len(t, rows, 3, out)
	for i, size := range []string{"62500", "250000", "1000000"} {
		f := strings.Fields(rows[i])
		require.Equal(t, size, f[0])
		assert.Equal(t, []string{"float", "sum", "-1"}, f[2:5])
		assert.Equal(t, "0", f[8], "#wrong")
	}
	assert.Contains(t, out, "# Avg bus bandwidth")

	code, out, errs = simCLI("coll", "--ranks", "4", "--op", "allgather", "--min-bytes", "1MB", "--json")
	require.Equal(t, 0, code, errs)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &m))
	assert.EqualValues(t, 1000000, m["size"])
	assert.EqualValues(t, 0, m["wrong"])
	assert.Equal(t, "ring", m["algo"])
	// busbw = algbw x (n-1)/n for all-gather (nccl-tests).
	assert.InDelta(t, m["algbw_gbps"].(float64)*3/4, m["busbw_gbps"].(float64), 1e-9)

	for _, c := range []struct{ args []string }{
		{[]string{"--op", "bogus"}}, {[]string{"--ranks", "1"}}, {[]string{"--min-bytes", "2MB", "--max-bytes", "1MB"}},
	} {
		code, _, errs := simCLI(append([]string{"coll"}, c.args...)...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Equal(t, 2, strings.Count(errs, "\n"), "%v: %q", c.args, errs)
	}
}

// A collective whose connections give up (50% loss) is reported as not
// complete, with no time or bandwidth, and exit status 1.
func TestCollCLIIncomplete(t *testing.T) {
	code, out, errs := simCLI("coll", "--ranks", "4", "--loss", "0.5", "--min-bytes", "64KB", "--algo", "ring")
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "rocekit coll: size 64000: the collective did not complete:")
	assert.NotContains(t, out, "Inf")
	assert.Regexp(t, `(?m)^ +64000 +16000 +float +sum +-1 +N/A +N/A +N/A +[1-9][0-9]* `, out)
	code, _, errs = simCLI("coll", "--chunk", "0")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--chunk 0: want 1 or more bytes")
}

// rocekit coll --gpus puts several ranks on each host: the default
// topology has --ranks / --gpus hosts, the header says so, and turning
// GPUDirect off on 400 Gb/s NICs makes the same all-reduce slower.
func TestCollCLIGPUs(t *testing.T) {
	args := []string{"coll", "--ranks", "16", "--gpus", "8", "--algo", "hier", "--min-bytes", "4MB", "--host-gbps", "400", "--json"}
	code, out, errs := simCLI(args...)
	require.Equal(t, 0, code, errs)
	var on, off map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &on))
	assert.EqualValues(t, 0, on["wrong"])
	assert.EqualValues(t, 8, on["gpus_per_host"])
	assert.Equal(t, "hier", on["algo"])
	code, out, errs = simCLI(append(args, "--gdr=false")...)
	require.Equal(t, 0, code, errs)
	require.NoError(t, json.Unmarshal([]byte(out), &off))
	assert.Greater(t, off["time_us"].(float64), 1.2*on["time_us"].(float64))

	code, out, errs = simCLI("coll", "--ranks", "16", "--gpus", "8", "--min-bytes", "1MB", "--nvlink", "0")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "16 ranks (2 hosts x 8 GPUs, no NVLink, PCIe 54.4 GB/s, GPUDirect on) on star:hosts=2")
	for _, c := range [][]string{{"--gpus", "3"}, {"--gpus", "2", "--pcie", "0"}, {"--gpus", "2", "--algo", "sharp"}, {"--algo", "hier", "--op", "allgather"}} {
		code, _, errs := simCLI(append([]string{"coll"}, c...)...)
		assert.Equal(t, 2, code, "%v", c)
		assert.Equal(t, 2, strings.Count(errs, "\n"), "%v: %q", c, errs)
	}
}

// rocekit workload takes the same machine flags: a DDP step on 2 hosts of
// 8 GPUs, hierarchical all-reduce, with every element right.
func TestWorkloadCLIGPUs(t *testing.T) {
	code, out, errs := simCLI("workload", "--ranks", "16", "--gpus", "8", "--nvlink", "0",
		"ddp:params=2e6,dtype=float,bucket=4MB,fwd_us=100,bwd_us=200,opt_us=10,algo=hier")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "16 ranks (2 hosts x 8 GPUs, no NVLink, PCIe 54.4 GB/s, GPUDirect on) on star:hosts=2 at 100 Gb/s")
	assert.Regexp(t, `(?m)^ +\d+ +allreduce +4000000 +hier .* 0$`, out)
	code, _, errs = simCLI("workload", "--ranks", "16", "--gpus", "3", "ddp:params=2e6,fwd_us=1,bwd_us=1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--gpus 3: want a divisor of the 16 ranks")
}

// --sharp-streams and --sharp-gbps reach the aggregation nodes: at 200
// Gb/s per unit, one unit is slower than eight, and both right.
func TestCollCLISharpUnits(t *testing.T) {
	var us [2]float64
	for i, n := range []string{"1", "8"} {
		code, out, errs := simCLI("coll", "--algo", "sharp", "--min-bytes", "4MiB", "--sharp-streams", n, "--sharp-gbps", "200", "--json")
		require.Equal(t, 0, code, errs)
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &m))
		assert.EqualValues(t, 0, m["wrong"])
		us[i] = m["time_us"].(float64)
	}
	assert.Greater(t, us[0], 1.5*us[1], "1 unit against 8")
	code, _, errs := simCLI("coll", "--algo", "sharp", "--sharp-gbps", "-1")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "--sharp-gbps -1: want 0 or more")
}
