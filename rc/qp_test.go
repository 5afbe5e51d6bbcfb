package rc_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// Direct tests: packets crafted by hand into one QP ("b", QPN 0x202,
// expecting PSN 100 from its peer 0x101), its output read back.

const bRKey = 0xB1
const bAddr = 0x2000_0000

func newB(t *testing.T, mod func(*rc.Config)) (*rc.QP, *rc.MR) {
	t.Helper()
	mem := rc.NewMemory()
	mr := &rc.MR{Addr: bAddr, RKey: bRKey, Access: rc.AccessAll, Buf: make([]byte, 1<<16)}
	for i := range mr.Buf {
		mr.Buf[i] = byte(i)
	}
	require.NoError(t, mem.Register(mr))
	cfg := rc.DefaultConfig()
	cfg.QPN, cfg.DestQPN, cfg.SQPSN, cfg.RQPSN, cfg.MTU, cfg.Memory = 0x202, 0x101, 500, 100, 256, mem
	if mod != nil {
		mod(&cfg)
	}
	q, err := rc.New(cfg)
	require.NoError(t, err)
	return q, mr
}

func req(op opcode.Opcode, psn uint32, payload []byte) *packet.Fields {
	f := &packet.Fields{Payload: payload}
	f.BTH.Opcode, f.BTH.PSN, f.BTH.DestQP, f.BTH.PKey = op, psn, 0x202, 0xFFFF
	f.SetPad()
	return f
}

func ackReq(f *packet.Fields) *packet.Fields { f.BTH.AckReq = true; return f }

func withRETH(f *packet.Fields, va uint64, n uint32) *packet.Fields {
	f.RETH.VA, f.RETH.RKey, f.RETH.DMALen = va, bRKey, n
	return f
}

func out(q *rc.QP) []packet.Fields { return q.AppendOutgoing(0, nil) }

func requireAck(t *testing.T, f packet.Fields, psn uint32, syn aeth.Syndrome, msn uint32) {
	t.Helper()
	require.Equal(t, opcode.RCAcknowledge, f.BTH.Opcode)
	assert.Equal(t, psn, f.BTH.PSN, "psn")
	assert.Equal(t, syn, f.AETH.Syndrome, "syndrome %s", f.AETH.Syndrome)
	assert.Equal(t, msn, f.AETH.MSN, "msn")
}

var unlimited = aeth.ACKSyndrome(aeth.Unlimited)

// ACKs only on AckReq, coalesced to the latest PSN while not yet sent
// (ib-facts §5.2, §5.3); MSN counts messages (§5.9).
func TestACKCoalescing(t *testing.T) {
	b, mr := newB(t, nil)
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAWriteOnly, 100, []byte{1, 2, 3, 4}), bAddr, 4))
	assert.Empty(t, out(b), "no AckReq, no ACK")
	b.ReceiveFields(0, ackReq(withRETH(req(opcode.RCRDMAWriteOnly, 101, []byte{5}), bAddr+4, 1)))
	b.ReceiveFields(0, ackReq(withRETH(req(opcode.RCRDMAWriteOnly, 102, []byte{6, 7}), bAddr+5, 2)))
	o := out(b)
	require.Len(t, o, 1)
	requireAck(t, o[0], 102, unlimited, 3)
	assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7}, mr.Buf[:7])
}

// One PSN-sequence NAK per gap, carrying ePSN (§5.4 rule 2).
func TestSeqNAKOncePerGap(t *testing.T) {
	b, _ := newB(t, nil)
	w := func(psn uint32) *packet.Fields { return withRETH(req(opcode.RCRDMAWriteOnly, psn, nil), bAddr, 0) }
	b.ReceiveFields(0, w(100))
	b.ReceiveFields(0, w(102))
	b.ReceiveFields(0, w(103))
	b.ReceiveFields(0, w(104))
	o := out(b)
	require.Len(t, o, 1)
	requireAck(t, o[0], 101, aeth.NAKSyndrome(aeth.PSNSequenceError), 1)
	b.ReceiveFields(0, w(101)) // the gap closes
	b.ReceiveFields(0, w(104)) // a new gap: a new NAK
	o = out(b)
	require.Len(t, o, 1)
	requireAck(t, o[0], 102, aeth.NAKSyndrome(aeth.PSNSequenceError), 2)
	assert.Equal(t, uint32(102), b.ExpectedPSN())
	assert.Equal(t, rc.StateRTS, b.State())
}

