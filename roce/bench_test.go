package roce

import (
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// streamScenario is one QP streaming count RDMA WRITEs of size bytes at the
// given MTU over a loss-free 100 Gb/s link with 1 us of delay (otherwise the
// default scenario: 4 outstanding, 128-PSN window).
func streamScenario(count int64, size, mtu int) *Scenario {
	sc := DefaultScenario()
	sc.Links[0].Faults = nil
	sc.QPs[0].MTU = mtu
	sc.QPs[0].Work = WorkSpec{Op: "write", Count: count, Size: size}
	return sc
}

// BenchmarkStream is the whole simulator with one QP streaming RDMA WRITEs:
// every packet built as a real frame with its ICRC, parsed and checked at
// the receiver, its payload written to the responder's memory and every
// message checked there. One op is one message; datapkts/s is simulated
// data packets per wall second (cpu-s: per second of this thread's CPU
// time, which other processes on a shared machine do not inflate).
func BenchmarkStream(b *testing.B) {
	for _, c := range []struct{ mtu, size int }{{4096, 64 << 10}, {4096, 1 << 20}, {1024, 64 << 10}} {
		b.Run(fmt.Sprintf("mtu=%d/%s", c.mtu, strings.ReplaceAll(humanBytes(float64(c.size)), " ", "")), func(b *testing.B) {
			s, err := New(streamScenario(int64(b.N), c.size, c.mtu), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer lockThread()()
			b.ReportAllocs()
			b.SetBytes(int64(c.size))
			b.ResetTimer()
			cpu0 := threadCPU()
			sum, err := s.Run()
			cpu := threadCPU() - cpu0
			b.StopTimer()
			if err != nil || !sum.Complete || !sum.DataIntegrityOK {
				b.Fatalf("run failed: %s", sum.JSON())
			}
			b.ReportMetric(float64(sum.DataPackets)/b.Elapsed().Seconds(), "datapkts/s")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(sum.Events), "ns/event")
			if cpu > 0 {
				b.ReportMetric(float64(sum.DataPackets)/cpu.Seconds(), "datapkts/cpu-s")
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(sum.Events), "cpu-ns/event")
			}
		})
	}
}

// incastScenario is qps connections spread over two sender hosts, all to
// one receiver, through one switch: every host on a 100 Gb/s link with
// 1 us of delay, so the switch port to the receiver is the bottleneck (its
// queue is unlimited and marks ECN above 64 KiB). Each connection posts
// count 4 KiB RDMA WRITEs (one packet at 4 KiB MTU), two outstanding.
func incastScenario(qps, count int) *Scenario {
	sc := &Scenario{
		Seed:   1,
		Hosts:  []HostSpec{{Name: "s1"}, {Name: "s2"}, {Name: "r"}},
		Switch: &SwitchSpec{Name: "sw", ECNBytes: 64 << 10, PFCXOffBytes: 128 << 10, PFCXOnBytes: 64 << 10},
	}
	for _, h := range []string{"s1", "s2", "r"} {
		sc.Links = append(sc.Links, LinkSpec{A: h, B: "sw", BandwidthGbps: 100, DelayNS: 1000})
	}
	for i, h := range []string{"s1", "s2"} {
		n := qps / 2
		if i == 0 {
			n = qps - n
		}
		if n == 0 {
			continue
		}
		sc.QPs = append(sc.QPs, QPSpec{From: h, To: "r", Count: n, MTU: 4096, Outstanding: 2,
			Work: WorkSpec{Op: "write", Count: int64(count), Size: 4096}})
	}
	return sc
}

