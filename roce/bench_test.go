package roce

import (
	"fmt"
	"testing"
	"time"
)

// streamScenario is one QP streaming RDMA WRITEs of size bytes at 4 KiB MTU
// over a loss-free 100 Gb/s link with 1 us of delay.
func streamScenario(count int64, size int) *Scenario {
	sc := DefaultScenario()
	sc.Links[0].Faults = nil
	sc.QPs[0].Work = WorkSpec{Op: "write", Count: count, Size: size}
	return sc
}

func BenchmarkStream(b *testing.B) {
	for _, size := range []int{64 << 10, 1 << 20} {
		b.Run(humanBytes(float64(size)), func(b *testing.B) {
			count := int64(b.N)
			s, err := New(streamScenario(count, size), Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer lockThread()()
			b.ReportAllocs()
			b.SetBytes(int64(size))
			b.ResetTimer()
			cpu0 := threadCPU()
			sum, err := s.Run()
			cpu := threadCPU() - cpu0
			b.StopTimer()
			if err != nil || !sum.Complete || !sum.DataIntegrityOK {
				b.Fatalf("run failed: %+v", sum)
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
		Switch: &SwitchSpec{Name: "sw", ECNBytes: 64 << 10},
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