// A duplicate SEND/WRITE is ACKed with ePSN-1 and unlimited credits even
// without AckReq, and not executed again (§5.4 rule 3).
func TestDuplicateReACK(t *testing.T) {
	b, mr := newB(t, func(c *rc.Config) { c.AdvertiseCredits = true })
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAWriteOnly, 100, []byte{9, 9, 9, 9}), bAddr, 4))
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAWriteOnly, 101, nil), bAddr, 0))
	mr.Buf[0] = 0
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAWriteOnly, 100, []byte{9, 9, 9, 9}), bAddr, 4))
	o := out(b)
	require.Len(t, o, 1)
	requireAck(t, o[0], 101, unlimited, 2)
	assert.Equal(t, byte(0), mr.Buf[0], "not written again")
	// A fresh AckReq ACK advertises the posted receives (Config.AdvertiseCredits, §5.8).
	require.NoError(t, b.PostRecv(rc.RecvWR{ID: 1, Buf: make([]byte, 8)}))
	require.NoError(t, b.PostRecv(rc.RecvWR{ID: 2, Buf: make([]byte, 8)}))
	b.ReceiveFields(0, ackReq(withRETH(req(opcode.RCRDMAWriteOnly, 102, nil), bAddr, 0)))
	o = out(b)
	require.Len(t, o, 1)
	requireAck(t, o[0], 102, aeth.ACKSyndrome(2), 3)
}

