package analysis_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/internal/plural"
	"github.com/rocekit/rocekit/opcode"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shared captures (MANIFEST.md) with their IB frame counts.
var captureFiles = []struct {
	name string
	ib   uint64
}{
	{"srinivaskoritala-rdma-softroce-demo_infiniband.pcap", 43},
	{"oferby-proxy_roce.pcap", 105},
	{"montybeatnik-rdma-roce-lab_roce_capture_read-write-ecn.pcap", 12},
	{"montybeatnik-rdma-roce-lab_test.pcap", 12},
	{"seladb-PcapPlusPlus-pr1603_InfiniBandPacket.pcap", 1},
}

const (
	readWriteECN = "montybeatnik-rdma-roce-lab_roce_capture_read-write-ecn.pcap"
	readWrite2   = "montybeatnik-rdma-roce-lab_test.pcap"
	oferby       = "oferby-proxy_roce.pcap"
	softroceIB   = "srinivaskoritala-rdma-softroce-demo_infiniband.pcap"
)

// TestCapturesNoSpuriousWarnings: none of the shared captures holds an
// anomaly (MANIFEST.md: every ICRC/VCRC valid, no NAK, no CNP, no ECN-CE, no
// retransmission), so none may produce a warning. The traps they hold:
//   - native IB: UD QP 0x48 multicasts PSNs 911096-911097 then 911131-911132
//     (its PSN sequence is shared by all destinations), and two different
//     nodes send directed-route SMPs from LID 0xFFFF QP0 to LID 0xFFFF QP0
//     with unrelated PSNs (489, 93239, 490, 93242): UD PSNs are not checked;
//   - native IB: the capture ends with a SEND (frame 43) whose ACK is not in
//     it: an unanswered request is not an anomaly;
//   - oferby: both QPs send requests (PSNs from 0 in each direction) and ACK
//     each other, with coalesced ACKs (one ACK for two SENDs);
//   - montybeatnik: a READ of 4096 bytes whose PSN count (4) is only known
//     from the CM REQ's path MTU (1024);
//   - seladb: a lone READ request of 65536 bytes with no PMTU information.
func TestCapturesNoSpuriousWarnings(t *testing.T) {
	for _, c := range captureFiles {
		t.Run(c.name, func(t *testing.T) {
			tr, warns := runCapture(t, c.name, analysis.Options{})
			assert.Empty(t, warns, "per-frame warnings")
			s := tr.Summary()
			assert.Equal(t, c.ib, s.IBFrames)
			assert.Zero(t, s.Undecoded)
			for _, w := range s.Warnings {
				assert.Zero(t, w.Count, "%s", w.Warning)
			}
			for _, conn := range s.Connections {
				for _, d := range []*analysis.Direction{conn.A, conn.B} {
					if d == nil {
						continue
					}
					assert.Zero(t, d.PartialMessages, "connection %d %s", conn.ID, d.Src)
					assert.Zero(t, d.ReadResponsesUnmatched)
				}
			}
		})
	}
}

// rcConns returns the paired connections of s.
func rcConns(s *analysis.Summary) []*analysis.Connection {
	var out []*analysis.Connection
	for _, c := range s.Connections {
		if c.B != nil {
			out = append(out, c)
		}
	}
	return out
}

