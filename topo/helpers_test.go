package topo

import (
	"github.com/stretchr/testify/require"
)

// adjacency built from Links alone, independent of the port tables.
func adjacency(t *Topology) [][]NodeID {
	adj := make([][]NodeID, t.NumNodes())
	for _, l := range t.Links() {
		adj[l.A] = append(adj[l.A], l.B)
		adj[l.B] = append(adj[l.B], l.A)
	}
	return adj
}

// refDist is a plain BFS from dst in which hosts other than dst do not
// forward.
func refDist(t *Topology, adj [][]NodeID, dst NodeID) []int {
	d := make([]int, len(adj))
	for i := range d {
		d[i] = -1
	}
	d[dst] = 0
	q := []NodeID{dst}
	for len(q) > 0 {
		u := q[0]
		q = q[1:]
		if u != dst && t.Node(u).Kind == Host {
			continue
		}
		for _, v := range adj[u] {
			if d[v] < 0 {
				d[v] = d[u] + 1
				q = append(q, v)
			}
		}
	}
	return d
}

// checkDst asserts, for destination host dst, that every switch's next-hop
// set is exactly the set of neighbours one hop closer, and that from every
// host every choice of next hop reaches dst in exactly dist steps.
func checkDst(tb require.TestingT, t *Topology, adj [][]NodeID, dst NodeID) {
	d := refDist(t, adj, dst)
	for _, s := range t.Switches() {
		var want []NodeID
		for p := 0; p < t.NumPorts(s); p++ {
			v := t.Neighbor(s, Port(p))
			if d[v] == d[s]-1 && (v == dst || t.Node(v).Kind == Switch) {
				want = append(want, v)
			}
		}
		var got []NodeID
		for _, p := range t.NextHops(s, dst) {
			got = append(got, t.Neighbor(s, p))
		}
		require.Equal(tb, want, got, "switch %s to %s", t.Node(s).Name, t.Node(dst).Name)
		require.NotEmpty(tb, got)
	}
	for _, src := range t.Hosts() {
		if src == dst {
			require.Nil(tb, t.NextHops(src, dst))
			continue
		}
		// Every step strictly decreases the distance: no loop, and dst is
		// reached by any choice of next hops.
		at := src
		for steps := 0; at != dst; steps++ {
			require.Less(tb, steps, t.NumNodes())
			hops := t.NextHops(at, dst)
			require.NotEmpty(tb, hops)
			for _, p := range hops {
				require.Equal(tb, d[at]-1, d[t.Neighbor(at, p)])
			}
			at = t.Neighbor(at, hops[steps%len(hops)])
		}
	}
}

func checkAllPairs(tb require.TestingT, t *Topology) {
	adj := adjacency(t)
	for _, dst := range t.Hosts() {
		checkDst(tb, t, adj, dst)
	}
}
