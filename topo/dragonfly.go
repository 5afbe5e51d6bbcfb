package topo

import "fmt"

// DragonflyLayout describes a dragonfly built by Dragonfly: A routers per
// group, P hosts per router, H global links per router, G = A*H+1 groups.
//
// Global links use the "consecutive" (circulant) arrangement: the A*H
// global ports of group i are numbered q = r*H + c for router r and its
// c-th global link, and port q joins group (i + q + 1) mod G. So group j
// is reached from group i through router ((j - i - 1) mod G) / H of group
// i, and every pair of groups is joined by exactly one global link.
type DragonflyLayout struct {
	A, P, H, G int
}

// Host returns the id of host x of router r of group g.
func (d DragonflyLayout) Host(g, r, x int) NodeID { return NodeID((g*d.A+r)*d.P + x) }

// Router returns the id of router r of group g.
func (d DragonflyLayout) Router(g, r int) NodeID { return NodeID(d.G*d.A*d.P + g*d.A + r) }

// RouterOf returns the group and router index of a router id, or -1, -1
// if id is not a router.
func (d DragonflyLayout) RouterOf(id NodeID) (g, r int) {
	i := int(id) - d.G*d.A*d.P
	if d.A <= 0 || i < 0 || i >= d.G*d.A {
		return -1, -1
	}
	return i / d.A, i % d.A
}

// HostRouter returns the router id a host is attached to, or None if host
// is not a host.
func (d DragonflyLayout) HostRouter(host NodeID) NodeID {
	if !d.isHost(host) {
		return None
	}
	return NodeID(d.G*d.A*d.P + int(host)/d.P)
}

// GlobalRouter returns the index (in group from) of the router holding the
// global link to group to (from != to), or -1 if the layout is empty.
func (d DragonflyLayout) GlobalRouter(from, to int) int {
	if d.G <= 0 || d.H <= 0 {
		return -1
	}
	q := ((to-from-1)%d.G + d.G) % d.G
	return q / d.H
}

func (d DragonflyLayout) isHost(id NodeID) bool {
	return id >= 0 && int(id) < d.G*d.A*d.P
}

// Dragonfly returns the dragonfly of Kim et al.: a routers per group (all
// to all inside a group), p hosts per router, h global links per router,
// g = a*h+1 groups with one global link between every pair of groups (see
// DragonflyLayout for the arrangement). Hosts a*p*(a*h+1); router radix
// p+h+a-1. Balanced when a = 2p = 2h, but any a, p, h >= 1 is allowed.
// Host links run at lp.HostRateBps, local and global links at
// lp.FabricRateBps.
//
// Ids: hosts first ("g<g>.r<r>.h<x>"), then routers ("g<g>.r<r>"), group by
// group. Router ports: hosts 0..p-1, then the local links in increasing
// router order, then the global links.
func Dragonfly(a, p, h int, lp LinkParams) (*Topology, error) {
	for _, c := range []struct {
		n string
		v int
	}{{"a", a}, {"p", p}, {"h", h}} {
		if err := atLeast("dragonfly", c.n, c.v, 1); err != nil {
			return nil, err
		}
	}
	if int64(a)*int64(h) >= maxNodes {
		return nil, fmt.Errorf("topo: dragonfly: a*h = %d, too many groups", int64(a)*int64(h))
	}
	g := a*h + 1
	if err := tooBig("dragonfly", int64(g)*int64(a)*int64(p), int64(g)*int64(a)); err != nil {
		return nil, err
	}
	if p+h+a-1 > MaxPorts {
		return nil, fmt.Errorf("topo: dragonfly: router radix %d, more than %d ports", p+h+a-1, MaxPorts)
	}
	lp, err := lp.resolve("dragonfly")
	if err != nil {
		return nil, err
	}
	d := DragonflyLayout{A: a, P: p, H: h, G: g}
	var b Builder
	for gi := 0; gi < g; gi++ {
		for r := 0; r < a; r++ {
			for x := 0; x < p; x++ {
				b.AddHost(fmt.Sprintf("g%d.r%d.h%d", gi, r, x))
			}
		}
	}
	for gi := 0; gi < g; gi++ {
		for r := 0; r < a; r++ {
			b.AddSwitch(fmt.Sprintf("g%d.r%d", gi, r))
		}
	}
	for gi := 0; gi < g; gi++ {
		for r := 0; r < a; r++ {
			for x := 0; x < p; x++ {
				b.Connect(d.Host(gi, r, x), d.Router(gi, r), lp.HostRateBps, lp.Delay)
			}
		}
	}
	for gi := 0; gi < g; gi++ {
		for r1 := 0; r1 < a; r1++ {
			for r2 := r1 + 1; r2 < a; r2++ {
				b.Connect(d.Router(gi, r1), d.Router(gi, r2), lp.FabricRateBps, lp.Delay)
			}
		}
	}
	for gi := 0; gi < g; gi++ {
		for q := 0; q < a*h; q++ {
			gj := (gi + q + 1) % g
			if gi < gj {
				b.Connect(d.Router(gi, q/h), d.Router(gj, d.GlobalRouter(gj, gi)), lp.FabricRateBps, lp.Delay)
			}
		}
	}
	t, err := b.Build()
	if err != nil {
		return nil, err
	}
	t.df = &d
	return t, nil
}

