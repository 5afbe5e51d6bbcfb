package topo

import (
	"fmt"
	"math"

	"github.com/rocekit/rocekit/sim"
)

// ValidationError is what Build returns for an invalid graph. At most one
// of Link and Node is set (the other is -1 or None): the link or node the
// problem is found at; neither is set when the graph as a whole is too
// large. File readers turn it into an error naming the line
// or JSON key of that link or node.
type ValidationError struct {
	Link int    // index of the offending link, or -1
	Node NodeID // the offending node, or None
	Msg  string
}

func (e *ValidationError) Error() string {
	if e.Link >= 0 {
		return fmt.Sprintf("link %d: %s", e.Link, e.Msg)
	}
	if e.Node != None {
		return fmt.Sprintf("node %d: %s", e.Node, e.Msg)
	}
	return e.Msg
}

// Builder collects nodes and links; Build validates them and computes the
// routing tables. A Builder is used once.
type Builder struct {
	nodes []Node
	links []Link
}

// AddHost adds a host and returns its id (ids are dense, in order added).
func (b *Builder) AddHost(name string) NodeID { return b.add(name, Host) }

// AddSwitch adds a switch and returns its id.
func (b *Builder) AddSwitch(name string) NodeID { return b.add(name, Switch) }

func (b *Builder) add(name string, k Kind) NodeID {
	id := NodeID(len(b.nodes))
	b.nodes = append(b.nodes, Node{ID: id, Name: name, Kind: k})
	return id
}

// Connect adds a full-duplex link between a and c at rateBps bits per
// second with propagation delay (picoseconds) and returns its index. Errors
// (unknown node, self-loop, bad rate...) are reported by Build.
func (b *Builder) Connect(a, c NodeID, rateBps int64, delay sim.Time) int {
	b.links = append(b.links, Link{A: a, B: c, RateBps: rateBps, Delay: delay})
	return len(b.links) - 1
}

// SetErrorRate sets the error rate of link i (kept, not used by routing).
func (b *Builder) SetErrorRate(i int, rate float64) {
	if i >= 0 && i < len(b.links) {
		b.links[i].ErrorRate = rate
	}
}

