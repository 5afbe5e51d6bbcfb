package topo_test

import (
	"fmt"
	"net/netip"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/topo"
)

func Example() {
	t, err := topo.Parse("fat-tree:k=4", topo.LinkParams{HostRateBps: 100e9, FabricRateBps: 400e9})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(t.Hosts()), "hosts,", len(t.Switches()), "switches,", len(t.Links()), "links")

	src, _ := t.Lookup("h0")
	dst, _ := t.Lookup("h15")
	ft := topo.FiveTuple{
		Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.3.4"),
		Proto: 17, SrcPort: packet.UDPSourcePort(0, 0x11, 0x22), DstPort: 4791,
	}
	// Walk the path hop by hop, letting each switch choose by ECMP.
	at := t.Neighbor(src, 0)
	path := []string{t.Node(src).Name}
	for at != dst {
		path = append(path, t.Node(at).Name)
		at = t.Neighbor(at, t.ECMP(at, dst, ft))
	}
	fmt.Println(len(path)-1, "switches on the way to", t.Node(dst).Name)
	fmt.Println("choices at the first edge:", len(t.NextHops(t.Neighbor(src, 0), dst)))
	// Output:
	// 16 hosts, 20 switches, 48 links
	// 5 switches on the way to h15
	// choices at the first edge: 2
}
