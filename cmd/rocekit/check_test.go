package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// chkFrame is one frame of a synthetic capture for the check tests: A
// (192.168.1.1, QP 0x11) sends requests to B (192.168.1.2, QP 0x22).
type chkFrame struct {
	op      opcode.Opcode
	psn     uint32
	payload int
	ackReq  bool
	fromB   bool
	syn     aeth.Syndrome
	msn     uint32
	icrcXor uint32
}

// chkWriteCapture writes the frames as a classic pcap and returns its
// path.
func chkWriteCapture(t *testing.T, frames []chkFrame) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "c.pcap")
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	w, err := pcap.NewWriter(f, pcap.FormatPcap, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	buf := make([]byte, 9000)
	ts := time.Unix(1700000000, 0)
	for i, c := range frames {
		ff := packet.DefaultFrame(packet.RoCEv2IPv4)
		ff.Transport.BTH.Opcode, ff.Transport.BTH.PSN, ff.Transport.BTH.AckReq, ff.Transport.BTH.DestQP = c.op, c.psn, c.ackReq, 0x22
		if c.fromB {
			ff.Transport.BTH.DestQP = 0x11
			ff.Eth.Src, ff.Eth.Dst = ff.Eth.Dst, ff.Eth.Src
			ff.IPv4.Src, ff.IPv4.Dst = ff.IPv4.Dst, ff.IPv4.Src
		}
		ff.Transport.AETH.Syndrome, ff.Transport.AETH.MSN = c.syn, c.msn
		ff.Transport.Payload = make([]byte, c.payload)
		ff.Transport.SetPad()
		ff.ICRCXor = c.icrcXor
		n, err := ff.Encode(buf)
		require.NoError(t, err)
		require.NoError(t, w.WritePacket(ts.Add(time.Duration(i)*time.Microsecond), buf[:n]))
	}
	require.NoError(t, w.Flush())
	return p
}

// chkCleanFrames: two SENDs, one coalesced ACK.
var chkCleanFrames = []chkFrame{
	{op: opcode.RCSendOnly, psn: 100, payload: 10, ackReq: true},
	{op: opcode.RCSendOnly, psn: 101, payload: 10, ackReq: true},
	{op: opcode.RCAcknowledge, psn: 101, fromB: true, syn: aeth.ACKSyndrome(aeth.Unlimited), msn: 2},
}

// chkFaultyFrames: a bad ICRC (frame 2) and a NAK going back before the PSN
// the ACK of frame 3 acknowledged (frame 4).
var chkFaultyFrames = []chkFrame{
	{op: opcode.RCSendOnly, psn: 100, payload: 10, ackReq: true},
	{op: opcode.RCSendOnly, psn: 101, payload: 10, ackReq: true, icrcXor: 5},
	{op: opcode.RCAcknowledge, psn: 101, fromB: true, syn: aeth.ACKSyndrome(aeth.Unlimited), msn: 2},
	{op: opcode.RCAcknowledge, psn: 100, fromB: true, syn: aeth.NAKSyndrome(aeth.PSNSequenceError), msn: 1},
}

func TestCheckCleanExitsZero(t *testing.T) {
	p := chkWriteCapture(t, chkCleanFrames)
	code, out, errs := runCLI(t, "check", p)
	assert.Equal(t, 0, code, errs)
	assert.Equal(t, "connection 1: 192.168.1.1 QP 0x000011 <-> 192.168.1.2 QP 0x000022, RoCEv2/IPv4, paired by psn, "+
		"frames 1-3, 3 packets: a->b 2 requests (0 retransmitted), b->a 0 requests; 0 findings\n"+
		"3 frames, 3 RC packets, 1 connection: 0 findings\n", out)
	assert.Empty(t, errs)
}

