package conform_test

import (
	"fmt"
	"testing"

	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/rc/rctest"
	"github.com/rocekit/rocekit/sim"
)

var propOps = []rc.WROpcode{rc.WRRDMAWrite, rc.WRRDMAWriteWithImm, rc.WRSend, rc.WRSendWithImm,
	rc.WRRDMARead, rc.WRAtomicCmpSwap, rc.WRAtomicFetchAdd, rc.WRAtomicWrite, rc.WRFlush}

// TestPropertyConformingExchangesAreClean: two rc.QPs exchange random
// operations in both directions (sizes 0..20000, every PMTU, starting PSNs
// anywhere and just before the 2^24 wrap, loss up to 25% each way, receive
// WQEs posted late so that SENDs meet RNR NAKs) and the capture is taken at
// either end's port. rc conforms, so check finds nothing: every go-back,
// coalesced ACK, duplicate re-ACK, READ retry and replay, RNR wait and
// retransmission it produces is accepted. A third capture point halfway
// along the path, where each lost packet is lost before or after it at
// random, is just as clean. So is each of these captures taken with a snap
// length (54 bytes: the BTH and no more; 64: the RETH cut; 100: payloads
// cut), which the checker follows from the headers the capture kept.
func TestPropertyConformingExchangesAreClean(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mtu := rapid.SampledFrom([]int{256, 512, 1024, 2048, 4096}).Draw(t, "mtu")
		psnA := uint32(rapid.IntRange(0, rc.PSNMask).Draw(t, "psnA"))
		if rapid.Bool().Draw(t, "nearWrap") {
			psnA = uint32(1<<24 - rapid.IntRange(1, 300).Draw(t, "beforeWrap"))
		}
		psnB := uint32(rapid.IntRange(0, rc.PSNMask).Draw(t, "psnB"))
		point := rapid.IntRange(0, 2).Draw(t, "capturePoint") // a's port, b's port, midway
		vantage := rctest.Side(point % 2)
		cfg := defaultCfg(mtu)
		cfg.Timeout = uint8(rapid.IntRange(1, 4).Draw(t, "timeout"))
		cfg.RNRRetry, cfg.MinRNRTimer = 7, 1
		cfg.MaxRdAtomic = rapid.IntRange(1, 8).Draw(t, "ord")
		cfg.MaxDestRdAtomic = cfg.MaxRdAtomic + rapid.IntRange(0, 4).Draw(t, "irdExtra")
		cfg.Window = uint32(rapid.SampledFrom([]int{16, 64, 128}).Draw(t, "window"))
		x := newExchange(t, cfg, psnA, psnB, vantage, rapid.Uint64().Draw(t, "seed"))
		for s := range x.net.Link {
			x.net.Link[s].Drop = rapid.Float64Range(0, 0.25).Draw(t, fmt.Sprintf("drop%d", s))
		}
		lateRecv := rapid.Bool().Draw(t, "lateRecv")
		var recvs [2][]rc.RecvWR
		n := [2]int{}
		for s := rctest.A; s <= rctest.B; s++ {
			off := 64
			for i := range rapid.IntRange(0, 6).Draw(t, fmt.Sprintf("nops%d", s)) {
				op := rapid.SampledFrom(propOps).Draw(t, fmt.Sprintf("op%d_%d", s, i))
				size := 8
				if op != rc.WRAtomicCmpSwap && op != rc.WRAtomicFetchAdd && op != rc.WRAtomicWrite {
					size = rapid.OneOf(rapid.IntRange(0, 20000),
						rapid.SampledFrom([]int{0, 1, 3, mtu - 1, mtu, mtu + 1, 2 * mtu, 3*mtu + 1})).Draw(t, fmt.Sprintf("size%d_%d", s, i))
				}
				off = (off + 7) &^ 7
				x.postOp(t, s, uint64(100*int(s)+i+1), op, size, off, &recvs[s.Peer()])
				off += size
				n[s]++
			}
		}
		post := func() {
			for s := rctest.A; s <= rctest.B; s++ {
				qp := x.a
				if s == rctest.B {
					qp = x.b
				}
				for _, r := range recvs[s] {
					if err := qp.PostRecv(r); err != nil {
						t.Fatalf("post recv: %v", err)
					}
				}
			}
		}
		if lateRecv {
			x.net.RunUntil(func() bool { return false }, 30*sim.Microsecond)
		}
		post()
		x.runAll(t, n[0]+len(recvs[0]), n[1]+len(recvs[1]))
		for s := rctest.A; s <= rctest.B; s++ {
			if got := len(x.net.Completions[s]); got != n[s]+len(recvs[s]) {
				t.Fatalf("side %s: %d of %d completions", s, got, n[s]+len(recvs[s]))
			}
			for _, c := range x.net.Completions[s] {
				if c.Status != rc.Success {
					t.Fatalf("side %s: %v", s, c)
				}
			}
		}
		pkts := x.capture()
		if point == 2 {
			keep := rapid.SliceOfN(rapid.Bool(), 256, 256).Draw(t, "lostAfterMidpoint")
			k := 0
			pkts = x.captureMidpoint(func() bool { k++; return keep[k%len(keep)] })
		}
		fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
		if len(fs) > 0 {
			t.Fatalf("findings on a conforming exchange (capture point %d):\n%s\ncapture:\n%s", point, dump(fs), describe(pkts))
		}
		// With the PMTU given, the same holds.
		if fs, _ := run(t, conform.Options{PMTU: mtu}, packet.RoCEv2IPv4, pkts); len(fs) > 0 {
			t.Fatalf("findings with --pmtu %d:\n%s", mtu, dump(fs))
		}
		for _, snap := range []int{54, 64, 100} {
			if fs, _ := runCut(t, conform.Options{}, packet.RoCEv2IPv4, pkts, snap); len(fs) > 0 {
				t.Fatalf("findings with snap %d (capture point %d):\n%s\ncapture:\n%s", snap, point, dump(fs), describe(pkts))
			}
		}
	})
}

// postOp is post without posting the receive: the receive WQE (if the
// operation needs one) is appended to recvs for the caller to post.
func (x *exchange) postOp(t tb, s rctest.Side, id uint64, op rc.WROpcode, size, off int, recvs *[]rc.RecvWR) {
	t.Helper()
	qp, mr, peerMR := x.a, x.mrA, x.mrB
	if s == rctest.B {
		qp, mr, peerMR = x.b, x.mrB, x.mrA
	}
	// Side s's buffers live in the half s of its own region and its remote
	// targets in the half s of the peer's: what the peer writes never
	// changes a buffer s may still retransmit from.
	base := uint64(s) << 19
	wr := rc.WR{ID: id, Opcode: op, Local: mr.Slice(mr.Addr+base+uint64(off), size), RemoteAddr: peerMR.Addr + base + uint64(off),
		RKey: peerMR.RKey, Imm: uint32(id)}
	switch op {
	case rc.WRSend, rc.WRSendWithImm, rc.WRRDMAWriteWithImm:
		*recvs = append(*recvs, rc.RecvWR{ID: 1000 + id, Buf: make([]byte, size+16)})
	case rc.WRAtomicFetchAdd, rc.WRAtomicCmpSwap:
		wr.RemoteAddr = peerMR.Addr + base
		wr.CompareAdd = 1
	case rc.WRFlush:
		wr.Local, wr.Length, wr.FlushType = nil, uint32(size), 1
	}
	if err := qp.PostSend(wr); err != nil {
		t.Fatalf("post %s: %v", op, err)
	}
}
