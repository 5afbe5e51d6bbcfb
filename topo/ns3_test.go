package topo

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rocekit/rocekit/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hpccFat writes a file of the shape of HPCC's fat.txt: 320 hosts (0-319),
// 16 per ToR, 20 ToRs (320-339), 20 aggregation (340-359) and 16 core
// (360-375) switches in 5 pods of 4 ToRs and 4 aggregation switches;
// aggregation switch i of a pod joins cores 4i..4i+3. Hosts at 100Gbps,
// the fabric at 400Gbps, 1000ns per link.
func hpccFat() string {
	var sb strings.Builder
	fmt.Fprintln(&sb, "376 56 480")
	for s := 320; s < 376; s++ {
		if s > 320 {
			sb.WriteByte(' ')
		}
		fmt.Fprint(&sb, s)
	}
	sb.WriteByte('\n')
	for h := 0; h < 320; h++ {
		fmt.Fprintf(&sb, "%d %d 100Gbps 1000ns 0.000000\n", h, 320+h/16)
	}
	for pod := 0; pod < 5; pod++ {
		for t := 0; t < 4; t++ {
			for a := 0; a < 4; a++ {
				fmt.Fprintf(&sb, "%d %d 400Gbps 1000ns 0.000000\n", 320+pod*4+t, 340+pod*4+a)
			}
		}
	}
	for pod := 0; pod < 5; pod++ {
		for a := 0; a < 4; a++ {
			for c := 0; c < 4; c++ {
				fmt.Fprintf(&sb, "%d %d 400Gbps 1000ns 0.000000\n", 340+pod*4+a, 360+a*4+c)
			}
		}
	}
	return sb.String()
}

func TestNS3FatShape(t *testing.T) {
	tp, err := ReadNS3(strings.NewReader(hpccFat()), "fat.txt")
	require.NoError(t, err)
	assert.Len(t, tp.Hosts(), 320)
	assert.Len(t, tp.Switches(), 56)
	assert.Len(t, tp.Links(), 480)
	assert.Equal(t, NodeID(319), tp.Hosts()[319])
	assert.Equal(t, NodeID(320), tp.Switches()[0])
	for _, l := range tp.Links()[:320] {
		require.Equal(t, int64(100e9), l.RateBps)
		require.Equal(t, sim.Microsecond, l.Delay)
	}
	for _, l := range tp.Links()[320:] {
		require.Equal(t, int64(400e9), l.RateBps)
	}
	// 320 x 320 pairs, every next-hop choice reaches the destination.
	checkAllPairs(t, tp)
	// hosts in different pods: 4 ECMP uplinks at the ToR
	assert.Len(t, tp.NextHops(320, 319), 4)
}

func TestNS3RoundTrip(t *testing.T) {
	for _, spec := range []string{"fat-tree:k=4", "dragonfly:a=2,p=1,h=1", "star:hosts=1"} {
		tp, err := Parse(spec, LinkParams{HostRateBps: 25e9, FabricRateBps: 2500e6, Delay: 1500})
		require.NoError(t, err)
		var sb strings.Builder
		require.NoError(t, WriteNS3(&sb, tp))
		back, err := ReadNS3(strings.NewReader(sb.String()), "x")
		require.NoError(t, err, sb.String())
		require.Equal(t, tp.NumNodes(), back.NumNodes())
		require.Equal(t, tp.Links(), back.Links(), spec)
		for i := 0; i < tp.NumNodes(); i++ {
			require.Equal(t, tp.Node(NodeID(i)).Kind, back.Node(NodeID(i)).Kind)
		}
	}
}

