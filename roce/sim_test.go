package roce

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/sim"
)

func u8(v uint8) *uint8 { return &v }
func intp(v int) *int   { return &v }

type tb interface {
	require.TestingT
	Helper()
}

func run(t tb, sc *Scenario, opt Options) *Summary {
	t.Helper()
	s, err := New(sc, opt)
	require.NoError(t, err)
	sum, err := s.Run()
	require.NoError(t, err)
	return sum
}

// twoHosts is a and b on one link (through a switch when sw is set) with
// faults on both directions, and one QP entry from a to b.
func twoHosts(sw bool, f *FaultSpec, q QPSpec) *Scenario {
	sc := &Scenario{Seed: 1, Hosts: []HostSpec{{Name: "a"}, {Name: "b"}}}
	if sw {
		sc.Switch = &SwitchSpec{Name: "sw", QueueBytes: 256 << 10, ECNBytes: 16 << 10}
		sc.Links = []LinkSpec{
			{A: "a", B: "sw", BandwidthGbps: 100, DelayNS: 500, Faults: f},
			{A: "sw", B: "b", BandwidthGbps: 25, DelayNS: 500, Faults: f},
		}
	} else {
		sc.Links = []LinkSpec{{A: "a", B: "b", BandwidthGbps: 100, DelayNS: 1000, Faults: f}}
	}
	q.From, q.To = "a", "b"
	sc.QPs = []QPSpec{q}
	return sc
}

// TestPropertyRandomScenarios: over random scenarios — loss, reordering,
// duplication and corruption up to 20% each way, sometimes burst loss and a
// switch with a small queue and ECN marking, random MTUs, message sizes, op
// mixes or explicit WR lists, outstanding depths, windows, ORD/IRD, receive
// depths with late re-posting (RNR NAKs), and starting PSNs near 2^24 —
// every work request completes exactly once, in posting order, with
// SUCCESS, every receive succeeds, and every byte checks out.
func TestPropertyRandomScenarios(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := func(name string) float64 {
			if !rapid.Bool().Draw(t, name+"?") {
				return 0
			}
			return rapid.Float64Range(0, 0.2).Draw(t, name)
		}
		f := &FaultSpec{Loss: p("loss"), Reorder: p("reorder"), Duplicate: p("duplicate"), Corrupt: p("corrupt")}
		if f.Reorder > 0 {
			f.ReorderDelayNS = rapid.Float64Range(1, 20000).Draw(t, "reorder_delay")
		}
		if rapid.Bool().Draw(t, "burst?") {
			f.Burst = &BurstSpec{PGoodBad: rapid.Float64Range(0, 0.05).Draw(t, "p_gb"),
				PBadGood: rapid.Float64Range(0.2, 1).Draw(t, "p_bg"), LossBad: rapid.Float64Range(0, 1).Draw(t, "loss_bad")}
		}
		ord := rapid.IntRange(1, 16).Draw(t, "ord")
		outstanding := rapid.IntRange(1, 8).Draw(t, "outstanding")
		q := QPSpec{
			MTU:               rapid.SampledFrom([]int{256, 512, 1024, 2048, 4096}).Draw(t, "mtu"),
			Timeout:           u8(uint8(rapid.IntRange(5, 9).Draw(t, "timeout"))),
			RetryCnt:          u8(7),
			RetryCnt7Infinite: true,
			RNRRetry:          u8(7),
			MinRNRTimer:       u8(uint8(rapid.IntRange(1, 6).Draw(t, "min_rnr"))),
			ORD:               intp(ord),
			IRD:               intp(ord + rapid.IntRange(0, 4).Draw(t, "ird_extra")),
			SQPSN:             uint32(1<<24 - 1 - rapid.IntRange(0, 400).Draw(t, "psn_below_2^24")),
			RQPSN:             uint32(rapid.IntRange(0, 1<<24-1).Draw(t, "rq_psn")),
			Window:            rapid.SampledFrom([]uint32{0, 8, 128}).Draw(t, "window"),
			Outstanding:       outstanding,
			RecvDepth:         rapid.IntRange(1, outstanding).Draw(t, "recv_depth"),
		}
		if rapid.Bool().Draw(t, "late_repost") {
			q.RecvRepostDelayNS = rapid.Float64Range(0, 30000).Draw(t, "repost_delay")
		}
		count := int64(rapid.IntRange(1, 25).Draw(t, "count"))
		if rapid.Bool().Draw(t, "list") {
			n := rapid.IntRange(1, 6).Draw(t, "wrs")
			for i := 0; i < n; i++ {
				q.Work.WRs = append(q.Work.WRs, WRSpec{
					Op:   rapid.SampledFrom([]string{"write", "send", "read", "fetch_add", "cmp_swap"}).Draw(t, "wr_op"),
					Size: rapid.IntRange(0, 20000).Draw(t, "wr_size"),
				})
			}
			q.Work.Count = count
		} else {
			q.Work = WorkSpec{
				Op:    rapid.SampledFrom([]string{"write", "send", "read", "atomic", "mix"}).Draw(t, "op"),
				Count: count,
				Size:  rapid.IntRange(0, 20000).Draw(t, "size"),
			}
			q.Work.SizeMax = q.Work.Size + rapid.IntRange(0, 5000).Draw(t, "size_spread")
		}
		sw := rapid.Bool().Draw(t, "switch")
		sc := twoHosts(sw, f, q)
		sc.Seed = rapid.Uint64().Draw(t, "seed")
		sc.StopNS = 60e9 // a stall would show as incomplete
		require.NoError(t, sc.Validate())

		sum := run(t, sc, Options{})
		require.True(t, sum.Complete, "not all WRs completed by %v ns: %s", sum.SimTimeNS, sum.JSON())
		assert.Equal(t, count, sum.WRPosted)
		assert.Equal(t, map[string]uint64{"SUCCESS": uint64(count)}, sum.WRCompleted, "statuses")
		for k := range sum.RecvCompleted {
			assert.Equal(t, "SUCCESS", k, "receive statuses %v", sum.RecvCompleted)
		}
		assert.True(t, sum.CompletionOrderOK, "completion order")
		assert.True(t, sum.DataIntegrityOK, "data integrity: %s", sum.FirstFailure)
		assert.Equal(t, uint64(count), sum.Latency.Count)
		if f.Corrupt == 0 {
			assert.Zero(t, sum.ICRCErrors)
		}
	})
}