// Class C errors (§5.6): NAK invalid request with the packet's PSN, QP to
// Error, posted receives flushed.
func TestInvalidRequests(t *testing.T) {
	full := make([]byte, 256)
	cases := []struct {
		name string
		mod  func(*rc.Config)
		pkts []*packet.Fields
		code aeth.NAKCode
	}{
		{"middle without first", nil, []*packet.Fields{req(opcode.RCSendMiddle, 100, full)}, aeth.InvalidRequest},
		{"last without first", nil, []*packet.Fields{withRETH(req(opcode.RCRDMAWriteLast, 100, full[:4]), bAddr, 4)}, aeth.InvalidRequest},
		{"first inside a send", nil, []*packet.Fields{req(opcode.RCSendFirst, 100, full), req(opcode.RCSendFirst, 101, full)}, aeth.InvalidRequest},
		{"write inside a send", nil, []*packet.Fields{req(opcode.RCSendFirst, 100, full), withRETH(req(opcode.RCRDMAWriteOnly, 101, nil), bAddr, 0)}, aeth.InvalidRequest},
		{"short send first", nil, []*packet.Fields{req(opcode.RCSendFirst, 100, full[:200])}, aeth.InvalidRequest},
		{"empty send last", nil, []*packet.Fields{req(opcode.RCSendFirst, 100, full), req(opcode.RCSendLast, 101, nil)}, aeth.InvalidRequest},
		{"send only above PMTU", nil, []*packet.Fields{req(opcode.RCSendOnly, 100, make([]byte, 257))}, aeth.InvalidRequest},
		{"wrong pad", nil, []*packet.Fields{func() *packet.Fields { f := req(opcode.RCSendOnly, 100, full[:5]); f.BTH.PadCnt = 0; return f }()}, aeth.InvalidRequest},
		{"write only shorter than RETH", nil, []*packet.Fields{withRETH(req(opcode.RCRDMAWriteOnly, 100, full[:8]), bAddr, 12)}, aeth.InvalidRequest},
		{"write first that fits one packet", nil, []*packet.Fields{withRETH(req(opcode.RCRDMAWriteFirst, 100, full), bAddr, 256)}, aeth.InvalidRequest},
		{"write last too long", nil, []*packet.Fields{withRETH(req(opcode.RCRDMAWriteFirst, 100, full), bAddr, 300), req(opcode.RCRDMAWriteLast, 101, full[:48])}, aeth.InvalidRequest},
		{"read with IRD 0", func(c *rc.Config) { c.MaxDestRdAtomic = 0 }, []*packet.Fields{withRETH(req(opcode.RCRDMAReadRequest, 100, nil), bAddr, 8)}, aeth.InvalidRequest},
		{"read not allowed on QP", func(c *rc.Config) { c.Access = rc.RemoteWrite }, []*packet.Fields{withRETH(req(opcode.RCRDMAReadRequest, 100, nil), bAddr, 8)}, aeth.InvalidRequest},
		{"write not allowed on QP", func(c *rc.Config) { c.Access = 0 }, []*packet.Fields{withRETH(req(opcode.RCRDMAWriteOnly, 100, nil), bAddr, 0)}, aeth.InvalidRequest},
		{"misaligned atomic", nil, []*packet.Fields{func() *packet.Fields {
			f := req(opcode.RCFetchAdd, 100, nil)
			f.AtomicETH.VA, f.AtomicETH.RKey = bAddr+4, bRKey
			return f
		}()}, aeth.InvalidRequest},
		{"bad R_Key", nil, []*packet.Fields{func() *packet.Fields {
			f := withRETH(req(opcode.RCRDMAReadRequest, 100, nil), bAddr, 8)
			f.RETH.RKey = 0x77
			return f
		}()}, aeth.RemoteAccessError},
		{"out of range", nil, []*packet.Fields{withRETH(req(opcode.RCRDMAReadRequest, 100, nil), bAddr+1<<16-4, 8)}, aeth.RemoteAccessError},
		{"below the region", nil, []*packet.Fields{withRETH(req(opcode.RCRDMAWriteOnly, 100, full[:4]), bAddr-2, 4)}, aeth.RemoteAccessError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b, _ := newB(t, c.mod)
			require.NoError(t, b.PostRecv(rc.RecvWR{ID: 5, Buf: make([]byte, 4096)}))
			for _, p := range c.pkts {
				b.ReceiveFields(0, p)
			}
			o := out(b)
			require.NotEmpty(t, o)
			last := o[len(o)-1]
			requireAck(t, last, c.pkts[len(c.pkts)-1].BTH.PSN, aeth.NAKSyndrome(c.code), 0)
			assert.Equal(t, rc.StateError, b.State())
			comps := b.AppendCompletions(nil)
			require.Len(t, comps, 1)
			assert.Equal(t, rc.WRFlushErr, comps[0].Status)
			assert.Equal(t, uint64(5), comps[0].WRID)
		})
	}
}

// A SEND with Invalidate naming an unknown R_Key: class J, the receive
// completes with REM_INV_REQ_ERR and the QP fails (§5.6).
func TestSendWithInvalidateBadKey(t *testing.T) {
	b, _ := newB(t, nil)
	require.NoError(t, b.PostRecv(rc.RecvWR{ID: 5, Buf: make([]byte, 64)}))
	f := ackReq(req(opcode.RCSendOnlyWithInvalidate, 100, []byte("hi")))
	f.IETH.RKey = 0x4444
	b.ReceiveFields(0, f)
	c := b.AppendCompletions(nil)
	require.Len(t, c, 1)
	assert.Equal(t, rc.RemInvReqErr, c[0].Status)
	assert.Equal(t, rc.StateError, b.State())
	o := out(b)
	require.Len(t, o, 1)
	requireAck(t, o[0], 100, aeth.NAKSyndrome(aeth.InvalidRequest), 0)
}

