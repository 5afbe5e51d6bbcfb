package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSimFabricCLI runs a fabric from the command line: --fct and
// --samples write their CSVs, --json has the fabric's keys, the text
// summary says every flow completed.
func TestSimFabricCLI(t *testing.T) {
	dir := t.TempDir()
	fct, samples := filepath.Join(dir, "fct.csv"), filepath.Join(dir, "run")
	code, out, errs := simCLI("sim", "--topology", "star:hosts=5", "--traffic", "incast:n=4,size=200KB",
		"--fct", fct, "--samples", samples, "--sample-interval", "5us", "--json")
	require.Equal(t, 0, code, errs)
	var sum map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	assert.EqualValues(t, 4, sum["flows"])
	assert.EqualValues(t, 4, sum["flows_completed"])
	for _, k := range []string{"fct_slowdown", "pfc_pauses", "ecn_marks", "max_queue_bytes", "drops", "data_packets", "ports"} {
		assert.Contains(t, sum, k)
	}

	b, err := os.ReadFile(fct)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 5)
	assert.Equal(t, "flow,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,ok,cnps", lines[0])
	for _, l := range lines[1:] {
		f := strings.Split(l, ",")
		require.Len(t, f, 11, l)
		assert.Equal(t, "h0", f[2], "incast into host 0")
		assert.Equal(t, "200000", f[3])
		assert.Equal(t, "true", f[9])
	}
	for _, ext := range []string{".queues.csv", ".rates.csv"} {
		b, err := os.ReadFile(samples + ext)
		require.NoError(t, err)
		assert.Greater(t, strings.Count(string(b), "\n"), 10, ext)
	}

	code, out, errs = simCLI("sim", "--topology", "star:hosts=5", "--traffic", "incast:n=4,size=200KB")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "rocekit sim: star:hosts=5 (5 hosts, 1 switch, 5 links), incast:n=4,size=200KB: 4 flows of RDMA WRITE")
	assert.Contains(t, out, "  flows         all 4 completed with every byte verified\n")
	assert.Contains(t, out, "  FCT slowdown  100KB-1MB ")
}

// TestSimFabricPrintScenario: --print-scenario prints the fabric scenario
// the flags make, and it runs the same from the file.
func TestSimFabricPrintScenario(t *testing.T) {
	code, out, errs := simCLI("sim", "--topology", "leaf-spine:leaves=2,spines=2,hosts=2", "--traffic", "all-to-all:size=20KB",
		"--host-gbps", "25", "--fabric-gbps", "50", "--delay", "500", "--mtu", "1024", "--loss", "0.001", "--print-scenario")
	require.Equal(t, 0, code, errs)
	var sc map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &sc))
	assert.Equal(t, "leaf-spine:leaves=2,spines=2,hosts=2", sc["topology"])
	assert.Equal(t, "all-to-all:size=20KB", sc["traffic"])
	assert.EqualValues(t, 25, sc["host_gbps"])
	assert.EqualValues(t, 50, sc["fabric_gbps"])
	assert.EqualValues(t, 500, sc["delay_ns"])
	assert.EqualValues(t, 1024, sc["flow"].(map[string]any)["mtu"])
	assert.EqualValues(t, 0.001, sc["fabric"].(map[string]any)["link_faults"].(map[string]any)["loss"])
	assert.NotContains(t, sc, "hosts")
	assert.NotContains(t, sc, "qps")
	file := filepath.Join(t.TempDir(), "fabric.json")
	require.NoError(t, os.WriteFile(file, []byte(out), 0o644))
	code, out, errs = simCLI("sim", "--scenario", file, "--json")
	require.Equal(t, 0, code, errs)
	var sum map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	assert.EqualValues(t, 12, sum["flows"])
	assert.EqualValues(t, 12, sum["flows_completed"])
}

// TestSimFabricUsageErrors: fabric flags in the wrong place and bad specs
// are one-line usage errors with exit status 2.
func TestSimFabricUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--traffic", "incast:n=2,size=1MB"}, "--traffic is for fabric runs: give --topology"},
		{[]string{"--topology", "star:hosts=3", "--size", "100"}, "--size does not apply to a fabric run"},
		{[]string{"--topology", "fat-tree:k=3"}, "rocekit sim: --topology fat-tree:k=3: fat-tree: k = 3, must be even"},
		{[]string{"--topology", "star:hosts=3", "--traffic", "incast:n=9,size=1MB"}, "rocekit sim: --traffic incast:n=9,size=1MB: "},
		{[]string{"--topology", "star:hosts=3", "--host-gbps", "0"}, "--host-gbps 0: want more than 0"},
		{[]string{"--topology", "star:hosts=3", "--trace", os.DevNull, "--trace-links", "nowhere"}, `--trace-links: "nowhere" is not a node or a link`},
	} {
		code, out, errs := simCLI(append([]string{"sim"}, c.args...)...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errs)
		assert.Empty(t, out, "%v", c.args)
		first, _, _ := strings.Cut(errs, "\n")
		assert.Contains(t, first, c.want, "%v", c.args)
		assert.Equal(t, 2, strings.Count(errs, "\n"), "%v: %q", c.args, errs)
	}
}

