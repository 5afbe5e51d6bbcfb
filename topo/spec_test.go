package topo

import (
	"testing"

	"github.com/rocekit/rocekit/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	lp := LinkParams{HostRateBps: 25e9, FabricRateBps: 100e9, Delay: 2 * sim.Microsecond}
	for _, c := range []struct {
		spec                  string
		hosts, switches, rate int64
	}{
		{"star:hosts=3", 3, 1, 25e9},
		{"fat-tree:k=8", 128, 80, 25e9},
		{"fat-tree:k=4,hosts=4", 32, 20, 25e9},
		{"leaf-spine:leaves=4,spines=2,hosts=8", 32, 6, 25e9},
		{"dragonfly:a=4,p=2,h=2", 72, 36, 25e9},
	} {
		tp, err := Parse(c.spec, lp)
		require.NoError(t, err, c.spec)
		assert.Equal(t, c.hosts, int64(len(tp.Hosts())), c.spec)
		assert.Equal(t, c.switches, int64(len(tp.Switches())), c.spec)
		assert.Equal(t, c.rate, tp.Links()[0].RateBps, c.spec)
		assert.Equal(t, 2*sim.Microsecond, tp.Links()[0].Delay, c.spec)
	}
	tp, err := Parse("leaf-spine:leaves=2,spines=1,hosts=1", LinkParams{})
	require.NoError(t, err)
	assert.Equal(t, DefaultRateBps, tp.Links()[2].RateBps)
	assert.Equal(t, DefaultDelay, tp.Links()[2].Delay)
}

func TestParseErrors(t *testing.T) {
	for spec, want := range map[string]string{
		"torus:n=3":                   `topo: spec "torus:n=3": unknown kind "torus" (want star, fat-tree, leaf-spine or dragonfly)`,
		"fat-tree:k=8,x=1":            `topo: spec "fat-tree:k=8,x=1": unknown key "x" for fat-tree (want k, hosts)`,
		"fat-tree:k=eight":            `topo: spec "fat-tree:k=eight": k="eight" is not an integer`,
		"fat-tree:k8":                 `topo: spec "fat-tree:k8": "k8" is not key=value`,
		"fat-tree:k=8,k=4":            `topo: spec "fat-tree:k=8,k=4": key "k" given twice`,
		"fat-tree":                    `topo: spec "fat-tree": missing key "k"`,
		"fat-tree:k=7":                `topo: fat-tree: k = 7, must be even`,
		"star:hosts=0":                `topo: star: hosts = 0, must be at least 1`,
		"leaf-spine:leaves=4,hosts=8": `topo: spec "leaf-spine:leaves=4,hosts=8": missing key "spines"`,
		"dragonfly:a=4,p=2,h=-1":      `topo: dragonfly: h = -1, must be at least 1`,
	} {
		_, err := Parse(spec, LinkParams{})
		assert.EqualError(t, err, want, spec)
	}
	_, err := Parse("star:hosts=2", LinkParams{Delay: -1})
	assert.EqualError(t, err, "topo: star: delay -1 ps must not be negative")
}
