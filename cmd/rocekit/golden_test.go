package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/internal/oracle"
)

// updateGolden rewrites testdata/golden.sha256 from the outputs of this
// build: go test ./cmd/rocekit -run TestGoldenOutputs -update-golden.
var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/golden.sha256 from this build")

// goldenFile pins, by SHA-256, what rocekit prints and writes for a fixed
// set of inputs, so that a change meant to leave behaviour alone (a
// refactor, a speed change) is checked byte for byte.
const goldenFile = "testdata/golden.sha256"

// simWallKeys are the summary's wall-clock figures, which differ from run
// to run and are left out of the hashes.
var simWallKeys = []string{"wall_seconds", "events_per_second", "packets_per_wall_second", "data_packets_per_wall_second"}

// simEngineLine is the text summary's line of wall-clock figures.
var simEngineLine = regexp.MustCompile(`(?m)^  engine .*\n`)

// TestGoldenOutputs runs decode (text, -v, JSON, summary text and JSON) on
// every shared capture and on the benchmark capture bench/mkcap writes by
// default, sim (summary text and JSON without wall-clock figures, and the
// trace) on the default run and every scenario in roce/testdata, and gen in
// every output format and with faults, and compares each output's SHA-256
// with testdata/golden.sha256. The shared captures are skipped when absent;
// -short leaves out the 300,000-frame capture and the 2,000-message default
// run.
func TestGoldenOutputs(t *testing.T) {
	got := map[string]string{}
	dir := t.TempDir()
	var capDir string
	put := func(name string, b []byte) {
		// Outputs that name a file name it without the temporary folder,
		// which differs from run to run, and without the folder of the
		// shared captures, which differs from checkout to checkout.
		b = bytes.ReplaceAll(b, []byte(dir), []byte("TMP"))
		if capDir != "" {
			b = bytes.ReplaceAll(b, []byte(capDir), []byte("CAPTURES"))
		}
		s := sha256.Sum256(b)
		got[name] = hex.EncodeToString(s[:])
	}
	run := func(name string, args ...string) string {
		code, out, errs := runCLI(t, args...)
		require.Equal(t, 0, code, "%s: %s", name, errs)
		return out
	}

	// decode
	var captures []string
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "captures")); err == nil {
		capDir = oracle.Captures(t)
		for _, c := range oracle.CaptureFiles {
			captures = append(captures, filepath.Join(capDir, c.Name))
		}
	} else {
		t.Logf("../shared/captures absent: the real captures are not pinned in this run")
	}
	if !testing.Short() {
		mixed := filepath.Join(dir, "mixed.pcap")
		cmd := exec.Command("go", "run", "../../bench/mkcap", "-o", mixed)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		captures = append(captures, mixed)
	}
	for _, c := range captures {
		base := filepath.Base(c)
		// decode's exit status is 1 for a damaged file; the output is pinned either way.
		for _, v := range [][]string{nil, {"-v"}, {"--format", "json"}, {"--summary"}, {"--summary", "--format", "json"}} {
			_, out, errs := runCLI(t, append(append([]string{"decode"}, v...), c)...)
			put("decode "+strings.Join(v, " ")+" "+base, []byte(out+errs))
		}
		_, out, errs := runCLI(t, "check", "--format", "json", c)
		put("check --format json "+base, []byte(out+errs))
	}

	// sim
	sims := [][]string{{"--messages", "50"}, {"--qps", "8", "--op", "mix", "--loss", "0.02", "--messages", "40"}}
	if !testing.Short() {
		sims = append(sims, nil)
	}
	scenarios, err := filepath.Glob(filepath.Join("..", "..", "roce", "testdata", "*.json"))
	require.NoError(t, err)
	require.NotEmpty(t, scenarios)
	for _, s := range scenarios {
		sims = append(sims, []string{"--scenario", s})
	}
	for i, args := range sims {
		name := "sim " + strings.Join(args, " ")
		if len(args) == 2 && args[0] == "--scenario" {
			name = "sim --scenario " + filepath.Base(args[1])
		}
		trace := filepath.Join(dir, fmt.Sprintf("sim%d.pcapng", i))
		text := run(name, append(append([]string{"sim"}, args...), "--trace", trace)...)
		put(name+" (text)", []byte(simEngineLine.ReplaceAllString(text, "")))
		var sum map[string]any
		require.NoError(t, json.Unmarshal([]byte(run(name, append(append([]string{"sim"}, args...), "--json")...)), &sum))
		for _, k := range simWallKeys {
			require.Contains(t, sum, k, name)
			delete(sum, k)
		}
		js, err := json.Marshal(sum)
		require.NoError(t, err)
		put(name+" (json)", js)
		tr, err := os.ReadFile(trace)
		require.NoError(t, err)
		put(name+" (trace)", tr)
	}

	// gen
	gens := [][]string{
		nil,
		{"--format", "pcapng"},
		{"--format", "hex", "--fault", "bad-icrc", "--fault", "psn-gap:@5"},
		{"--format", "axis", "--width", "128", "--byte-order", "be"},
		{"--format", "memh", "--width", "256", "--fault", "duplicate:0.05", "--seed", "7"},
		{"--format", "axismem", "--width", "512"},
		{"--encap", "ib", "--fault", "bad-vcrc", "--messages", "4"},
		{"--encap", "rocev2-ipv6", "--fault", "reorder", "--fault", "flip-masked:0.1"},
		{"--scenario", filepath.Join("..", "..", "roce", "testdata", "lossy-mix.json")},
	}
	for i, args := range gens {
		prefix := filepath.Join(dir, fmt.Sprintf("gen%d", i))
		name := "gen " + strings.Join(args, " ")
		if len(args) == 2 && args[0] == "--scenario" {
			name = "gen --scenario " + filepath.Base(args[1])
		}
		put(name+" (stdout)", []byte(run(name, append(append([]string{"gen"}, args...), "-o", prefix)...)))
		files, err := filepath.Glob(prefix + ".*")
		require.NoError(t, err)
		require.NotEmpty(t, files, name)
		for _, f := range files {
			b, err := os.ReadFile(f)
			require.NoError(t, err)
			put(name+" "+strings.TrimPrefix(filepath.Base(f), filepath.Base(prefix)), b)
		}
	}

	if *updateGolden {
		want := readGolden(t)
		for k, v := range got {
			want[k] = v
		}
		writeGolden(t, want)
		return
	}
	want := readGolden(t)
	var bad []string
	for _, k := range sortedKeys(got) {
		w, ok := want[k]
		switch {
		case !ok:
			bad = append(bad, "not pinned: "+k)
		case w != got[k]:
			bad = append(bad, "changed: "+k)
		}
	}
	require.Empty(t, bad, "outputs differ from %s (after a deliberate change: go test ./cmd/rocekit -run TestGoldenOutputs -update-golden)", goldenFile)
}

func readGolden(t *testing.T) map[string]string {
	t.Helper()
	m := map[string]string{}
	f, err := os.Open(goldenFile)
	if os.IsNotExist(err) {
		return m
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		h, name, ok := strings.Cut(sc.Text(), "  ")
		require.True(t, ok, "%s: line %q", goldenFile, sc.Text())
		m[name] = h
	}
	require.NoError(t, sc.Err())
	return m
}

func writeGolden(t *testing.T, m map[string]string) {
	t.Helper()
	var b strings.Builder
	for _, k := range sortedKeys(m) {
		fmt.Fprintf(&b, "%s  %s\n", m[k], k)
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(goldenFile), 0o755))
	require.NoError(t, os.WriteFile(goldenFile, []byte(b.String()), 0o644))
}

func sortedKeys(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return slices.Clip(k)
}
