package topo

import (
	"fmt"
	"testing"

	"github.com/rocekit/rocekit/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func count(t *Topology) (hosts, switches, links int) {
	return len(t.Hosts()), len(t.Switches()), len(t.Links())
}

func TestStarCounts(t *testing.T) {
	for _, n := range []int{1, 3, 17} {
		tp, err := Star(n, 25e9, 500*sim.Nanosecond)
		require.NoError(t, err)
		h, s, l := count(tp)
		assert.Equal(t, []int{n, 1, n}, []int{h, s, l})
		for i, lk := range tp.Links() {
			assert.Equal(t, Port(i), lk.BPort, "host %d on switch port %d", i, i)
			assert.Equal(t, int64(25e9), lk.RateBps)
			assert.Equal(t, 500*sim.Nanosecond, lk.Delay)
		}
		checkAllPairs(t, tp)
	}
}

func TestFatTreeCounts(t *testing.T) {
	for _, c := range []struct{ k, hosts, switches int }{{2, 2, 5}, {4, 16, 20}, {8, 128, 80}, {16, 1024, 320}} {
		tp, err := FatTree(c.k, 0, LinkParams{})
		require.NoError(t, err)
		h, s, l := count(tp)
		assert.Equal(t, c.hosts, h, "k=%d hosts", c.k)
		assert.Equal(t, c.switches, s, "k=%d switches", c.k)
		assert.Equal(t, c.k*c.k*c.k*3/4, l, "k=%d links: k^3/4 per tier", c.k)
		assert.Equal(t, c.k*c.k*c.k/4, c.hosts)
		assert.Equal(t, 5*c.k*c.k/4, c.switches)
		// every switch has radix k
		for _, sw := range tp.Switches() {
			require.Equal(t, c.k, tp.NumPorts(sw), "k=%d %s", c.k, tp.Node(sw).Name)
		}
	}
}

func TestFatTreeWiring(t *testing.T) {
	const k, h = 4, 2
	tp, err := FatTree(k, 0, LinkParams{HostRateBps: 100e9, FabricRateBps: 400e9})
	require.NoError(t, err)
	for p := 0; p < k; p++ {
		for i := 0; i < h; i++ {
			a, _ := tp.Lookup(fmt.Sprintf("a%d.%d", p, i))
			var cores []string
			for q := h; q < tp.NumPorts(a); q++ {
				cores = append(cores, tp.Node(tp.Neighbor(a, Port(q))).Name)
			}
			assert.Equal(t, []string{fmt.Sprintf("c%d", i*h), fmt.Sprintf("c%d", i*h+1)}, cores)
		}
	}
	for _, l := range tp.Links() {
		if tp.Node(l.A).Kind == Host {
			assert.Equal(t, int64(100e9), l.RateBps)
		} else {
			assert.Equal(t, int64(400e9), l.RateBps)
		}
	}
	checkAllPairs(t, tp)
}

func TestFatTreeOversubscribed(t *testing.T) {
	tp, err := FatTree(4, 6, LinkParams{})
	require.NoError(t, err)
	h, s, _ := count(tp)
	assert.Equal(t, 4*2*6, h)
	assert.Equal(t, 20, s)
	e, _ := tp.Lookup("e0.0")
	assert.Equal(t, 6+2, tp.NumPorts(e))
	checkAllPairs(t, tp)
}

func TestFatTreeErrors(t *testing.T) {
	_, err := FatTree(5, 0, LinkParams{})
	assert.EqualError(t, err, "topo: fat-tree: k = 5, must be even")
	_, err = FatTree(0, 0, LinkParams{})
	assert.EqualError(t, err, "topo: fat-tree: k = 0, must be at least 2")
	_, err = FatTree(4, -1, LinkParams{})
	assert.EqualError(t, err, "topo: fat-tree: hosts per edge = -1, must not be negative")
	_, err = FatTree(4, 0, LinkParams{FabricRateBps: -1})
	assert.EqualError(t, err, "topo: fat-tree: fabric rate -1 b/s must not be negative")
	_, err = FatTree(1<<20, 0, LinkParams{})
	assert.ErrorContains(t, err, "more than 1048576")
}

