package roce

import (
	"fmt"
	"testing"

	"github.com/rocekit/rocekit/coll"
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
// its ICRC, parse it and check its ICRC at the receiver, copy its payload
// into the responder's region, and compare it with the pattern (each
// message is verified where it lands). No events, queues, switches or QPs.
// With inflight=1 the frame buffer is always the same, in cache; with
// inflight=16384 the frames rotate over 16,384 buffers (64 MiB), as the
// permutation's frames do over the ports' queues, so that the receiver
// meets its frame cold, as it does in the fabric. Its datapkts/s bounds
// what the fabric simulator can reach on the machine.
func BenchmarkFabricFloor(b *testing.B) {
	for _, inflight := range []int{1, 16384} {
		b.Run(fmt.Sprintf("inflight=%d", inflight), func(b *testing.B) {
			ff := packet.DefaultFrame(packet.RoCEv2IPv4)
			ff.Transport.BTH.Opcode = opcode.RCRDMAWriteMiddle
			pat := newPattern(1, 1<<20)
			ff.Transport.Payload = pat.data(0, 0, 4096)
			var calc icrc.Calc
			size := ff.Len()
			bufs := make([][]byte, inflight)
			for i := range bufs {
				bufs[i] = make([]byte, size)
			}
			regions := make([]byte, 128<<20)
			var rx packet.Frame
			b.SetBytes(4096)
			b.ReportAllocs()
			b.ResetTimer()
			off := 0
			for i := 0; i < b.N; i++ {
				// Build frame i into its buffer; receive the one built
				// inflight-1 frames ago (the same when inflight is 1).
				ff.Transport.BTH.PSN = uint32(i) & 0xFFFFFF
				if _, err := ff.EncodeWith(bufs[i%inflight], &calc); err != nil {
					b.Fatal(err)
				}
				in := bufs[(i+1)%inflight]
				if i+1 < inflight {
					in = bufs[i%inflight]
				}
				if err := rx.DecodeEthernet(in); err != nil {
					b.Fatal(err)
				}
				if ok, _, _, err := rx.CheckICRC(); !ok || err != nil {
					b.Fatal("icrc", err)
				}
				// Flow i%128's region, next 4 KiB slot of its 1 MiB.
				r := (i%128)<<20 + off
				copy(regions[r:], rx.Transport.Payload)
				if !pat.check(regions[r:r+4096], 0, 0) {
					b.Fatal("data")
				}
				if i%128 == 127 {
					off = (off + 4096) % (1 << 20)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "datapkts/s")
		})
	}
}

// BenchmarkCollAllReduce is the 64 MB all-reduce by ring over 8 ranks on
// one 100 Gb/s switch: one op is a whole RunCollective (drawing the inputs,
// the simulation of every chunk on real RC frames, and checking every
// rank's output against the reference); sim-s is the simulation's share.
func BenchmarkCollAllReduce(b *testing.B) {
	sc, err := ParseScenario([]byte(`{"seed":1,"topology":"star:hosts=8","traffic":"incast:n=1,size=1KB"}`))
	if err != nil {
		b.Fatal(err)
	}
	var simWall float64
	for i := 0; i < b.N; i++ {
		r, err := RunCollective(sc, CollConfig{Ranks: 8, Op: coll.AllReduce, Algo: coll.Ring, DType: coll.Float32, RedOp: coll.Sum, Count: 16_000_000}, Options{})
		if err != nil || r.Wrong != 0 {
			b.Fatal(err, r.Wrong)
		}
		simWall += r.Summary.WallSeconds
	}
	b.ReportMetric(simWall/float64(b.N), "sim-s/op")
}