// A dead link fails the first WR with RETRY_EXC_ERR after retry_cnt+1
// timeouts (the first transmission's and one per retry); every later WR is
// flushed.
func TestDeadLinkRetryExceeded(t *testing.T) {
	for _, retry := range []uint8{0, 1, 3, 7} {
		t.Run(fmt.Sprintf("retry_cnt=%d", retry), func(t *testing.T) {
			sc := twoHosts(false, nil, QPSpec{Timeout: u8(5), RetryCnt: u8(retry), Outstanding: 4,
				Work: WorkSpec{Op: "mix", Count: 10, Size: 5000}})
			sc.Links[0].Dead = []DeadSpec{{FromNS: 0}}
			sum := run(t, sc, Options{})
			require.True(t, sum.Complete)
			assert.Equal(t, map[string]uint64{"SUCCESS": 0, "RETRY_EXC_ERR": 1, "WR_FLUSH_ERR": 9}, sum.WRCompleted)
			assert.Equal(t, uint64(retry)+1, sum.Timeouts)
			assert.True(t, sum.CompletionOrderOK)
			assert.True(t, sum.DataIntegrityOK)
			assert.NotZero(t, sum.Network.Drops["dead"])
			// The requester gave up after retry_cnt+1 local ACK timeouts of
			// 4.096 us x 2^5 each.
			assert.InDelta(t, float64(retry+1)*131.072e3, sum.SimTimeNS, 2e3)
		})
	}
}

