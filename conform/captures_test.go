package conform_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/conform"
)

// TestCapturesConform: the five shared captures come out clean. Two end
// before their last answer: that request is outstanding, explained below,
// and no finding (a capture is a window).
func TestCapturesConform(t *testing.T) {
	type conn struct {
		pairedBy string
		pmtu     int
		packets  int
		aToB     int // requests
		bToA     int
		out      int // A's requests outstanding at the end, the oldest first captured at outFrame
		outFrame int
	}
	cases := []struct {
		name  string
		conns []conn
		// why explains what is outstanding: what the capture shows.
		why string
	}{
		{
			name:  "montybeatnik-rdma-roce-lab_roce_capture_read-write-ecn.pcap",
			conns: []conn{{"cm", 1024, 7, 2, 0, 0, 0}},
			// CM REQ/REP (frames 1-2) announce PSN 9209053 and PMTU 1024;
			// WRITE Only (4) ACKed with MSN 1 (5); READ 4096 (6) answered by
			// First/Middle/Middle/Last, 1024 bytes each, MSN 2 (7-10).
		},
		{
			name:  "montybeatnik-rdma-roce-lab_test.pcap",
			conns: []conn{{"cm", 1024, 7, 2, 0, 0, 0}},
		},
		{
			name: "oferby-proxy_roce.pcap",
			// No CM (the QPs were set up over TCP): paired by PSN, PMTU 1024
			// from the first SEND First; ACKs carry credit counts and
			// coalesce (frames 25-26 acknowledge PSNs 3 and 5); one side
			// ACKs a SEND First that asked for it with MSN 0 (frame 19).
			conns: []conn{{"psn", 1024, 105, 1, 67, 0, 0}},
		},
		{
			name: "seladb-PcapPlusPlus-pr1603_InfiniBandPacket.pcap",
			why: "the file is one frame, an RDMA READ Request (PSN 0x54cb63, 65536 bytes, AckReq) cut out of a " +
				"conversation: its responses are not in the capture",
			conns: []conn{{"", 0, 1, 1, 0, 1, 1}},
		},
		{
			name: "srinivaskoritala-rdma-softroce-demo_infiniband.pcap",
			why: "frame 43, RC SEND Only PSN 0x732329 with AckReq from lid 4 to QP 0x6c004b, is the last frame of the " +
				"capture: the ACK that would follow is not in the file (the earlier SEND, frame 36, was ACKed at frame 38)",
			conns: []conn{{"cm", 2048, 12, 6, 0, 0, 0}, {"cm", 2048, 4, 2, 0, 0, 0}, {"cm", 2048, 3, 2, 0, 1, 43}},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := capturePath(t, tc.name)
			fs, sum, err := conform.CheckFile(path, conform.Options{})
			require.NoError(t, err)
			assert.Empty(t, fs, dump(fs))
			require.Len(t, sum.Connections, len(tc.conns))
			for i, w := range tc.conns {
				cn := sum.Connections[i]
				assert.Equal(t, w.pairedBy, cn.PairedBy, "connection %d", i+1)
				assert.Equal(t, w.pmtu, cn.PMTU, "connection %d", i+1)
				assert.Equal(t, w.packets, cn.Packets, "connection %d", i+1)
				assert.Equal(t, w.aToB, cn.AtoB.Requests, "connection %d", i+1)
				assert.Equal(t, w.bToA, cn.BtoA.Requests, "connection %d", i+1)
				assert.Equal(t, w.out, cn.AtoB.Outstanding, "connection %d: %s", i+1, tc.why)
				assert.Equal(t, w.outFrame, cn.AtoB.OutstandingFrame, "connection %d: %s", i+1, tc.why)
				assert.Zero(t, cn.BtoA.Outstanding, "connection %d", i+1)
			}
		})
	}
}
