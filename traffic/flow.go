package traffic

import (
	"cmp"

	"github.com/rocekit/rocekit/sim"
)

// Flow is one transfer: Size bytes from host Src to host Dst, starting at
// Start. The roce package runs each flow as one RC connection doing RDMA
// WRITEs of Size bytes in total.
type Flow struct {
	Src, Dst int      // host indices 0 .. hosts-1 (into topo.Topology.Hosts()); Src != Dst
	Size     int64    // bytes, > 0
	Start    sim.Time // integer picoseconds, >= 0
}

// MaxFlows is the most flows Generate and ReadHPCCFlows return. A Flow
// takes 32 bytes, so MaxFlows of them take 320 MB. A spec that would ask
// for more (all-to-all on 3,163 hosts or more, Poisson traffic whose
// expected count is larger) is refused before anything is allocated.
const MaxFlows = 10_000_000

// MaxHosts is the most hosts Generate and ReadHPCCFlows accept.
const MaxHosts = MaxFlows

// compareFlows orders flows by start time, then source, then destination,
// then size: the order Generate returns.
func compareFlows(a, b Flow) int {
	if c := cmp.Compare(a.Start, b.Start); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Src, b.Src); c != 0 {
		return c
	}
	if c := cmp.Compare(a.Dst, b.Dst); c != 0 {
		return c
	}
	return cmp.Compare(a.Size, b.Size)
}
