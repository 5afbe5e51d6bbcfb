package roce

import (
	"fmt"
	"testing"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/sim"
	"github.com/stretchr/testify/require"
)

// TestNodeCollCorrect: with several GPUs per host, every operation and
// algorithm, with and without NVLink and GPUDirect, over RC between hosts
// and the node model inside them, gives no wrong element; only the chunks
// between hosts are RDMA WRITEs, and each completes.
func TestNodeCollCorrect(t *testing.T) {
	sc := collScenario(t, `{"seed":5,"topology":"star:hosts=3","traffic":"incast:n=1,size=1KB"}`)
	for _, variant := range []struct{ nvlink, gdr bool }{{true, true}, {false, true}, {true, false}, {false, false}} {
		node := DefaultNode(4)
		node.GPUDirect = variant.gdr
		if !variant.nvlink {
			node.NVLinkBps = 0
		}
		for op := coll.AllReduce; op <= coll.Gather; op++ {
			for _, a := range []coll.Algo{coll.Ring, coll.Tree, coll.RHD, coll.Direct, coll.Binomial, coll.Hier} {
				if !coll.Supports(a, op, 12) {
					continue
				}
				name := fmt.Sprintf("%v %v nvlink %v gdr %v", op, a, variant.nvlink, variant.gdr)
				r, err := RunCollective(sc, CollConfig{Ranks: 12, Op: op, Algo: a, DType: coll.Float32, RedOp: coll.Sum, Root: 5,
					Count: 3001, ChunkSize: 2048, Node: node}, Options{})
				require.NoError(t, err, name)
				require.Zero(t, r.Wrong, name)
				require.True(t, r.Complete, name)
				require.True(t, r.Summary.AllSucceeded(), name)
				require.Positive(t, r.Summary.WRTotal, name)
				require.Equal(t, uint64(r.Summary.WRTotal), r.Summary.WRCompleted["SUCCESS"], name)
			}
		}
	}
	r, err := RunCollective(sc, CollConfig{Ranks: 12, Op: coll.AllReduce, Algo: coll.Hier, DType: coll.Float32, RedOp: coll.Sum,
		Count: 30001, ChunkSize: 2048, Node: DefaultNode(4), CorruptChunk: 4}, Options{})
	require.NoError(t, err)
	require.Positive(t, r.Wrong, "a corrupted chunk inside a node is caught")
}

// TestNodeErrors: the node model refuses what it cannot run.
func TestNodeErrors(t *testing.T) {
	sc := collScenario(t, `{"seed":5,"topology":"star:hosts=2","traffic":"incast:n=1,size=1KB"}`)
	for _, tc := range []struct {
		cfg  CollConfig
		want string
	}{
		{CollConfig{Ranks: 6, Node: DefaultNode(4)}, "roce: 6 ranks on hosts of 4 GPUs: want a multiple of 4"},
		{CollConfig{Ranks: 12, Node: DefaultNode(4)}, "scenario: topology: 2 hosts, fewer than the 3 the ranks need"},
		{CollConfig{Ranks: 8, Node: NodeSpec{GPUs: 4, PCIeBps: 0}}, "roce: NodeSpec.PCIeBps 0: want a positive rate"},
		{CollConfig{Ranks: 8, Node: NodeSpec{GPUs: 4, PCIeBps: 1e9}}, "roce: NodeSpec.HostMemBps 0: want a positive rate (chunks are staged without GPUDirect)"},
		{CollConfig{Ranks: 8, Sharp: true, Node: DefaultNode(4)}, "roce: SHARP with several GPUs per host is not modelled"},
	} {
		tc.cfg.Op, tc.cfg.DType, tc.cfg.Count = coll.AllReduce, coll.Float32, 100
		_, err := RunCollective(sc, tc.cfg, Options{})
		require.EqualError(t, err, tc.want)
	}
}

