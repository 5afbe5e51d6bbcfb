package topo

import (
	"net/netip"
	"testing"

	"github.com/rocekit/rocekit/packet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMurmur3Vectors(t *testing.T) {
	// Published MurmurHash3_x86_32 values.
	assert.Equal(t, uint32(0), murmur3(nil, 0))
	assert.Equal(t, uint32(0x514e28b7), murmur3(nil, 1))
	assert.Equal(t, uint32(0x2e4ff723), murmur3([]byte("The quick brown fox jumps over the lazy dog"), 0))
	assert.Equal(t, uint32(0xfaf6cdb3), murmur3([]byte("Hello, world!"), 1234))
}

func TestPick(t *testing.T) {
	assert.Equal(t, NoPort, Pick(nil, 7))
	assert.Equal(t, Port(5), Pick([]Port{3, 5, 9}, 7))
	assert.Equal(t, Port(3), Pick([]Port{3, 5, 9}, 0xFFFFFFFF))
}

func TestFlowHashNoAlloc(t *testing.T) {
	ft := FiveTuple{Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.0.0.2"), Proto: 17, SrcPort: 0xC001, DstPort: 4791}
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = FlowHash(1, ft) }))
	assert.NotEqual(t, FlowHash(1, ft), FlowHash(2, ft), "the seed matters")
	ft2 := ft
	ft2.SrcPort++
	assert.NotEqual(t, FlowHash(1, ft), FlowHash(1, ft2), "the source port matters")
}

// 10,000 flows between one host pair in different pods of a k=8 fat-tree,
// one per QP pair (source ports from packet.UDPSourcePort), spread over the
// 4 uplinks of the source edge within 10% of an even share, and over the 4
// uplinks of the aggregation switches they reach.
func TestECMPSpread(t *testing.T) {
	const flows = 10000
	tp, err := FatTree(8, 0, LinkParams{})
	require.NoError(t, err)
	src, _ := tp.Lookup("h0")
	dst, _ := tp.Lookup("h127")
	edge := tp.Neighbor(src, 0)
	ups := tp.NextHops(edge, dst)
	require.Len(t, ups, 4)
	perPort := map[Port]int{}
	perCore := map[NodeID]int{}
	for i := 0; i < flows; i++ {
		ft := FiveTuple{
			Src: netip.MustParseAddr("10.0.0.1"), Dst: netip.MustParseAddr("10.7.3.4"),
			Proto: 17, SrcPort: packet.UDPSourcePort(0, uint32(0x100+i), 0x11), DstPort: 4791,
		}
		p := tp.ECMP(edge, dst, ft)
		perPort[p]++
		agg := tp.Neighbor(edge, p)
		core := tp.Neighbor(agg, tp.ECMP(agg, dst, ft))
		perCore[core]++
	}
	require.Len(t, perPort, 4)
	for p, n := range perPort {
		assert.InDelta(t, flows/4, n, flows/4*0.10, "uplink %d", p)
	}
	// Per-switch seeds: the aggregation tier makes its own choice, so all
	// 16 cores carry traffic (one shared seed could send each agg's flows
	// to a single core).
	require.Len(t, perCore, 16)
	for c, n := range perCore {
		assert.InDelta(t, flows/16, n, flows/16*0.20, "core %s", tp.Node(c).Name)
	}
}

// FlowHashV4 is FlowHash of the same IPv4 5-tuple.
func TestFlowHashV4(t *testing.T) {
	for i := 0; i < 1000; i++ {
		x := uint32(i) * 2654435761
		src := [4]byte{10, 0, byte(x >> 8), byte(x)}
		dst := [4]byte{192, 168, byte(x >> 16), byte(x >> 24)}
		sport, dport := uint16(0xC000|x&0x3FFF), uint16(4791)
		ft := FiveTuple{Src: netip.AddrFrom4(src), Dst: netip.AddrFrom4(dst), Proto: 17, SrcPort: sport, DstPort: dport}
		require.Equal(t, FlowHash(uint32(i), ft), FlowHashV4(uint32(i), src, dst, 17, sport, dport))
	}
}
