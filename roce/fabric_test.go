package roce

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/topo"
	"github.com/stretchr/testify/require"
)

// runFabric parses a fabric scenario, runs it and returns the sim and its
// summary.
func runFabric(t *testing.T, js string, opt Options) (*Sim, *Summary) {
	t.Helper()
	sc, err := ParseScenario([]byte(js))
	require.NoError(t, err)
	s, err := New(sc, opt)
	require.NoError(t, err)
	sum, err := s.Run()
	require.NoError(t, err)
	require.True(t, sum.DataIntegrityOK, sum.FirstFailure)
	require.True(t, sum.CompletionOrderOK)
	require.NotNil(t, sum.FabricSummary)
	return s, sum
}

// portStats returns the summary's ports by name.
func portStats(sum *Summary) map[string]PortSummary {
	m := map[string]PortSummary{}
	for _, p := range sum.Ports {
		m[p.Port] = p
	}
	return m
}

// TestFabricLoneFlowIdeal: a flow alone on the fabric takes its ideal FCT
// (slowdown 1), through one switch and through a 3-tier fat-tree.
func TestFabricLoneFlowIdeal(t *testing.T) {
	for _, tc := range []struct{ topo, traffic string }{
		{"star:hosts=2", "incast:n=1,size=1MB"},
		{"fat-tree:k=4", "incast:n=1,size=300KB,dst=15"},
		{"fat-tree:k=4", "incast:n=1,size=5MB,dst=15"},
	} {
		_, sum := runFabric(t, fmt.Sprintf(`{"seed":1,"topology":%q,"traffic":%q}`, tc.topo, tc.traffic), Options{})
		require.Equal(t, 1, sum.FlowsCompleted)
		require.Len(t, sum.FCTSlowdown, 1)
		sd := sum.FCTSlowdown[0].P50
		require.InDelta(t, 1.0, sd, 0.01, "%s %s: slowdown %v", tc.topo, tc.traffic, sd)
	}
}

// TestFabricIncastGoodput: an N:1 incast's aggregate goodput is within a
// few percent of the bottleneck: 100 Gb/s less the headers of 4096-byte
// packets (58 bytes of Ethernet, IPv4, UDP, BTH and ICRC each).
func TestFabricIncastGoodput(t *testing.T) {
	_, sum := runFabric(t, `{"seed":3,"topology":"star:hosts=9","traffic":"incast:n=8,size=2MB"}`, Options{})
	require.Equal(t, 8, sum.FlowsCompleted)
	line := 100 * 4096.0 / (4096 + 58)
	require.InEpsilon(t, line, sum.GoodputGbps, 0.03, "goodput %.2f Gb/s, bottleneck payload rate %.2f", sum.GoodputGbps, line)
}

// TestFabricLosslessIncast: a 16:1 incast through one switch with a small
// buffer is lossless with PFC (pauses sent, no drop, every flow complete),
// and without PFC drops frames that RC then recovers.
func TestFabricLosslessIncast(t *testing.T) {
	base := `{"seed":5,"topology":"star:hosts=17","traffic":"incast:n=16,size=1MB","fabric":{"buffer_bytes":1000000%s},"flow":{"timeout":8}}`
	_, sum := runFabric(t, fmt.Sprintf(base, ""), Options{})
	require.Equal(t, 16, sum.FlowsCompleted)
	require.Positive(t, sum.PFCPauses)
	for k, v := range sum.Drops {
		require.Zero(t, v, "drops %s", k)
	}
	require.Zero(t, sum.Retransmissions)

	_, sum = runFabric(t, fmt.Sprintf(base, `,"pfc":false`), Options{})
	require.Zero(t, sum.PFCPauses)
	require.Positive(t, sum.Drops["queue"]+sum.Drops["buffer"], "drops: %v", sum.Drops)
	require.Positive(t, sum.Retransmissions)
	require.Equal(t, 16, sum.FlowsCompleted, "RC recovers every flow")
}

