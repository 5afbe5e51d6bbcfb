package topo

import (
	"fmt"

	"github.com/rocekit/rocekit/sim"
)

// Defaults for zero fields of LinkParams.
const (
	DefaultRateBps int64    = 100e9
	DefaultDelay   sim.Time = sim.Microsecond
)

// LinkParams gives the generators their link rates and delay. A zero field
// takes its default: HostRateBps DefaultRateBps, FabricRateBps the host
// rate, Delay DefaultDelay. Negative values are errors.
type LinkParams struct {
	// HostRateBps is the rate of host links, bits per second.
	HostRateBps int64
	// FabricRateBps is the rate of switch-to-switch links, bits per second.
	FabricRateBps int64
	// Delay is the propagation delay of every link, picoseconds.
	Delay sim.Time
}

func (lp LinkParams) resolve(gen string) (LinkParams, error) {
	switch {
	case lp.HostRateBps < 0:
		return lp, fmt.Errorf("topo: %s: host rate %d b/s must not be negative", gen, lp.HostRateBps)
	case lp.FabricRateBps < 0:
		return lp, fmt.Errorf("topo: %s: fabric rate %d b/s must not be negative", gen, lp.FabricRateBps)
	case lp.Delay < 0:
		return lp, fmt.Errorf("topo: %s: delay %d ps must not be negative", gen, int64(lp.Delay))
	}
	if lp.HostRateBps == 0 {
		lp.HostRateBps = DefaultRateBps
	}
	if lp.FabricRateBps == 0 {
		lp.FabricRateBps = lp.HostRateBps
	}
	if lp.Delay == 0 {
		lp.Delay = DefaultDelay
	}
	return lp, nil
}

// maxNodes bounds generator sizes so that counts fit an int32 NodeID and the
// routing tables stay within reason.
const maxNodes = 1 << 20

func atLeast(gen, name string, v, lo int) error {
	if v < lo {
		return fmt.Errorf("topo: %s: %s = %d, must be at least %d", gen, name, v, lo)
	}
	return nil
}

// tooBig refuses a generator's size before anything is built: more nodes
// than maxNodes, or more routing entries (hosts x switches) than Build
// takes (MaxRoutePairs).
func tooBig(gen string, hosts, switches int64) error {
	if nodes := hosts + switches; nodes > maxNodes {
		return fmt.Errorf("topo: %s: %d nodes, more than %d", gen, nodes, maxNodes)
	}
	if pairs := hosts * switches; pairs > MaxRoutePairs {
		return fmt.Errorf("topo: %s: %d hosts x %d switches = %d routing entries, more than %d", gen, hosts, switches, pairs, MaxRoutePairs)
	}
	return nil
}

// Star returns hosts hosts ("h0".."hN-1", ids 0..N-1) on one switch ("s0",
// id N), every link at rateBps bits per second with delay picoseconds.
// Host i is on the switch's port i.
func Star(hosts int, rateBps int64, delay sim.Time) (*Topology, error) {
	if err := atLeast("star", "hosts", hosts, 1); err != nil {
		return nil, err
	}
	if hosts > MaxPorts {
		return nil, fmt.Errorf("topo: star: hosts = %d, more than %d ports", hosts, MaxPorts)
	}
	if rateBps <= 0 {
		return nil, fmt.Errorf("topo: star: rate %d b/s must be positive", rateBps)
	}
	if delay < 0 {
		return nil, fmt.Errorf("topo: star: delay %d ps must not be negative", int64(delay))
	}
	var b Builder
	for i := 0; i < hosts; i++ {
		b.AddHost(fmt.Sprintf("h%d", i))
	}
	s := b.AddSwitch("s0")
	for i := 0; i < hosts; i++ {
		b.Connect(NodeID(i), s, rateBps, delay)
	}
	return b.Build()
}

