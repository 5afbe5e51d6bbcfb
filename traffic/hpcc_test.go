package traffic

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/rocekit/rocekit/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The sample in testdata, with a blank line, a priority group and port
// other than 3 and 100, equal start times and a start time in picoseconds.
func TestReadHPCCFlowsSample(t *testing.T) {
	f, err := os.Open("testdata/flows.txt")
	require.NoError(t, err)
	defer f.Close()
	flows, err := ReadHPCCFlows(f, "testdata/flows.txt", 8)
	require.NoError(t, err)
	assert.Equal(t, []Flow{
		{Src: 1, Dst: 0, Size: 2_000_000, Start: 0},
		{Src: 2, Dst: 0, Size: 2_000_000, Start: 0},
		{Src: 3, Dst: 7, Size: 65536, Start: 10 * sim.Microsecond},
		{Src: 7, Dst: 3, Size: 1, Start: 10 * sim.Microsecond},
		{Src: 6, Dst: 5, Size: 10_000_000, Start: 1_500_000_000_250},
	}, flows)
	var buf bytes.Buffer
	require.NoError(t, WriteHPCCFlows(&buf, flows))
	assert.Equal(t, `5
1 0 3 100 2000000 0.000000000
2 0 3 100 2000000 0.000000000
3 7 3 100 65536 0.000010000
7 3 3 100 1 0.000010000
6 5 3 100 10000000 1.500000000250
`, buf.String())
}

// Generated flows survive WriteHPCCFlows and ReadHPCCFlows unchanged.
func TestHPCCRoundTrip(t *testing.T) {
	for _, spec := range []string{"permutation:size=10MB,start=2s", "incast:n=15,size=2MB", "all-to-all:size=1KiB", "poisson:load=0.3,cdf=websearch,duration=5ms"} {
		flows, err := Generate(mustParse(t, spec), 16, 100e9, 42)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, WriteHPCCFlows(&buf, flows))
		back, err := ReadHPCCFlows(&buf, spec, 16)
		require.NoError(t, err, spec)
		assert.Equal(t, flows, back, spec)
	}
	var buf bytes.Buffer
	require.NoError(t, WriteHPCCFlows(&buf, nil))
	assert.Equal(t, "0\n", buf.String())
	back, err := ReadHPCCFlows(&buf, "empty", 2)
	require.NoError(t, err)
	assert.Empty(t, back)
}

func TestReadHPCCFlowsErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "f:1: unexpected end of file, want the number of flows"},
		{"\n\n", "f:3: unexpected end of file, want the number of flows"},
		{"1 2\n", "f:1: 2 fields, want 1: <number of flows>"},
		{"x\n", `f:1: number of flows "x" is not a non-negative integer`},
		{"-1\n", `f:1: number of flows "-1" is not a non-negative integer`},
		{"10000001\n", "f:1: 10000001 flows, more than MaxFlows (10000000)"},
		{"2\n0 1 3 100 5 0\n", "f:3: unexpected end of file, want flow 2 of 2"},
		{"1\n0 1 3 100 5\n", "f:2: 5 fields, want 6"},
		{"1\n0 1 3 100 5 0 9\n", "f:2: 7 fields, want 6"},
		{"1\nx 1 3 100 5 0\n", `f:2: src "x" is not an integer 0 .. 3`},
		{"1\n0 4 3 100 5 0\n", `f:2: dst "4" is not an integer 0 .. 3`},
		{"1\n-1 2 3 100 5 0\n", `f:2: src "-1" is not an integer 0 .. 3`},
		{"1\n0 1 8 100 5 0\n", `f:2: priority group "8" is not an integer 0 .. 7`},
		{"1\n0 1 3 65536 5 0\n", `f:2: dst port "65536" is not an integer 0 .. 65535`},
		{"1\n2 2 3 100 5 0\n", "f:2: src and dst are both host 2"},
		{"1\n0 1 3 100 0 0\n", `f:2: size "0" is not a positive integer number of bytes`},
		{"1\n0 1 3 100 1.5 0\n", `f:2: size "1.5" is not a positive`},
		{"1\n0 1 3 100 5 -1\n", `f:2: start "-1" is not a non-negative decimal number of seconds in whole picoseconds`},
		{"1\n0 1 3 100 5 1e-9\n", `f:2: start "1e-9" is not a non-negative decimal`},
		{"1\n0 1 3 100 5 0.0000000000001\n", `(not a whole number)`},
		{"2\n0 1 3 100 5 2\n1 0 3 100 5 1.5\n", "f:3: start 1.5s is before the previous flow's 2.000000000s (flows must be in ascending start time)"},
		{"1\n0 1 3 100 5 0\n\n1 0 3 100 5 0\n", "f:4: more lines than the 1 flows the first line says"},
		{"1\n0 1 3 100 5 0\nFirst line: # of flows\n", "f:3: more lines than the 1 flows"},
	} {
		_, err := ReadHPCCFlows(strings.NewReader(tc.in), "f", 4)
		if assert.Error(t, err, "%q", tc.in) {
			assert.Contains(t, err.Error(), tc.want, "%q", tc.in)
		}
	}
	_, err := ReadHPCCFlows(strings.NewReader("0\n"), "f", 1)
	assert.EqualError(t, err, "traffic: reading f: 1 hosts, want 2 .. 10000000")
}

func TestWriteHPCCFlowsErrors(t *testing.T) {
	for _, tc := range []struct {
		flows []Flow
		want  string
	}{
		{[]Flow{{0, 1, 1, 0}, {-1, 1, 1, 0}}, "traffic: WriteHPCCFlows: flow 1: negative host (src -1, dst 1)"},
		{[]Flow{{3, 3, 1, 0}}, "flow 0: src and dst are both host 3"},
		{[]Flow{{0, 1, 0, 0}}, "flow 0: size 0, want > 0"},
		{[]Flow{{0, 1, 1, -5}}, "flow 0: start -5ps is negative"},
		{[]Flow{{0, 1, 1, 2 * sim.Second}, {1, 0, 1, sim.Second}}, "flow 1: start 1s is before the previous flow's 2s"},
	} {
		var buf bytes.Buffer
		assert.ErrorContains(t, WriteHPCCFlows(&buf, tc.flows), tc.want)
		assert.Zero(t, buf.Len(), "nothing written on error")
	}
}
