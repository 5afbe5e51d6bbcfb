package rc_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/rc/rctest"
	"github.com/rocekit/rocekit/sim"
)

// pair builds two connected QPs, a and b, each with one memory region of
// size bytes filled from rng, and a network between them.
type pair struct {
	a, b     *rc.QP
	memA     *rc.Memory
	memB     *rc.Memory
	mrA, mrB *rc.MR
	net      *rctest.Net
}

func newPair(t require.TestingT, cfgA, cfgB rc.Config, sizeA, sizeB int, seed uint64) *pair {
	rng := rand.New(rand.NewPCG(seed, 7))
	p := &pair{memA: rc.NewMemory(), memB: rc.NewMemory()}
	p.mrA = &rc.MR{Addr: 0x1_0000_0000, RKey: 0xA1, Access: rc.AccessAll, Buf: make([]byte, sizeA)}
	p.mrB = &rc.MR{Addr: 0x2_0000_0000, RKey: 0xB1, Access: rc.AccessAll, Buf: make([]byte, sizeB)}
	for i := range p.mrA.Buf {
		p.mrA.Buf[i] = byte(rng.Uint32())
	}
	for i := range p.mrB.Buf {
		p.mrB.Buf[i] = byte(rng.Uint32())
	}
	require.NoError(t, p.memA.Register(p.mrA))
	require.NoError(t, p.memB.Register(p.mrB))
	cfgA.Memory, cfgB.Memory = p.memA, p.memB
	cfgA.QPN, cfgA.DestQPN, cfgB.QPN, cfgB.DestQPN = 0x101, 0x202, 0x202, 0x101
	cfgB.RQPSN, cfgA.RQPSN = cfgA.SQPSN, cfgB.SQPSN
	var err error
	p.a, err = rc.New(cfgA)
	require.NoError(t, err)
	p.b, err = rc.New(cfgB)
	require.NoError(t, err)
	p.net = rctest.New(p.a, p.b, seed)
	return p
}

// opSpec is one generated work request and what it must do.
type opSpec struct {
	op         rc.WROpcode
	size       int
	loff, roff int    // local (a) and remote (b) offsets
	value      uint64 // atomics: expected original value; ATOMIC WRITE: value written
	recv       int    // index of the receive it consumes, or -1
	invKey     uint32
}

var allOps = []rc.WROpcode{rc.WRRDMAWrite, rc.WRRDMAWriteWithImm, rc.WRSend, rc.WRSendWithImm, rc.WRSendWithInv,
	rc.WRRDMARead, rc.WRAtomicCmpSwap, rc.WRAtomicFetchAdd, rc.WRAtomicWrite, rc.WRFlush}

