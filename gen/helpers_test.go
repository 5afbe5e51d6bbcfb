package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/roce"
	"github.com/rocekit/rocekit/sim"
)

// mixScenarioJSON exercises every operation the simulator generates (SEND,
// WRITE, READ, FetchAdd, CmpSwap) with sizes from 1 byte to three MTUs, so
// that every First/Middle/Last/Only opcode, pad counts 0-3 and READs of
// several responses appear.
const mixScenarioJSON = `{"seed": 7, "hosts": [{"name": "a"}, {"name": "b"}],
 "links": [{"a": "a", "b": "b", "bandwidth_gbps": 100, "delay_ns": 500}],
 "qps": [{"from": "a", "to": "b", "mtu": 1024, "outstanding": 4, "sq_psn": 16777200,
          "work": {"op": "mix", "count": 40, "size": 1, "size_max": 3000}}]}`

var (
	srcOnce  sync.Map
	srcMutex sync.Mutex
)

// cachedSource builds a source once per key.
func cachedSource(t testing.TB, key string, mk func() (*Source, error)) *Source {
	t.Helper()
	srcMutex.Lock()
	defer srcMutex.Unlock()
	if s, ok := srcOnce.Load(key); ok {
		return s.(*Source)
	}
	s, err := mk()
	require.NoError(t, err)
	srcOnce.Store(key, s)
	return s
}

func mixSource(t testing.TB) *Source {
	return mixSourceEncap(t, packet.RoCEv2IPv4)
}

func mixSourceEncap(t testing.TB, e packet.Encap) *Source {
	return cachedSource(t, "mix "+e.String(), func() (*Source, error) {
		sc, err := roce.ParseScenario([]byte(mixScenarioJSON))
		if err != nil {
			return nil, err
		}
		return FromScenario(sc, ScenarioOptions{Encap: e})
	})
}

// udPacketsJSON is a packet list of RC traffic with UD SENDs among it, for
// wrong-qkey (the RC QP drops UD opcodes whatever their Q_Key).
const udPacketsJSON = `{"dut": {"qps": [{"recv_wqes": 4}]}, "packets": [
 {"opcode": "RC_SEND_ONLY", "payload": {"len": 33, "pattern": "incr"}},
 {"opcode": "UD_SEND_ONLY", "deth": {"qkey": "0x11111111"}, "payload": {"len": 20, "pattern": "random"}, "bth": {"ack_req": false}},
 {"opcode": "RC_RDMA_WRITE_ONLY", "payload": {"len": 64, "pattern": "0xab"}},
 {"opcode": "UD_SEND_ONLY_WITH_IMMEDIATE", "deth": {"qkey": 7}, "immdt": {"imm": 5}, "payload": "0102"},
 {"opcode": "RC_SEND_ONLY", "payload": "ff"}
]}`

func udSource(t testing.TB) *Source {
	return cachedSource(t, "ud", func() (*Source, error) { return ParsePackets([]byte(udPacketsJSON)) })
}

// got is a whole generation, copied out of the sink.
type got struct {
	in, out []Frame
	res     *Result
}

func collect(t testing.TB, src *Source, opt Options) *got {
	t.Helper()
	g := &got{}
	res, err := Generate(src, opt, SinkFunc(func(f *Frame) error {
		c := *f
		c.Data = bytes.Clone(f.Data)
		c.Completions = slices.Clone(f.Completions)
		if f.Stream == In {
			g.in = append(g.in, c)
		} else {
			g.out = append(g.out, c)
		}
		return nil
	}))
	require.NoError(t, err)
	g.res = res
	return g
}

// writeCapture writes frames to a classic pcap at path.
func writeCapture(t testing.TB, path string, src *Source, frames []Frame) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pcap.NewWriter(f, pcap.FormatPcap, LinkType(src.DUT.Encap))
	require.NoError(t, err)
	for i := range frames {
		require.NoError(t, w.WritePacket(time.Unix(0, int64(frames[i].Time/sim.Nanosecond)), frames[i].Data))
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}

// merged is both streams in time order, as a capture at the DUT's port
// would hold them (an output never precedes the input that caused it).
func (g *got) merged() []Frame {
	all := append(slices.Clone(g.in), g.out...)
	seq := func(f *Frame) int { // causal position
		if f.Stream == In {
			return 2 * f.Index
		}
		return 2*f.Cause + 1
	}
	sort.SliceStable(all, func(i, j int) bool {
		if all[i].Time != all[j].Time {
			return all[i].Time < all[j].Time
		}
		return seq(&all[i]) < seq(&all[j])
	})
	return all
}

func tempPath(t testing.TB, name string) string { return filepath.Join(t.TempDir(), name) }

// frameOf returns the index of the first input frame carrying fault kind k.
func (g *got) faulted(k Kind) []int {
	var r []int
	for i := range g.in {
		if f := g.in[i].Fault; f != nil && f.Kind == k {
			r = append(r, i)
		}
	}
	return r
}

// completionsOK: every completion is well formed.
func completionsOK(cs []rc.Completion) bool {
	for _, c := range cs {
		if !c.Opcode.IsRecv() {
			return false
		}
	}
	return true
}
