package roce

import (
	"testing"
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
