package analysis

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The totals line counts in the singular where a count is one.
func TestSummaryTextPlurals(t *testing.T) {
	var b strings.Builder
	require.NoError(t, (&Summary{Frames: 1, IBFrames: 1, Connections: []*Connection{{ID: 1}}}).WriteText(&b))
	assert.True(t, strings.HasPrefix(b.String(), "1 frame, 1 IB frame (0 undecoded), 1 connection\n"), b.String())
	b.Reset()
	require.NoError(t, (&Summary{Frames: 2, IBFrames: 0}).WriteText(&b))
	assert.True(t, strings.HasPrefix(b.String(), "2 frames, 0 IB frames (0 undecoded), 0 connections\n"), b.String())
}