// TestFabricPausesPropagate: an incast into one leaf of a leaf-spine
// fabric with small buffers pauses the spine, which pauses the other
// leaves, which pause their hosts: PFC spreads hop by hop upstream.
func TestFabricPausesPropagate(t *testing.T) {
	s, sum := runFabric(t, `{"seed":2,"topology":"leaf-spine:leaves=3,spines=1,hosts=8",
		"traffic":"incast:n=23,size=300KB","fabric":{"buffer_bytes":600000},"flow":{"timeout":8}}`, Options{})
	require.Equal(t, 23, sum.FlowsCompleted)
	for k, v := range sum.Drops {
		require.Zero(t, v, "drops %s", k)
	}
	tp := s.fab.topo
	sent := map[string]uint64{} // pauses sent, by (switch tier -> peer tier)
	for _, p := range sum.Ports {
		if p.PausesSent == 0 {
			continue
		}
		from := strings.Split(p.Port, "/")[0]
		id, ok := tp.Lookup(strings.Split(p.Peer, "/")[0])
		require.True(t, ok, p.Peer)
		to := "host"
		if tp.Node(id).Kind == topo.Switch {
			to = p.Peer[:1]
		}
		sent[from[:1]+"->"+to] += p.PausesSent
	}
	require.Positive(t, sent["l->s"], "the destination leaf pauses the spine: %v", sent)
	require.Positive(t, sent["s->l"], "the spine pauses the other leaves: %v", sent)
	require.Positive(t, sent["l->host"], "the leaves pause their hosts: %v", sent)
}

// TestFabricECMPSpread: 64 flows from the hosts of one leaf to the hosts
// of another spread over the 4 spines. Each flow picks a spine by its hash:
// the counts are Binomial(64, 1/4), mean 16, sd 3.5; every spine carries
// between 6 and 26 flows (about 3 sd).
func TestFabricECMPSpread(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	fmt.Fprintln(&b, 64)
	for i := 0; i < 64; i++ {
		fmt.Fprintf(&b, "%d %d 3 100 %d 0\n", i, 64+i, 100000)
	}
	flows := filepath.Join(dir, "flows.txt")
	require.NoError(t, os.WriteFile(flows, []byte(b.String()), 0o644))
	s, sum := runFabric(t, fmt.Sprintf(`{"seed":1,"topology":"leaf-spine:leaves=2,spines=4,hosts=64","traffic":%q}`, flows), Options{})
	require.Equal(t, 64, sum.FlowsCompleted)
	ports := portStats(sum)
	var total uint64
	for sp := 0; sp < 4; sp++ {
		// The spine's port toward leaf 1 carries the data of its flows.
		id, _ := tp(s).Lookup(fmt.Sprintf("s%d", sp))
		var down PortSummary
		for pt := 0; pt < tp(s).NumPorts(id); pt++ {
			if tp(s).Node(tp(s).Neighbor(id, topo.Port(pt))).Name == "l1" {
				down = ports[fmt.Sprintf("s%d/%d", sp, pt)]
			}
		}
		n := down.Bytes / (100000 + 25*58) // bytes per flow on the wire, about
		require.GreaterOrEqual(t, n, uint64(6), "spine %d: %d flows", sp, n)
		require.LessOrEqual(t, n, uint64(26), "spine %d: %d flows", sp, n)
		total += down.Bytes
	}
	require.InEpsilon(t, 64*(100000+25*58), float64(total), 0.03)
}

func tp(s *Sim) *topo.Topology { return s.fab.topo }

// TestFabricLinkDown: an aggregation uplink of the source's edge switch
// dies at once. With routing converging at once, no frame is lost on it;
// with 20 us to converge, frames die on it until then and RC recovers.
func TestFabricLinkDown(t *testing.T) {
	base := `{"seed":1,"topology":"fat-tree:k=4","traffic":"all-to-all:size=200KB","flow":{"timeout":8},
		"fabric":{"convergence_ns":%d},"links":[{"a":"e0.0","b":"a0.0","dead":[{"from_ns":0}]}]}`
	_, sum := runFabric(t, fmt.Sprintf(base, 0), Options{})
	require.Equal(t, 240, sum.FlowsCompleted)
	require.Equal(t, 1, sum.Reroutes)
	require.Zero(t, sum.Drops["dead"])
	_, sum = runFabric(t, fmt.Sprintf(base, 20000), Options{})
	require.Equal(t, 240, sum.FlowsCompleted)
	require.Positive(t, sum.Drops["dead"])
}

