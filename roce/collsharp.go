package roce

import (
	"fmt"
	"math"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/topo"
)

// sharp sets up a SHARP all-reduce: an aggregation node on the switch of
// every rank's host and on every switch between those and the root (the
// first switch without hosts, the fabric's top, or else the first rank's
// switch) along the shortest paths, each node's parent the next switch
// toward the root; each aggregation node is a host of the topology joined
// to its switch. The ranks are the leaves; participants Ranks.. are the
// nodes. Every node has cfg.SharpStreams units reducing at
// cfg.SharpReduceBps each (coll.SharpConfig); a reduction that takes time
// ends in a wake-up on the engine (sharpWake).
func (run *collRun) sharp(sc *Scenario, cfg *CollConfig, setup *collSetup) error {
	if cfg.SharpStreams < 0 {
		return fmt.Errorf("roce: CollConfig.SharpStreams %d: want 0 (the default, %d) or more", cfg.SharpStreams, coll.DefaultSharpStreams)
	}
	if r := cfg.SharpReduceBps; r < 0 || math.IsNaN(r) || math.IsInf(r, 0) {
		return fmt.Errorf("roce: CollConfig.SharpReduceBps %v: want a finite rate of 0 (free) or more bytes per second", r)
	}
	t, err := sc.loadTopology()
	if err != nil {
		return err
	}
	if cfg.Ranks > len(t.Hosts()) {
		return badValue("topology", "%d hosts, fewer than the %d ranks", len(t.Hosts()), cfg.Ranks)
	}
	edgeOf := make([]topo.NodeID, cfg.Ranks)
	var edges []topo.NodeID
	seen := map[topo.NodeID]bool{}
	for r := 0; r < cfg.Ranks; r++ {
		edgeOf[r] = t.Neighbor(t.Hosts()[r], 0)
		if !seen[edgeOf[r]] {
			seen[edgeOf[r]] = true
			edges = append(edges, edgeOf[r])
		}
	}
	// The root: the first switch without hosts (the fabric's top), or
	// the first rank's switch; the tree follows the switches' shortest
	// paths to it, so that each link carries a chunk once each way.
	root := edges[0]
	if len(edges) > 1 {
		for _, sw := range t.Switches() {
			hosts := false
			for p := 0; p < t.NumPorts(sw); p++ {
				hosts = hosts || t.Node(t.Neighbor(sw, topo.Port(p))).Kind == topo.Host
			}
			if !hosts {
				root = sw
				break
			}
		}
	}
	up := map[topo.NodeID]topo.NodeID{root: topo.None} // BFS over switch links from the root
	for q := []topo.NodeID{root}; len(q) > 0; q = q[1:] {
		for p := 0; p < t.NumPorts(q[0]); p++ {
			nb := t.Neighbor(q[0], topo.Port(p))
			if _, ok := up[nb]; !ok && t.Node(nb).Kind == topo.Switch {
				up[nb] = q[0]
				q = append(q, nb)
			}
		}
	}
	var nodes []topo.NodeID
	inTree := map[topo.NodeID]bool{}
	for _, e := range edges {
		for sw := e; sw != topo.None && !inTree[sw]; sw = up[sw] {
			inTree[sw] = true
			nodes = append(nodes, sw)
		}
	}
	// The topology again, with a host per aggregation node.
	var b topo.Builder
	for i := 0; i < t.NumNodes(); i++ {
		nd := t.Node(topo.NodeID(i))
		if nd.Kind == topo.Host {
			b.AddHost(nd.Name)
		} else {
			b.AddSwitch(nd.Name)
		}
	}
	for i, l := range t.Links() {
		b.Connect(l.A, l.B, l.RateBps, l.Delay)
		if l.ErrorRate > 0 {
			b.SetErrorRate(i, l.ErrorRate)
		}
	}
	an := make([]topo.NodeID, len(nodes))
	for i, sw := range nodes {
		rate := cfg.SharpRateBps
		if rate <= 0 {
			for p := 0; p < t.NumPorts(sw); p++ {
				pi, _ := t.Port(sw, topo.Port(p))
				rate += t.Links()[pi.Link].RateBps
			}
		}
		an[i] = b.AddHost("sharp@" + t.Node(sw).Name)
		b.Connect(an[i], sw, rate, 10*sim.Nanosecond)
	}
	nt, err := b.Build()
	if err != nil {
		return err
	}
	// Participants: leaves, then nodes.
	p := cfg.Ranks
	nodeOf := map[topo.NodeID]int{}
	for i, sw := range nodes {
		nodeOf[sw] = p + i
	}
	parentOf := func(sw topo.NodeID) int {
		if up[sw] == topo.None {
			return -1
		}
		return nodeOf[up[sw]]
	}
	base := coll.SharpConfig{Count: cfg.Count, DType: cfg.DType, RedOp: cfg.RedOp, ChunkSize: cfg.ChunkSize,
		Streams: cfg.SharpStreams, ReduceBps: cfg.SharpReduceBps}
	children := make([][]int, len(nodes))
	for r := 0; r < p; r++ {
		c := base
		c.Parent = nodeOf[edgeOf[r]]
		leaf, err := coll.NewSharpLeaf(c)
		if err != nil {
			return err
		}
		coll.Fill(leaf.Input(), cfg.DType, sc.Seed, r)
		run.ranks = append(run.ranks, leaf)
		children[c.Parent-p] = append(children[c.Parent-p], r)
	}
	for i, sw := range nodes {
		if par := parentOf(sw); par >= 0 {
			children[par-p] = append(children[par-p], p+i)
		}
	}
	setup.hostOf = make([]int, p+len(nodes))
	for r := 0; r < p; r++ {
		setup.hostOf[r] = r
	}
	for i, sw := range nodes {
		c := base
		c.Parent, c.Children = parentOf(sw), children[i]
		node, err := coll.NewSharpNode(c)
		if err != nil {
			return err
		}
		run.ranks = append(run.ranks, node)
		setup.hostOf[p+i] = nt.HostIndex(an[i])
	}
	setup.topo = nt
	return nil
}

// sharpWake wakes an aggregation node when a unit finishes reducing a
// piece: the event's A is the node's participant index, its time the
// node's NextWake when it was scheduled.
type sharpWake collRun

// Handle runs the node to the event's time and sends what became ready. A
// wake the node no longer has (another at the same time ran first, or an
// arrival moved it) does nothing.
func (w *sharpWake) Handle(ev sim.Event) {
	run := (*collRun)(w)
	r := int(ev.A)
	n := run.ranks[r].(*coll.SharpNode)
	if at, ok := n.NextWake(); !ok || at != ev.At {
		return
	}
	n.Advance(ev.At)
	run.deliver(ev.At, r)
}

// sharpArm schedules participant r's next wake-up if it is an aggregation
// node with a piece being reduced; deliver calls it after every arrival
// and every wake. A node whose wake is already scheduled gets a second
// event at the same time, which finds nothing to do: at most one event
// per arrival or wake, and no state kept per node.
func (run *collRun) sharpArm(r int) {
	n, ok := run.ranks[r].(*coll.SharpNode)
	if !ok {
		return
	}
	if at, ok := n.NextWake(); ok {
		run.s.eng.Schedule(at, (*sharpWake)(run), 0, uint64(r))
	}
}
