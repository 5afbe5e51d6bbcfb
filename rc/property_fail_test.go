package rc_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/rc/rctest"
	"github.com/rocekit/rocekit/sim"
)

// TestPropertyDeadLink: when one or both directions drop everything, the
// first WR fails with RETRY_EXC_ERR exactly when the (retry_cnt+1)-th local
// ACK timeout expires, the QP is in Error, every later WR (posted before or
// after the failure) is flushed with WR_FLUSH_ERR in order, and nothing is
// sent any more (ib-facts §5.5, §5.10). retry_cnt 7 is seven retries.
func TestPropertyDeadLink(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := rc.DefaultConfig()
		cfg.RetryCnt = uint8(rapid.IntRange(0, 7).Draw(t, "retry_cnt"))
		cfg.Timeout = uint8(rapid.IntRange(1, 8).Draw(t, "timeout"))
		cfg.MTU = rapid.SampledFrom([]int{256, 1024, 4096}).Draw(t, "mtu")
		cfg.SQPSN = uint32(rapid.IntRange(0, 1<<24-1).Draw(t, "psn"))
		dead := rapid.SampledFrom([]string{"a->b", "b->a", "both"}).Draw(t, "dead")
		nops := rapid.IntRange(1, 6).Draw(t, "nops")
		p := newPair(t, cfg, cfg, 1<<16, 1<<16, 1)
		p.net.Link = [2]rctest.Link{{Delay: sim.Microsecond}, {Delay: sim.Microsecond}}
		p.net.Filter = func(from rctest.Side, f *packet.Fields) rctest.Verdict {
			if dead == "both" || (dead == "a->b") == (from == rctest.A) {
				return rctest.Drop
			}
			return rctest.Deliver
		}
		for i := 0; i < 8; i++ {
			require.NoError(t, p.b.PostRecv(rc.RecvWR{ID: uint64(100 + i), Buf: make([]byte, 4096)}))
		}
		ops := make([]rc.WROpcode, nops)
		for i := range ops {
			ops[i] = rapid.SampledFrom([]rc.WROpcode{rc.WRRDMAWrite, rc.WRSend, rc.WRRDMARead, rc.WRAtomicFetchAdd}).Draw(t, fmt.Sprintf("op%d", i))
			size := rapid.IntRange(8, 3000).Draw(t, fmt.Sprintf("size%d", i))
			require.NoError(t, p.a.PostSend(rc.WR{ID: uint64(i + 1), Opcode: ops[i], Local: p.mrA.Buf[:size],
				RemoteAddr: p.mrB.Addr, RKey: p.mrB.RKey}))
		}
		p.net.Run(sim.Second)
		require.Equal(t, rc.StateError, p.a.State())
		require.Equal(t, uint64(cfg.RetryCnt)+1, p.a.Stats().Timeouts, "retry_cnt+1 timeouts")
		require.Equal(t, uint64(cfg.RetryCnt), p.a.Stats().Retries)
		// The first transmission starts the timer at 0; each retry restarts
		// it when the retransmission goes out, at the expiry instant.
		require.Equal(t, sim.Time(cfg.RetryCnt+1)*sim.Time(rc.AckTimeout(cfg.Timeout)), p.net.Now)
		require.NoError(t, p.a.PostSend(rc.WR{ID: 99, Opcode: rc.WRSend}))
		p.net.Pump()
		c := p.net.Completions[rctest.A]
		require.Len(t, c, nops+1)
		require.Equal(t, rc.RetryExcErr, c[0].Status)
		require.Equal(t, uint64(1), c[0].WRID)
		for i := 1; i < nops; i++ {
			require.Equal(t, rc.WRFlushErr, c[i].Status)
			require.Equal(t, uint64(i+1), c[i].WRID)
		}
		require.Equal(t, rc.WRFlushErr, c[nops].Status)
		require.Equal(t, uint64(99), c[nops].WRID)
		sent := p.a.Stats().PacketsSent
		p.net.Run(10 * sim.Second)
		require.Equal(t, sent, p.a.Stats().PacketsSent, "an Error QP sends nothing")
		_, wake := p.a.NextWake()
		require.False(t, wake)
	})
}

