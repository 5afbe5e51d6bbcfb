package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/gen"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/stim"
)

// genScenario is a small scenario with every operation.
const genScenario = `{"seed": 5, "hosts": [{"name": "a"}, {"name": "b"}],
 "links": [{"a": "a", "b": "b", "bandwidth_gbps": 100, "delay_ns": 500, "faults": {"loss": 0.2}}],
 "qps": [{"from": "a", "to": "b", "mtu": 1024, "outstanding": 4,
          "work": {"op": "mix", "count": 30, "size": 1, "size_max": 3000}}]}`

// genManifest is what the CLI tests read of a manifest.
type genManifest struct {
	Source string `json:"source"`
	Frames []struct {
		Stream string         `json:"stream"`
		Index  int            `json:"index"`
		Fault  map[string]any `json:"fault"`
		Expect string         `json:"expect"`
		Cause  *int           `json:"cause"`
	} `json:"frames"`
	Summary struct {
		In, Out, Faults int
		Expect          map[string]int
	} `json:"summary"`
}

func readGenManifest(t *testing.T, path string) genManifest {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var m genManifest
	require.NoError(t, json.Unmarshal(b, &m))
	return m
}

func readPcapFrames(t *testing.T, path string) ([][]byte, []time.Time) {
	t.Helper()
	r, err := pcap.Open(path)
	require.NoError(t, err)
	defer r.Close()
	var fs [][]byte
	var ts []time.Time
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return fs, ts
		}
		require.NoError(t, err)
		fs = append(fs, bytes.Clone(rec.Data))
		ts = append(ts, rec.Time)
	}
}

// mergeCaptures writes in and out into one capture in time order (an input
// before the outputs of the same instant), as a tap at the DUT's port sees
// them, and returns its path and, per merged frame, whether it was an input
// and its index.
func mergeCaptures(t *testing.T, prefix string) (string, []struct {
	in  bool
	idx int
}) {
	t.Helper()
	inF, inT := readPcapFrames(t, prefix+".in.pcap")
	outF, outT := readPcapFrames(t, prefix+".out.pcap")
	type rec struct {
		t   time.Time
		in  bool
		idx int
		b   []byte
	}
	var all []rec
	for i := range inF {
		all = append(all, rec{inT[i], true, i, inF[i]})
	}
	for i := range outF {
		all = append(all, rec{outT[i], false, i, outF[i]})
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].t.Before(all[j].t) })
	path := prefix + ".merged.pcap"
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pcap.NewWriter(f, pcap.FormatPcap, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	var idx []struct {
		in  bool
		idx int
	}
	for _, r := range all {
		require.NoError(t, w.WritePacket(r.t, r.b))
		idx = append(idx, struct {
			in  bool
			idx int
		}{r.in, r.idx})
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	return path, idx
}

func TestGenListFaults(t *testing.T) {
	code, out, _ := simCLI("gen", "--list-faults")
	require.Equal(t, 0, code)
	for _, k := range gen.Kinds() {
		assert.Contains(t, out, k.String()+" ")
	}
	assert.Len(t, strings.Split(strings.TrimSpace(out), "\n"), len(gen.Kinds()))
	code, out, _ = simCLI("help", "gen")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "PREFIX.manifest.json")
}

func TestGenUsageErrors(t *testing.T) {
	dir := t.TempDir()
	sc := writeSimScenario(t, genScenario)
	pk := filepath.Join(dir, "p.json")
	require.NoError(t, os.WriteFile(pk, []byte(`[{"opcode": "RC_SEND_ONLY", "payload": "00"}]`), 0o644))
	o := filepath.Join(dir, "x")
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"gen"}, "-o PREFIX"},
		{[]string{"gen", "-o", o, "--scenario", sc, "--packets", pk}, "exclude"},
		{[]string{"gen", "-o", o, "--format", "vcd"}, "format"},
		{[]string{"gen", "-o", o, "--format", "axis", "--width", "100"}, "width"},
		{[]string{"gen", "-o", o, "--byte-order", "middle"}, "byte-order"},
		{[]string{"gen", "-o", o, "--fault", "gremlins"}, "unknown fault"},
		{[]string{"gen", "-o", o, "--scenario", sc, "--fault", "bad-vcrc"}, "--encap ib"},
		{[]string{"gen", "-o", o, "--scenario", sc, "--fault", "wrong-qkey"}, "no eligible frame"},
		{[]string{"gen", "-o", o, "--scenario", sc, "--fault", "tver:@100000"}, "source has"},
		{[]string{"gen", "-o", o, "--packets", pk, "--encap", "ib"}, "dut"},
		{[]string{"gen", "-o", o, "--scenario", filepath.Join(dir, "none.json")}, "none.json"},
		{[]string{"gen", "-o", o, "--encap", "token-ring"}, "encapsulation"},
		{[]string{"gen", "-o", o, "stray"}, "unexpected argument"},
	} {
		code, _, errs := simCLI(c.args...)
		assert.Equal(t, 2, code, "%v: %s", c.args, errs)
		assert.Contains(t, errs, c.msg, "%v", c.args)
	}
	_, err := os.Stat(o + ".in.pcap")
	assert.True(t, os.IsNotExist(err), "usage errors write no file")
}