// A link that dies after some WRs have completed: those succeed, the one
// in progress fails with RETRY_EXC_ERR, the rest are flushed.
func TestDeadLinkMidway(t *testing.T) {
	sc := twoHosts(false, nil, QPSpec{Timeout: u8(6), RetryCnt: u8(2), Outstanding: 2,
		Work: WorkSpec{Op: "write", Count: 50, Size: 64 << 10}})
	sc.Links[0].Dead = []DeadSpec{{FromNS: 50e3, Dir: "b_to_a"}} // ACKs lost from 50 us on
	sum := run(t, sc, Options{})
	require.True(t, sum.Complete)
	ok := sum.WRCompleted["SUCCESS"]
	assert.Greater(t, ok, uint64(0))
	assert.Equal(t, uint64(1), sum.WRCompleted["RETRY_EXC_ERR"])
	assert.Equal(t, 50-ok-1, sum.WRCompleted["WR_FLUSH_ERR"])
	assert.Equal(t, uint64(3), sum.Timeouts)
	assert.True(t, sum.DataIntegrityOK)
	assert.True(t, sum.CompletionOrderOK)
}

// detScenario exercises every fault, the switch with ECN marking, RNR NAKs
// and all operations.
func detScenario(seed uint64) *Scenario {
	f := &FaultSpec{Loss: 0.02, Reorder: 0.02, ReorderDelayNS: 3000, Duplicate: 0.02, Corrupt: 0.01,
		Burst: &BurstSpec{PGoodBad: 0.005, PBadGood: 0.5, LossBad: 1}}
	sc := twoHosts(true, f, QPSpec{MTU: 1024, Timeout: u8(7), Outstanding: 6, RecvDepth: 2, RecvRepostDelayNS: 5000,
		MinRNRTimer: u8(1), SQPSN: 1<<24 - 50, Work: WorkSpec{Op: "mix", Count: 60, Size: 1, SizeMax: 9000}})
	sc.QPs[0].Count = 3
	sc.Seed = seed
	return sc
}

// The same seed gives a byte-identical trace, in both formats; another
// seed a different one.
func TestDeterministicTrace(t *testing.T) {
	for _, format := range []pcap.Format{pcap.FormatPcap, pcap.FormatPcapng} {
		trace := func(seed uint64) ([]byte, *Summary) {
			var b bytes.Buffer
			sum := run(t, detScenario(seed), Options{Trace: &b, TraceFormat: format})
			require.True(t, sum.Complete)
			require.True(t, sum.DataIntegrityOK, sum.FirstFailure)
			return b.Bytes(), sum
		}
		a, sa := trace(7)
		b, sb := trace(7)
		c, _ := trace(8)
		assert.True(t, bytes.Equal(a, b), "%v: same seed, different traces", format)
		assert.False(t, bytes.Equal(a, c), "%v: different seeds, same trace", format)
		sa.WallSeconds, sb.WallSeconds, sa.EventsPerSecond, sb.EventsPerSecond = 0, 0, 0, 0
		sa.PacketsPerSecond, sb.PacketsPerSecond, sa.DataPacketsPerSecond, sb.DataPacketsPerSecond = 0, 0, 0, 0
		assert.Equal(t, sa, sb)
		// The scenario did what it is for.
		assert.NotZero(t, sa.ICRCErrors, "corrupted frames dropped by the ICRC check")
		assert.NotZero(t, sa.RNRNAKs)
		assert.NotZero(t, sa.Network.ECNMarked)
		assert.NotZero(t, sa.ECNCEReceived, "CE-marked frames arrive and pass the ICRC check")
		assert.LessOrEqual(t, sa.ECNCEReceived, sa.Network.ECNMarked+sa.Network.Duplicated)
	}
}

// Every frame of a trace decodes as RoCEv2/IPv4 with a valid ICRC,
// including those the switch marked CE. (The trace shows frames as they go
// onto each wire, so with corruption on the first hop a corrupted frame the
// switch forwards would show, bad ICRC and all, on the second: this
// scenario corrupts nothing.)
func TestTraceFramesValid(t *testing.T) {
	var b bytes.Buffer
	sc := detScenario(3)
	for i := range sc.Links {
		sc.Links[i].Faults.Corrupt = 0
	}
	sum := run(t, sc, Options{Trace: &b, TraceFormat: pcap.FormatPcapng})
	r, err := pcap.NewReader(&b)
	require.NoError(t, err)
	var f packet.Frame
	frames, ce := 0, 0
	ifaces := map[int]bool{}
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		frames++
		ifaces[rec.Interface] = true
		require.NoError(t, f.DecodeRecord(rec), "frame %d", rec.Index)
		require.Equal(t, packet.RoCEv2IPv4, f.Encap)
		ok, _, _, err := f.CheckICRC()
		require.NoError(t, err)
		require.True(t, ok, "frame %d ICRC", rec.Index)
		require.Equal(t, f.IPv4.ComputeChecksum(), f.IPv4.Checksum(), "frame %d IPv4 checksum", rec.Index)
		if f.IPv4.ECN() == 3 {
			ce++
		}
	}
	assert.Equal(t, int(sum.Network.FramesOnWire), frames)
	assert.Equal(t, map[int]bool{0: true, 1: true}, ifaces, "one pcapng interface per link")
	assert.NotZero(t, ce)
}

