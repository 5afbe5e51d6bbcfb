package topo

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestAvoiding takes links down on a k=4 fat-tree and checks the routes
// against a plain BFS over the remaining links: every next hop is one hop
// closer over links that are up, and every such port is listed.
func TestAvoiding(t *testing.T) {
	ft, err := FatTree(4, 0, LinkParams{})
	require.NoError(t, err)
	down := make([]bool, len(ft.Links()))
	// Take down the first edge-to-aggregation link of the first edge switch
	// and a host's only link.
	edge := ft.Neighbor(ft.Hosts()[0], 0)
	var up, hostLink = -1, -1
	for p := 0; p < ft.NumPorts(edge); p++ {
		pi, _ := ft.Port(edge, Port(p))
		if ft.Node(pi.Peer).Kind == Switch && up < 0 {
			up = pi.Link
		}
	}
	last := ft.Hosts()[len(ft.Hosts())-1]
	pi, _ := ft.Port(last, 0)
	hostLink = pi.Link
	down[up], down[hostLink] = true, true

	r, err := ft.Avoiding(down)
	require.NoError(t, err)
	adj := make([][]NodeID, ft.NumNodes())
	for i, l := range ft.Links() {
		if !down[i] {
			adj[l.A] = append(adj[l.A], l.B)
			adj[l.B] = append(adj[l.B], l.A)
		}
	}
	for _, h := range ft.Hosts() {
		d := refDist(ft, adj, h)
		for _, s := range ft.Switches() {
			var want []Port
			for p := 0; p < ft.NumPorts(s); p++ {
				pi, _ := ft.Port(s, Port(p))
				if down[pi.Link] || d[s] < 0 {
					continue
				}
				if d[pi.Peer] == d[s]-1 && (pi.Peer == h || ft.Node(pi.Peer).Kind == Switch) {
					want = append(want, Port(p))
				}
			}
			got := r.NextHops(s, h)
			if len(want) == 0 {
				require.Empty(t, got, "switch %s to %s", ft.Node(s).Name, ft.Node(h).Name)
				continue
			}
			require.Equal(t, want, got, "switch %s to %s", ft.Node(s).Name, ft.Node(h).Name)
		}
	}
	// The edge switch has one uplink fewer toward a host in another pod.
	far := ft.Hosts()[8]
	require.Len(t, ft.NextHops(edge, far), 2)
	require.Len(t, r.NextHops(edge, far), 1)
	// Nothing reaches the cut-off host.
	for _, s := range ft.Switches() {
		require.Empty(t, r.NextHops(s, last))
	}
	// All links up again: the same tables as the topology's own.
	all, err := ft.Avoiding(nil)
	require.NoError(t, err)
	for _, h := range ft.Hosts() {
		for _, s := range ft.Switches() {
			require.Equal(t, ft.NextHops(s, h), all.NextHops(s, h))
		}
	}
}