func TestCheckTextFindings(t *testing.T) {
	p := chkWriteCapture(t, chkFaultyFrames)
	code, out, _ := runCLI(t, "check", p)
	assert.Equal(t, 1, code)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, lines, 4, out)
	assert.True(t, strings.HasPrefix(lines[0], "frame 2: §3 bad_icrc: ICRC 0x"), lines[0])
	assert.Contains(t, lines[0], "; expected ICRC 0x")
	assert.Equal(t, "frame 4: §5.4 nak_psn: NAK PSN_SEQUENCE_ERROR with PSN 0x000064 goes back before PSN 0x000065, "+
		"which frame 3 already acknowledged; expected a NAK PSN of at least 0x000066 (the responder already acknowledged up to 0x000065)", lines[1])
	assert.True(t, strings.HasPrefix(lines[2], "connection 1: "), lines[2])
	assert.True(t, strings.HasSuffix(lines[2], "; 2 findings"), lines[2])
	assert.Equal(t, "4 frames, 4 RC packets, 1 connection: 2 findings (bad_icrc 1, nak_psn 1)", lines[3])

	// Several files: findings are prefixed with the file name, each
	// summary headed by it.
	clean := chkWriteCapture(t, chkCleanFrames)
	code, out, _ = runCLI(t, "check", clean, p)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "== "+clean+"\n")
	assert.Contains(t, out, p+": frame 2: §3 bad_icrc: ")
}

func chkDecodeNDJSON(t *testing.T, out string) []map[string]json.RawMessage {
	t.Helper()
	var objs []map[string]json.RawMessage
	for _, l := range strings.Split(strings.TrimRight(out, "\n"), "\n") {
		var m map[string]json.RawMessage
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		objs = append(objs, m)
	}
	return objs
}

// chkKeys returns the keys of one JSON object line in document order.
func chkKeys(t *testing.T, line string) []string {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(line))
	tok, err := d.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for d.More() {
		k, err := d.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var v json.RawMessage
		require.NoError(t, d.Decode(&v))
	}
	return keys
}

func TestCheckJSON(t *testing.T) {
	p := chkWriteCapture(t, chkFaultyFrames)
	code, out, _ := runCLI(t, "check", "--format", "json", p)
	assert.Equal(t, 1, code)
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	require.Len(t, lines, 3, out)
	assert.Equal(t, []string{"type", "file", "frame", "rule", "kind", "message", "expected", "got", "connection"}, chkKeys(t, lines[0]))
	assert.Equal(t, []string{"type", "file", "frames", "ib_frames", "rc_frames", "findings", "outstanding", "counts", "connections"}, chkKeys(t, lines[2]))
	objs := chkDecodeNDJSON(t, out)
	var f struct {
		Type, File, Rule, Kind, Message, Expected, Got string
		Frame, Connection                              int
	}
	require.NoError(t, json.Unmarshal([]byte(lines[1]), &f))
	assert.Equal(t, "finding", f.Type)
	assert.Equal(t, p, f.File)
	assert.Equal(t, 4, f.Frame)
	assert.Equal(t, "§5.4", f.Rule)
	assert.Equal(t, string(conform.NAKPSN), f.Kind)
	assert.Equal(t, "PSN 0x000064", f.Got)
	assert.Equal(t, 1, f.Connection)

	var s struct {
		Type        string
		Findings    int
		Counts      map[string]int
		Connections []struct {
			Connection int
			PairedBy   string `json:"paired_by"`
			QPA        uint32 `json:"qp_a"`
			QPB        uint32 `json:"qp_b"`
			AToB       struct {
				Requests int
				ACKs     int
				NAKs     int
				FirstPSN uint32 `json:"first_psn"`
			} `json:"a_to_b"`
		}
	}
	require.NoError(t, json.Unmarshal(objs[2]["counts"], &s.Counts))
	require.NoError(t, json.Unmarshal([]byte(lines[2]), &s))
	assert.Equal(t, "summary", s.Type)
	assert.Equal(t, 2, s.Findings)
	assert.Len(t, s.Counts, len(conform.Kinds), "every kind has a count")
	assert.Equal(t, 1, s.Counts["bad_icrc"])
	require.Len(t, s.Connections, 1)
	c := s.Connections[0]
	assert.Equal(t, "psn", c.PairedBy)
	assert.Equal(t, uint32(0x11), c.QPA)
	assert.Equal(t, uint32(0x22), c.QPB)
	assert.Equal(t, 2, c.AToB.Requests)
	assert.Equal(t, 1, c.AToB.ACKs)
	assert.Equal(t, 1, c.AToB.NAKs)
	assert.Equal(t, uint32(100), c.AToB.FirstPSN)
}