func TestMarkCE(t *testing.T) {
	ff := packet.DefaultFrame(packet.RoCEv2IPv4)
	ff.Transport.BTH.Opcode = 0x04 // RC SEND Only
	ff.Transport.Payload = []byte("hello")
	ff.Transport.SetPad()
	for _, vlans := range [][]packet.VLANFields{nil, {{VID: 5}}, {{VID: 1}, {VID: 2}}} {
		ff.Eth.VLANs = vlans
		buf := make([]byte, ff.Len())
		_, err := ff.Encode(buf)
		require.NoError(t, err)
		require.True(t, MarkCE(buf))
		var f packet.Frame
		require.NoError(t, f.DecodeEthernet(buf))
		assert.Equal(t, uint8(3), f.IPv4.ECN())
		assert.Equal(t, uint8(0), f.IPv4.DSCP())
		assert.Equal(t, f.IPv4.ComputeChecksum(), f.IPv4.Checksum())
		ok, _, _, err := f.CheckICRC()
		require.NoError(t, err)
		assert.True(t, ok, "the ICRC masks the TOS byte")
		assert.False(t, MarkCE(buf), "already CE")
	}
	ff.Eth.VLANs = nil
	ff.IPv4.TOS = 0 // not ECN-capable
	buf := make([]byte, ff.Len())
	_, err := ff.Encode(buf)
	require.NoError(t, err)
	assert.False(t, MarkCE(buf))
	assert.False(t, MarkCE(buf[:20]))
	assert.False(t, MarkCE(nil))
}

// Corrupted frames are caught by the receivers' ICRC (or header) checks and
// recovered by retransmission.
func TestCorruptionCaught(t *testing.T) {
	sc := twoHosts(false, &FaultSpec{Corrupt: 0.1}, QPSpec{Timeout: u8(6), MTU: 1024,
		Work: WorkSpec{Op: "mix", Count: 200, Size: 3000}})
	sum := run(t, sc, Options{})
	require.True(t, sum.Complete)
	assert.Equal(t, uint64(200), sum.WRCompleted["SUCCESS"])
	assert.True(t, sum.DataIntegrityOK, sum.FirstFailure)
	assert.Greater(t, sum.ICRCErrors, uint64(0))
	caught := sum.ICRCErrors + sum.Malformed + sum.IPChecksumErrors + sum.Misaddressed
	assert.LessOrEqual(t, caught, sum.Network.Corrupted, "no drop without a corruption")
	t.Logf("%d corrupted: %d ICRC, %d malformed, %d IP checksum, %d misaddressed (the rest hit bits no check covers: TTL, MAC source, UDP checksum)",
		sum.Network.Corrupted, sum.ICRCErrors, sum.Malformed, sum.IPChecksumErrors, sum.Misaddressed)
}