// The default run: the simulator's default scenario shortened to 16 WRITEs
// of 1 MiB, fault-free, every frame accepted.
func TestGenDefaultRun(t *testing.T) {
	o := filepath.Join(t.TempDir(), "d")
	code, out, errs := simCLI("gen", "-o", o)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "4096 input frames, 64 output frames, 0 faults")
	m := readGenManifest(t, o+".manifest.json")
	assert.Contains(t, m.Source, "default scenario")
	assert.Equal(t, map[string]int{"accept": 4096}, m.Summary.Expect)
	in, _ := readPcapFrames(t, o+".in.pcap")
	assert.Len(t, in, 4096)
}

// A scenario with faults through every stream format: the files hold the
// frames the pcap run holds, and two runs with the same seed are byte for
// byte the same.
func TestGenFormatsAndDeterminism(t *testing.T) {
	sc := writeSimScenario(t, genScenario)
	dir := t.TempDir()
	args := []string{"--scenario", sc, "--fault", "duplicate:0.1", "--fault", "truncate:0.1", "--fault", "ghost-ack", "--seed", "42"}
	code, _, errs := simCLI(append([]string{"gen", "-o", filepath.Join(dir, "ref")}, args...)...)
	require.Equal(t, 0, code, errs)
	refIn, _ := readPcapFrames(t, filepath.Join(dir, "ref.in.pcap"))
	refOut, _ := readPcapFrames(t, filepath.Join(dir, "ref.out.pcap"))
	require.NotEmpty(t, refOut)
	for _, c := range []struct {
		format, width, order string
	}{{"hex", "", ""}, {"axis", "128", "be"}, {"memh", "512", "le"}, {"axismem", "64", "be"}, {"pcapng", "", ""}} {
		p := filepath.Join(dir, c.format)
		a := append([]string{"gen", "-o", p, "--format", c.format}, args...)
		if c.width != "" {
			a = append(a, "--width", c.width, "--byte-order", c.order)
		}
		code, _, errs := simCLI(a...)
		require.Equal(t, 0, code, errs)
		for _, s := range []struct {
			name string
			want [][]byte
		}{{"in", refIn}, {"out", refOut}} {
			var got [][]byte
			var err error
			w := 0
			if c.width != "" {
				w = map[string]int{"128": 128, "512": 512, "64": 64}[c.width]
			}
			ord, _ := stim.ParseOrder(map[bool]string{true: "le", false: c.order}[c.order == ""])
			open := func(n string) *os.File {
				f, err := os.Open(n)
				require.NoError(t, err)
				t.Cleanup(func() { f.Close() })
				return f
			}
			base := p + "." + s.name
			switch c.format {
			case "hex":
				got, err = stim.ReadHex(open(base + ".hex"))
			case "axis":
				got, err = stim.ReadAXIS(open(base+".axis"), w, ord)
			case "memh":
				got, err = stim.ReadMemh(open(base+".mem"), open(base+".idx.mem"), w, ord)
			case "axismem":
				got, err = stim.ReadAXISMem(open(base+".axis.mem"), w, ord)
			case "pcapng":
				got, _ = readPcapFrames(t, base+".pcapng")
			}
			require.NoError(t, err, c.format)
			assert.Equal(t, s.want, got, "%s %s", c.format, s.name)
		}
	}
	// Same seed, same bytes (the manifest records the command line: both
	// runs use the same relative prefix, in two directories).
	var runs [2]map[string][]byte
	for i := range runs {
		t.Chdir(t.TempDir())
		code, _, errs = simCLI(append([]string{"gen", "-o", "ref"}, args...)...)
		require.Equal(t, 0, code, errs)
		runs[i] = map[string][]byte{}
		for _, n := range []string{"ref.in.pcap", "ref.out.pcap", "ref.manifest.json"} {
			b, err := os.ReadFile(n)
			require.NoError(t, err)
			runs[i][n] = b
		}
	}
	for n, b := range runs[0] {
		assert.True(t, bytes.Equal(b, runs[1][n]), "%s differs between two runs", n)
	}
}