// Pipes: a transfer starts when both pipes are free and takes n over the
// slower rate; the faster pipe frees first.
func TestNodePipes(t *testing.T) {
	a, b := pipe{bps: 1e9}, pipe{bps: 2e9}
	s, e := reserve(&a, &b, 10*sim.Microsecond, 1000) // 1 us at 1 GB/s
	require.Equal(t, 10*sim.Microsecond, s)
	require.Equal(t, 11*sim.Microsecond, e)
	require.Equal(t, 11*sim.Microsecond, a.free)
	require.Equal(t, 10500*sim.Nanosecond, b.free)
	s, e = reserve(&b, &b, 0, 2000) // waits for b
	require.Equal(t, 10500*sim.Nanosecond, s)
	require.Equal(t, 11500*sim.Nanosecond, e)
}

// TestNode8x8: 8 hosts of 8 GPUs on one switch, an 8 MB float32
// all-reduce over the 64 ranks, hierarchical (coll.Hier) and ring, with
// and without NVLink and GPUDirect, on DefaultNode's machine (NVLink 450
// GB/s per GPU and direction, PCIe Gen5 x16, host memory 200 GB/s). The
// floor is the NIC's: each host's NIC sends 2(M-1)/M n over the fabric.
//   - 100 Gb/s NICs: the NIC bounds every variant; NVLink and GPUDirect
//     change the time by at most 15%.
//   - 400 Gb/s NICs (ConnectX-7 on Gen5): with NVLink and GPUDirect the
//     hierarchical all-reduce comes within 25% of the floor; without
//     NVLink the node's PCIe carries the traffic inside the node and the
//     time grows by at least 20%, without GPUDirect every chunk is staged
//     through host memory and it grows by at least 20% too.
func TestNode8x8(t *testing.T) {
	if testing.Short() {
		t.Skip("64 ranks of 8 MB, several seconds")
	}
	const M, G, n = 8, 8, 8 << 20
	type key struct {
		gbps       int
		algo       coll.Algo
		nvlink, gd bool
	}
	got := map[key]sim.Time{}
	for _, gbps := range []int{100, 400} {
		sc := collScenario(t, fmt.Sprintf(`{"seed":1,"topology":"star:hosts=8","host_gbps":%d,"traffic":"incast:n=1,size=1KB"}`, gbps))
		for _, algo := range []coll.Algo{coll.Hier, coll.Ring} {
			for _, v := range [][2]bool{{true, true}, {false, true}, {true, false}} {
				if gbps == 100 && algo == coll.Ring {
					continue
				}
				node := DefaultNode(G)
				if !v[0] {
					node.NVLinkBps = 0
				}
				node.GPUDirect = v[1]
				r, err := RunCollective(sc, CollConfig{Ranks: M * G, Op: coll.AllReduce, Algo: algo, DType: coll.Float32, RedOp: coll.Sum,
					Count: n / 4, Node: node}, Options{})
				require.NoError(t, err)
				require.Zero(t, r.Wrong)
				require.True(t, r.Complete)
				floor := 2 * float64(M-1) / M * n / (float64(gbps) / 8 * 1e9)
				t.Logf("%d Gb/s %-4v nvlink %-5v gpudirect %-5v: %8.1f us, %.2fx the NIC floor, busbw %5.1f GB/s",
					gbps, algo, v[0], v[1], r.Time.Seconds()*1e6, r.Time.Seconds()/floor, r.BusBW)
				require.Greater(t, r.Time.Seconds(), floor)
				got[key{gbps, algo, v[0], v[1]}] = r.Time
			}
		}
	}
	ratio := func(a, b key) float64 { return got[a].Seconds() / got[b].Seconds() }
	base100 := key{100, coll.Hier, true, true}
	require.Less(t, ratio(key{100, coll.Hier, false, true}, base100), 1.15)
	require.Less(t, ratio(key{100, coll.Hier, true, false}, base100), 1.15)
	base := key{400, coll.Hier, true, true}
	require.Less(t, got[base].Seconds()/(2*float64(M-1)/M*n/50e9), 1.25)
	require.Greater(t, ratio(key{400, coll.Hier, false, true}, base), 1.2)
	require.Greater(t, ratio(key{400, coll.Hier, true, false}, base), 1.2)
	require.Greater(t, ratio(key{400, coll.Ring, false, true}, key{400, coll.Ring, true, true}), 1.1)
	require.Greater(t, ratio(key{400, coll.Ring, true, false}, key{400, coll.Ring, true, true}), 1.2)
}