// TestFabricValiant: on a Dragonfly, Valiant routing sends a flow between
// two groups through a third; minimal routing never leaves the two.
func TestFabricValiant(t *testing.T) {
	flows := filepath.Join(t.TempDir(), "flow.txt")
	// Host 0 (group 0) to host 8 (group 1).
	require.NoError(t, os.WriteFile(flows, []byte("1\n0 8 3 100 200000 0\n"), 0o644))
	for _, routing := range []string{"minimal", "valiant"} {
		s, sum := runFabric(t, fmt.Sprintf(`{"seed":1,"topology":"dragonfly:a=4,p=2,h=2",
			"traffic":%q,"fabric":{"routing":%q}}`, flows, routing), Options{})
		require.Equal(t, 1, sum.FlowsCompleted)
		df, ok := tp(s).Dragonfly()
		require.True(t, ok)
		third := uint64(0)
		for _, p := range sum.Ports {
			id, ok := tp(s).Lookup(strings.Split(p.Port, "/")[0])
			if !ok || tp(s).Node(id).Kind != topo.Switch {
				continue
			}
			if g, _ := df.RouterOf(id); g != 0 && g != 1 {
				third += p.Bytes
			}
		}
		if routing == "minimal" {
			require.Zero(t, third)
		} else {
			require.Greater(t, third, uint64(200000))
		}
	}
}

// TestFabricDeterministic: the same seed gives byte-identical traces and
// summaries; another seed another permutation.
func TestFabricDeterministic(t *testing.T) {
	js := `{"seed":%d,"topology":"fat-tree:k=4","traffic":"permutation:size=100KB","fabric":{"buffer_bytes":400000}}`
	run := func(seed int) ([]byte, []byte) {
		var tr bytes.Buffer
		_, sum := runFabric(t, fmt.Sprintf(js, seed), Options{Trace: &tr, TraceFormat: pcap.FormatPcapng, TraceLinks: "all"})
		sum.WallSeconds, sum.EventsPerSecond, sum.PacketsPerSecond, sum.DataPacketsPerSecond = 0, 0, 0, 0
		return tr.Bytes(), sum.JSON()
	}
	t1, s1 := run(7)
	t2, s2 := run(7)
	require.Equal(t, s1, s2)
	require.True(t, bytes.Equal(t1, t2), "traces differ")
	require.Greater(t, len(t1), 16*100000)
	_, s3 := run(8)
	require.NotEqual(t, s1, s3)
}

// TestFabricHPCCFiles: a topology of the shape of HPCC's fat.txt (320
// hosts, 56 switches, 480 links) in their file format, with a small flow
// file in theirs, runs and completes.
func TestFabricHPCCFiles(t *testing.T) {
	dir := t.TempDir()
	var b topo.Builder
	hosts := make([]topo.NodeID, 320)
	for i := range hosts {
		hosts[i] = b.AddHost(fmt.Sprint(i))
	}
	var sw [56]topo.NodeID
	for i := range sw {
		sw[i] = b.AddSwitch(fmt.Sprint(320 + i))
	}
	for h := 0; h < 320; h++ {
		b.Connect(hosts[h], sw[h/16], 100e9, sim.Microsecond)
	}
	for pod := 0; pod < 5; pod++ {
		for tr := 0; tr < 4; tr++ {
			for a := 0; a < 4; a++ {
				b.Connect(sw[pod*4+tr], sw[20+pod*4+a], 400e9, sim.Microsecond)
			}
		}
		for a := 0; a < 4; a++ {
			for c := 0; c < 4; c++ {
				b.Connect(sw[20+pod*4+a], sw[40+a*4+c], 400e9, sim.Microsecond)
			}
		}
	}
	tpl, err := b.Build()
	require.NoError(t, err)
	var tf bytes.Buffer
	require.NoError(t, topo.WriteNS3(&tf, tpl))
	require.True(t, strings.HasPrefix(tf.String(), "376 56 480\n"))
	topoFile := filepath.Join(dir, "fat.txt")
	require.NoError(t, os.WriteFile(topoFile, tf.Bytes(), 0o644))
	flowFile := filepath.Join(dir, "flow.txt")
	require.NoError(t, os.WriteFile(flowFile, []byte("4\n0 319 3 100 100000 2.0\n17 200 3 100 50000 2.00001\n300 5 3 100 2000000 2.00002\n64 65 3 100 1000 2.00003\n"), 0o644))
	s, sum := runFabric(t, fmt.Sprintf(`{"seed":1,"topology":%q,"traffic":%q}`, topoFile, flowFile), Options{})
	require.Equal(t, 320, sum.Hosts)
	require.Equal(t, 56, sum.Switches)
	require.Equal(t, 480, sum.Links)
	require.Equal(t, 4, sum.FlowsCompleted)
	fl := s.Flows()
	require.Equal(t, "0", fl[0].Src)
	require.Equal(t, "319", fl[0].Dst)
	require.Equal(t, int64(100000), fl[0].Size)
	require.Equal(t, sim.FromSeconds(2.00002), fl[2].Start)
	for _, f := range fl {
		require.InDelta(t, 1.0, f.Slowdown, 0.02, "flow %d alone on the fabric", f.Flow)
	}
}