// Duplicate READ: replayed only for a sub-range of a saved resource with
// the same R_Key, from the duplicate's PSN (§5.4 rule 3); First/Only only
// when it starts at the original first PSN.
func TestDuplicateReadSubRange(t *testing.T) {
	b, mr := newB(t, func(c *rc.Config) { c.MTU = 1024 })
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 100, nil), bAddr+100, 3000))
	o := out(b)
	require.Len(t, o, 3)
	assert.Equal(t, []opcode.Opcode{opcode.RCRDMAReadResponseFirst, opcode.RCRDMAReadResponseMiddle, opcode.RCRDMAReadResponseLast},
		[]opcode.Opcode{o[0].BTH.Opcode, o[1].BTH.Opcode, o[2].BTH.Opcode})
	assert.Equal(t, uint32(103), b.ExpectedPSN())
	assert.Equal(t, uint32(1), o[2].AETH.MSN)

	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 101, nil), bAddr+1124, 1976))
	o = out(b)
	require.Len(t, o, 2)
	assert.Equal(t, opcode.RCRDMAReadResponseMiddle, o[0].BTH.Opcode)
	assert.Equal(t, uint32(101), o[0].BTH.PSN)
	assert.Equal(t, mr.Buf[1124:2148], o[0].Payload)
	assert.Equal(t, opcode.RCRDMAReadResponseLast, o[1].BTH.Opcode)
	assert.Equal(t, 952, len(o[1].Payload))

	mr.Buf[100] = 0xEE // replays re-read memory
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 100, nil), bAddr+100, 3000))
	o = out(b)
	require.Len(t, o, 3)
	assert.Equal(t, opcode.RCRDMAReadResponseFirst, o[0].BTH.Opcode)
	assert.Equal(t, byte(0xEE), o[0].Payload[0])

	for _, bad := range []*packet.Fields{
		withRETH(req(opcode.RCRDMAReadRequest, 101, nil), bAddr+1124, 1977), // beyond the original end
		withRETH(req(opcode.RCRDMAReadRequest, 101, nil), bAddr+50, 100),    // before the original VA
		func() *packet.Fields {
			f := withRETH(req(opcode.RCRDMAReadRequest, 101, nil), bAddr+1124, 100)
			f.RETH.RKey = 0x99
			return f
		}(),
		withRETH(req(opcode.RCRDMAReadRequest, 99, nil), bAddr, 8), // no resource holds PSN 99
	} {
		b.ReceiveFields(0, bad)
		assert.Empty(t, out(b), "silently dropped (class D)")
	}
	assert.Equal(t, rc.StateRTS, b.State())
	assert.Equal(t, uint32(1), b.MSN(), "duplicates do not count")
}

// Duplicate atomics are answered from the saved value, never executed
// again; once the IRD ring has overwritten the resource they are dropped
// (§5.4).
func TestDuplicateAtomic(t *testing.T) {
	b, mr := newB(t, func(c *rc.Config) { c.MaxDestRdAtomic = 1 })
	fa := func(psn uint32) *packet.Fields {
		f := req(opcode.RCFetchAdd, psn, nil)
		f.AtomicETH.VA, f.AtomicETH.RKey, f.AtomicETH.SwapAdd = bAddr+8, bRKey, 1
		return f
	}
	orig := mr.Buf[8]
	b.ReceiveFields(0, fa(100))
	b.ReceiveFields(0, fa(101))
	o := out(b)
	require.Len(t, o, 2)
	assert.Equal(t, uint64(orig)+1, o[1].AtomicAckETH.OrigRemDt&0xFF)
	b.ReceiveFields(0, fa(101))
	o = out(b)
	require.Len(t, o, 1)
	assert.Equal(t, opcode.RCAtomicAcknowledge, o[0].BTH.Opcode)
	assert.Equal(t, uint64(orig)+1, o[0].AtomicAckETH.OrigRemDt&0xFF)
	b.ReceiveFields(0, fa(100)) // resource overwritten by PSN 101
	assert.Empty(t, out(b))
	assert.Equal(t, orig+2, mr.Buf[8], "executed exactly twice")
}