// FatTree returns the 3-tier k-ary fat-tree of Al-Fares et al.: k pods of
// k/2 edge and k/2 aggregation switches, (k/2)^2 core switches. Edge switch
// j of a pod connects to every aggregation switch of its pod; aggregation
// switch i of every pod connects to core switches i*(k/2) .. i*(k/2)+k/2-1.
//
// hostsPerEdge is the number of hosts on each edge switch; 0 means k/2,
// the non-blocking tree (k^3/4 hosts, 5k^2/4 switches). A larger value
// oversubscribes the edge: each edge has k/2 uplinks, so at equal host and
// fabric rates the edge oversubscription is hostsPerEdge : k/2 (the other
// tiers stay non-blocking). k must be even and at least 2.
//
// Ids: hosts first, by pod, then edge, then position ("h0"...), then edge
// switches "e<pod>.<j>", aggregation "a<pod>.<i>", core "c<n>". Ports: an
// edge switch has its hosts on ports 0..hostsPerEdge-1, then aggregation
// 0..k/2-1; aggregation has edges 0..k/2-1 then its k/2 cores; core n has
// pod p on port p.
func FatTree(k, hostsPerEdge int, lp LinkParams) (*Topology, error) {
	if err := atLeast("fat-tree", "k", k, 2); err != nil {
		return nil, err
	}
	if k%2 != 0 {
		return nil, fmt.Errorf("topo: fat-tree: k = %d, must be even", k)
	}
	if hostsPerEdge < 0 {
		return nil, fmt.Errorf("topo: fat-tree: hosts per edge = %d, must not be negative", hostsPerEdge)
	}
	h := k / 2
	if hostsPerEdge == 0 {
		hostsPerEdge = h
	}
	if err := tooBig("fat-tree", int64(k)*int64(h)*int64(hostsPerEdge), 5*int64(k)*int64(k)/4); err != nil {
		return nil, err
	}
	if hostsPerEdge+h > MaxPorts || k > MaxPorts {
		return nil, fmt.Errorf("topo: fat-tree: a switch would have more than %d ports", MaxPorts)
	}
	lp, err := lp.resolve("fat-tree")
	if err != nil {
		return nil, err
	}
	var b Builder
	for p := 0; p < k; p++ {
		for j := 0; j < h; j++ {
			for x := 0; x < hostsPerEdge; x++ {
				b.AddHost(fmt.Sprintf("h%d", (p*h+j)*hostsPerEdge+x))
			}
		}
	}
	edge := func(p, j int) NodeID { return NodeID(k*h*hostsPerEdge + p*h + j) }
	agg := func(p, i int) NodeID { return NodeID(k*h*hostsPerEdge + k*h + p*h + i) }
	core := func(n int) NodeID { return NodeID(k*h*hostsPerEdge + 2*k*h + n) }
	for p := 0; p < k; p++ {
		for j := 0; j < h; j++ {
			b.AddSwitch(fmt.Sprintf("e%d.%d", p, j))
		}
	}
	for p := 0; p < k; p++ {
		for i := 0; i < h; i++ {
			b.AddSwitch(fmt.Sprintf("a%d.%d", p, i))
		}
	}
	for n := 0; n < h*h; n++ {
		b.AddSwitch(fmt.Sprintf("c%d", n))
	}
	for p := 0; p < k; p++ {
		for j := 0; j < h; j++ {
			for x := 0; x < hostsPerEdge; x++ {
				b.Connect(NodeID((p*h+j)*hostsPerEdge+x), edge(p, j), lp.HostRateBps, lp.Delay)
			}
		}
	}
	for p := 0; p < k; p++ {
		for j := 0; j < h; j++ {
			for i := 0; i < h; i++ {
				b.Connect(edge(p, j), agg(p, i), lp.FabricRateBps, lp.Delay)
			}
		}
	}
	for p := 0; p < k; p++ {
		for i := 0; i < h; i++ {
			for c := 0; c < h; c++ {
				b.Connect(agg(p, i), core(i*h+c), lp.FabricRateBps, lp.Delay)
			}
		}
	}
	return b.Build()
}

// LeafSpine returns a 2-tier Clos: leaves leaf switches, spines spine
// switches, hostsPerLeaf hosts on each leaf, every leaf connected to every
// spine. Its oversubscription is (hostsPerLeaf x host rate) / (spines x
// fabric rate). All three must be at least 1.
//
// Ids: hosts first ("h0"..., leaf by leaf), then leaves "l0"..., then
// spines "s0".... A leaf has its hosts on ports 0..hostsPerLeaf-1, then
// spine n on port hostsPerLeaf+n; spine n has leaf m on port m.
func LeafSpine(leaves, spines, hostsPerLeaf int, lp LinkParams) (*Topology, error) {
	for _, c := range []struct {
		n string
		v int
	}{{"leaves", leaves}, {"spines", spines}, {"hosts per leaf", hostsPerLeaf}} {
		if err := atLeast("leaf-spine", c.n, c.v, 1); err != nil {
			return nil, err
		}
	}
	if err := tooBig("leaf-spine", int64(leaves)*int64(hostsPerLeaf), int64(leaves)+int64(spines)); err != nil {
		return nil, err
	}
	if hostsPerLeaf+spines > MaxPorts || leaves > MaxPorts {
		return nil, fmt.Errorf("topo: leaf-spine: a switch would have more than %d ports", MaxPorts)
	}
	lp, err := lp.resolve("leaf-spine")
	if err != nil {
		return nil, err
	}
	var b Builder
	for i := 0; i < leaves*hostsPerLeaf; i++ {
		b.AddHost(fmt.Sprintf("h%d", i))
	}
	for i := 0; i < leaves; i++ {
		b.AddSwitch(fmt.Sprintf("l%d", i))
	}
	for i := 0; i < spines; i++ {
		b.AddSwitch(fmt.Sprintf("s%d", i))
	}
	hosts := leaves * hostsPerLeaf
	for i := 0; i < hosts; i++ {
		b.Connect(NodeID(i), NodeID(hosts+i/hostsPerLeaf), lp.HostRateBps, lp.Delay)
	}
	for l := 0; l < leaves; l++ {
		for s := 0; s < spines; s++ {
			b.Connect(NodeID(hosts+l), NodeID(hosts+leaves+s), lp.FabricRateBps, lp.Delay)
		}
	}
	return b.Build()
}