// TestSimFabricTrace: a traced fabric run with PFC writes one pcapng
// interface per chosen link; tshark decodes its PFC frames as 802.1Qbb
// pauses of priority 3 only and its RoCE frames with good ICRCs (rocekit
// decode agrees on the count).
func TestSimFabricTrace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "fabric.pcapng")
	sc := filepath.Join(dir, "incast.json")
	require.NoError(t, os.WriteFile(sc, []byte(`{"seed":1,"topology":"star:hosts=9","traffic":"incast:n=8,size=300KB",
		"fabric":{"buffer_bytes":400000}}`), 0o644))
	code, out, errs := simCLI("sim", "--scenario", sc, "--trace", trace, "--trace-links", "h0--s0,h1", "--json")
	require.Equal(t, 0, code, errs)
	var sum map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	require.Equal(t, []any{"h0--s0", "h1--s0"}, sum["traced_links"])
	require.Positive(t, sum["pfc_pauses"].(float64))

	code, out, errs = simCLI("decode", "--summary", "--format", "json", trace)
	require.Equal(t, 0, code, errs)
	var dsum map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &dsum))

	rows := oracle.Tshark(t, "|", "-r", trace, "-T", "fields", "-E", "separator=|", "-e", "frame.interface_id",
		"-e", "macc.opcode", "-e", "macc.cbfc.enbv", "-e", "macc.cbfc.pause_time.c3", "-e", "infiniband.bth.opcode",
		"-e", "_ws.malformed")
	pauses, roce := 0, 0
	for i, r := range rows {
		require.Len(t, r, 6, "row %d", i+1)
		assert.Contains(t, []string{"0", "1"}, r[0])
		assert.Empty(t, r[5], "frame %d malformed", i+1)
		switch {
		case r[1] != "":
			assert.Equal(t, "0x0101", r[1], "frame %d: a PFC frame", i+1)
			assert.Equal(t, "0x0008", r[2], "frame %d: priority 3 only", i+1)
			pauses++
		case r[4] != "":
			roce++
		}
	}
	assert.Positive(t, pauses)
	assert.Positive(t, roce)
	t.Logf("tshark: %d PFC frames, %d RoCE frames on the two traced links; decode: %v frames", pauses, roce, dsum["frames"])
}

// TestSimDCQCNTraceCNPs: the CNPs of a DCQCN run are real frames: traced
// on the receiver's link, rocekit decode --summary counts as many per
// connection as the simulator counted for each flow, and scapy computes
// the ICRC every CNP carries.
func TestSimDCQCNTraceCNPs(t *testing.T) {
	dir := t.TempDir()
	trace, fct := filepath.Join(dir, "dcqcn.pcap"), filepath.Join(dir, "fct.csv")
	code, out, errs := simCLI("sim", "--topology", "star:hosts=4", "--host-gbps", "40", "--traffic", "incast:n=3,size=3MB",
		"--cc", "dcqcn", "--trace", trace, "--trace-links", "h0", "--fct", fct, "--json")
	require.Equal(t, 0, code, errs)
	var sum map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	sent := int(sum["cnps_sent"].(float64))
	require.Positive(t, sent)
	require.Equal(t, sum["cnps_sent"], sum["cnps_received"])

	// The simulator's count per flow, by the flow's source host.
	b, err := os.ReadFile(fct)
	require.NoError(t, err)
	simCNPs := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
		f := strings.Split(l, ",")
		n, err := strconv.Atoi(f[10])
		require.NoError(t, err)
		simCNPs[f[1]] = n
	}

	code, out, errs = simCLI("decode", "--summary", "--format", "json", trace)
	require.Equal(t, 0, code, errs)
	var dsum struct {
		Connections []struct {
			Directions []struct {
				Src  string `json:"src"`
				CNPs int    `json:"cnps"`
			} `json:"directions"`
		} `json:"connections"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &dsum))
	decoded, total := map[string]int{}, 0
	for _, c := range dsum.Connections {
		for _, d := range c.Directions {
			if d.CNPs > 0 {
				decoded[d.Src] += d.CNPs
				total += d.CNPs
			}
		}
	}
	require.Equal(t, sent, total, "every CNP once on the receiver's link")
	// Hosts h1..h3 are 10.0.0.2..4.
	for h, n := range simCNPs {
		i, _ := strconv.Atoi(strings.TrimPrefix(h, "h"))
		assert.Equal(t, n, decoded[fmt.Sprintf("10.0.0.%d", i+1)], "flow from %s", h)
	}

	const script = `
import sys
from scapy.all import rdpcap
from scapy.contrib.roce import BTH
n = 0
for p in rdpcap(sys.argv[1]):
    if BTH not in p or p[BTH].opcode != 0x81:
        continue
    carried = bytes(p)[-4:].hex()
    del p[BTH].icrc
    print(bytes(p)[-4:].hex(), carried)
`
	rows := strings.Split(strings.TrimSpace(oracle.Python(t, script, trace)), "\n")
	require.Len(t, rows, sent)
	for _, r := range rows {
		f := strings.Fields(r)
		require.Len(t, f, 2, r)
		assert.Equal(t, f[1], f[0], "scapy's ICRC of a CNP")
	}
}