// Packets for another QP, with a non-matching P_Key or a non-RC opcode are
// dropped silently (§5.11).
func TestForeignPacketsDropped(t *testing.T) {
	b, _ := newB(t, nil)
	f := ackReq(withRETH(req(opcode.RCRDMAWriteOnly, 100, nil), bAddr, 0))
	f.BTH.DestQP = 0x203
	b.ReceiveFields(0, f)
	f = ackReq(withRETH(req(opcode.RCRDMAWriteOnly, 100, nil), bAddr, 0))
	f.BTH.PKey = 0x7FFE
	b.ReceiveFields(0, f)
	f = ackReq(withRETH(req(opcode.UCRDMAWriteOnly, 100, nil), bAddr, 0))
	b.ReceiveFields(0, f)
	assert.Empty(t, out(b))
	assert.Equal(t, uint64(3), b.Stats().Dropped)
	assert.True(t, rc.PKeyMatch(0xFFFF, 0x7FFF))
	assert.False(t, rc.PKeyMatch(0x7FFF, 0x7FFF), "neither is a full member")
	assert.False(t, rc.PKeyMatch(0x8000, 0x8000), "zero low bits")
}

// newA returns a requester QP (QPN 0x101) whose peer is 0x202.
func newA(t *testing.T, mod func(*rc.Config)) *rc.QP {
	t.Helper()
	cfg := rc.DefaultConfig()
	cfg.QPN, cfg.DestQPN, cfg.SQPSN, cfg.RQPSN, cfg.MTU, cfg.Memory = 0x101, 0x202, 100, 500, 256, rc.NewMemory()
	if mod != nil {
		mod(&cfg)
	}
	q, err := rc.New(cfg)
	require.NoError(t, err)
	return q
}

// AckReq on the Last/Only packet and on every 64th packet without it
// (§5.2); PadCnt only on the last packet.
func TestAckReqEvery64(t *testing.T) {
	a := newA(t, nil)
	require.NoError(t, a.PostSend(rc.WR{ID: 1, Opcode: rc.WRRDMAWrite, Local: make([]byte, 199*256+3)}))
	o := a.AppendOutgoing(0, nil)
	require.Len(t, o, 200)
	for i, f := range o {
		want := i == 63 || i == 127 || i == 191 || i == 199
		assert.Equal(t, want, f.BTH.AckReq, "packet %d", i)
		if i < 199 {
			assert.Zero(t, f.BTH.PadCnt)
		}
	}
	assert.Equal(t, uint8(1), o[199].BTH.PadCnt)
	assert.Equal(t, opcode.RCRDMAWriteFirst, o[0].BTH.Opcode)
	assert.Equal(t, uint32(199*256+3), o[0].RETH.DMALen)
	assert.Equal(t, opcode.RCRDMAWriteLast, o[199].BTH.Opcode)
}

// AckReq also at least every half window (rounded up), so that a window
// below 128 never fills with packets the responder will not ACK (§5.1,
// §5.2): the first window's worth of a 200-packet WRITE carries AckReq
// exactly on these packets.
func TestAckReqHalfWindow(t *testing.T) {
	for _, c := range []struct {
		window uint32
		ackReq []int // indices of the packets with AckReq
	}{
		{1, []int{0}},
		{2, []int{0, 1}},
		{3, []int{1}},
		{7, []int{3}},
		{63, []int{31}},
		{64, []int{31, 63}},
		{128, []int{63, 127}},
		{0, []int{63, 127, 191, 199}}, // 2^23: every 64th and the Last
	} {
		a := newA(t, func(cfg *rc.Config) { cfg.Window = c.window })
		require.NoError(t, a.PostSend(rc.WR{ID: 1, Opcode: rc.WRRDMAWrite, Local: make([]byte, 200*256)}))
		o := a.AppendOutgoing(0, nil)
		n := int(c.window)
		if n == 0 {
			n = 200
		}
		require.Len(t, o, n, "window %d", c.window)
		var got []int
		for i, f := range o {
			if f.BTH.AckReq {
				got = append(got, i)
			}
		}
		assert.Equal(t, c.ackReq, got, "window %d", c.window)
	}
}