// RNR: too few receive buffers, posted late: the responder sends RNR NAKs,
// the requester waits and retries, everything completes; with rnr_retry 0
// the first RNR NAK fails the WR.
func TestRNR(t *testing.T) {
	q := QPSpec{Outstanding: 8, RecvDepth: 1, RecvRepostDelayNS: 20000, MinRNRTimer: u8(1),
		Work: WorkSpec{Op: "send", Count: 40, Size: 2000}}
	sum := run(t, twoHosts(false, nil, q), Options{})
	require.True(t, sum.Complete)
	assert.Equal(t, uint64(40), sum.WRCompleted["SUCCESS"])
	assert.Equal(t, uint64(40), sum.RecvCompleted["SUCCESS"])
	assert.Greater(t, sum.RNRNAKs, uint64(0))
	assert.Equal(t, sum.RNRNAKs, sum.NAKs["RNR_NAK"])
	assert.True(t, sum.DataIntegrityOK, sum.FirstFailure)

	q.RNRRetry = u8(0)
	sum = run(t, twoHosts(false, nil, q), Options{})
	require.True(t, sum.Complete)
	assert.Equal(t, uint64(1), sum.WRCompleted["RNR_RETRY_EXC_ERR"])
	assert.Equal(t, uint64(40), sum.WRCompleted["SUCCESS"]+sum.WRCompleted["RNR_RETRY_EXC_ERR"]+sum.WRCompleted["WR_FLUSH_ERR"])
}

// Many QPs through a switch bottleneck: the queue fills, ECN marks, and
// drop-tail losses are recovered. (Retries are unlimited: three senders in
// lock step into a drop-tail queue lock one of them out — its frames always
// arrive just after the others' have filled the queue — and with retry_cnt
// 7 its QPs fail with RETRY_EXC_ERR, the phase effect of Floyd and Jacobson.)
func TestSwitchBottleneck(t *testing.T) {
	sc := &Scenario{
		Seed:   5,
		Hosts:  []HostSpec{{Name: "s1"}, {Name: "s2"}, {Name: "s3"}, {Name: "r"}},
		Switch: &SwitchSpec{Name: "sw", QueueBytes: 64 << 10, ECNBytes: 16 << 10},
	}
	for _, h := range []string{"s1", "s2", "s3", "r"} {
		sc.Links = append(sc.Links, LinkSpec{A: h, B: "sw", BandwidthGbps: 100, DelayNS: 500})
	}
	for _, h := range []string{"s1", "s2", "s3"} {
		sc.QPs = append(sc.QPs, QPSpec{From: h, To: "r", Count: 20, Timeout: u8(6), MTU: 4096, RetryCnt7Infinite: true,
			Work: WorkSpec{Op: "write", Count: 20, Size: 32 << 10}})
	}
	sum := run(t, sc, Options{})
	require.True(t, sum.Complete)
	assert.Equal(t, uint64(60*20), sum.WRCompleted["SUCCESS"], "%v", sum.WRCompleted)
	assert.True(t, sum.DataIntegrityOK, sum.FirstFailure)
	assert.Greater(t, sum.Network.Drops["queue"], uint64(0))
	assert.Greater(t, sum.Network.ECNMarked, uint64(0))
	assert.LessOrEqual(t, sum.Network.PeakQueue, 64<<10)
	assert.Greater(t, sum.GoodputGbps, 50.0, "the bottleneck stays busy")
}

func TestHistogram(t *testing.T) {
	var h Histogram
	assert.Zero(t, h.Quantile(0.5))
	for i := 1; i <= 100000; i++ {
		h.Record(sim.Time(i) * sim.Nanosecond)
	}
	assert.Equal(t, uint64(100000), h.Count())
	assert.Equal(t, sim.Time(50000500)*sim.Picosecond, h.Mean())
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
		want := q * 100000 * 1000
		assert.InEpsilon(t, want, float64(h.Quantile(q)), 1.0/64, "q=%v", q)
	}
	assert.Equal(t, sim.Nanosecond, h.Quantile(0))
	assert.Equal(t, 100000*sim.Nanosecond, h.Quantile(1))
	for v := uint64(0); v < 1<<20; v += 997 {
		lo, hi := histBounds(histIndex(v))
		require.True(t, lo <= v && v <= hi, "v=%d in [%d, %d]", v, lo, hi)
	}
	lo, hi := histBounds(histIndex(1<<63 - 1))
	assert.True(t, lo <= 1<<63-1 && hi >= 1<<62)
	var g Histogram
	g.Record(5 * sim.Second)
	h.Merge(&g)
	assert.Equal(t, 5*sim.Second, h.Max())
	assert.Equal(t, sim.Nanosecond, h.Min())
}