func TestLeafSpineCounts(t *testing.T) {
	for _, c := range [][3]int{{1, 1, 1}, {4, 2, 8}, {3, 5, 2}} {
		tp, err := LeafSpine(c[0], c[1], c[2], LinkParams{})
		require.NoError(t, err)
		h, s, l := count(tp)
		assert.Equal(t, c[0]*c[2], h)
		assert.Equal(t, c[0]+c[1], s)
		assert.Equal(t, c[0]*c[2]+c[0]*c[1], l)
		checkAllPairs(t, tp)
	}
	_, err := LeafSpine(4, 0, 8, LinkParams{})
	assert.EqualError(t, err, "topo: leaf-spine: spines = 0, must be at least 1")
}

func TestDragonflyCounts(t *testing.T) {
	for _, c := range [][3]int{{1, 1, 1}, {2, 1, 1}, {4, 2, 2}, {3, 1, 2}, {2, 3, 1}, {8, 4, 4}} {
		a, p, h := c[0], c[1], c[2]
		tp, err := Dragonfly(a, p, h, LinkParams{})
		require.NoError(t, err)
		g := a*h + 1
		hosts, sw, links := count(tp)
		assert.Equal(t, a*p*g, hosts, "%v hosts", c)
		assert.Equal(t, a*g, sw, "%v routers", c)
		assert.Equal(t, a*p*g+g*a*(a-1)/2+g*(g-1)/2, links, "%v links", c)
		for _, r := range tp.Switches() {
			require.Equal(t, p+h+a-1, tp.NumPorts(r), "%v radix", c)
		}
		d, ok := tp.Dragonfly()
		require.True(t, ok)
		assert.Equal(t, g, d.G)
		// exactly one global link per pair of groups
		pairs := map[[2]int]int{}
		for _, l := range tp.Links() {
			if tp.Node(l.A).Kind == Host {
				continue
			}
			ga, _ := d.RouterOf(l.A)
			gb, _ := d.RouterOf(l.B)
			if ga != gb {
				pairs[[2]int{min(ga, gb), max(ga, gb)}]++
			}
		}
		assert.Len(t, pairs, g*(g-1)/2)
		for _, n := range pairs {
			assert.Equal(t, 1, n)
		}
	}
}

func linked(t *Topology, a, b NodeID) bool {
	for p := 0; p < t.NumPorts(a); p++ {
		if t.Neighbor(a, Port(p)) == b {
			return true
		}
	}
	return false
}

func TestDragonflyPaths(t *testing.T) {
	for _, c := range [][3]int{{1, 1, 1}, {2, 1, 1}, {4, 2, 2}, {3, 1, 2}, {2, 2, 3}} {
		tp, err := Dragonfly(c[0], c[1], c[2], LinkParams{})
		require.NoError(t, err)
		d, _ := tp.Dragonfly()
		checkAllPairs(t, tp)
		adj := adjacency(tp)
		for _, dst := range tp.Hosts() {
			dist := refDist(tp, adj, dst)
			for _, src := range tp.Hosts() {
				path, err := d.MinimalPath(src, dst)
				require.NoError(t, err)
				require.LessOrEqual(t, len(path)-1, 3, "%v %d->%d minimal %v", c, src, dst, path)
				// shortest paths by hop count: at most 3 router hops too
				if src != dst {
					require.LessOrEqual(t, dist[src]-2, 3)
				}
				require.Equal(t, d.HostRouter(src), path[0])
				require.Equal(t, d.HostRouter(dst), path[len(path)-1])
				for i := 1; i < len(path); i++ {
					require.True(t, linked(tp, path[i-1], path[i]), "%v %v", c, path)
				}
				vp, err := d.ValiantPath(src, dst, uint64(src)*7919+uint64(dst))
				require.NoError(t, err)
				require.LessOrEqual(t, len(vp)-1, 5)
				require.Equal(t, path[0], vp[0])
				require.Equal(t, path[len(path)-1], vp[len(vp)-1])
				for i := 1; i < len(vp); i++ {
					require.True(t, linked(tp, vp[i-1], vp[i]), "%v %v", c, vp)
				}
			}
		}
	}
}