// TestReadWriteCaptures: both montybeatnik runs hold one RC connection set
// up by rdma_cm: a WRITE Only of 18 bytes (ACKed), then a READ of 4096 bytes
// answered by First/Middle/Middle/Last with PMTU 1024.
func TestReadWriteCaptures(t *testing.T) {
	for _, name := range []string{readWriteECN, readWrite2} {
		t.Run(name, func(t *testing.T) {
			tr, _ := runCapture(t, name, analysis.Options{})
			s := tr.Summary()
			conns := rcConns(s)
			require.Len(t, conns, 1)
			c := conns[0]
			assert.Equal(t, "cm", c.PairedBy)
			assert.Equal(t, 1024, c.PMTU)
			assert.Equal(t, "cm", c.PMTUFrom)
			req, resp := c.A, c.B
			assert.Equal(t, "RC", req.Transport)
			assert.Equal(t, uint64(2), req.Packets)
			w := req.Message("write")
			assert.Equal(t, uint64(1), w.Count)
			assert.Equal(t, uint64(18), w.Bytes)
			r := req.Message("read")
			assert.Equal(t, uint64(1), r.Count)
			assert.Equal(t, uint64(4096), r.Bytes)
			assert.Equal(t, uint64(1), req.ReadRequests)
			assert.Equal(t, uint64(1), req.ReadsCompleted)
			assert.Equal(t, int64(2), req.RTT.Samples) // WRITE -> ACK, READ -> first response

			assert.Equal(t, uint64(1), resp.ACKs)
			assert.Equal(t, uint64(4), resp.ReadResponses)
			assert.Equal(t, uint64(4), resp.ReadResponsesMatched)
			assert.Equal(t, uint64(1), resp.OpcodeCount(opcode.RCRDMAReadResponseFirst))
			assert.Equal(t, uint64(2), resp.OpcodeCount(opcode.RCRDMAReadResponseMiddle))
			assert.Equal(t, uint64(1), resp.OpcodeCount(opcode.RCRDMAReadResponseLast))
			assert.Equal(t, uint64(1), resp.OpcodeCount(opcode.RCAcknowledge))
			assert.Zero(t, resp.SequenceErrors+req.SequenceErrors)
			// The requests used PSNs REP.StartingPSN .. +4 (WRITE 1, READ 4).
			assert.True(t, req.PSNKnown)
			assert.Equal(t, c.CM.REPStartingPSN, req.FirstPSN)
			assert.Equal(t, (c.CM.REPStartingPSN+5)&0xFFFFFF, req.NextPSN)
		})
	}
}

// cmExpect is what tshark shows of a capture's CM exchanges (REQ and REP
// Local QPN and Starting PSN), typed from its output.
var cmExpect = map[string][]analysis.CMInfo{
	readWriteECN: {{ActiveQPN: 0x11, PassiveQPN: 0x11, REQStartingPSN: 0xe1a47d, REPStartingPSN: 0x8c84dd,
		ActiveCommID: 0x34cfb552, PassiveCommID: 0xa980e2d3, PMTU: 1024, PKey: 0xffff, REQFrame: 1, REPFrame: 2, RTUFrame: 3, DREQFrame: 11, DREPFrame: 12}},
	readWrite2: {{ActiveQPN: 0x17, PassiveQPN: 0x11, REQStartingPSN: 0x89bb0e, REPStartingPSN: 0xc23298,
		ActiveCommID: 0xac6608b9, PassiveCommID: 0xc8577fdb, PMTU: 1024, PKey: 0xffff, REQFrame: 1, REPFrame: 2, RTUFrame: 3, DREQFrame: 11, DREPFrame: 16}},
	softroceIB: {
		{ActiveQPN: 0x870408, PassiveQPN: 0xfc0407, REQStartingPSN: 0, REPStartingPSN: 0xd40a55,
			ActiveCommID: 0xe9488627, PassiveCommID: 0xf9024539, PMTU: 2048, PKey: 0xffff, REQFrame: 7, REPFrame: 8, RTUFrame: 9},
		{ActiveQPN: 0x6c004a, PassiveQPN: 0x890407, REQStartingPSN: 0, REPStartingPSN: 0xbd15cb,
			ActiveCommID: 0x3fd19ebf, PassiveCommID: 0xea488627, PMTU: 2048, PKey: 0xffff, REQFrame: 27, REPFrame: 28, RTUFrame: 29},
		{ActiveQPN: 0x890408, PassiveQPN: 0x6c004b, REQStartingPSN: 0, REPStartingPSN: 0x732328,
			ActiveCommID: 0xeb488627, PassiveCommID: 0x3ed19ebf, PMTU: 2048, PKey: 0xffff, REQFrame: 34, REPFrame: 35, RTUFrame: 37},
	},
}

func learntCM(t *testing.T, name string) []*analysis.Connection {
	tr, _ := runCapture(t, name, analysis.Options{})
	var out []*analysis.Connection
	for _, c := range tr.Summary().Connections {
		if c.CM != nil {
			out = append(out, c)
		}
	}
	return out
}