func TestCheckExitCodes(t *testing.T) {
	code, _, errs := runCLI(t, "check")
	assert.Equal(t, 2, code)
	assert.Contains(t, errs, "no capture file")
	for _, args := range [][]string{
		{"check", "--format", "xml", "x.pcap"},
		{"check", "--pmtu", "1000", "x.pcap"},
		{"check", "--port", "70000", "x.pcap"},
		{"check", "--bogus", "x.pcap"},
	} {
		code, _, _ := runCLI(t, args...)
		assert.Equal(t, 2, code, args)
	}
	code, out, errs := runCLI(t, "check", "-h")
	assert.Equal(t, 0, code)
	assert.Empty(t, errs)
	assert.Contains(t, out, "usage: rocekit check")
	code, out, _ = runCLI(t, "help")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "  check ")

	// A missing file, and one cut inside a record: status 1, the error
	// named; the frames before the damage are still checked.
	code, _, errs = runCLI(t, "check", filepath.Join(t.TempDir(), "missing.pcap"))
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "missing.pcap")
	data, err := os.ReadFile(chkWriteCapture(t, chkCleanFrames))
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	require.NoError(t, os.WriteFile(cut, data[:len(data)-5], 0o644))
	code, out, errs = runCLI(t, "check", cut)
	assert.Equal(t, 1, code)
	assert.Contains(t, out, "2 frames, 2 RC packets, 1 connection")
	assert.Contains(t, errs, "rocekit check: "+cut)
	code, out, _ = runCLI(t, "check", "--format", "json", cut)
	assert.Equal(t, 1, code)
	objs := chkDecodeNDJSON(t, out)
	assert.Contains(t, objs[len(objs)-1], "error")

	// Flags after the file name are read too.
	code, _, _ = runCLI(t, "check", chkWriteCapture(t, chkCleanFrames), "--pmtu", "256")
	assert.Equal(t, 0, code)
	code, _, _ = runCLI(t, "check", chkWriteCapture(t, []chkFrame{{op: opcode.RCSendOnly, psn: 1, payload: 300}}), "--pmtu", "256")
	assert.Equal(t, 1, code, "a 300-byte SEND Only is larger than a 256-byte PMTU")
}

// TestCheckSharedCaptures: the five real captures through the CLI are
// clean. The single-READ file and the native IB capture end before their
// last answer: that request is outstanding, no finding (see conform's
// TestCapturesConform).
func TestCheckSharedCaptures(t *testing.T) {
	dir := oracle.Captures(t)
	for name, outstanding := range map[string]string{
		"montybeatnik-rdma-roce-lab_roce_capture_read-write-ecn.pcap": "",
		"montybeatnik-rdma-roce-lab_test.pcap":                        "",
		"oferby-proxy_roce.pcap":                                      "",
		"seladb-PcapPlusPlus-pr1603_InfiniBandPacket.pcap":            "1 outstanding from RC_RDMA_READ_REQUEST PSN 0x54cb63 at frame 1",
		"srinivaskoritala-rdma-softroce-demo_infiniband.pcap":         "1 outstanding from RC_SEND_ONLY PSN 0x732329 at frame 43",
	} {
		code, out, errs := runCLI(t, "check", filepath.Join(dir, name))
		assert.Equal(t, 0, code, "%s: %s%s", name, out, errs)
		assert.NotContains(t, "\n"+out, "\nframe ", "%s: no finding lines", name)
		assert.Contains(t, out, " 0 findings", name)
		if outstanding == "" {
			assert.NotContains(t, out, "outstanding", name)
			continue
		}
		assert.Contains(t, out, outstanding, name)
		assert.Contains(t, out, ": 0 findings; 1 request outstanding at the end of the capture\n", name)
	}
}

