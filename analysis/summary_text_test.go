package analysis

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/opcode"
)

// The totals line counts in the singular where a count is one.
func TestSummaryTextPlurals(t *testing.T) {
	var b strings.Builder
	require.NoError(t, (&Summary{Frames: 1, IBFrames: 1, Connections: []*Connection{{ID: 1}}}).WriteText(&b))
	assert.True(t, strings.HasPrefix(b.String(), "1 frame, 1 IB frame (0 undecoded), 1 connection\n"), b.String())
	b.Reset()
	d := &Direction{Transport: "RC", Packets: 1, Opcodes: []OpcodeStats{{Opcode: opcode.RCSendOnly, Packets: 1, Bytes: 64}}, RTT: RTTStats{Samples: 1}}
	require.NoError(t, (&Summary{Connections: []*Connection{{ID: 1, A: d}}}).WriteText(&b))
	assert.Contains(t, b.String(), " RC_SEND_ONLY  1 pkt  64 B  payload 0\n")
	assert.Contains(t, b.String(), "    ACK RTT 1 sample: min ")
	d.Opcodes[0].Packets, d.RTT.Samples = 2, 3
	b.Reset()
	require.NoError(t, (&Summary{Connections: []*Connection{{ID: 1, A: d}}}).WriteText(&b))
	assert.Contains(t, b.String(), " RC_SEND_ONLY  2 pkts  64 B  payload 0\n")
	assert.Contains(t, b.String(), "    ACK RTT 3 samples: min ")
	b.Reset()
	require.NoError(t, (&Summary{Frames: 2, IBFrames: 0}).WriteText(&b))
	assert.True(t, strings.HasPrefix(b.String(), "2 frames, 0 IB frames (0 undecoded), 0 connections\n"), b.String())
}
