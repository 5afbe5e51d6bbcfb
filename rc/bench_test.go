package rc_test

import (
	"testing"

	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/rc/rctest"
	"github.com/rocekit/rocekit/sim"
)

// BenchmarkWriteStream streams 1 MiB RDMA WRITEs at 4 KiB MTU from a to b
// through the in-test network (encode, decode, 1 us links, no loss), one
// WRITE per iteration. It reports protocol packets per second of wall time
// (requests and ACKs, both directions); the steady state allocates nothing.
func BenchmarkWriteStream(b *testing.B) {
	const size = 1 << 20
	cfg := rc.DefaultConfig()
	cfg.MTU = 4096
	cfg.SignalAll = true
	p := newPair(b, cfg, cfg, size, size, 1)
	p.net.Link = [2]rctest.Link{{Delay: sim.Microsecond}, {Delay: sim.Microsecond}}
	comps := &p.net.Completions[rctest.A]
	done := func() bool { return len(*comps) > 0 }
	wr := rc.WR{Opcode: rc.WRRDMAWrite, Local: p.mrA.Buf, RemoteAddr: p.mrB.Addr, RKey: p.mrB.RKey}
	one := func() {
		wr.ID++
		if err := p.a.PostSend(wr); err != nil {
			b.Fatal(err)
		}
		if !p.net.RunUntil(done, p.net.Now+sim.Second) || (*comps)[0].Status != rc.Success {
			b.Fatal("WRITE did not complete")
		}
		*comps = (*comps)[:0]
	}
	for range 3 { // warm up: buffers, queues and the event heap reach their size
		one()
	}
	start := p.a.Stats().PacketsSent + p.b.Stats().PacketsSent
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		one()
	}
	b.StopTimer()
	pkts := p.a.Stats().PacketsSent + p.b.Stats().PacketsSent - start
	b.ReportMetric(float64(pkts)/b.Elapsed().Seconds(), "packets/s")
	b.ReportMetric(float64(pkts)/float64(b.N), "packets/op")
}