// BenchmarkQPScaling runs the incast scenario with 1 and with 10,000 QPs
// (the same 200,000 messages in all) and reports the time per event, wall
// and CPU: with 10,000 QPs each event should cost at most twice what it
// does with one. One op is one whole run.
func BenchmarkQPScaling(b *testing.B) {
	for _, c := range []struct{ qps, count int }{{1, 200_000}, {10_000, 20}} {
		b.Run(fmt.Sprintf("qps=%d", c.qps), func(b *testing.B) {
			defer lockThread()()
			var events, pkts uint64
			var cpu time.Duration
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := New(incastScenario(c.qps, c.count), Options{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC() // the setup's garbage is not the run's
				b.StartTimer()
				cpu0 := threadCPU()
				sum, err := s.Run()
				cpu += threadCPU() - cpu0
				if err != nil || !sum.Complete || !sum.DataIntegrityOK || sum.WRCompleted["SUCCESS"] != uint64(c.qps*c.count) {
					b.Fatalf("run failed: %s", sum.JSON())
				}
				events += sum.Events
				pkts += sum.DataPackets
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
			b.ReportMetric(float64(pkts)/b.Elapsed().Seconds(), "datapkts/s")
			if cpu > 0 {
				b.ReportMetric(float64(cpu.Nanoseconds())/float64(events), "cpu-ns/event")
			}
		})
	}
}

// BenchmarkQPScalingRatio measures the same two runs as BenchmarkQPScaling
// in alternation, one of each per op, and reports the ratio of their ns per
// event: on a shared virtual machine whose speed drifts by tens of percent
// from minute to minute, runs seconds apart see the same machine, so their
// ratio is steadier than two separate benchmarks'. It reports the median
// and the worst (largest) ratio over the ops. Each op also runs the one-QP
// stream of BenchmarkStream (mtu=4096, 64 KiB WRITEs) and reports the
// median of the 10,000-QP run's ns per event over the stream's
// (stream-ratio): the issue sets its 2x bound against "the single-QP
// figure", the stream's.
func BenchmarkQPScalingRatio(b *testing.B) {
	defer lockThread()()
	var ratios, streamRatios []float64
	for i := 0; i < b.N; i++ {
		one := incastPerEvent(b, 1, 200_000)
		many := incastPerEvent(b, 10_000, 20)
		stream := runPerEvent(b, streamScenario(12_500, 64<<10, 4096))
		ratios = append(ratios, many/one)
		streamRatios = append(streamRatios, many/stream)
	}
	slices.Sort(ratios)
	slices.Sort(streamRatios)
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	b.ReportMetric(ratios[len(ratios)-1], "worst-ratio")
	b.ReportMetric(streamRatios[len(streamRatios)/2], "stream-ratio")
}

// BenchmarkPrefetchGain runs the 10,000-QP incast of BenchmarkQPScaling
// with prefetching and without, alternated, one of each per op, and reports
// the median and best (smallest) ratio of their ns per event: what asking
// for the next QP's state early gains (see prefetching).
func BenchmarkPrefetchGain(b *testing.B) {
	defer lockThread()()
	defer func(v bool) { prefetching = v }(prefetching)
	perEvent := func(on bool) float64 {
		prefetching = on
		return incastPerEvent(b, 10_000, 20)
	}
	var ratios []float64
	for i := 0; i < b.N; i++ {
		// Alternate which goes first, against drift.
		on, off := 0.0, 0.0
		if i%2 == 0 {
			on, off = perEvent(true), perEvent(false)
		} else {
			off, on = perEvent(false), perEvent(true)
		}
		ratios = append(ratios, on/off)
	}
	slices.Sort(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-ratio")
	b.ReportMetric(ratios[0], "best-ratio")
}

// incastPerEvent runs the incast scenario once (its setup, and the garbage
// collection of the setup's garbage, off the timer) and returns its wall
// time per event.
func incastPerEvent(b *testing.B, qps, count int) float64 {
	return runPerEvent(b, incastScenario(qps, count))
}

// runPerEvent runs scenario sc once and returns its wall ns per event.
func runPerEvent(b *testing.B, sc *Scenario) float64 {
	b.StopTimer()
	s, err := New(sc, Options{})
	if err != nil {
		b.Fatal(err)
	}
	runtime.GC()
	b.StartTimer()
	t0 := time.Now()
	sum, err := s.Run()
	d := time.Since(t0)
	if err != nil || !sum.Complete || !sum.DataIntegrityOK {
		b.Fatalf("run failed: %s", sum.JSON())
	}
	return float64(d.Nanoseconds()) / float64(sum.Events)
}

// readStormScenario is the default scenario with 64 connections each
// posting 2,000 RDMA READs of 1 MiB over one 25 Gb/s link, 4 outstanding,
// with a local ACK timeout of 262 us (code 6) and retry_cnt 0, stopped at
// 100 ms of simulated time. With loss (the default's 1% each way) that is
// a retry storm: each requester's first lost READ response or request uses
// up its retries (§5.5: a re-requested READ counts as a retry), fails that
// READ with RETRY_EXC_ERR and flushes the rest, about 127,900 WR_FLUSH_ERR
// in all. Without loss nothing fails by the stop.
func readStormScenario(loss float64) *Scenario {
	sc := DefaultScenario()
	sc.Links[0].BandwidthGbps = 25
	sc.Links[0].Faults = &FaultSpec{Loss: loss}
	q := &sc.QPs[0]
	q.Count = 64
	q.Timeout = new(uint8)
	*q.Timeout = 6
	q.RetryCnt = new(uint8)
	q.Work = WorkSpec{Op: "read", Count: 2000, Size: 1 << 20}
	sc.StopNS = 100e6
	return sc
}

// BenchmarkReadRetryStorm runs readStormScenario without loss and with
// it: a retry storm should cost about what the same scenario costs per
// event without one. One op is one run; its setup, the collection of the
// setup's garbage, and the first touch of the connections' 512 MiB of
// buffers (slow on these virtual machines, and a cost of the scenario's
// size, not of its events) are off the timer. events/s is the run's events
// over its wall time. Compare the two in one invocation, several times.
func BenchmarkReadRetryStorm(b *testing.B) {
	for _, c := range []struct {
		name string
		loss float64
	}{{"lossless", 0}, {"lossy", 0.01}} {
		b.Run(c.name, func(b *testing.B) {
			defer lockThread()()
			var events uint64
			var wall time.Duration
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := New(readStormScenario(c.loss), Options{})
				if err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				for _, c := range s.conns {
					for _, buf := range [][]byte{c.mr.Buf, c.local, c.recvBuf} {
						for j := 0; j < len(buf); j += 4096 {
							buf[j] = 0
						}
					}
				}
				b.StartTimer()
				t0 := time.Now()
				sum, err := s.Run()
				wall += time.Since(t0)
				if err != nil || !sum.DataIntegrityOK || !sum.CompletionOrderOK {
					b.Fatalf("run failed: %s", sum.JSON())
				}
				// The case this measures: lossless, nothing fails by the
				// stop; lossy, the storm fails every connection.
				if c.loss == 0 && (sum.Failed() != 0 || sum.Complete) ||
					c.loss > 0 && (!sum.Complete || sum.WRCompleted["RETRY_EXC_ERR"] != 64) {
					b.Fatalf("not the case measured: %s", sum.JSON())
				}
				events += sum.Events
			}
			b.ReportMetric(float64(events)/wall.Seconds(), "events/s")
			b.ReportMetric(float64(events)/float64(b.N), "events/op")
		})
	}
}