// Dragonfly returns the layout of a topology made by Dragonfly.
func (t *Topology) Dragonfly() (DragonflyLayout, bool) {
	if t.df == nil {
		return DragonflyLayout{}, false
	}
	return *t.df, true
}

// MinimalPath returns the routers a packet from host src to host dst
// visits under minimal dragonfly routing: the source router; if the groups
// differ, a local hop to the router holding the global link to dst's
// group (if that is another router), the global hop, and a local hop to
// dst's router (if needed). At most 3 router-to-router hops (4 routers).
func (d DragonflyLayout) MinimalPath(src, dst NodeID) ([]NodeID, error) {
	if !d.isHost(src) || !d.isHost(dst) {
		return nil, fmt.Errorf("topo: dragonfly path: %d or %d is not a host", src, dst)
	}
	return d.routerPath(nil, d.HostRouter(src), d.HostRouter(dst)), nil
}

// routerPath appends the minimal router path from router rs to rd to path,
// without repeating rs if it is already path's last element.
func (d DragonflyLayout) routerPath(path []NodeID, rs, rd NodeID) []NodeID {
	add := func(r NodeID) {
		if len(path) == 0 || path[len(path)-1] != r {
			path = append(path, r)
		}
	}
	add(rs)
	gs, _ := d.RouterOf(rs)
	gd, _ := d.RouterOf(rd)
	if gs != gd {
		add(d.Router(gs, d.GlobalRouter(gs, gd)))
		add(d.Router(gd, d.GlobalRouter(gd, gs)))
	}
	add(rd)
	return path
}

// ValiantPath returns the routers visited under Valiant routing: minimal
// to an intermediate group chosen from seed (uniformly among the groups
// other than the source's and the destination's, by a SplitMix64 step of
// seed), arriving at the router with the global link from the source
// group, then minimal to dst's router. When there is no third group (G = 2
// and src and dst in different groups) it is the minimal path. At most 5
// router-to-router hops.
func (d DragonflyLayout) ValiantPath(src, dst NodeID, seed uint64) ([]NodeID, error) {
	if !d.isHost(src) || !d.isHost(dst) {
		return nil, fmt.Errorf("topo: dragonfly path: %d or %d is not a host", src, dst)
	}
	rs, rd := d.HostRouter(src), d.HostRouter(dst)
	gs, _ := d.RouterOf(rs)
	gd, _ := d.RouterOf(rd)
	others := d.G - 1
	if gs != gd {
		others--
	}
	if others <= 0 {
		return d.routerPath(nil, rs, rd), nil
	}
	n := int(splitmix64(seed) % uint64(others))
	gi := -1
	for c := 0; c < d.G; c++ {
		if c == gs || c == gd {
			continue
		}
		if n == 0 {
			gi = c
			break
		}
		n--
	}
	mid := d.Router(gi, d.GlobalRouter(gi, gs))
	return d.routerPath(d.routerPath(nil, rs, mid), mid, rd), nil
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