// TestCMLearnt checks what the tracker learnt from CM against values typed
// from tshark, and that the data flows it paired use those QPNs.
func TestCMLearnt(t *testing.T) {
	for name, want := range cmExpect {
		t.Run(name, func(t *testing.T) {
			conns := learntCM(t, name)
			require.Len(t, conns, len(want))
			for i, c := range conns {
				got := *c.CM
				got.ServiceID, got.Transport, got.Active, got.Passive = 0, "", analysis.Addr{}, analysis.Addr{}
				assert.Equal(t, want[i], got)
				assert.Equal(t, "RC", c.CM.Transport)
				assert.Equal(t, c.CM.Active, c.A.Src)
				assert.Equal(t, c.CM.PassiveQPN, c.A.DstQP, "active -> passive requests go to the REP's QPN")
				assert.Equal(t, c.CM.ActiveQPN, c.B.DstQP, "responses go to the REQ's QPN")
				assert.Equal(t, "cm", c.PairedBy)
			}
		})
	}
}

// TestCMLearntAgainstTshark compares the learnt QPNs and PSNs with tshark's
// dissection of the same REQ/REP MADs.
func TestCMLearntAgainstTshark(t *testing.T) {
	oracle.Need(t, "tshark")
	for name := range cmExpect {
		t.Run(name, func(t *testing.T) {
			conns := learntCM(t, name)
			rows := oracle.Tshark(t, "|", "-r", capturePath(t, name), "-Y", "infiniband.cm.req || infiniband.cm.rep",
				"-T", "fields", "-E", "separator=|", "-e", "frame.number",
				"-e", "infiniband.cm.req.localqpn", "-e", "infiniband.cm.req.startpsn", "-e", "infiniband.cm.req.pppmtu",
				"-e", "infiniband.cm.rep.localqpn", "-e", "infiniband.cm.rep.startpsn")
			byFrame := map[int][]string{}
			for _, r := range rows {
				var n int
				_, err := fmt.Sscan(r[0], &n)
				require.NoError(t, err)
				byFrame[n] = r
			}
			require.Len(t, byFrame, 2*len(conns))
			for _, c := range conns {
				req, rep := byFrame[c.CM.REQFrame], byFrame[c.CM.REPFrame]
				require.NotNil(t, req)
				require.NotNil(t, rep)
				assert.Equal(t, fmt.Sprintf("0x%06x", c.CM.ActiveQPN), req[1])
				assert.Equal(t, fmt.Sprintf("0x%06x", c.CM.REQStartingPSN), req[2])
				assert.Equal(t, c.CM.PMTU, 128<<mustHex(t, req[3]))
				assert.Equal(t, fmt.Sprintf("0x%06x", c.CM.PassiveQPN), rep[4])
				assert.Equal(t, fmt.Sprintf("0x%06x", c.CM.REPStartingPSN), rep[5])
			}
		})
	}
}

func mustHex(t *testing.T, s string) uint {
	var v uint
	_, err := fmt.Sscanf(s, "0x%x", &v)
	require.NoError(t, err, s)
	return v
}

// TestOferbySendConversation: two Huawei NICs, no CM (QPs set up over TCP).
// 192.168.70.6 sends to QP 0x45 at .4: 33 SEND First (1024 B) + SEND Last
// with Immediate pairs (the last one 473 B), then one SEND Only with
// Immediate of 4 bytes; .4 sends one SEND Only with Immediate of 141 bytes
// to QP 0x48. Each side ACKs the other; the directions pair by PSN.
func TestOferbySendConversation(t *testing.T) {
	tr, _ := runCapture(t, oferby, analysis.Options{})
	s := tr.Summary()
	require.Len(t, s.Connections, 1)
	c := s.Connections[0]
	assert.Equal(t, "psn", c.PairedBy)
	assert.Equal(t, 1024, c.PMTU)
	assert.Equal(t, "packets", c.PMTUFrom)
	a, b := c.A, c.B
	assert.Equal(t, "192.168.70.4", a.Src.String())
	assert.Equal(t, uint32(0x48), a.DstQP)
	assert.Equal(t, uint32(0x45), a.SrcQP)
	assert.Equal(t, uint32(0x45), b.DstQP)

	send := b.Message("send")
	assert.Equal(t, uint64(34), send.Count)
	assert.Equal(t, uint64(32*2048+(1024+473)+4), send.Bytes)
	assert.Equal(t, uint64(4), send.Min)
	assert.Equal(t, uint64(2048), send.Max)
	assert.Equal(t, []analysis.HistBucket{{Min: 4, Max: 7, Count: 1}, {Min: 1024, Max: 2047, Count: 1}, {Min: 2048, Max: 4095, Count: 32}}, send.Hist)
	assert.Equal(t, uint64(33), b.OpcodeCount(opcode.RCSendFirst))
	assert.Equal(t, uint64(33), b.OpcodeCount(opcode.RCSendLastWithImmediate))
	assert.Equal(t, uint64(1), b.OpcodeCount(opcode.RCSendOnlyWithImmediate))
	assert.Equal(t, uint64(1), b.ACKs)
	assert.Equal(t, uint32(0), b.FirstPSN)
	assert.Equal(t, uint32(67), b.NextPSN)
	// 35 requests asked for an ACK (the first SEND First, every SEND Last,
	// the SEND Only); coalesced ACKs cover them all.
	assert.Equal(t, int64(35), b.RTT.Samples)

	one := a.Message("send")
	assert.Equal(t, uint64(1), one.Count)
	assert.Equal(t, uint64(141), one.Bytes)
	assert.Equal(t, uint64(36), a.ACKs)
	assert.Equal(t, int64(1), a.RTT.Samples)
}