// TestPropertyRNR: a SEND meets a responder with no receive posted. Each
// transmission that arrives before the receive is posted earns an RNR NAK
// (with the responder's min_rnr_timer) and the requester waits that long
// before resending (ib-facts §5.5, §5.7). If the receive is posted before
// transmission number rnr_retry+1 arrives, the SEND succeeds after exactly
// that many RNR NAKs; otherwise the (rnr_retry+1)-th RNR NAK fails it with
// RNR_RETRY_EXC_ERR and the QP goes to Error.
func TestPropertyRNR(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := rc.DefaultConfig()
		cfg.RNRRetry = uint8(rapid.IntRange(0, 6).Draw(t, "rnr_retry"))
		cfg.MinRNRTimer = uint8(rapid.IntRange(1, 10).Draw(t, "min_rnr_timer"))
		cfg.Timeout = uint8(rapid.IntRange(0, 3).Draw(t, "timeout")) // shorter than the RNR wait: must not cut it
		cfg.RetryCnt = 0
		size := rapid.IntRange(0, 5000).Draw(t, "size")
		withImm := rapid.Bool().Draw(t, "writeWithImm")
		k := rapid.IntRange(0, int(cfg.RNRRetry)+1).Draw(t, "postBeforeTransmission")
		p := newPair(t, cfg, cfg, 1<<16, 1<<16, 2)
		d := sim.Microsecond
		p.net.Link = [2]rctest.Link{{Delay: d}, {Delay: d}}
		wr := rc.WR{ID: 1, Opcode: rc.WRSend, Local: p.mrA.Buf[:size]}
		if withImm {
			wr.Opcode, wr.RemoteAddr, wr.RKey = rc.WRRDMAWriteWithImm, p.mrB.Addr, p.mrB.RKey
		}
		require.NoError(t, p.a.PostSend(wr))
		// Transmission j reaches b at d + j*(w + 2d).
		w := sim.Time(rc.RNRDelay(cfg.MinRNRTimer))
		postAt := d + sim.Time(k)*(w+2*d) - d/2
		p.net.RunUntil(func() bool { return false }, postAt)
		require.NoError(t, p.b.PostRecv(rc.RecvWR{ID: 7, Buf: make([]byte, size)}))
		p.net.Run(sim.Second * 100)
		c := p.net.Completions[rctest.A]
		require.Len(t, c, 1)
		if k <= int(cfg.RNRRetry) {
			require.Equal(t, rc.Success, c[0].Status)
			require.Equal(t, uint64(k), p.a.Stats().RNRNAKsReceived)
			require.Len(t, p.net.Completions[rctest.B], 1)
			require.Equal(t, rc.Success, p.net.Completions[rctest.B][0].Status)
		} else {
			require.Equal(t, rc.RNRRetryExcErr, c[0].Status)
			require.Equal(t, uint64(cfg.RNRRetry)+1, p.a.Stats().RNRNAKsReceived)
			require.Equal(t, rc.StateError, p.a.State())
		}
		require.Zero(t, p.a.Stats().Timeouts, "the transport timer is off during RNR waits")
	})
}