// TestPropertyRandomScenarios: over random operation mixes, sizes 0..20000,
// MTUs, starting PSNs near 2^24, ORD/IRD, windows and a link that drops,
// duplicates and reorders up to 20% of packets, every WR completes exactly
// once, in posting order, with SUCCESS; every receive completes in order
// with the right length, immediate and invalidated key; and both memories
// hold exactly the expected bytes.
func TestPropertyRandomScenarios(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		mtu := rapid.SampledFrom([]int{256, 512, 1024, 2048, 4096}).Draw(t, "mtu")
		nops := rapid.IntRange(1, 12).Draw(t, "nops")
		lossy := rapid.Bool().Draw(t, "lossy")
		var drop, dup, reorder float64
		if lossy {
			drop = rapid.Float64Range(0, 0.2).Draw(t, "drop")
			dup = rapid.Float64Range(0, 0.2).Draw(t, "dup")
			reorder = rapid.Float64Range(0, 0.2).Draw(t, "reorder")
		}
		psn := uint32(rapid.IntRange(0, 1<<24-1).Draw(t, "psnRandom"))
		if rapid.Bool().Draw(t, "psnNearWrap") {
			psn = uint32(1<<24 - rapid.IntRange(1, 500).Draw(t, "psnBeforeWrap"))
		}
		ord := rapid.IntRange(1, 8).Draw(t, "ord")
		ird := ord + rapid.IntRange(0, 4).Draw(t, "irdExtra")
		window := uint32(0)
		if lossy {
			// Go-back-N under 20% loss with 2^23 PSNs in flight would resend
			// thousands of packets per loss: bound the window as rxe does.
			window = uint32(rapid.SampledFrom([]int{16, 64, 128}).Draw(t, "window"))
		}
		lateRecv := rapid.Bool().Draw(t, "lateRecv")
		seed := rapid.Uint64().Draw(t, "seed")

		// Generate the operations and lay out memory: every op has its own
		// local and remote range; atomics share one counter at b+0.
		ops := make([]opSpec, nops)
		loff, roff := 0, 64
		nrecv := 0
		for i := range ops {
			o := &ops[i]
			o.op = rapid.SampledFrom(allOps).Draw(t, fmt.Sprintf("op%d", i))
			o.recv = -1
			switch {
			case o.op == rc.WRAtomicCmpSwap || o.op == rc.WRAtomicFetchAdd || o.op == rc.WRAtomicWrite:
				o.size = 8
			default:
				o.size = sizeGen(mtu).Draw(t, fmt.Sprintf("size%d", i))
			}
			loff = (loff + 7) &^ 7
			roff = (roff + 7) &^ 7
			o.loff, o.roff = loff, roff
			loff += o.size
			roff += o.size
			if o.op == rc.WRSend || o.op == rc.WRSendWithImm || o.op == rc.WRSendWithInv || o.op == rc.WRRDMAWriteWithImm {
				o.recv = nrecv
				nrecv++
			}
		}
		cfg := rc.DefaultConfig()
		cfg.MTU, cfg.MaxRdAtomic, cfg.MaxDestRdAtomic, cfg.Window = mtu, ord, ird, window
		cfg.Timeout = uint8(rapid.IntRange(1, 3).Draw(t, "timeout"))
		cfg.RetryCnt, cfg.RetryCnt7Infinite = 7, true // loss is unbounded: retry forever (rxe mode)
		cfg.RNRRetry, cfg.MinRNRTimer = 7, 1
		cfgA, cfgB := cfg, cfg
		cfgA.SQPSN = psn
		cfgB.SQPSN = uint32(rapid.IntRange(0, 1<<24-1).Draw(t, "psnB"))
		p := newPair(t, cfgA, cfgB, loff+8, roff+8, seed)
		for i := range p.net.Link {
			p.net.Link[i] = rctest.Link{Delay: sim.Microsecond, Drop: drop, Dup: dup, Reorder: reorder}
		}

		// The model: initial memory, then the effect of each op in order.
		wantA := bytes.Clone(p.mrA.Buf)
		wantB := bytes.Clone(p.mrB.Buf)
		counter := binary.LittleEndian.Uint64(wantB[0:])
		recvBufs := make([][]byte, nrecv)
		for i := range ops {
			o := &ops[i]
			local := p.mrA.Buf[o.loff : o.loff+o.size]
			wr := rc.WR{ID: uint64(i + 1), Opcode: o.op, Local: local, RemoteAddr: p.mrB.Addr + uint64(o.roff),
				RKey: p.mrB.RKey, Imm: uint32(i) * 0x01010101}
			switch o.op {
			case rc.WRRDMAWrite, rc.WRRDMAWriteWithImm:
				copy(wantB[o.roff:], local)
			case rc.WRRDMARead:
				copy(wantA[o.loff:], wantB[o.roff:o.roff+o.size])
			case rc.WRAtomicCmpSwap, rc.WRAtomicFetchAdd:
				wr.RemoteAddr = p.mrB.Addr
				o.value = counter
				binary.LittleEndian.PutUint64(wantA[o.loff:], counter)
				if o.op == rc.WRAtomicFetchAdd {
					wr.CompareAdd = uint64(rapid.IntRange(1, 1000).Draw(t, fmt.Sprintf("add%d", i)))
					counter += wr.CompareAdd
				} else {
					wr.Swap = rapid.Uint64().Draw(t, fmt.Sprintf("swap%d", i))
					wr.CompareAdd = counter + uint64(rapid.IntRange(0, 1).Draw(t, fmt.Sprintf("miss%d", i)))
					if wr.CompareAdd == counter {
						counter = wr.Swap
					}
				}
			case rc.WRAtomicWrite:
				copy(wantB[o.roff:], local)
			case rc.WRFlush:
				wr.Local, wr.Length, wr.FlushType, wr.FlushLevel = nil, uint32(o.size), 1, 0
			case rc.WRSendWithInv:
				o.invKey = 0x1000 + uint32(i)
				require.NoError(t, p.memB.Register(&rc.MR{Addr: 0x9000_0000, RKey: o.invKey, Access: rc.RemoteWrite, Buf: make([]byte, 8)}))
				wr.InvRKey = o.invKey
			}
			if o.recv >= 0 {
				// Receive buffers a bit larger than the SEND.
				recvBufs[o.recv] = make([]byte, o.size+rapid.IntRange(0, 100).Draw(t, fmt.Sprintf("slack%d", i)))
			}
			require.NoError(t, p.a.PostSend(wr))
		}
		binary.LittleEndian.PutUint64(wantB[0:], counter)
		postRecvs := func() {
			for i, b := range recvBufs {
				require.NoError(t, p.b.PostRecv(rc.RecvWR{ID: uint64(1000 + i), Buf: b}))
			}
		}
		if !lateRecv {
			postRecvs()
		} else {
			// Post the receives late: SENDs meet RNR NAKs first (rnr_retry 7
			// is infinite).
			p.net.RunUntil(func() bool { return false }, 25*sim.Microsecond)
			postRecvs()
		}
		done := func() bool {
			return len(p.net.Completions[rctest.A]) >= nops && len(p.net.Completions[rctest.B]) >= nrecv
		}
		require.True(t, p.net.RunUntil(done, 100*sim.Second), "not all WRs completed: a %d/%d, b %d/%d, stats a %+v b %+v",
			len(p.net.Completions[rctest.A]), nops, len(p.net.Completions[rctest.B]), nrecv, p.a.Stats(), p.b.Stats())
		p.net.Run(200 * sim.Second) // drain: nothing more may complete
		ca, cb := p.net.Completions[rctest.A], p.net.Completions[rctest.B]
		require.Len(t, ca, nops, "each WR completes exactly once")
		require.Len(t, cb, nrecv, "each receive completes exactly once")
		for i, c := range ca {
			o := ops[i]
			require.Equal(t, uint64(i+1), c.WRID, "completion order")
			require.Equal(t, rc.Success, c.Status, "WR %d (%s)", i+1, o.op)
			wantLen := uint32(o.size)
			require.Equal(t, wantLen, c.ByteLen, "WR %d (%s)", i+1, o.op)
		}
		ri := 0
		for i, o := range ops {
			if o.recv < 0 {
				continue
			}
			c := cb[ri]
			require.Equal(t, uint64(1000+o.recv), c.WRID)
			require.Equal(t, rc.Success, c.Status)
			require.Equal(t, uint32(o.size), c.ByteLen)
			switch o.op {
			case rc.WRRDMAWriteWithImm:
				require.Equal(t, rc.WCRecvRDMAWithImm, c.Opcode)
				require.Equal(t, rc.WithImm, c.Flags)
				require.Equal(t, uint32(i)*0x01010101, c.Imm)
			case rc.WRSendWithImm:
				require.Equal(t, rc.WCRecv, c.Opcode)
				require.Equal(t, rc.WithImm, c.Flags)
				require.Equal(t, uint32(i)*0x01010101, c.Imm)
				require.Equal(t, p.mrA.Buf[o.loff:o.loff+o.size], recvBufs[o.recv][:o.size])
			case rc.WRSendWithInv:
				require.Equal(t, rc.WithInv, c.Flags)
				require.Equal(t, o.invKey, c.InvRKey)
				require.False(t, p.memB.Lookup(o.invKey).Valid(), "invalidated")
				require.Equal(t, p.mrA.Buf[o.loff:o.loff+o.size], recvBufs[o.recv][:o.size])
			default:
				require.Equal(t, rc.WCRecv, c.Opcode)
				require.Zero(t, c.Flags)
				require.Equal(t, p.mrA.Buf[o.loff:o.loff+o.size], recvBufs[o.recv][:o.size])
			}
			ri++
		}
		require.True(t, bytes.Equal(wantB, p.mrB.Buf), "responder memory differs from the model at byte %d", firstDiff(wantB, p.mrB.Buf))
		require.True(t, bytes.Equal(wantA, p.mrA.Buf), "requester memory differs from the model at byte %d", firstDiff(wantA, p.mrA.Buf))
		require.Equal(t, rc.StateRTS, p.a.State())
		require.Equal(t, rc.StateRTS, p.b.State())
		_, wake := p.a.NextWake()
		require.False(t, wake, "no timer left running once everything is acknowledged")
	})
}

// sizeGen draws message sizes 0..20000: anywhere, large, or at the PMTU
// boundaries where segmentation changes.
func sizeGen(mtu int) *rapid.Generator[int] {
	return rapid.OneOf(
		rapid.IntRange(0, 20000),
		rapid.IntRange(8000, 20000),
		rapid.SampledFrom([]int{0, 1, 3, mtu - 1, mtu, mtu + 1, 2 * mtu, 3*mtu - 1, 3*mtu + 1, 20000}),
	)
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}