// ORD: at most max_rd_atomic READ/atomics in flight; Fence waits for them
// (§5.5); the window bounds PSNs in flight (§5.1).
func TestORDFenceWindow(t *testing.T) {
	a := newA(t, func(c *rc.Config) { c.MaxRdAtomic = 1 })
	require.NoError(t, a.PostSend(rc.WR{ID: 1, Opcode: rc.WRRDMARead, Local: make([]byte, 600)}))
	require.NoError(t, a.PostSend(rc.WR{ID: 2, Opcode: rc.WRAtomicFetchAdd, Local: make([]byte, 8)}))
	o := a.AppendOutgoing(0, nil)
	require.Len(t, o, 1, "the atomic waits for the READ")
	assert.Equal(t, opcode.RCRDMAReadRequest, o[0].BTH.Opcode)
	assert.Equal(t, uint32(103), a.NextPSN(), "a 600-byte READ at PMTU 256 reserves 3 PSNs")
	resp := func(op opcode.Opcode, psn uint32, n int) *packet.Fields {
		f := &packet.Fields{Payload: make([]byte, n)}
		f.BTH.Opcode, f.BTH.PSN, f.BTH.DestQP, f.BTH.PKey = op, psn, 0x101, 0xFFFF
		f.AETH.Syndrome = unlimited
		return f
	}
	a.ReceiveFields(0, resp(opcode.RCRDMAReadResponseFirst, 100, 256))
	assert.Empty(t, a.AppendOutgoing(0, nil))
	a.ReceiveFields(0, resp(opcode.RCRDMAReadResponseMiddle, 101, 256))
	a.ReceiveFields(0, resp(opcode.RCRDMAReadResponseLast, 102, 88))
	c := a.AppendCompletions(nil)
	require.Len(t, c, 1)
	assert.Equal(t, rc.WCRDMARead, c[0].Opcode)
	o = a.AppendOutgoing(0, nil)
	require.Len(t, o, 1)
	assert.Equal(t, opcode.RCFetchAdd, o[0].BTH.Opcode)
	assert.Equal(t, uint32(103), o[0].BTH.PSN)

	a = newA(t, nil)
	require.NoError(t, a.PostSend(rc.WR{ID: 1, Opcode: rc.WRRDMARead, Local: make([]byte, 8)}))
	require.NoError(t, a.PostSend(rc.WR{ID: 2, Opcode: rc.WRSend, Flags: rc.Fence, Local: make([]byte, 8)}))
	require.Len(t, a.AppendOutgoing(0, nil), 1, "the fenced SEND waits for the READ")

	a = newA(t, func(c *rc.Config) { c.Window = 4 })
	require.NoError(t, a.PostSend(rc.WR{ID: 1, Opcode: rc.WRSend, Local: make([]byte, 2560)}))
	require.Len(t, a.AppendOutgoing(0, nil), 4)
	ack := resp(opcode.RCAcknowledge, 101, 0)
	ack.Payload = nil
	a.ReceiveFields(0, ack)
	require.Len(t, a.AppendOutgoing(0, nil), 2, "two PSNs acknowledged, two more may go")
}

// Timeout 0 means no transport timer (§5.5); retry_cnt 7 with
// RetryCnt7Infinite retries forever (rxe).
func TestTimerOptions(t *testing.T) {
	a := newA(t, func(c *rc.Config) { c.Timeout = 0 })
	require.NoError(t, a.PostSend(rc.WR{ID: 1, Opcode: rc.WRSend}))
	require.Len(t, a.AppendOutgoing(0, nil), 1)
	_, ok := a.NextWake()
	assert.False(t, ok)

	a = newA(t, func(c *rc.Config) { c.Timeout, c.RetryCnt, c.RetryCnt7Infinite = 1, 7, true })
	require.NoError(t, a.PostSend(rc.WR{ID: 1, Opcode: rc.WRSend}))
	now := rc.Time(0)
	for range 100 {
		a.AppendOutgoing(now, nil)
		w, ok := a.NextWake()
		require.True(t, ok)
		require.Equal(t, now+rc.AckTimeout(1), w)
		now = w
		a.Tick(now)
	}
	assert.Equal(t, rc.StateRTS, a.State())
	assert.Equal(t, uint64(100), a.Stats().Timeouts)
	assert.Equal(t, 8192*rc.Nanosecond, rc.AckTimeout(1))
	assert.Equal(t, 67108864*rc.Nanosecond, rc.AckTimeout(14))
	assert.Equal(t, 10*rc.Microsecond, rc.RNRDelay(1))
	assert.Equal(t, 655360*rc.Microsecond, rc.RNRDelay(0))
}