// peakHeap runs sc and returns the largest HeapInuse seen (sampled every
// 32,768 events) and the summary.
func peakHeap(t *testing.T, sc *Scenario) (uint64, *Summary) {
	runtime.GC()
	var peak uint64
	var ms runtime.MemStats
	sample := func(Progress) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse)
	}
	sum := run(t, sc, Options{Progress: sample, ProgressEvery: 1 << 15})
	return peak, sum
}

// Memory follows what is in flight, not the number of messages: a million
// messages peak at the same heap as a hundred thousand. (To see ten million
// in the same memory: /usr/bin/time -v rocekit sim --messages 10000000
// --size 1024 --mtu 1024 --loss 0.001, against --messages 100000.)
func TestMemoryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a million messages")
	}
	sc := func(n int64) *Scenario {
		return twoHosts(false, &FaultSpec{Loss: 0.001}, QPSpec{MTU: 1024, Timeout: u8(6), Outstanding: 16,
			Work: WorkSpec{Op: "mix", Count: n, Size: 1, SizeMax: 1024}})
	}
	small, s1 := peakHeap(t, sc(100_000))
	big, s2 := peakHeap(t, sc(1_000_000))
	require.True(t, s1.Complete && s2.Complete)
	require.True(t, s1.DataIntegrityOK && s2.DataIntegrityOK)
	t.Logf("peak HeapInuse: %d KiB for 100k messages, %d KiB for 1M", small>>10, big>>10)
	assert.LessOrEqual(t, big, small+small/10+256<<10, "1M messages need more memory than 100k")
}

func TestRunTwice(t *testing.T) {
	s, err := New(twoHosts(false, nil, QPSpec{Work: WorkSpec{Count: 1, Size: 10}}), Options{})
	require.NoError(t, err)
	_, err = s.Run()
	require.NoError(t, err)
	_, err = s.Run()
	assert.ErrorIs(t, err, ErrAlreadyRun)
}

// Zero work: nothing is posted, the run ends at once.
func TestNoWork(t *testing.T) {
	sum := run(t, twoHosts(false, nil, QPSpec{Work: WorkSpec{Count: 0}}), Options{})
	assert.True(t, sum.Complete)
	assert.Zero(t, sum.WRPosted)
	assert.Zero(t, sum.PacketsSent)
	assert.True(t, sum.DataIntegrityOK)
}

// stop_ns ends a run early: incomplete, at the stop time.
func TestStopTime(t *testing.T) {
	sc := twoHosts(false, nil, QPSpec{Work: WorkSpec{Count: 1000, Size: 1 << 20}})
	sc.StopNS = 100e3
	sum := run(t, sc, Options{})
	assert.False(t, sum.Complete)
	assert.Equal(t, 100e3, sum.SimTimeNS)
	assert.Less(t, sum.WRCompleted["SUCCESS"], uint64(1000))
	assert.True(t, sum.DataIntegrityOK)
}

// Prefetching (which a Sim with many connections does) changes nothing it
// computes: the 2,000-QP incast with a lossy, reordering first hop gives
// the same trace and summary with it and without it.
func TestPrefetchChangesNothing(t *testing.T) {
	sc := incastScenario(2000, 3)
	sc.Links[0].Faults = &FaultSpec{Loss: 0.01, Reorder: 0.01}
	trace := func(on bool) ([]byte, *Summary) {
		defer func(v bool) { prefetching = v }(prefetching)
		prefetching = on
		var b bytes.Buffer
		s, err := New(sc, Options{Trace: &b, TraceFormat: pcap.FormatPcap})
		require.NoError(t, err)
		require.Equal(t, on, s.prefetch, "the connections' state is above prefetchAbove")
		sum, err := s.Run()
		require.NoError(t, err)
		require.True(t, sum.Complete && sum.DataIntegrityOK, sum.FirstFailure)
		sum.WallSeconds, sum.EventsPerSecond, sum.PacketsPerSecond, sum.DataPacketsPerSecond = 0, 0, 0, 0
		return b.Bytes(), sum
	}
	a, sa := trace(true)
	b, sb := trace(false)
	require.NotZero(t, sa.Retransmissions, "the faults did something")
	assert.True(t, bytes.Equal(a, b), "traces differ")
	assert.Equal(t, sa, sb)
}