// TestNativeIBConversations: the softroce demo's three CM-paired RC
// connections carry SEND Only messages, each ACKed.
func TestNativeIBConversations(t *testing.T) {
	tr, _ := runCapture(t, softroceIB, analysis.Options{})
	s := tr.Summary()
	conns := rcConns(s)
	require.Len(t, conns, 3)
	for i, want := range []struct{ sends, bytes, acks uint64 }{{6, 6 * 88, 6}, {2, 92 + 108, 2}, {2, 216, 1}} {
		c := conns[i]
		assert.Equal(t, "IB/LRH", c.Encap.String())
		assert.Equal(t, 2048, c.PMTU)
		m := c.A.Message("send")
		assert.Equal(t, want.sends, m.Count, "connection %d", c.ID)
		assert.Equal(t, want.bytes, m.Bytes, "connection %d", c.ID)
		assert.Equal(t, want.acks, c.B.ACKs, "connection %d", c.ID)
		assert.False(t, c.B.PSNKnown, "the passive side sent no requests")
	}
	// UD flows are listed unpaired, with their DETH source QP.
	first := s.Connections[0]
	assert.Nil(t, first.B)
	assert.Equal(t, "UD", first.A.Transport)
	assert.True(t, first.A.SrcQPKnown)
}

// TestSummaryOutputs checks the JSON is valid, deterministic and carries the
// numbers, and that the text names every connection.
func TestSummaryOutputs(t *testing.T) {
	for _, c := range captureFiles {
		tr, _ := runCapture(t, c.name, analysis.Options{})
		s := tr.Summary()
		js := s.AppendJSON(nil)
		assert.Equal(t, js, tr.Summary().AppendJSON(nil), "deterministic")
		var v struct {
			Frames      uint64            `json:"frames"`
			IBFrames    uint64            `json:"ib_frames"`
			Warnings    map[string]uint64 `json:"warnings"`
			Connections []struct {
				ID         int             `json:"id"`
				CM         json.RawMessage `json:"cm"`
				Directions []struct {
					Packets  uint64 `json:"packets"`
					Messages []struct {
						Kind  string `json:"kind"`
						Count uint64 `json:"count"`
					} `json:"messages"`
				} `json:"directions"`
			} `json:"connections"`
		}
		require.NoError(t, json.Unmarshal(js, &v), "%s", js)
		assert.Equal(t, s.IBFrames, v.IBFrames)
		assert.Len(t, v.Warnings, len(analysis.Warnings))
		require.Len(t, v.Connections, len(s.Connections))
		var pk uint64
		for _, conn := range v.Connections {
			for _, d := range conn.Directions {
				pk += d.Packets
			}
		}
		assert.Equal(t, s.IBFrames, pk, "every IB frame is in one direction")

		var buf bytes.Buffer
		require.NoError(t, s.WriteText(&buf))
		out := buf.String()
		for _, conn := range s.Connections {
			assert.Contains(t, out, fmt.Sprintf("connection %d ", conn.ID))
		}
		assert.True(t, strings.HasPrefix(out, plural.Count(s.Frames, "frame")+", "+plural.Count(s.IBFrames, "IB frame")), out)
	}
}