// TestFabricSummaryKeys: --json has the fabric's keys beside the others.
func TestFabricSummaryKeys(t *testing.T) {
	_, sum := runFabric(t, `{"seed":1,"topology":"star:hosts=3","traffic":"incast:n=2,size=64KB"}`, Options{})
	var m map[string]any
	require.NoError(t, json.Unmarshal(sum.JSON(), &m))
	for _, k := range []string{"flows", "flows_completed", "data_packets", "fct_slowdown", "pfc_pauses", "ecn_marks",
		"max_queue_bytes", "drops", "ports", "wr_completed", "goodput_gbps"} {
		require.Contains(t, m, k)
	}
	require.EqualValues(t, 2, m["flows"])
	// A scenario that is not a fabric has none of them.
	s, err := New(DefaultScenario().withMessages(1), Options{})
	require.NoError(t, err)
	plain, err := s.Run()
	require.NoError(t, err)
	m = nil
	require.NoError(t, json.Unmarshal(plain.JSON(), &m))
	require.NotContains(t, m, "flows")
	require.NotContains(t, m, "ports")
}

func (sc *Scenario) withMessages(n int64) *Scenario {
	sc.QPs[0].Work.Count = n
	return sc
}

// TestFabricSamples: the queue and rate samples come at the interval, and
// the flows' rates add up to the bytes they sent.
func TestFabricSamples(t *testing.T) {
	var q, r bytes.Buffer
	_, sum := runFabric(t, `{"seed":1,"topology":"star:hosts=3","traffic":"incast:n=2,size=500KB"}`,
		Options{SampleQueues: &q, SampleRates: &r, SampleInterval: 10 * sim.Microsecond})
	ql := strings.Split(strings.TrimSpace(q.String()), "\n")
	require.Equal(t, "time_ns,port,queue_bytes", ql[0])
	require.Equal(t, "10000,s0/0,", ql[1][:len("10000,s0/0,")])
	samples := int(sum.SimTimeNS / 10000)
	require.InDelta(t, 3*samples, len(ql)-1, 3, "3 switch ports per sample")
	rl := strings.Split(strings.TrimSpace(r.String()), "\n")
	require.Equal(t, "time_ns,flow,gbps", rl[0])
	var bits float64
	for _, l := range rl[1:] {
		var tns, fl int
		var gbps float64
		_, err := fmt.Sscanf(strings.ReplaceAll(l, ",", " "), "%d %d %g", &tns, &fl, &gbps)
		require.NoError(t, err, l)
		require.LessOrEqual(t, gbps, 100.0+4154*8/10e-6/1e9, "at most a frame more than the line rate in an interval")
		bits += gbps * 1e9 * 10e-6
	}
	// Payload sent is 2 x 500,000 bytes; the last partial interval may be
	// missing from the samples.
	require.InEpsilon(t, 2*500000*8, bits, 0.15)
}

