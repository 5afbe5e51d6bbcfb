package roce

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Counts of one read in the singular, other counts in the plural.
func TestSummaryTextPlurals(t *testing.T) {
	one := &Summary{Timeouts: 1, Retries: 1, IntegrityChecks: 1, Events: 1, DataIntegrityOK: true, CompletionOrderOK: true}
	one.Latency.Count = 1
	one.Network.FramesOnWire = 1
	one.Network.PFCPauses = 1
	var b strings.Builder
	require.NoError(t, one.WriteText(&b))
	out := b.String()
	for _, want := range []string{", 1 timeout, 1 go-back-N retry\n", "(simulated, 1 WR)\n", "  network       1 frame on the wire;",
		"  PFC           1 pause, ", "  integrity     OK (1 check)\n", "  engine        1 event in "} {
		assert.Contains(t, out, want)
	}
	one.DataIntegrityOK, one.IntegrityFailures, one.FirstFailure = false, 1, "x"
	b.Reset()
	require.NoError(t, one.WriteText(&b))
	assert.Contains(t, b.String(), "  integrity     FAILED: 1 of 1 check; first: x\n")
	two := &Summary{Timeouts: 2, Retries: 2, IntegrityChecks: 2, Events: 2, DataIntegrityOK: true, CompletionOrderOK: true}
	two.Latency.Count = 2
	two.Network.FramesOnWire = 2
	two.Network.PFCPauses = 2
	b.Reset()
	require.NoError(t, two.WriteText(&b))
	out = b.String()
	for _, want := range []string{", 2 timeouts, 2 go-back-N retries\n", "(simulated, 2 WRs)\n", "  network       2 frames on the wire;",
		"  PFC           2 pauses, ", "  integrity     OK (2 checks)\n", "  engine        2 events in "} {
		assert.Contains(t, out, want)
	}
	two.DataIntegrityOK, two.IntegrityFailures, two.FirstFailure = false, 1, "x"
	b.Reset()
	require.NoError(t, two.WriteText(&b))
	assert.Contains(t, b.String(), "  integrity     FAILED: 1 of 2 checks; first: x\n")
}
