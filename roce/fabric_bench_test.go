package roce

import (
	"fmt"
	"testing"

	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// BenchmarkFabricPermutation is the htsim reference experiment (fabric-facts
// §6): a k=8 fat-tree (128 hosts, 80 switches) at 100 Gb/s everywhere, a
// random permutation of 10 MB flows, ECMP, PFC lossless, MTU 4096, every
// frame real with its ICRC built and checked. One op is the whole run;
// datapkts/s is data packets per wall second, the figure htsim prints
// (../shared/bench/htsim-perm.sh).
//
// The cc=dcqcn and cc=hpcc runs are the same with congestion control, whose
// cost is measured against cc=none (alternate them: bench/fabric.sh cc).
func BenchmarkFabricPermutation(b *testing.B) {
	for _, c := range []string{"none", "dcqcn", "hpcc"} {
		b.Run("k=8/cc="+c, func(b *testing.B) {
			js := fmt.Sprintf(`{"seed":7,"topology":"fat-tree:k=8","traffic":"permutation:size=10MB","cc":{"algorithm":%q}}`, c)
			b.ReportAllocs()
			var pkts, events uint64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				sc, err := ParseScenario([]byte(js))
				if err != nil {
					b.Fatal(err)
				}
				s, err := New(sc, Options{})
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				sum, err := s.Run()
				if err != nil || sum.FlowsCompleted != sum.Flows || !sum.DataIntegrityOK {
					b.Fatalf("run failed: %v %d/%d", err, sum.FlowsCompleted, sum.Flows)
				}
				pkts += sum.DataPackets
				events += sum.Events
			}
			b.ReportMetric(float64(pkts)/b.Elapsed().Seconds(), "datapkts/s")
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// BenchmarkFabricFloor is the least work a simulator that puts real
// frames on the wire does per data packet of BenchmarkFabricPermutation,
// and nothing else: build the 4096-byte WRITE frame from the pattern with
// its ICRC, parse it and check its ICRC at the receiver, and copy its
// payload into the responder's region (128 flows' regions of 1 MiB in
// turn, as the permutation's). No events, queues, switches or QPs. Its
// datapkts/s bounds what the fabric simulator can reach on the machine.
func BenchmarkFabricFloor(b *testing.B) {
	ff := packet.DefaultFrame(packet.RoCEv2IPv4)
	ff.Transport.BTH.Opcode = opcode.RCRDMAWriteMiddle
	pat := newPattern(1, 1<<20)
	ff.Transport.Payload = pat.data(0, 0, 4096)
	var calc icrc.Calc
	buf := make([]byte, ff.Len())
	regions := make([]byte, 128<<20)
	var rx packet.Frame
	b.SetBytes(4096)
	b.ReportAllocs()
	b.ResetTimer()
	off := 0
	for i := 0; i < b.N; i++ {
		ff.Transport.BTH.PSN = uint32(i) & 0xFFFFFF
		n, err := ff.EncodeWith(buf, &calc)
		if err != nil {
			b.Fatal(err)
		}
		if err := rx.DecodeEthernet(buf[:n]); err != nil {
			b.Fatal(err)
		}
		if ok, _, _, err := rx.CheckICRC(); !ok || err != nil {
			b.Fatal("icrc", err)
		}
		// Flow i%128's region, next 4 KiB slot of its 1 MiB.
		r := (i % 128) << 20
		copy(regions[r+off:], rx.Transport.Payload)
		if i%128 == 127 {
			off = (off + 4096) % (1 << 20)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "datapkts/s")
}
