package roce

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Counts of one read in the singular, other counts in the plural.
func TestSummaryTextPlurals(t *testing.T) {
	for _, c := range []struct {
		n      uint64
		want   []string
		failed string
	}{
		{1, []string{", 1 timeout, 1 go-back-N retry\n", "(simulated, 1 WR)\n", "  network       1 frame on the wire;",
			"  PFC           1 pause, ", "  integrity     OK (1 check)\n", "  engine        1 event in "},
			"  integrity     FAILED: 1 of 1 check; first: x\n"},
		{2, []string{", 2 timeouts, 2 go-back-N retries\n", "(simulated, 2 WRs)\n", "  network       2 frames on the wire;",
			"  PFC           2 pauses, ", "  integrity     OK (2 checks)\n", "  engine        2 events in "},
			"  integrity     FAILED: 1 of 2 checks; first: x\n"},
	} {
		s := &Summary{Timeouts: c.n, Retries: c.n, IntegrityChecks: c.n, Events: c.n, DataIntegrityOK: true, CompletionOrderOK: true}
		s.Latency.Count = c.n
		s.Network.FramesOnWire = c.n
		s.Network.PFCPauses = c.n
		var b strings.Builder
		require.NoError(t, s.WriteText(&b))
		for _, want := range c.want {
			assert.Contains(t, b.String(), want)
		}
		s.DataIntegrityOK, s.IntegrityFailures, s.FirstFailure = false, 1, "x"
		b.Reset()
		require.NoError(t, s.WriteText(&b))
		assert.Contains(t, b.String(), c.failed)
	}
}
