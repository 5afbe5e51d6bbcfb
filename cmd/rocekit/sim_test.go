package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/roce"
)

// simCLI runs rocekit in-process and returns the exit code and output.
func simCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

// simTraceScenario goes through a switch that marks ECN, with loss,
// reordering and duplication on every link and every operation; no
// corruption, so that every frame in the trace carries a valid ICRC (a
// frame corrupted on its first hop would be captured, as it is, on its
// second).
const simTraceScenario = `{
  "seed": 11,
  "hosts": [{"name": "a"}, {"name": "b"}],
  "switch": {"name": "sw", "queue_bytes": 131072, "ecn_bytes": 8192},
  "links": [
    {"a": "a", "b": "sw", "bandwidth_gbps": 100, "delay_ns": 500,
     "faults": {"loss": 0.02, "reorder": 0.02, "reorder_delay_ns": 2000, "duplicate": 0.02}},
    {"a": "sw", "b": "b", "bandwidth_gbps": 40, "delay_ns": 700,
     "faults": {"loss": 0.02, "duplicate": 0.01}}
  ],
  "qps": [{"from": "a", "to": "b", "count": 2, "mtu": 1024, "timeout": 7, "sq_psn": 16777200,
           "recv_depth": 2, "recv_repost_delay_ns": 3000, "min_rnr_timer": 1,
           "work": {"op": "mix", "count": 40, "size": 1, "size_max": 6000}}]
}`

func writeSimScenario(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "scenario.json")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o644))
	return p
}

// tsharkHeuristics are the heuristic dissectors tshark tries on InfiniBand
// payloads; the simulator's payloads are noise, which they may misread.
var tsharkHeuristics = []string{
	"smcr_infiniband", "smb_direct_infiniband", "rpcrdma_infiniband", "nvme_rdma", "lnet_ib",
	"iser_infiniband", "eth_over_ib", "mellanox_eoib", "sdp_infiniband", "fc_infiniband",
}