// TestPropertyRemoteErrors: a run of good WRs with one bad request at a
// random place. The good ones before it succeed; the bad one completes with
// the status for the responder's NAK (bad R_Key or range: REM_ACCESS_ERR;
// misaligned atomic, opcode not allowed on the QP, SEND longer than the
// receive buffer: REM_INV_REQ_ERR); both QPs go to Error; everything
// after it is flushed (ib-facts §5.5, §5.6, §5.10).
func TestPropertyRemoteErrors(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		cfg := rc.DefaultConfig()
		cfg.Timeout = 4
		cfg.MTU = rapid.SampledFrom([]int{256, 1024}).Draw(t, "mtu")
		n := rapid.IntRange(1, 6).Draw(t, "n")
		bad := rapid.IntRange(0, n-1).Draw(t, "bad")
		kind := rapid.SampledFrom([]string{"rkey", "range", "misaligned", "noaccess", "recvlen", "zerolenbadkey"}).Draw(t, "kind")
		cfgB := cfg
		if kind == "noaccess" {
			cfgB.Access = rc.RemoteWrite // no remote read
		}
		p := newPair(t, cfg, cfgB, 1<<16, 1<<16, 3)
		p.net.Link = [2]rctest.Link{{Delay: sim.Microsecond}, {Delay: sim.Microsecond}}
		for i := 0; i < n+1; i++ {
			size := 100
			if kind == "recvlen" {
				size = 1000
			}
			require.NoError(t, p.b.PostRecv(rc.RecvWR{ID: uint64(100 + i), Buf: make([]byte, size)}))
		}
		want := rc.Success
		for i := 0; i < n; i++ {
			wr := rc.WR{ID: uint64(i + 1), Opcode: rc.WRRDMAWrite, Local: p.mrA.Buf[:500], RemoteAddr: p.mrB.Addr, RKey: p.mrB.RKey}
			if i == bad {
				switch kind {
				case "rkey":
					wr.RKey, want = 0xBAD, rc.RemAccessErr
				case "range":
					wr.RemoteAddr, want = p.mrB.Addr+uint64(len(p.mrB.Buf))-10, rc.RemAccessErr
				case "misaligned":
					wr.Opcode, wr.Local, wr.RemoteAddr, want = rc.WRAtomicFetchAdd, p.mrA.Buf[:8], p.mrB.Addr+4, rc.RemInvReqErr
				case "noaccess":
					wr.Opcode, want = rc.WRRDMARead, rc.RemInvReqErr
				case "recvlen":
					wr.Opcode, wr.Local, want = rc.WRSend, p.mrA.Buf[:1001], rc.RemInvReqErr
				case "zerolenbadkey":
					// A zero-length WRITE needs no valid R_Key (IBA C9-88): it succeeds.
					wr.Local, wr.RKey = nil, 0xBAD
				}
			}
			require.NoError(t, p.a.PostSend(wr))
		}
		p.net.Run(sim.Second)
		c := p.net.Completions[rctest.A]
		require.Len(t, c, n)
		for i := range c {
			require.Equal(t, uint64(i+1), c[i].WRID)
			switch {
			case i < bad || want == rc.Success:
				require.Equal(t, rc.Success, c[i].Status, "WR %d", i+1)
			case i == bad:
				require.Equal(t, want, c[i].Status)
			default:
				require.Equal(t, rc.WRFlushErr, c[i].Status)
			}
		}
		if want == rc.Success {
			require.Equal(t, rc.StateRTS, p.a.State())
			return
		}
		require.Equal(t, rc.StateError, p.a.State())
		require.Equal(t, rc.StateError, p.b.State())
		for _, rcv := range p.net.Completions[rctest.B] {
			if kind == "recvlen" && rcv.WRID == 100 {
				require.Equal(t, rc.LocLenErr, rcv.Status)
				continue
			}
			require.Equal(t, rc.WRFlushErr, rcv.Status)
		}
		require.Len(t, p.net.Completions[rctest.B], n+1)
	})
}

// TestPropertyPSN checks the 24-bit arithmetic of ib-facts §5.1.
func TestPropertyPSN(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		a := uint32(rapid.IntRange(0, rc.PSNMask).Draw(t, "a"))
		n := uint32(rapid.IntRange(0, rc.PSNMask).Draw(t, "n"))
		b := rc.AddPSN(a, n)
		require.LessOrEqual(t, b, uint32(rc.PSNMask))
		d := rc.DiffPSN(b, a)
		switch {
		case n == 0:
			require.Zero(t, d)
		case n < 1<<23:
			require.Equal(t, int32(n), d)
			require.Equal(t, 1, rc.ComparePSN(b, a))
			require.Equal(t, -1, rc.ComparePSN(a, b))
		default: // 2^23 and beyond count as before
			require.Equal(t, int32(n)-1<<24, d)
			require.Equal(t, -1, rc.ComparePSN(b, a))
		}
	})
}