// TestCheckOutstanding: a capture that ends before the ACK of its last
// AckReq SEND exits 0 and names the request in the text and JSON
// summaries.
func TestCheckOutstanding(t *testing.T) {
	p := chkWriteCapture(t, append(chkCleanFrames[:3:3], chkFrame{op: opcode.RCSendOnly, psn: 102, payload: 10, ackReq: true}))
	code, out, errs := runCLI(t, "check", p)
	assert.Equal(t, 0, code, errs)
	assert.Equal(t, "connection 1: 192.168.1.1 QP 0x000011 <-> 192.168.1.2 QP 0x000022, RoCEv2/IPv4, paired by psn, "+
		"frames 1-4, 4 packets: a->b 3 requests (0 retransmitted, 1 outstanding from RC_SEND_ONLY PSN 0x000066 at frame 4), "+
		"b->a 0 requests; 0 findings\n"+
		"4 frames, 4 RC packets, 1 connection: 0 findings; 1 request outstanding at the end of the capture\n", out)

	code, out, _ = runCLI(t, "check", "--format", "json", p)
	assert.Equal(t, 0, code)
	var s struct {
		Findings, Outstanding int
		Connections           []struct {
			AToB map[string]json.RawMessage `json:"a_to_b"`
		}
	}
	require.NoError(t, json.Unmarshal([]byte(out), &s), out)
	assert.Equal(t, 0, s.Findings)
	assert.Equal(t, 1, s.Outstanding)
	require.Len(t, s.Connections, 1)
	ch := s.Connections[0].AToB
	assert.Equal(t, "1", string(ch["outstanding"]))
	assert.Equal(t, "102", string(ch["outstanding_psn"]))
	assert.Equal(t, "4", string(ch["outstanding_frame"]))
	assert.Equal(t, `"RC_SEND_ONLY"`, string(ch["outstanding_op"]))
}

// TestCheckMissingAnswerMidStream: captured at the responder (PSN 11 was
// lost before the capture point, NAKed and resent), the responder ACKs the
// SEND at 14 after the READ at 13, whose response never came: exit 1 with
// a missing_ack at the READ. An ACK dropped for a SEND instead is covered
// by the later ACK: clean.
func TestCheckMissingAnswerMidStream(t *testing.T) {
	ack := aeth.ACKSyndrome(aeth.Unlimited)
	head := []chkFrame{
		{op: opcode.RCSendOnly, psn: 10, payload: 8, ackReq: true},
		{op: opcode.RCSendOnly, psn: 12, payload: 8, ackReq: true},
		{op: opcode.RCAcknowledge, psn: 11, fromB: true, syn: aeth.NAKSyndrome(aeth.PSNSequenceError), msn: 1},
		{op: opcode.RCSendOnly, psn: 11, payload: 8, ackReq: true},
		{op: opcode.RCSendOnly, psn: 12, payload: 8, ackReq: true},
		{op: opcode.RCAcknowledge, psn: 12, fromB: true, syn: ack, msn: 3},
	}
	tail := []chkFrame{
		{op: opcode.RCRDMAReadRequest, psn: 13, ackReq: true}, // 0 bytes: one PSN
		{op: opcode.RCSendOnly, psn: 14, payload: 8, ackReq: true},
		{op: opcode.RCAcknowledge, psn: 14, fromB: true, syn: ack, msn: 5},
	}
	code, out, _ := runCLI(t, "check", chkWriteCapture(t, append(head[:6:6], tail...)))
	assert.Equal(t, 1, code, out)
	assert.Contains(t, out, "frame 7: §5.2 missing_ack: RC_RDMA_READ_REQUEST at PSN 0x00000d was never answered, "+
		"yet the responder went on to answer up to PSN 0x00000e (frame 9)")
	assert.Contains(t, out, ": 1 finding (missing_ack 1)\n")

	tail[0] = chkFrame{op: opcode.RCSendOnly, psn: 13, payload: 8, ackReq: true}
	code, out, _ = runCLI(t, "check", chkWriteCapture(t, append(head[:6:6], tail...)))
	assert.Equal(t, 0, code, out)
	assert.NotContains(t, out, "outstanding")
}

// TestCheckHelpStatesOutstanding: check -h says what a capture's end can
// and cannot prove.
func TestCheckHelpStatesOutstanding(t *testing.T) {
	code, out, errs := runCLI(t, "check", "-h")
	assert.Equal(t, 0, code)
	help := out + errs
	assert.Contains(t, help, "is outstanding, not a finding")
	assert.Contains(t, help, "A missing answer is a finding (missing_ack) only when the capture\nproves it")
	assert.Contains(t, help, "outstanding, outstanding_psn,\noutstanding_frame, outstanding_op")
}