// A trace written by `rocekit sim --trace` decodes with `rocekit decode
// --format json` without errors or warnings and with every ICRC valid;
// tshark reads it with no malformed frame and the same opcode for every
// frame; scapy computes the same ICRC for a sample of frames.
func TestSimTraceDecodes(t *testing.T) {
	sc := writeSimScenario(t, simTraceScenario)
	trace := filepath.Join(t.TempDir(), "trace.pcap")
	code, out, errs := simCLI("sim", "--scenario", sc, "--trace", trace, "--json")
	require.Equal(t, 0, code, errs)
	var sum map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	require.Equal(t, true, sum["data_integrity_ok"])
	require.Equal(t, true, sum["complete"])
	frames := sum["network"].(map[string]any)["frames_on_wire"].(float64)

	code, out, errs = simCLI("decode", "--format", "json", trace)
	require.Equal(t, 0, code, errs)
	var ops []uint64
	var ce int
	warnings := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var m map[string]any
		require.NoError(t, d.Decode(&m), line)
		require.NotContains(t, m, "error", "frame %v", m["frame"])
		// Protocol anomalies (retransmissions, NAKs, CE marks, PSN gaps
		// from losses) are what a lossy run is made of; a bad ICRC is not.
		ws, _ := m["warnings"].([]any)
		for _, w := range ws {
			warnings[w.(string)]++
			require.NotContains(t, []string{"icrc_bad", "vcrc_bad"}, w, "frame %v", m["frame"])
		}
		icrc, _ := m["icrc"].(map[string]any)
		require.Equal(t, true, icrc["valid"], "frame %v ICRC", m["frame"])
		bth, _ := m["bth"].(map[string]any)
		op, err := strconv.ParseUint(string(bth["opcode"].(json.Number)), 10, 8)
		require.NoError(t, err)
		ops = append(ops, op)
		if ipv4, ok := m["ipv4"].(map[string]any); ok {
			if e, ok := ipv4["dsfield_ecn"].(json.Number); ok && e.String() == "3" {
				ce++
			}
		}
	}
	require.Equal(t, int(frames), len(ops), "decode printed one frame per frame on the wire")
	require.NotZero(t, ce, "the switch marked frames CE, and their ICRCs are valid")
	t.Logf("%d frames decoded, all ICRCs valid, %d marked CE; warnings %v", len(ops), ce, warnings)

	t.Run("tshark", func(t *testing.T) {
		args := []string{"-r", trace, "-T", "fields", "-E", "separator=|",
			"-e", "frame.number", "-e", "infiniband.bth.opcode", "-e", "_ws.malformed"}
		for _, h := range tsharkHeuristics {
			args = append(args, "--disable-heuristic", h)
		}
		rows := oracle.Tshark(t, "|", args...)
		require.Len(t, rows, len(ops), "tshark frame count")
		for i, row := range rows {
			require.Len(t, row, 3, "row %d", i+1)
			assert.Equal(t, strconv.Itoa(i+1), row[0])
			assert.Empty(t, row[2], "frame %d malformed", i+1)
			op, err := strconv.ParseUint(row[1], 0, 8)
			require.NoError(t, err, "frame %d opcode %q", i+1, row[1])
			assert.Equal(t, ops[i], op, "frame %d opcode", i+1)
		}
	})

	t.Run("scapy", func(t *testing.T) {
		// Every 7th frame: the ICRC scapy computes must be the one carried.
		const script = `
import sys
from scapy.all import rdpcap
from scapy.contrib.roce import BTH
for i, p in enumerate(rdpcap(sys.argv[1])):
    if i % 7:
        continue
    if BTH not in p:
        print(i, "nobth", "")
        continue
    carried = bytes(p)[-4:].hex()
    del p[BTH].icrc
    print(i, bytes(p)[-4:].hex(), carried)
`
		out := oracle.Python(t, script, trace)
		n := 0
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			f := strings.Fields(l)
			require.Len(t, f, 3, l)
			assert.Equal(t, f[2], f[1], "frame %s: scapy's ICRC", f[0])
			_, err := hex.DecodeString(f[1])
			require.NoError(t, err)
			n++
		}
		assert.Equal(t, (len(ops)+6)/7, n)
		t.Logf("scapy agrees on %d ICRCs", n)
	})
}

// The same seed writes a byte-identical trace; another seed another one.
// pcapng works too (one interface per link) and rocekit decode reads it.
func TestSimTraceDeterministic(t *testing.T) {
	sc := writeSimScenario(t, simTraceScenario)
	dir := t.TempDir()
	trace := func(name string, args ...string) []byte {
		p := filepath.Join(dir, name)
		code, _, errs := simCLI(append([]string{"sim", "--scenario", sc, "--trace", p}, args...)...)
		require.Equal(t, 0, code, errs)
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		return b
	}
	a := trace("a.pcap")
	b := trace("b.pcap")
	c := trace("c.pcap", "--seed", "12")
	assert.True(t, bytes.Equal(a, b), "same seed, different traces")
	assert.False(t, bytes.Equal(a, c), "different seeds, same trace")
	ng := trace("a.pcapng")
	assert.Equal(t, []byte{0x0a, 0x0d, 0x0d, 0x0a}, ng[:4], "pcapng section header")
	assert.True(t, bytes.Equal(ng, trace("b.pcapng")))
	code, out, errs := simCLI("decode", "--format", "json", filepath.Join(dir, "a.pcapng"))
	require.Equal(t, 0, code, errs)
	code2, out2, _ := simCLI("decode", "--format", "json", filepath.Join(dir, "a.pcap"))
	require.Equal(t, 0, code2)
	assert.Equal(t, strings.Count(out2, "\n"), strings.Count(out, "\n"), "same frames in both formats")
	assert.NotContains(t, out, `"valid":false`)
}

