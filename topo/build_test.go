package topo

import (
	"testing"

	"github.com/rocekit/rocekit/sim"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildErrors(t *testing.T) {
	type edge struct {
		a, b  NodeID
		rate  int64
		delay int64
	}
	// nodes: h0 h1 (hosts), s0 s1 (switches)
	for name, c := range map[string]struct {
		links []edge
		want  string
		link  int
		node  NodeID
	}{
		"unknown node": {[]edge{{0, 9, 1, 0}}, "link 0: unknown node 9", 0, None},
		"self-loop":    {[]edge{{0, 2, 1, 0}, {2, 2, 1, 0}}, "link 1: self-loop on s0", 1, None},
		"duplicate":    {[]edge{{0, 2, 1, 0}, {1, 2, 1, 0}, {3, 2, 1, 0}, {2, 3, 1, 0}}, "link 3: duplicate link between s0 and s1, first is link 2", 3, None},
		"zero rate":    {[]edge{{0, 2, 0, 0}}, "link 0: rate 0 b/s must be positive", 0, None},
		"neg rate":     {[]edge{{0, 2, -5, 0}}, "link 0: rate -5 b/s must be positive", 0, None},
		"neg delay":    {[]edge{{0, 2, 1, -1}}, "link 0: delay -1 ps must not be negative", 0, None},
		"multi-homed":  {[]edge{{0, 2, 1, 0}, {0, 3, 1, 0}}, "link 1: host h0 has a second link; a host has exactly one", 1, None},
		"no link":      {[]edge{{0, 2, 1, 0}, {2, 3, 1, 0}}, "node 1: host h1 has no link", -1, 1},
		"disconnected": {[]edge{{0, 2, 1, 0}, {1, 3, 1, 0}}, "node 1: h1 is not connected to h0", -1, 1},
	} {
		var b Builder
		b.AddHost("h0")
		b.AddHost("h1")
		b.AddSwitch("s0")
		b.AddSwitch("s1")
		for _, e := range c.links {
			b.Connect(e.a, e.b, e.rate, simTime(e.delay))
		}
		_, err := b.Build()
		require.EqualError(t, err, c.want, name)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve)
		assert.Equal(t, c.link, ve.Link, name)
		assert.Equal(t, c.node, ve.Node, name)
	}
	var b Builder
	b.AddHost("x")
	b.AddSwitch("x")
	_, err := b.Build()
	assert.EqualError(t, err, `node 1: duplicate name "x" (also node 0)`)
	b = Builder{}
	b.AddHost("")
	_, err = b.Build()
	assert.EqualError(t, err, `node 0: empty name`)
	b = Builder{}
	b.AddHost("h")
	b.AddSwitch("s")
	b.SetErrorRate(b.Connect(0, 1, 1, 0), 2)
	_, err = b.Build()
	assert.EqualError(t, err, `link 0: error rate 2 is not in [0, 1]`)
}

func TestPortsDeterministic(t *testing.T) {
	var b Builder
	h := b.AddHost("h")
	s0 := b.AddSwitch("s0")
	s1 := b.AddSwitch("s1")
	b.Connect(s0, s1, 1, 0)
	b.Connect(h, s1, 1, 0)
	tp, err := b.Build()
	require.NoError(t, err)
	info, ok := tp.Port(s1, 0)
	require.True(t, ok)
	assert.Equal(t, PortInfo{Link: 0, Peer: s0, PeerPort: 0}, info)
	info, _ = tp.Port(s1, 1)
	assert.Equal(t, PortInfo{Link: 1, Peer: h, PeerPort: 0}, info)
	_, ok = tp.Port(s1, 2)
	assert.False(t, ok)
	assert.Equal(t, []Port{1}, tp.NextHops(s1, h))
	assert.Equal(t, []Port{0}, tp.NextHops(s0, h))
	assert.Equal(t, 0, tp.HostIndex(h))
	assert.Equal(t, 1, tp.SwitchIndex(s1))
	assert.Equal(t, -1, tp.HostIndex(s1))
}

func simTime(ps int64) sim.Time { return sim.Time(ps) }

func TestBuildTooLarge(t *testing.T) {
	_, err := FatTree(64, 0, LinkParams{})
	assert.EqualError(t, err, "topo: fat-tree: 65536 hosts x 5120 switches = 335544320 routing entries, more than 67108864")
	_, err = Parse("dragonfly:a=28,p=3,h=8", LinkParams{HostRateBps: 1e9})
	assert.EqualError(t, err, "topo: dragonfly: 18900 hosts x 6300 switches = 119070000 routing entries, more than 67108864")
}