// Build validates the graph and returns the immutable Topology.
//
// Rules, each a *ValidationError naming the link or node:
//   - a link's ends must be nodes of the graph ("unknown node N");
//   - no self-loop ("self-loop on NAME");
//   - at most one link between two nodes ("duplicate link between A and B,
//     first is link I");
//   - rate > 0 ("rate R must be positive"), delay >= 0 ("delay D must not
//     be negative"), error rate in [0, 1];
//   - a host has exactly one link: hosts are single-homed ("host NAME has
//     no link", "host NAME has a second link");
//   - names are unique and not empty;
//   - at most MaxPorts ports on a node;
//   - every node is connected to every other ("NAME is not connected to
//     NAME").
func (b *Builder) Build() (*Topology, error) {
	t := &Topology{
		nodes: b.nodes,
		links: b.links,
		names: make(map[string]NodeID, len(b.nodes)),
		index: make([]int32, len(b.nodes)),
	}
	n := len(t.nodes)
	nodeErr := func(id NodeID, f string, a ...any) error {
		return &ValidationError{Link: -1, Node: id, Msg: fmt.Sprintf(f, a...)}
	}
	for i, nd := range t.nodes {
		if nd.Name == "" {
			return nil, nodeErr(NodeID(i), "empty name")
		}
		if j, dup := t.names[nd.Name]; dup {
			return nil, nodeErr(NodeID(i), "duplicate name %q (also node %d)", nd.Name, j)
		}
		t.names[nd.Name] = NodeID(i)
		if nd.Kind == Host {
			t.index[i] = int32(len(t.hosts))
			t.hosts = append(t.hosts, NodeID(i))
		} else {
			t.index[i] = int32(len(t.switches))
			t.switches = append(t.switches, NodeID(i))
		}
	}
	linkErr := func(l int, f string, a ...any) error {
		return &ValidationError{Link: l, Node: None, Msg: fmt.Sprintf(f, a...)}
	}
	degree := make([]int32, n)
	type pair struct{ a, b NodeID }
	seen := make(map[pair]int, len(t.links))
	for i := range t.links {
		l := &t.links[i]
		for _, e := range [2]NodeID{l.A, l.B} {
			if e < 0 || int(e) >= n {
				return nil, linkErr(i, "unknown node %d", e)
			}
		}
		if l.A == l.B {
			return nil, linkErr(i, "self-loop on %s", t.nodes[l.A].Name)
		}
		p := pair{min(l.A, l.B), max(l.A, l.B)}
		if j, dup := seen[p]; dup {
			return nil, linkErr(i, "duplicate link between %s and %s, first is link %d",
				t.nodes[l.A].Name, t.nodes[l.B].Name, j)
		}
		seen[p] = i
		if l.RateBps <= 0 {
			return nil, linkErr(i, "rate %d b/s must be positive", l.RateBps)
		}
		if l.Delay < 0 {
			return nil, linkErr(i, "delay %d ps must not be negative", int64(l.Delay))
		}
		if !(l.ErrorRate >= 0 && l.ErrorRate <= 1) {
			return nil, linkErr(i, "error rate %g is not in [0, 1]", l.ErrorRate)
		}
		for _, e := range [2]NodeID{l.A, l.B} {
			if t.nodes[e].Kind == Host && degree[e] == 1 {
				return nil, linkErr(i, "host %s has a second link; a host has exactly one", t.nodes[e].Name)
			}
			if degree[e] == MaxPorts {
				return nil, linkErr(i, "%s has more than %d ports", t.nodes[e].Name, MaxPorts)
			}
		}
		l.APort = Port(degree[l.A])
		degree[l.A]++
		l.BPort = Port(degree[l.B])
		degree[l.B]++
	}
	for _, h := range t.hosts {
		if degree[h] == 0 {
			return nil, nodeErr(h, "host %s has no link", t.nodes[h].Name)
		}
	}
	t.portStart = make([]int32, n+1)
	for i := 0; i < n; i++ {
		t.portStart[i+1] = t.portStart[i] + degree[i]
	}
	t.ports = make([]PortInfo, 2*len(t.links))
	for i, l := range t.links {
		t.ports[t.portStart[l.A]+int32(l.APort)] = PortInfo{Link: i, Peer: l.B, PeerPort: l.BPort}
		t.ports[t.portStart[l.B]+int32(l.BPort)] = PortInfo{Link: i, Peer: l.A, PeerPort: l.APort}
	}
	if n > 0 {
		dist := t.bfs(0, nil, nil)
		for i, d := range dist {
			if d < 0 {
				return nil, nodeErr(NodeID(i), "%s is not connected to %s", t.nodes[i].Name, t.nodes[0].Name)
			}
		}
	}
	if pairs := int64(len(t.hosts)) * int64(len(t.switches)); pairs > MaxRoutePairs {
		return nil, &ValidationError{Link: -1, Node: None, Msg: fmt.Sprintf(
			"%d hosts x %d switches = %d routing entries, more than %d",
			len(t.hosts), len(t.switches), pairs, MaxRoutePairs)}
	}
	if err := t.route(); err != nil {
		return nil, err
	}
	return t, nil
}

// bfs returns hop distances from src over every node (hosts included as
// ends, never as transit unless transit is nil). Unreached nodes are -1.
func (t *Topology) bfs(src NodeID, dist []int32, queue []NodeID) []int32 {
	return t.bfsAvoiding(src, dist, queue, nil)
}

// bfsAvoiding is bfs over the links whose down entry is false (down may be
// nil: every link).
func (t *Topology) bfsAvoiding(src NodeID, dist []int32, queue []NodeID, down []bool) []int32 {
	n := len(t.nodes)
	if dist == nil {
		dist = make([]int32, n)
	}
	for i := range dist {
		dist[i] = -1
	}
	dist[src] = 0
	queue = append(queue[:0], src)
	for qi := 0; qi < len(queue); qi++ {
		u := queue[qi]
		if u != src && t.nodes[u].Kind == Host {
			continue // hosts do not forward
		}
		for _, pi := range t.ports[t.portStart[u]:t.portStart[u+1]] {
			if down != nil && down[pi.Link] {
				continue
			}
			if dist[pi.Peer] < 0 {
				dist[pi.Peer] = dist[u] + 1
				queue = append(queue, pi.Peer)
			}
		}
	}
	return dist
}