// Unsignalled WRs complete silently on success, but errors and flushes are
// always reported (§5.5).
func TestUnsignaled(t *testing.T) {
	a := newA(t, func(c *rc.Config) { c.SignalAll = false })
	require.NoError(t, a.PostSend(rc.WR{ID: 1, Opcode: rc.WRSend}))
	require.NoError(t, a.PostSend(rc.WR{ID: 2, Opcode: rc.WRSend, Flags: rc.Signaled}))
	require.NoError(t, a.PostSend(rc.WR{ID: 3, Opcode: rc.WRSend}))
	require.NoError(t, a.PostSend(rc.WR{ID: 4, Opcode: rc.WRSend}))
	require.Len(t, a.AppendOutgoing(0, nil), 4)
	ack := &packet.Fields{}
	ack.BTH.Opcode, ack.BTH.PSN, ack.BTH.DestQP, ack.BTH.PKey = opcode.RCAcknowledge, 101, 0x101, 0xFFFF
	ack.AETH.Syndrome = unlimited
	a.ReceiveFields(0, ack)
	c := a.AppendCompletions(nil)
	require.Len(t, c, 1)
	assert.Equal(t, uint64(2), c[0].WRID)
	ack.BTH.PSN = 102
	ack.AETH.Syndrome = aeth.NAKSyndrome(aeth.RemoteOperationalError)
	a.ReceiveFields(0, ack)
	c = a.AppendCompletions(nil)
	require.Len(t, c, 2)
	assert.Equal(t, rc.RemOpErr, c[0].Status)
	assert.Equal(t, uint64(3), c[0].WRID)
	assert.Equal(t, rc.WRFlushErr, c[1].Status)
	assert.Equal(t, uint64(4), c[1].WRID)
}

func TestPostSendChecks(t *testing.T) {
	a := newA(t, func(c *rc.Config) { c.MaxRdAtomic = 0 })
	assert.ErrorIs(t, a.PostSend(rc.WR{Opcode: rc.WRRDMARead}), rc.ErrBadWR)
	assert.ErrorIs(t, a.PostSend(rc.WR{Opcode: 7}), rc.ErrBadWR)
	a = newA(t, nil)
	assert.ErrorIs(t, a.PostSend(rc.WR{Opcode: rc.WRAtomicFetchAdd, Local: make([]byte, 4)}), rc.ErrBadWR)
	assert.ErrorIs(t, a.PostSend(rc.WR{Opcode: rc.WRAtomicWrite, Local: make([]byte, 9)}), rc.ErrBadWR)
	_, err := rc.New(rc.Config{MTU: 300})
	assert.Error(t, err)
}

// RequestAck puts AckReq on the next request packet only.
func TestRequestAck(t *testing.T) {
	q, err := rc.New(rc.Config{QPN: 1, DestQPN: 2, MTU: 256, Timeout: 14, RetryCnt: 7, MaxRdAtomic: 1, MaxDestRdAtomic: 1, Access: rc.AccessAll})
	require.NoError(t, err)
	require.NoError(t, q.PostSend(rc.WR{ID: 1, Opcode: rc.WRRDMAWrite, Local: make([]byte, 256*10), RemoteAddr: 0x1000, RKey: 1}))
	var f packet.Fields
	var got []bool
	for i := 0; i < 10; i++ {
		if i == 3 {
			q.RequestAck()
		}
		require.True(t, q.NextPacket(0, &f))
		got = append(got, f.BTH.AckReq)
	}
	require.Equal(t, []bool{false, false, false, true, false, false, false, false, false, true}, got, "asked on the 4th; the 10th is Last")
}