// --json prints one object with the documented keys and types.
func TestSimJSONSummary(t *testing.T) {
	code, out, errs := simCLI("sim", "--json", "--messages", "60", "--size", "20000", "--op", "mix", "--mtu", "1024",
		"--loss", "0.02", "--seed", "3", "--qps", "2", "--bandwidth", "25", "--delay", "2000", "--outstanding", "4")
	require.Equal(t, 0, code, errs)
	require.Equal(t, 1, strings.Count(out, "\n"), "one line")
	d := json.NewDecoder(strings.NewReader(out))
	d.UseNumber()
	var m map[string]any
	require.NoError(t, d.Decode(&m))
	num := func(v any) float64 {
		n, ok := v.(json.Number)
		require.True(t, ok, "%v (%T) is not a number", v, v)
		f, err := n.Float64()
		require.NoError(t, err)
		return f
	}
	for _, k := range []string{"wr_posted", "bytes_delivered", "goodput_gbps", "packets_sent", "retransmissions",
		"timeouts", "rnr_naks", "sim_time_ns", "events", "wall_seconds", "events_per_second"} {
		require.Contains(t, m, k)
		assert.GreaterOrEqual(t, num(m[k]), 0.0, k)
	}
	for _, k := range []string{"wr_completed", "naks", "latency_ns"} {
		require.IsType(t, map[string]any{}, m[k], k)
	}
	wc := m["wr_completed"].(map[string]any)
	assert.Equal(t, 120.0, num(wc["SUCCESS"]))
	assert.Equal(t, 120.0, num(m["wr_posted"]))
	for k, v := range m["naks"].(map[string]any) {
		assert.GreaterOrEqual(t, num(v), 0.0, k)
	}
	assert.Contains(t, m["naks"], "PSN_SEQUENCE_ERROR")
	lat := m["latency_ns"].(map[string]any)
	for _, k := range []string{"mean", "p50", "p99"} {
		assert.Greater(t, num(lat[k]), 0.0, k)
	}
	assert.LessOrEqual(t, num(lat["p50"]), num(lat["p99"]))
	assert.Equal(t, true, m["data_integrity_ok"])
	assert.Greater(t, num(m["retransmissions"]), 0.0, "2% loss retransmits")
	assert.Greater(t, num(m["goodput_gbps"]), 0.0)
	assert.LessOrEqual(t, num(m["goodput_gbps"]), 25.0*2, "bounded by the links")
	assert.Equal(t, 2.0, num(m["qps"]))
}

// With no arguments: the default scenario, a readable summary, in about a
// second.
func TestSimDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the default scenario (2 GiB of WRITEs)")
	}
	code, out, errs := simCLI("sim")
	require.Equal(t, 0, code, errs)
	for _, want := range []string{"100 Gb/s, 1us, 1% loss", "2000 x WRITE of 1 MiB each, MTU 4096",
		"2000 posted, all completed: SUCCESS 2000", "goodput", "retransmitted", "PSN_SEQUENCE_ERROR",
		"latency", "mean", "p50", "p99", "integrity     OK", "events/s"} {
		assert.Contains(t, out, want)
	}
	assert.Empty(t, errs, "no progress bar when stderr is not a terminal")
	t.Log("\n" + out)
}

func TestSimPrintScenario(t *testing.T) {
	code, out, errs := simCLI("sim", "--print-scenario", "--mtu", "1024", "--loss", "0.5", "--op", "read")
	require.Equal(t, 0, code, errs)
	sc, err := roce.ParseScenario([]byte(out))
	require.NoError(t, err)
	assert.Equal(t, 1024, sc.QPs[0].MTU)
	assert.Equal(t, 0.5, sc.Links[0].Faults.Loss)
	assert.Equal(t, "read", sc.QPs[0].Work.Op)
	// What --print-scenario prints runs as a scenario file.
	p := writeSimScenario(t, out)
	code, out, errs = simCLI("sim", "--scenario", p, "--messages", "3", "--loss", "0", "--json")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, `"wr_completed":{"SUCCESS":3}`)
}

func TestSimErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--loss", "1.5"}, "--loss"},
		{[]string{"--mtu", "1000"}, "mtu"},
		{[]string{"--op", "nope"}, "op"},
		{[]string{"--qps", "0"}, "--qps"},
		{[]string{"extra"}, "unexpected argument"},
		{[]string{"--bogus"}, "bogus"},
		{[]string{"--scenario", "/nonexistent/s.json"}, "no such file"},
	} {
		code, _, errs := simCLI(append([]string{"sim"}, c.args...)...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Contains(t, errs, c.want, "%v", c.args)
	}
	p := writeSimScenario(t, `{"hosts": [{"name": "a", "nic": 1}]}`)
	code, _, errs := simCLI("sim", "--scenario", p)
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, p+": scenario: hosts[0].nic: unknown key at line 1 column 26\n")
	code, out, _ := simCLI("sim", "-h")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "--trace")
}

// Errors name what the user wrote: the flag when a flag gave the value,
// else the scenario's key path, with the line and column of what the JSON
// decoder found.
func TestSimErrorsNameWhatWasWritten(t *testing.T) {
	_, def, _ := simCLI("sim", "--print-scenario")
	valid := writeSimScenario(t, def)
	lossy := writeSimScenario(t, strings.Replace(def, `"loss": 0.01`, `"loss": 1.5`, 1))
	mtu := writeSimScenario(t, "{\"hosts\": [{\"name\": \"a\"}, {\"name\": \"b\"}],\n \"links\": [{\"a\": \"a\", \"b\": \"b\", \"bandwidth_gbps\": 1}],\n \"qps\": [{\"mtu\": \"4096\"}]}")
	array := writeSimScenario(t, `[{"seed": 1}]`)
	syntax := writeSimScenario(t, "{\"seed\": 1,\n \"hosts\": [}")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"sim", "--bandwidth", "0"}, "rocekit sim: --bandwidth 0: want a rate in Gb/s, more than 0"},
		{[]string{"sim", "--delay", "-3"}, "rocekit sim: --delay -3: want a delay in ns, 0 or more"},
		{[]string{"sim", "--loss", "1.5"}, "rocekit sim: --loss 1.5: want a probability in [0, 1]"},
		{[]string{"sim", "--op", "nope"}, "rocekit sim: --op nope: want write, send, read, atomic, fetch_add, cmp_swap or mix"},
		{[]string{"sim", "--mtu", "1000"}, "rocekit sim: --mtu 1000: want 256, 512, 1024, 2048 or 4096"},
		{[]string{"sim", "--scenario", lossy}, "rocekit sim: " + lossy + ": scenario: links[0].faults.loss: 1.5: want a probability in [0, 1]"},
		{[]string{"sim", "--scenario", valid, "--bandwidth", "-1"}, "rocekit sim: --bandwidth -1: want a rate in Gb/s, more than 0"},
		{[]string{"sim", "--scenario", mtu}, "rocekit sim: " + mtu + ": scenario: qps[0].mtu: expected an integer, got a string at line 3 column 18"},
		{[]string{"sim", "--scenario", array}, "rocekit sim: " + array + ": the scenario must be an object, got an array at line 1 column 1"},
		{[]string{"sim", "--scenario", syntax}, "rocekit sim: " + syntax + ": scenario: invalid character '}' looking for beginning of value at line 2 column 12"},
		{[]string{"gen", "-o", filepath.Join(t.TempDir(), "x"), "--scenario", syntax}, "rocekit gen: " + syntax + ": scenario: invalid character '}' looking for beginning of value at line 2 column 12"},
		{[]string{"gen", "-o", filepath.Join(t.TempDir(), "x"), "--packets", array}, "rocekit gen: " + array + ": packet list: [0].seed: unknown key at line 1 column 3"},
	} {
		code, out, errs := simCLI(c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Empty(t, out, "%v", c.args)
		assert.Equal(t, c.want+"\nrun 'rocekit "+c.args[0]+" -h' for usage\n", errs, "%v", c.args)
	}
}