// TestFabricScenarioErrors: a fabric scenario's mistakes are named by key.
func TestFabricScenarioErrors(t *testing.T) {
	for _, tc := range []struct{ js, want string }{
		{`{"topology":"fat-tree:k=3","traffic":"permutation:size=1MB"}`, "scenario: topology: "},
		{`{"topology":"ring:n=3","traffic":"permutation:size=1MB"}`, `unknown kind "ring"`},
		{`{"topology":"star:hosts=3"}`, "scenario: traffic: missing"},
		{`{"topology":"star:hosts=3","traffic":"incast:n=5,size=1MB"}`, "scenario: traffic: "},
		{`{"topology":"star:hosts=3","traffic":"permutation:size=1MB","hosts":[{"name":"a"}]}`, "scenario: hosts: a fabric scenario"},
		{`{"topology":"star:hosts=3","traffic":"permutation:size=1MB","fabric":{"routing":"valiant"}}`, "fabric.routing: \"valiant\" needs a Dragonfly"},
		{`{"topology":"star:hosts=3","traffic":"permutation:size=1MB","fabric":{"ecn":{"kmin_bytes":5,"kmax_bytes":1,"pmax":0.1}}}`, "fabric.ecn: want 0 <= kmin_bytes <= kmax_bytes"},
		{`{"topology":"star:hosts=3","traffic":"permutation:size=1MB","links":[{"a":"h0","b":"h1"}]}`, `links[0]: the topology has no link between "h0" and "h1"`},
		{`{"topology":"star:hosts=3","traffic":"permutation:size=1MB","links":[{"a":"h0","b":"s0","bandwidth_gbps":5}]}`, "links[0]: bandwidth_gbps and delay_ns come from the topology"},
		{`{"topology":"star:hosts=3","traffic":"permutation:size=1MB","flow":{"mtu":1000}}`, "flow.mtu: 1000"},
		{`{"topology":"star:hosts=3","traffic":"permutation:size=1MB","flow":{"op":"atomic"}}`, `flow.op: "atomic"`},
		{`{"topology":"no/such/file.txt","traffic":"permutation:size=1MB"}`, `topology: "no/such/file.txt": no such file`},
		{`{"hosts":[{"name":"a"}],"links":[],"qps":[],"traffic":"permutation:size=1MB"}`, "scenario: topology: missing"},
	} {
		_, err := ParseScenario([]byte(tc.js))
		require.Error(t, err, tc.js)
		require.Contains(t, err.Error(), tc.want, tc.js)
	}
}

// TestFabricMemoryFollowsRunningFlows: flows take their buffers when they
// start and give them back when they finish, so 50 flows one after the
// other hold one flow's buffers at a time, and the pool's buffers are
// reused.
func TestFabricMemoryFollowsRunningFlows(t *testing.T) {
	var b strings.Builder
	fmt.Fprintln(&b, 50)
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&b, "%d %d 3 100 100000 %.6f\n", i%4, 4+i%4, float64(i)*100e-6)
	}
	flows := filepath.Join(t.TempDir(), "flows.txt")
	require.NoError(t, os.WriteFile(flows, []byte(b.String()), 0o644))
	s, sum := runFabric(t, fmt.Sprintf(`{"seed":1,"topology":"star:hosts=8","traffic":%q}`, flows), Options{})
	require.Equal(t, 50, sum.FlowsCompleted)
	one := int64(slotSize(100000)) // one WR of 100,000 bytes: one slot
	require.Equal(t, one, s.fab.bufs.peak)
	require.Zero(t, s.fab.bufs.bytes)
	require.Len(t, s.fab.bufs.free[int(one)], 1, "one buffer, reused by every flow")
}

// TestFabricTrafficSum: patterns joined by "+" run together, each drawn
// with its own seed, their flows ordered by start time.
func TestFabricTrafficSum(t *testing.T) {
	s, sum := runFabric(t, `{"seed":3,"topology":"star:hosts=6","traffic":"permutation:size=100KB+incast:n=2,size=50KB,start=20us+permutation:size=10KB"}`, Options{})
	require.Equal(t, 6+2+6, sum.Flows)
	require.Equal(t, sum.Flows, sum.FlowsCompleted)
	fl := s.Flows()
	var big, small []string
	for i, f := range fl {
		if i > 0 {
			require.LessOrEqual(t, fl[i-1].Start, f.Start)
		}
		switch f.Size {
		case 100000:
			big = append(big, f.Src+">"+f.Dst)
		case 10000:
			small = append(small, f.Src+">"+f.Dst)
		case 50000:
			require.Equal(t, 20*sim.Microsecond, f.Start)
			require.Equal(t, "h0", f.Dst)
		}
	}
	require.Len(t, big, 6)
	require.NotEqual(t, big, small, "the two permutations are drawn with different seeds")
	_, err := ParseScenario([]byte(`{"topology":"star:hosts=3","traffic":"permutation:size=1MB+bogus:x=1"}`))
	require.ErrorContains(t, err, `scenario: traffic: spec "bogus:x=1": unknown pattern "bogus"`)
}