func TestParseRateDelay(t *testing.T) {
	for s, want := range map[string]int64{"100Gbps": 100e9, "2.5Gbps": 2.5e9, "400Mbps": 400e6, "10Kbps": 1e4, "7bps": 7} {
		v, err := ParseRate(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, v, s)
	}
	for s, want := range map[string]sim.Time{"1000ns": sim.Microsecond, "1us": sim.Microsecond, "0.5ms": 500 * sim.Microsecond,
		"2s": 2 * sim.Second, "80ps": 80, "0ns": 0, "1.5ns": 1500} {
		v, err := ParseDelay(s)
		require.NoError(t, err, s)
		assert.Equal(t, want, v, s)
	}
	for _, s := range []string{"100", "100Tbps", "Gbps", "0Gbps", "-1Gbps", "1.5bps", "99999999999Gbps"} {
		_, err := ParseRate(s)
		assert.Error(t, err, s)
	}
	for _, s := range []string{"1000", "1min", "-1ns", "0.5ps", "xns", "1e30s"} {
		_, err := ParseDelay(s)
		assert.Error(t, err, s)
	}
}

func TestNS3Errors(t *testing.T) {
	for in, want := range map[string]string{
		"":                             "f:1: unexpected end of file, want the header line <nodes> <switches> <links>",
		"3 1\n":                        "f:1: header has 2 fields, want 3: <nodes> <switches> <links>",
		"3 x 2\n":                      `f:1: switches "x" is not a non-negative integer`,
		"3 4 2\n":                      "f:1: 4 switches but only 3 nodes",
		"3 1 2\n":                      "f:2: unexpected end of file, want the switch id line",
		"3 1 2\n2 1\n":                 "f:2: 2 switch ids, the header says 1",
		"3 1 2\n7\n":                   `f:2: switch id "7" is not a node id 0..2`,
		"3 2 2\n2 2\n":                 "f:2: switch id 2 listed twice",
		"3 1 2\n2\n0 2 1Gbps 1ns 0\n":  "f:4: unexpected end of file, want link 2 of 2",
		"3 1 2\n2\n0 2 1Gbps 1ns\n":    "f:3: 4 fields, want 5: <src> <dst> <rate> <delay> <error rate>",
		"3 1 2\n2\n0 5 1Gbps 1ns 0\n":  "f:3: unknown node 5 (nodes are 0..2)",
		"3 1 2\n2\n0 a 1Gbps 1ns 0\n":  `f:3: dst "a" is not a node id`,
		"3 1 2\n2\n0 2 1Gb 1ns 0\n":    `f:3: rate "1Gb": unknown unit, want Gbps, Mbps, Kbps or bps`,
		"3 1 2\n2\n0 2 0Gbps 1ns 0\n":  `f:3: rate "0Gbps": want a positive whole number of b/s`,
		"3 1 2\n2\n0 2 1Gbps -1ns 0\n": `f:3: delay "-1ns": want a non-negative whole number of ps`,
		"3 1 2\n2\n0 2 1Gbps 1ns x\n":  `f:3: error rate "x" is not a number`,
		"3 1 2\n2\n\n0 2 1Gbps 1ns 0\n2 2 1Gbps 1ns 0\n":                "f:5: self-loop on 2",
		"3 1 2\n2\n0 2 1Gbps 1ns 0\n2 0 1Gbps 1ns 0\n":                  "f:4: duplicate link between 2 and 0, first is link 0",
		"3 1 2\n2\n0 2 1Gbps 1ns 0\n0 1 1Gbps 1ns 0\n":                  "f:4: host 0 has a second link; a host has exactly one",
		"3 1 1\n2\n0 2 1Gbps 1ns 0\n":                                   "f:1: node 1: host 1 has no link",
		"3 1 2\n2\n0 2 1Gbps 1ns 0\n1 2 1Gbps 1ns 0\n1 2 1Gbps 1ns 0\n": "f:5: more links than the 2 the header says",
		"4 2 2\n2 3\n0 2 1Gbps 1ns 0\n1 3 1Gbps 1ns 0\n":                "f:1: node 1: 1 is not connected to 0",
		"3 1 2\n2\n0 2 1Gbps 1ns 1.5\n1 2 1Gbps 1ns 0\n":                "f:3: error rate 1.5 is not in [0, 1]",
	} {
		_, err := ReadNS3(strings.NewReader(in), "f")
		assert.EqualError(t, err, want, "%q", in)
	}
}
