package main

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocekit/rocekit/decode"
	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// runCLI runs rocekit in-process.
func runCLI(t testing.TB, args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(args, &o, &e)
	return code, o.String(), e.String()
}

func decodeJSON(t testing.TB, out string) []map[string]any {
	var frames []map[string]any
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		if l == "" {
			continue
		}
		d := json.NewDecoder(strings.NewReader(l))
		d.UseNumber()
		var m map[string]any
		require.NoError(t, d.Decode(&m), l)
		frames = append(frames, m)
	}
	return frames
}

// field walks a dotted path ("bth.psn") in a decoded JSON frame.
func field(m map[string]any, path string) (any, bool) {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// tsharkNumber parses tshark's rendering of a numeric or boolean field.
func tsharkNumber(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	if i := strings.IndexByte(s, ','); i >= 0 { // repeated field (tshark shows ImmDt twice)
		s = s[:i]
	}
	switch s {
	case "True":
		return 1, true
	case "False":
		return 0, true
	}
	if strings.HasPrefix(s, "0x") {
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return v, err == nil
	}
	if v, err := strconv.ParseUint(s, 10, 64); err == nil {
		return v, true
	}
	v, err := strconv.ParseUint(s, 16, 64) // FT_BYTES such as immdt
	return v, err == nil
}

func ourNumber(v any) (uint64, bool) {
	switch x := v.(type) {
	case json.Number:
		n, err := strconv.ParseUint(string(x), 10, 64)
		return n, err == nil
	case bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Every frame of every shared capture: the frame count equals tshark's, no
// frame has an error, every ICRC (and VCRC) is valid, and every BTH and
// extension-header field equals what tshark shows.
func TestDecodeCapturesAgainstTshark(t *testing.T) {
	dir := oracle.Captures(t)
	fields := []struct{ ours, theirs string }{
		{"bth.opcode", "infiniband.bth.opcode"},
		{"bth.se", "infiniband.bth.se"},
		{"bth.m", "infiniband.bth.m"},
		{"bth.padcnt", "infiniband.bth.padcnt"},
		{"bth.tver", "infiniband.bth.tver"},
		{"bth.p_key", "infiniband.bth.p_key"},
		{"bth.destqp", "infiniband.bth.destqp"},
		{"bth.a", "infiniband.bth.a"},
		{"bth.resv7", "infiniband.bth.reserved7"},
		{"bth.psn", "infiniband.bth.psn"},
		{"deth.q_key", "infiniband.deth.q_key"},
		{"deth.srcqp", "infiniband.deth.srcqp"},
		{"reth.va", "infiniband.reth.va"},
		{"reth.r_key", "infiniband.reth.r_key"},
		{"reth.dmalen", "infiniband.reth.dmalen"},
		{"aeth.syndrome", "infiniband.aeth.syndrome"},
		{"aeth.msn", "infiniband.aeth.msn"},
		{"immdt", "infiniband.immdt"},
		{"icrc.value", "infiniband.invariant.crc"},
		{"vcrc.value", "infiniband.variant.crc"},
		{"lrh.dlid", "infiniband.lrh.dlid"},
		{"lrh.slid", "infiniband.lrh.slid"},
		{"lrh.pktlen", "infiniband.lrh.pktlen"},
		{"grh.paylen", "infiniband.grh.paylen"},
	}
	for _, cf := range oracle.CaptureFiles {
		t.Run(cf.Name, func(t *testing.T) {
			path := filepath.Join(dir, cf.Name)
			code, out, errs := runCLI(t, "decode", "--format", "json", path)
			require.Equal(t, 0, code, errs)
			frames := decodeJSON(t, out)
			require.Len(t, frames, cf.Frames)
			roce := 0
			for _, m := range frames {
				assert.NotContains(t, m, "error", "frame %v", m["frame"])
				if _, ok := m["bth"]; !ok {
					continue
				}
				roce++
				v, _ := field(m, "icrc.valid")
				assert.Equal(t, true, v, "frame %v icrc", m["frame"])
				if _, ok := m["lrh"]; ok {
					v, _ := field(m, "vcrc.valid")
					assert.Equal(t, true, v, "frame %v vcrc", m["frame"])
				}
				assert.Empty(t, m["warnings"], "frame %v", m["frame"])
			}
			assert.Equal(t, cf.RoCE, roce)

			args := append([]string{"-r", path}, cf.TsharkArgs...)
			args = append(args, "-T", "fields", "-E", "separator=|", "-e", "frame.number")
			for _, f := range fields {
				args = append(args, "-e", f.theirs)
			}
			rows := oracle.Tshark(t, "|", args...)
			require.Len(t, rows, cf.Frames, "tshark frame count")
			compared := 0
			for i, row := range rows {
				for j, f := range fields {
					want, ok := tsharkNumber(row[j+1])
					if !ok {
						continue
					}
					v, present := field(frames[i], f.ours)
					require.True(t, present, "frame %d: tshark has %s=%s, we have no %s", i+1, f.theirs, row[j+1], f.ours)
					got, ok := ourNumber(v)
					require.True(t, ok, "frame %d %s: %v", i+1, f.ours, v)
					assert.Equal(t, want, got, "frame %d %s (tshark %s=%s)", i+1, f.ours, f.theirs, row[j+1])
					compared++
				}
			}
			assert.Greater(t, compared, 0)
			t.Logf("%d frames, %d RoCE/IB, %d field values equal to tshark's", len(frames), roce, compared)
		})
	}
}

func TestDecodeTextAndVerbose(t *testing.T) {
	dir := oracle.Captures(t)
	path := filepath.Join(dir, "montybeatnik-rdma-roce-lab_test.pcap")
	code, out, _ := runCLI(t, "decode", path, "--frames", "6")
	require.Equal(t, 0, code)
	assert.Equal(t, "6 17:29:05.518778000 192.168.2.25 > 192.168.2.24 RC_RDMA_READ_REQUEST qp=0x000011 psn=12726937 A reth va=0xaaab26b58000 rkey=0x00000220 dmalen=4096 len=0 icrc ok\n", out)
	code, out, _ = runCLI(t, "decode", "-v", "--frames", "5", path)
	require.Equal(t, 0, code)
	assert.Contains(t, out, "AETH syndrome=0x1f (ACK unlimited) msn=1")
	assert.Contains(t, out, "ICRC 0x884e6b4a [correct]")
	assert.Contains(t, out, "BTH opcode=RC_ACKNOWLEDGE(0x11)")
}

func TestDecodeSelection(t *testing.T) {
	dir := oracle.Captures(t)
	path := filepath.Join(dir, "montybeatnik-rdma-roce-lab_test.pcap")
	count := func(args ...string) int {
		code, out, errs := runCLI(t, append([]string{"decode", "--format", "json", path}, args...)...)
		require.Equal(t, 0, code, errs)
		return len(decodeJSON(t, out))
	}
	assert.Equal(t, 16, count())
	assert.Equal(t, 5, count("--transport", "ud"))
	assert.Equal(t, 4, count("--opcode", "RC_RDMA_READ_RESPONSE_FIRST,0x0e,RC_RDMA_READ_RESPONSE_LAST"))
	assert.Equal(t, 3, count("--frames", "2-4"))
	assert.Equal(t, 12, count("--frames", "5-"))
	assert.Equal(t, 2, count("--qp", "0x11", "--transport", "RC", "--opcode", "RC_RDMA_READ_REQUEST,RC_RDMA_WRITE_ONLY"))
}

func TestDecodeExitCodes(t *testing.T) {
	code, _, errs := runCLI(t, "decode")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "no capture file")
	code, _, _ = runCLI(t, "decode", "--format", "xml", "x.pcap")
	assert.Equal(t, 2, code)
	code, _, _ = runCLI(t, "decode", "--frames", "9-3", "x.pcap")
	assert.Equal(t, 2, code)
	code, _, _ = runCLI(t, "decode", "--opcode", "RC_NOPE", "x.pcap")
	assert.Equal(t, 2, code)
	code, _, _ = runCLI(t, "nope")
	assert.Equal(t, 2, code)
	code, _, errs = runCLI(t, "decode", filepath.Join(t.TempDir(), "missing.pcap"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "missing.pcap")

	// A file cut in the middle of its third record: the first two frames
	// are printed, then exit status 1 with the record named.
	dir := oracle.Captures(t)
	data, err := os.ReadFile(filepath.Join(dir, "montybeatnik-rdma-roce-lab_test.pcap"))
	require.NoError(t, err)
	p := filepath.Join(t.TempDir(), "cut.pcap")
	off := 24
	for i := 0; i < 2; i++ {
		off += 16 + int(uint32(data[off+8])|uint32(data[off+9])<<8)
	}
	require.NoError(t, os.WriteFile(p, data[:off+30], 0o644))
	code, out, errs := runCLI(t, "decode", p)
	assert.Equal(t, 1, code)
	assert.Equal(t, 2, strings.Count(out, "\n"), out)
	assert.Contains(t, errs, "record 3")
}

// The same frames give the same output whatever the container: classic pcap
// read in place (memory-mapped), pcapng and gzip read as streams (records
// copied into the pipeline's batches), and standard input. The file is
// repeated so several batches are in flight at once.
func TestDecodeSameOutputForEveryContainer(t *testing.T) {
	dir := oracle.Captures(t)
	r, err := pcap.Open(filepath.Join(dir, "oferby-proxy_roce.pcap"))
	require.NoError(t, err)
	defer r.Close()
	type rec struct {
		ts   time.Time
		data []byte
	}
	var recs []rec
	for {
		x, err := r.Next()
		if err != nil {
			break
		}
		recs = append(recs, rec{x.Time, append([]byte(nil), x.Data...)})
	}
	tmp := t.TempDir()
	write := func(name string, f pcap.Format, gz bool) string {
		var buf bytes.Buffer
		var w io.Writer = &buf
		var zw *gzip.Writer
		if gz {
			zw = gzip.NewWriter(&buf)
			w = zw
		}
		pw, err := pcap.NewWriter(w, f, pcap.LinkTypeEthernet)
		require.NoError(t, err)
		for i := 0; i < 5; i++ {
			for _, x := range recs {
				require.NoError(t, pw.WritePacket(x.ts, x.data))
			}
		}
		require.NoError(t, pw.Flush())
		if zw != nil {
			require.NoError(t, zw.Close())
		}
		p := filepath.Join(tmp, name)
		require.NoError(t, os.WriteFile(p, buf.Bytes(), 0o644))
		return p
	}
	base := write("a.pcap", pcap.FormatPcap, false)
	code, want, _ := runCLI(t, "decode", "--format", "json", "--port", "69", base)
	require.Equal(t, 0, code)
	require.Equal(t, 5*len(recs), strings.Count(want, "\n"))
	for _, p := range []string{
		write("b.pcapng", pcap.FormatPcapng, false),
		write("c.pcap.gz", pcap.FormatPcap, true),
		write("d.pcapng.gz", pcap.FormatPcapng, true),
	} {
		code, got, errs := runCLI(t, "decode", "--format", "json", "--port", "69", p)
		require.Equal(t, 0, code, errs)
		assert.Equal(t, want, got, p)
	}
	t.Setenv("ROCEKIT_NO_MMAP", "1")
	code, got, _ := runCLI(t, "decode", "--format", "json", "--port", "69", base)
	require.Equal(t, 0, code)
	assert.Equal(t, want, got, "read as a stream")
}

// The JSON caches (lower layers and BTH rendered once per flow) give the same
// bytes as rendering every field afresh, whatever the header bytes: frames
// of several opcodes with random header bytes changed, few values per byte
// so that entries are both reused and evicted.
func TestJSONCacheSameAsFresh(t *testing.T) {
	var bases [][]byte
	for _, op := range []opcode.Opcode{opcode.RCRDMAWriteFirst, opcode.RCSendOnly, opcode.RCAcknowledge, opcode.UDSendOnly, opcode.RCRDMAReadRequest} {
		ff := packet.DefaultFrame(packet.RoCEv2IPv4)
		ff.Transport.BTH.Opcode = op
		ff.Transport.BTH.PSN = 0x123456
		ff.Transport.Payload = []byte("payload")
		ff.Transport.SetPad()
		buf := make([]byte, ff.Len())
		n, err := ff.Encode(buf)
		require.NoError(t, err)
		bases = append(bases, buf[:n])
	}
	rng := rand.New(rand.NewPCG(1, 2))
	jc := new(jsonCache)
	var s decode.Frame
	var f packet.Frame
	hits := 0
	for i := 0; i < 20000; i++ {
		fr := append([]byte(nil), bases[rng.IntN(len(bases))]...)
		for k := rng.IntN(4); k > 0; k-- {
			// Ethernet, IPv4, UDP and BTH bytes (14+20+8+12).
			fr[rng.IntN(54)] ^= byte(1 << rng.IntN(8) & 0x83)
		}
		s.DecodeRecord(&pcap.Record{Index: i + 1, Time: time.Unix(1700000000, int64(i)), CapLen: len(fr), OrigLen: len(fr), LinkType: pcap.LinkTypeEthernet, Data: fr}, &f)
		fresh := appendJSON(nil, &frameInfo{Frame: &s, f: &f})
		cached := appendJSON(nil, &frameInfo{Frame: &s, f: &f, jc: jc})
		require.Equal(t, string(fresh), string(cached), "frame % x", fr)
		if f.IPv4 != nil && f.UDP != nil && f.Transport.BTH != nil {
			hits++
		}
	}
	assert.Greater(t, hits, 10000, "frames that took the cached path")
}

func TestAppendUintAndTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	vals := []uint64{0, 1, 9, 10, 99, 100, 999, 1000, 4095, 4096, 9999, 10000, 10001, 99999999, 100000000, 1e12 - 1, 1e12, 1e15, 1e16 - 1, 1e16, 1<<64 - 1}
	for i := 0; i < 100000; i++ {
		vals = append(vals, rng.Uint64()>>rng.IntN(64))
	}
	for _, v := range vals {
		require.Equal(t, strconv.FormatUint(v, 10), string(appendUint([]byte("x"), v))[1:])
	}
	var c clockCache
	for i := 0; i < 10000; i++ {
		ts := time.Unix(rng.Int64N(4e9), rng.Int64N(1e9))
		if i < 10 {
			ts = time.Unix(1700000000, int64(i)*100000001)
		}
		require.Equal(t, ts.UTC().Format("2006-01-02T15:04:05.000000000Z"), string(c.appendRFC3339Nano(nil, ts)))
	}
}

// writeClients writes a capture of eight clients (192.168.1.10-17) each
// doing RDMA WRITEs to a server (192.168.1.2) with their ACKs, every
// client's PSNs starting near 2^24, the frames interleaved: several
// endpoint pairs (so several tracker shards) over many read chunks.
func writeClients(t *testing.T, path string, frames int) {
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w, err := pcap.NewWriter(f, pcap.FormatPcap, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	buf := make([]byte, 2048)
	payload := make([]byte, 1000)
	var psn [8]uint32
	for c := range psn {
		psn[c] = 1<<24 - 50 + uint32(c)
	}
	ts := time.Unix(1700000000, 0)
	for i := 0; i < frames; i++ {
		c := i % 16 / 2
		ff := packet.DefaultFrame(packet.RoCEv2IPv4)
		ff.IPv4.Src[3], ff.IPv4.Dst[3] = byte(10+c), 2
		ff.Transport.BTH.DestQP = 0x200 + uint32(c)
		ff.Transport.BTH.PSN = psn[c]
		if i%2 == 0 {
			ff.Transport.BTH.Opcode = opcode.RCRDMAWriteOnly
			ff.Transport.BTH.AckReq = true
			ff.Transport.RETH.DMALen = uint32(100 + i%900)
			ff.Transport.Payload = payload[:100+i%900]
		} else {
			ff.IPv4.Src, ff.IPv4.Dst = ff.IPv4.Dst, ff.IPv4.Src
			ff.Transport.BTH.Opcode = opcode.RCAcknowledge
			ff.Transport.BTH.DestQP = 0x100 + uint32(c)
			psn[c] = (psn[c] + 1) & 0xFFFFFF
		}
		ff.Transport.SetPad()
		n, err := ff.Encode(buf)
		require.NoError(t, err)
		require.NoError(t, w.WritePacket(ts.Add(time.Duration(i)*time.Microsecond), buf[:n]))
	}
	require.NoError(t, w.Flush())
}

// Every number of workers (and so of tracker shards) gives the same
// output as one: frames, warnings and the summary, over several files of
// many endpoint pairs and read chunks, read in place and as streams.
func TestDecodeSameOutputForEveryWorkerCount(t *testing.T) {
	tmp := t.TempDir()
	clients := filepath.Join(tmp, "clients.pcap")
	writeClients(t, clients, 6000)
	// A gzip copy is read as a stream, its records copied into batches.
	raw, err := os.ReadFile(clients)
	require.NoError(t, err)
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, err = zw.Write(raw)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	zipped := filepath.Join(tmp, "clients.pcap.gz")
	require.NoError(t, os.WriteFile(zipped, zb.Bytes(), 0o644))
	files := []string{clients, zipped, clients}
	// A real capture between them when ../shared is there; the test is
	// about the pipeline, so it runs without.
	if real := filepath.Join("..", "..", "..", "shared", "captures", "montybeatnik-rdma-roce-lab_roce_capture_read-write-ecn.pcap"); fileExists(real) {
		files = append(files, real, clients)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	// Mapped files are read through the mapping or through copies
	// (internal/pcapfast), as ROCEKIT_READ says: the same output.
	modes := []string{"map", "copy"}
	for _, args := range [][]string{{"--summary"}, {"--summary", "--format", "json"}, {"--format", "json"}, {"-v", "--qp", "0x203"}, {"--time", "delta"}} {
		var want string
		for _, mode := range modes {
			t.Setenv("ROCEKIT_READ", mode)
			for _, procs := range []int{1, 2, 3, 4} {
				runtime.GOMAXPROCS(procs)
				code, got, errs := runCLI(t, append(append([]string{"decode"}, args...), files...)...)
				require.Equal(t, 0, code, errs)
				if want == "" {
					want = got
					require.NotEmpty(t, want)
					continue
				}
				require.Equal(t, want, got, "%v with %d workers, read by %s", args, procs, mode)
			}
		}
	}
	// A file cut short in its last record: every frame before the damage is
	// analysed, the damage reported, the exit status 1, whatever the
	// number of workers.
	cut := filepath.Join(tmp, "cut.pcap")
	require.NoError(t, os.WriteFile(cut, raw[:len(raw)-100], 0o644))
	var want, wantErr string
	for _, mode := range modes {
		t.Setenv("ROCEKIT_READ", mode)
		for _, procs := range []int{1, 2, 3, 4} {
			runtime.GOMAXPROCS(procs)
			code, got, errs := runCLI(t, "decode", "--summary", clients, cut)
			require.Equal(t, 1, code, errs)
			if want == "" {
				want, wantErr = got, errs
				require.Contains(t, errs, "record 5999 at offset")
				require.Contains(t, got, "11998 frames, ")
				continue
			}
			require.Equal(t, want, got, "%d workers, read by %s", procs, mode)
			require.Equal(t, wantErr, errs, "%d workers, read by %s", procs, mode)
		}
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestAppendHex: a value prints with at least width digits, and zero as
// "0x0", never as a bare "0x" (an atomic's compare value of 0 printed
// "cmp=0x").
func TestAppendHex(t *testing.T) {
	for _, c := range []struct {
		v     uint64
		width int
		want  string
	}{
		{0, 0, "0x0"}, {0, 6, "0x000000"}, {0xab, 0, "0xab"}, {0xab, 4, "0x00ab"},
		{0xffffffffffffffff, 0, "0xffffffffffffffff"}, {1, 16, "0x0000000000000001"},
	} {
		assert.Equal(t, c.want, string(appendHex(nil, c.v, c.width)), "%#x width %d", c.v, c.width)
	}
}
