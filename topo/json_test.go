package topo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestJSONRoundTrip(t *testing.T) {
	for _, spec := range []string{"fat-tree:k=4", "leaf-spine:leaves=3,spines=2,hosts=2", "dragonfly:a=2,p=2,h=1", "star:hosts=5"} {
		tp, err := Parse(spec, LinkParams{HostRateBps: 25e9, FabricRateBps: 100e9, Delay: 1234})
		require.NoError(t, err)
		var sb strings.Builder
		require.NoError(t, WriteJSON(&sb, tp))
		back, err := ReadJSON(strings.NewReader(sb.String()), "t.json")
		require.NoError(t, err, spec)
		assert.True(t, tp.Equal(back), spec)
		assert.Equal(t, tp.Links(), back.Links(), spec)
		var again strings.Builder
		require.NoError(t, WriteJSON(&again, back))
		assert.Equal(t, sb.String(), again.String())
	}
	// error rate survives
	tp, err := ReadNS3(strings.NewReader("2 1 1\n1\n0 1 1Gbps 1ns 0.25\n"), "x")
	require.NoError(t, err)
	var sb strings.Builder
	require.NoError(t, WriteJSON(&sb, tp))
	back, err := ReadJSON(strings.NewReader(sb.String()), "x")
	require.NoError(t, err)
	assert.Equal(t, 0.25, back.Links()[0].ErrorRate)
}

func TestJSONErrors(t *testing.T) {
	const nodes = `"nodes":[{"name":"h0","kind":"host"},{"name":"s0","kind":"switch"},{"name":"h1","kind":"host"}]`
	link := func(s string) string { return `{` + nodes + `,"links":[` + s + `]}` }
	ok := `{"a":"h0","b":"s0","rate_bps":1}`
	for in, want := range map[string]string{
		``:                                     "j: EOF",
		`[]`:                                   "j: top level: want an object",
		`{"nodes":[],"links":[]} x`:            "j: data after the top-level object",
		`{"nodes":[],"links":[],"extra":1}`:    "j: extra: unknown key (want nodes, links)",
		`{"nodes":[]}`:                         "j: links: missing",
		`{"nodes":{},"links":[]}`:              "j: nodes: want an array",
		`{"nodes":[{"name":"h0"}],"links":[]}`: "j: nodes[0].kind: missing",
		`{"nodes":[{"name":"h0","kind":"router"}],"links":[]}`:                           `j: nodes[0].kind: unknown kind "router", want host or switch`,
		`{"nodes":[{"name":"h0","kind":"host","x":1}],"links":[]}`:                       "j: nodes[0].x: unknown key (want name, kind)",
		`{"nodes":[{"name":5,"kind":"host"}],"links":[]}`:                                "j: nodes[0].name: want a string, got 5",
		`{"nodes":[{"name":"a","kind":"host"},{"name":"a","kind":"switch"}],"links":[]}`: `j: nodes[1].name: duplicate name "a" (also nodes[0])`,
		link(ok + `,{"a":"h1","b":"s9","rate_bps":1}`):                                   `j: links[1].b: unknown node "s9"`,
		link(ok + `,{"a":"h1","b":"s0","rate_bps":"fast"}`):                              `j: links[1].rate_bps: want an integer, got "fast"`,
		link(ok + `,{"a":"h1","b":"s0","rate_bps":1,"delay":3}`):                         "j: links[1].delay: unknown key (want a, b, rate_bps, delay_ps, error_rate)",
		link(ok + `,{"a":"h1","b":"s0"}`):                                                "j: links[1].rate_bps: missing",
		link(ok + `,{"a":"h1","b":"s0","rate_bps":0}`):                                   "j: links[1]: rate 0 b/s must be positive",
		link(ok + `,{"a":"h1","b":"s0","rate_bps":1,"delay_ps":-2}`):                     "j: links[1]: delay -2 ps must not be negative",
		link(ok + `,{"a":"s0","b":"s0","rate_bps":1}`):                                   "j: links[1]: self-loop on s0",
		link(ok + `,{"a":"s0","b":"h0","rate_bps":1}`):                                   "j: links[1]: duplicate link between s0 and h0, first is link 0",
		link(ok): "j: nodes[2]: host h1 has no link",
		link(ok + `,{"a":"h1","b":"h0","rate_bps":1}`):            "j: links[1]: host h0 has a second link; a host has exactly one",
		link(`{"a":"h0","b":"s0","rate_bps":1,"error_rate":"x"}`): `j: links[0].error_rate: want a number, got "x"`,
	} {
		_, err := ReadJSON(strings.NewReader(in), "j")
		assert.EqualError(t, err, want, in)
	}
}