func TestDragonflyValiantVisitsIntermediate(t *testing.T) {
	tp, err := Dragonfly(4, 2, 2, LinkParams{})
	require.NoError(t, err)
	d, _ := tp.Dragonfly()
	src, dst := d.Host(0, 0, 0), d.Host(1, 0, 0)
	seen := map[int]bool{}
	for seed := uint64(0); seed < 2000; seed++ {
		vp, err := d.ValiantPath(src, dst, seed)
		require.NoError(t, err)
		var groups []int
		for _, r := range vp {
			g, _ := d.RouterOf(r)
			if len(groups) == 0 || groups[len(groups)-1] != g {
				groups = append(groups, g)
			}
		}
		require.Len(t, groups, 3, "%v", vp)
		require.Equal(t, 0, groups[0])
		require.Equal(t, 1, groups[2])
		seen[groups[1]] = true
	}
	assert.Len(t, seen, 9-2, "every other group is used as intermediate")
	_, err = d.ValiantPath(d.Router(0, 0), dst, 1)
	assert.Error(t, err)
	g, r := d.RouterOf(d.Router(8, 3))
	assert.Equal(t, []int{8, 3}, []int{g, r})
	g, r = d.RouterOf(src)
	assert.Equal(t, []int{-1, -1}, []int{g, r})
	assert.Equal(t, None, d.HostRouter(d.Router(0, 0)))
	var zero DragonflyLayout
	_, err = zero.MinimalPath(0, 0)
	assert.Error(t, err)
	g, _ = zero.RouterOf(0)
	assert.Equal(t, -1, g)
	assert.Equal(t, -1, zero.GlobalRouter(0, 1))
}

// Larger instances, sampled: any sequence of next-hop choices from a random
// source host reaches a random destination, every step one hop closer.
func TestRoutingProperty(t *testing.T) {
	for _, spec := range []string{"fat-tree:k=16", "dragonfly:a=8,p=4,h=4", "leaf-spine:leaves=16,spines=8,hosts=32"} {
		tp, err := Parse(spec, LinkParams{})
		require.NoError(t, err)
		adj := adjacency(tp)
		hosts := tp.Hosts()
		d, isDF := tp.Dragonfly()
		t.Run(spec, func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				dst := hosts[rapid.IntRange(0, len(hosts)-1).Draw(rt, "dst")]
				dist := refDist(tp, adj, dst)
				src := hosts[rapid.IntRange(0, len(hosts)-1).Draw(rt, "src")]
				at := src
				for at != dst {
					hops := tp.NextHops(at, dst)
					if len(hops) == 0 {
						rt.Fatalf("no next hop at %s", tp.Node(at).Name)
					}
					p := hops[rapid.IntRange(0, len(hops)-1).Draw(rt, "choice")]
					nx := tp.Neighbor(at, p)
					if dist[nx] != dist[at]-1 {
						rt.Fatalf("step %s->%s does not approach %s", tp.Node(at).Name, tp.Node(nx).Name, tp.Node(dst).Name)
					}
					at = nx
				}
				if isDF {
					path, err := d.MinimalPath(src, dst)
					if err != nil || len(path)-1 > 3 {
						rt.Fatalf("minimal path %v %v", path, err)
					}
				}
			})
		})
	}
}

func TestRoutingMemoryK16(t *testing.T) {
	tp, err := FatTree(16, 0, LinkParams{})
	require.NoError(t, err)
	// Per destination: own edge 1, own pod's other 7 edges 8 each, own
	// pod's 8 aggs 1 each, 15 other pods x (8 edges x 8 + 8 aggs x 8),
	// 64 cores 1 each.
	perDst := 1 + 7*8 + 8 + 15*(8*8+8*8) + 64
	assert.Equal(t, 1024*perDst, len(tp.hopPool))
	want := 4*(1024*320+1) + 2*1024*perDst
	assert.Equal(t, want, tp.RoutingBytes())
	t.Logf("k=16 routing tables: %d bytes (%.2f MiB)", tp.RoutingBytes(), float64(tp.RoutingBytes())/(1<<20))
}

func TestNextHopsNoAlloc(t *testing.T) {
	tp, err := FatTree(4, 0, LinkParams{})
	require.NoError(t, err)
	sw, dst := tp.Switches()[0], tp.Hosts()[15]
	allocs := testing.AllocsPerRun(100, func() {
		_ = tp.NextHops(sw, dst)
	})
	assert.Zero(t, allocs)
	assert.Nil(t, tp.NextHops(sw, sw), "destination must be a host")
	assert.Nil(t, tp.NextHops(-1, dst))
	assert.Nil(t, tp.NextHops(sw, 1000))
}