// route fills the next-hop tables: a BFS from each destination host, then
// for each switch every port whose peer is one hop closer.
func (t *Topology) route() error {
	r, err := t.routes(nil)
	if err != nil {
		return err
	}
	t.hopOff, t.hopPool = r.hopOff, r.hopPool
	return nil
}

func (t *Topology) routes(down []bool) (*Routes, error) {
	S, H := len(t.switches), len(t.hosts)
	r := &Routes{t: t, hopOff: make([]uint32, S*H+1)}
	dist := make([]int32, len(t.nodes))
	var queue []NodeID
	pool := make([]Port, 0, S*H)
	for hi, h := range t.hosts {
		dist = t.bfsAvoiding(h, dist, queue, down)
		for si, s := range t.switches {
			r.hopOff[hi*S+si] = uint32(len(pool))
			d := dist[s]
			if d < 0 {
				continue // cut off from h: no next hop
			}
			for p, pi := range t.ports[t.portStart[s]:t.portStart[s+1]] {
				if down != nil && down[pi.Link] {
					continue
				}
				if dist[pi.Peer] == d-1 && (pi.Peer == h || t.nodes[pi.Peer].Kind == Switch) {
					pool = append(pool, Port(p))
				}
			}
		}
		if uint64(len(pool)) > math.MaxUint32 {
			return nil, &ValidationError{Link: -1, Node: None, Msg: "more than 2^32 next-hop entries"}
		}
	}
	r.hopOff[S*H] = uint32(len(pool))
	r.hopPool = pool[:len(pool):len(pool)]
	return r, nil
}

// Routes are shortest-path next-hop tables over part of a topology's
// links: what the routing protocol converges to after links fail. The
// Topology's own tables (NextHops) use every link.
type Routes struct {
	t       *Topology
	hopOff  []uint32
	hopPool []Port
}

// Avoiding computes the shortest-path equal-cost next hops over the links
// whose entry in down is false (down is indexed like Links(); nil or short
// means every link is up). A switch cut off from a host has no next hop for
// it; a host cut off from the fabric is not an error, its destinations are
// simply unreachable.
func (t *Topology) Avoiding(down []bool) (*Routes, error) {
	if len(down) < len(t.links) {
		d := make([]bool, len(t.links))
		copy(d, down)
		down = d
	}
	return t.routes(down)
}

// NextHops is Topology.NextHops over these routes: the egress ports of
// node at on a shortest path to host dst over the links that are up, nil
// if there is none. It does not allocate; do not modify the slice.
func (r *Routes) NextHops(at, dst NodeID) []Port {
	t := r.t
	hi := t.HostIndex(dst)
	if hi < 0 || at == dst || at < 0 || int(at) >= len(t.nodes) {
		return nil
	}
	if t.nodes[at].Kind == Host {
		return hostPort[:]
	}
	i := hi*len(t.switches) + int(t.index[at])
	return r.hopPool[r.hopOff[i]:r.hopOff[i+1]:r.hopOff[i+1]]
}

// MaxRoutePairs bounds hosts x switches, the number of next-hop sets Build
// computes (4 bytes each before the entries): 2^26, 256 MiB of offsets. A
// k=32 fat-tree (8,192 hosts, 1,280 switches) fits; k=64 does not.
const MaxRoutePairs = 1 << 26

// NextHops returns the egress ports of node at that lie on a shortest path
// (by hop count) to host dst: for a switch, every equal-cost next hop in
// increasing port order; for a host other than dst, its one port. It
// returns nil if at is dst, or either id is out of range or dst is not a
// host. It does not allocate; the slice is shared: do not modify it.
func (t *Topology) NextHops(at, dst NodeID) []Port {
	r := Routes{t: t, hopOff: t.hopOff, hopPool: t.hopPool}
	return r.NextHops(at, dst)
}

var hostPort = [1]Port{0}

// RoutingBytes returns the memory held by the next-hop tables: 4 bytes per
// (destination host, switch) pair plus 2 bytes per next-hop entry.
func (t *Topology) RoutingBytes() int {
	return 4*len(t.hopOff) + 2*len(t.hopPool)
}
