package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/roce"
)

// The most connections there are QP numbers for, with 1-byte messages,
// need about 50 GiB: the run is refused at once, before anything is
// allocated, with one line that gives the estimate and names the flag to
// lower (and creates no trace file); from a scenario file, the JSON key and
// the file.
func TestSimMemoryRefused(t *testing.T) {
	args := []string{"sim", "--qps", "8388599", "--size", "1", "--messages", "1", "--outstanding", "1"}
	trace := filepath.Join(t.TempDir(), "t.pcap")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	code, out, errs := simCLI(append(args, "--trace", trace)...)
	runtime.ReadMemStats(&after)
	assert.Equal(t, 2, code)
	assert.Empty(t, out)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "refused before allocating")
	assert.NoFileExists(t, trace)
	line := regexp.MustCompile(`^rocekit sim: the scenario needs about (\d+\.\d+) GiB \(8388599 connections x \d\.\d+ KiB \+ buffers [\d.]+ MiB \+ frames [\d.]+ KiB \+ runtime 8 MiB\), more than the 8 GiB limit; lower (.*)\n$`)
	m := line.FindStringSubmatch(errs)
	require.NotNil(t, m, "%q", errs)
	gib, _ := strconv.ParseFloat(m[1], 64)
	assert.Greater(t, gib, 40.0)
	assert.Equal(t, "--qps", m[2])

	code, out, _ = simCLI(append(args, "--print-scenario")...)
	require.Equal(t, 0, code)
	p := writeSimScenario(t, out)
	code, _, errs = simCLI("sim", "--scenario", p)
	assert.Equal(t, 2, code)
	m = line.FindStringSubmatch(errs)
	require.NotNil(t, m, "%q", errs)
	assert.Equal(t, "qps[0].count in "+p, m[2])

	// Large messages: the buffers are what to lower.
	code, _, errs = simCLI("sim", "--size", "1000000000", "--outstanding", "16")
	assert.Equal(t, 2, code)
	assert.True(t, strings.HasSuffix(errs, "more than the 8 GiB limit; lower --outstanding\n"), "%q", errs)
	assert.Equal(t, 1, strings.Count(errs, "\n"), "one line: %q", errs)
}

// simChildEnv holds the arguments TestSimChild runs rocekit with, in a
// process of its own.
const simChildEnv = "ROCEKIT_SIM_CHILD_ARGS"

// TestSimChild runs rocekit and, where the system tells it (Linux), writes
// the process's peak resident memory to stderr. That is VmHWM, the peak of
// the memory the process has had since it was executed: the parent's
// rusage Maxrss of the child is no good here, since Linux counts in it the
// parent's own resident memory at the fork.
func TestSimChild(t *testing.T) {
	args := os.Getenv(simChildEnv)
	if args == "" {
		t.Skip("runs only as TestSimPeakRSS's child process")
	}
	code := run(strings.Fields(args), os.Stdout, os.Stderr)
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
				fmt.Fprintf(os.Stderr, "peak resident memory: %s\n", strings.TrimSpace(v))
			}
		}
	}
	os.Exit(code)
}

// A run the memory guard admits stays within 1.5 times its estimate, and the
// estimate is not far above what it takes: the peak resident memory of
// rocekit sim with 1,000, 30,000 and 200,000 connections of one 1-byte
// WRITE, each run in a process of its own (TestSimChild).
func TestSimPeakRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the simulator three times in child processes, the largest for seconds")
	}
	if raceBuild {
		t.Skip("the race detector multiplies the memory a run takes")
	}
	for _, n := range []int{1000, 30000, 200000} {
		flags := []string{"--qps", strconv.Itoa(n), "--size", "1", "--messages", "1", "--outstanding", "1", "--json"}
		sc := roce.DefaultScenario()
		require.NoError(t, applySimFlags(sc, map[string]bool{"qps": true, "size": true, "messages": true, "outstanding": true},
			simFlags{qps: n, size: 1, messages: 1, outstanding: 1}))
		est := sc.MemoryEstimate().Total

		cmd := exec.Command(os.Args[0], "-test.run=^TestSimChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), simChildEnv+"=sim "+strings.Join(flags, " "))
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), `"wr_completed":{"SUCCESS":`+strconv.Itoa(n)+`}`)
		m := regexp.MustCompile(`peak resident memory: (\d+) kB`).FindSubmatch(out)
		if m == nil {
			t.Skip("no peak resident memory (VmHWM in /proc/self/status) on " + runtime.GOOS)
		}
		kib, err := strconv.ParseInt(string(m[1]), 10, 64)
		require.NoError(t, err)
		rss := kib << 10
		t.Logf("%d connections: estimate %.1f MiB, peak RSS %.1f MiB (%.2fx)", n, float64(est)/(1<<20), float64(rss)/(1<<20), float64(rss)/float64(est))
		assert.LessOrEqual(t, float64(rss), 1.5*float64(est), "%d connections: peak RSS over 1.5x the estimate", n)
		assert.LessOrEqual(t, float64(est), 3*float64(rss), "%d connections: estimate over 3x the peak RSS", n)
	}
}