// A packet list through the CLI: reactions as the list intends.
func TestGenPackets(t *testing.T) {
	dir := t.TempDir()
	pk := filepath.Join(dir, "p.json")
	require.NoError(t, os.WriteFile(pk, []byte(`{"dut": {"qps": [{"recv_wqes": 1, "recv_repost": false}]}, "packets": [
	  {"opcode": "RC_SEND_ONLY", "payload": {"len": 100, "pattern": "incr"}},
	  {"opcode": "RC_SEND_ONLY", "payload": "00"},
	  {"opcode": "RC_RDMA_WRITE_ONLY", "bth": {"psn": 1}, "payload": {"len": 8}},
	  {"opcode": "RC_RDMA_READ_REQUEST", "reth": {"dma_len": 3000}},
	  {"opcode": "RC_RDMA_WRITE_ONLY", "payload": "11", "reth": {"rkey": 7}}
	]}`), 0o644))
	o := filepath.Join(dir, "p")
	code, out, errs := simCLI("gen", "--packets", pk, "-o", o, "--latency", "250")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "5 input frames, 7 output frames") // ACK, RNR NAK, ACK, 3 READ responses, NAK
	m := readGenManifest(t, o+".manifest.json")
	var expect []string
	for _, f := range m.Frames {
		if f.Stream == "in" {
			expect = append(expect, f.Expect)
		}
	}
	assert.Equal(t, []string{"accept", "RNR NAK", "accept", "accept", "NAK remote access error"}, expect)
}

// rocekit check on the faulted input merged with the expected output: a
// clean run has no finding; bad ICRCs are reported at exactly the frames
// the manifest says carry them, and no finding falls on an output frame.
func TestGenThroughCheck(t *testing.T) {
	sc := writeSimScenario(t, genScenario)
	dir := t.TempDir()
	clean := filepath.Join(dir, "clean")
	code, _, errs := simCLI("gen", "--scenario", sc, "-o", clean)
	require.Equal(t, 0, code, errs)
	merged, _ := mergeCaptures(t, clean)
	code, out, errs := simCLI("check", merged)
	assert.Equal(t, 0, code, "clean run: %s%s", out, errs)
	assert.Contains(t, out, "0 findings")

	bad := filepath.Join(dir, "bad")
	code, _, errs = simCLI("gen", "--scenario", sc, "-o", bad, "--fault", "bad-icrc:0.1", "--seed", "3")
	require.Equal(t, 0, code, errs)
	m := readGenManifest(t, bad+".manifest.json")
	faulted := map[int]bool{}
	for _, f := range m.Frames {
		if f.Stream == "in" && f.Fault != nil {
			faulted[f.Index] = true
		}
	}
	require.NotEmpty(t, faulted)
	merged, idx := mergeCaptures(t, bad)
	code, out, _ = simCLI("check", "--format", "json", merged)
	assert.Equal(t, 1, code)
	reported := map[int]bool{}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var f struct {
			Type  string `json:"type"`
			Frame int    `json:"frame"`
			Kind  string `json:"kind"`
		}
		require.NoError(t, json.Unmarshal([]byte(l), &f), l)
		if f.Type != "finding" {
			continue
		}
		x := idx[f.Frame-1]
		require.True(t, x.in, "finding on an output frame: %s", l)
		if f.Kind == "bad_icrc" {
			reported[x.idx] = true
		}
	}
	assert.Equal(t, faulted, reported, "bad_icrc findings at exactly the faulted frames")
}

// The summary line counts in the singular where a count is one.
func TestGenSummaryPlurals(t *testing.T) {
	dir := t.TempDir()
	pk := filepath.Join(dir, "p.json")
	require.NoError(t, os.WriteFile(pk, []byte(`[{"opcode": "RC_SEND_ONLY", "payload": "00"}]`), 0o644))
	o := filepath.Join(dir, "x")
	code, out, errs := simCLI("gen", "--packets", pk, "-o", o, "--fault", "bad-icrc")
	require.Equal(t, 0, code, errs)
	assert.True(t, strings.HasPrefix(out, "1 input frame, 0 output frames, 1 fault injected; wrote "), out)
	code, out, errs = simCLI("gen", "--packets", pk, "-o", o)
	require.Equal(t, 0, code, errs)
	assert.True(t, strings.HasPrefix(out, "1 input frame, 1 output frame, 0 faults injected; wrote "), out)
}
