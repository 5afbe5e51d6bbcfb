package dpicore

import (
	"testing"

	"github.com/rocekit/rocekit/rc"
)

// BenchmarkLoop measures what a bench pays per frame on the device's
// port: the frame is parsed (Parser.Parse), checked (Scoreboard.Feed) and
// given to the receiving peer (Peer.Rx), and the peers' output is drained
// (Peer.Tx). Peer a WRITEs 1024 bytes at a time to peer b, which ACKs every
// packet; one op is one frame, either way. Reported: frames/s.
func BenchmarkLoop(b *testing.B) {
	a, p := newPairB(b)
	sb, err := NewScoreboard(1024)
	if err != nil {
		b.Fatal(err)
	}
	var ps Parser
	var f Fields
	var c rc.Completion
	buf := make([]byte, 9000)
	var now int64
	var id uint64
	post := func() {
		for a.qp.SendQueueLen() < 8 {
			if err := a.PostWrite(id, 0x1000_0000+id%64*1024, 1024, 0x2000_0000+id%64*1024, 0x200); err != nil {
				b.Fatal(err)
			}
			id++
		}
	}
	post()
	move := func(from, to *Peer, dir int) bool {
		n, err := from.Tx(buf)
		if err != nil {
			return false
		}
		if err := ps.Parse(buf[:n], &f); err != nil {
			b.Fatal(err)
		}
		if k, err := sb.Feed(buf[:n], now, dir); err != nil || k != 0 {
			b.Fatalf("feed: %d findings, %v", k, err)
		}
		if err := to.Rx(buf[:n], now); err != nil {
			b.Fatal(err)
		}
		return true
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; {
		if move(a, p, ToDUT) {
			i++
		}
		if i < b.N && move(p, a, FromDUT) {
			i++
		}
		for a.Poll(&c) {
		}
		post()
		now += 100 * int64(rc.Nanosecond)
		if err := a.Tick(now); err != nil {
			b.Fatal(err)
		}
		if err := p.Tick(now); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "frames/s")
}

func newPairB(b *testing.B) (a, p *Peer) {
	a, err := NewPeer(PeerConfig{QPN: 0x11, DestQPN: 0x12, MTU: 1024, MRAddr: 0x1000_0000, MRRKey: 0x100, MRLen: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	p, err = NewPeer(PeerConfig{QPN: 0x12, DestQPN: 0x11, MTU: 1024, MRAddr: 0x2000_0000, MRRKey: 0x200, MRLen: 1 << 20})
	if err != nil {
		b.Fatal(err)
	}
	if err := p.SetOption("reverse", 1); err != nil {
		b.Fatal(err)
	}
	return a, p
}
