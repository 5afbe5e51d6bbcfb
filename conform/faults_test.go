package conform_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/rc/rctest"
)

// Faults injected into real exchanges between two rc.QPs: either into a
// packet before the peer sees it (rctest Filter: the peer reacts as a
// conforming QP does, so the capture is consistent but for the fault) or
// into the capture afterwards (the other side's reaction then does not
// follow the fault). Each test names the finding and the frame it expects.

// post queues a WR from side s: Local is a slice of s's region at off,
// the remote address that of the peer's region at off.
func (x *exchange) post(t tb, s rctest.Side, id uint64, op rc.WROpcode, size, off int) {
	t.Helper()
	qp, mr, peer, peerMR := x.a, x.mrA, x.b, x.mrB
	if s == rctest.B {
		qp, mr, peer, peerMR = x.b, x.mrB, x.a, x.mrA
	}
	wr := rc.WR{ID: id, Opcode: op, Local: mr.Slice(mr.Addr+uint64(off), size), RemoteAddr: peerMR.Addr + uint64(off),
		RKey: peerMR.RKey, Imm: uint32(id)}
	switch op {
	case rc.WRSend, rc.WRSendWithImm, rc.WRRDMAWriteWithImm:
		require.NoError(t, peer.PostRecv(rc.RecvWR{ID: 1000 + id, Buf: make([]byte, size+64)}))
	case rc.WRAtomicFetchAdd, rc.WRAtomicCmpSwap:
		wr.RemoteAddr = peerMR.Addr + uint64(off&^7)
		wr.CompareAdd = 1
	}
	require.NoError(t, qp.PostSend(wr))
}

func defaultCfg(mtu int) rc.Config {
	cfg := rc.DefaultConfig()
	cfg.MTU, cfg.Timeout, cfg.RetryCnt, cfg.RetryCnt7Infinite = mtu, 3, 7, true
	return cfg
}

// dropOnce returns a Filter that drops the first packet from side s with
// PSN psn and opcode op.
func dropOnce(s rctest.Side, op opcode.Opcode, psn uint32) func(rctest.Side, *packet.Fields) rctest.Verdict {
	done := false
	return func(from rctest.Side, f *packet.Fields) rctest.Verdict {
		if !done && from == s && f.BTH.Opcode == op && f.BTH.PSN == psn {
			done = true
			return rctest.Drop
		}
		return rctest.Pass
	}
}

// goBackExchange is rc's nak_go_back_n script: two 1000-byte SENDs at PMTU
// 256 (PSNs 100-103, 104-107); the first SEND Middle with PSN 102 is lost,
// B NAKs it, A goes back to 102.
func goBackExchange(t tb, vantage rctest.Side) []pkt {
	x := newExchange(t, defaultCfg(256), 100, 500, vantage, 1)
	x.net.Filter = dropOnce(rctest.A, opcode.RCSendMiddle, 102)
	x.post(t, rctest.A, 1, rc.WRSend, 1000, 0)
	x.post(t, rctest.A, 2, rc.WRSend, 1000, 1000)
	x.runAll(t, 2, 2)
	return x.capture()
}

func isSeqNAK(p *pkt) bool {
	return p.f.BTH.Opcode == opcode.RCAcknowledge && p.f.AETH.Syndrome == aeth.NAKSyndrome(aeth.PSNSequenceError)
}

func TestGoBackNClean(t *testing.T) {
	for _, v := range []rctest.Side{rctest.A, rctest.B} {
		pkts := goBackExchange(t, v)
		fs, sum := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
		assert.Empty(t, fs, "vantage %s:\n%s\n%s", v, describe(pkts), dump(fs))
		require.Len(t, sum.Connections, 1)
		assert.Equal(t, 1, sum.Connections[0].AtoB.GoBacks, "vantage %s", v)
		assert.Equal(t, 1, sum.Connections[0].AtoB.NAKs)
	}
}

// TestWrongNAKCode: captured at B (the responder), so A's lost PSN 102 was
// never seen. B's PSN-sequence NAK is rewritten to REMOTE_ACCESS_ERROR: a
// responder cannot judge a request it never received (§5.6).
func TestWrongNAKCode(t *testing.T) {
	pkts := goBackExchange(t, rctest.B)
	i := find(t, pkts, 0, isSeqNAK)
	pkts[i].f.AETH.Syndrome = aeth.NAKSyndrome(aeth.RemoteAccessError)
	fs, sum := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.NAKCode)}, briefs(fs), dump(fs))
	assert.Zero(t, sum.Connections[0].ErrorFrame, "an impossible NAK does not stop the connection")
}

// TestRNRNAKForWrite: B's ACK of an RDMA WRITE Only is turned into an RNR
// NAK before A sees it; A waits and retransmits, B re-ACKs the duplicate.
// A WRITE without immediate consumes no receive WQE (§5.6).
func TestRNRNAKForWrite(t *testing.T) {
	x := newExchange(t, defaultCfg(1024), 10, 20, rctest.A, 1)
	done := false
	x.net.Filter = func(from rctest.Side, f *packet.Fields) rctest.Verdict {
		if !done && from == rctest.B && f.BTH.Opcode == opcode.RCAcknowledge {
			done = true
			f.AETH.Syndrome = aeth.RNRNAKSyndrome(1)
			f.AETH.MSN-- // an RNR NAK leaves the WRITE uncounted (§5.9)
		}
		return rctest.Pass
	}
	x.post(t, rctest.A, 1, rc.WRRDMAWrite, 100, 0)
	x.runAll(t, 1, 0)
	pkts := x.capture()
	i := find(t, pkts, 0, func(p *pkt) bool { return p.f.AETH.Syndrome.Kind() == aeth.RNRNAK })
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.NAKCode)}, briefs(fs), "%s%s", describe(pkts), dump(fs))
}

// TestNAKWrongPSN: captured at B; the NAK names PSN 103 instead of 102,
// which B never received, so its expected PSN cannot be 103 (§5.4).
func TestNAKWrongPSN(t *testing.T) {
	pkts := goBackExchange(t, rctest.B)
	i := find(t, pkts, 0, isSeqNAK)
	pkts[i].f.BTH.PSN = 103
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.NAKPSN)}, briefs(fs), dump(fs))
	assert.Contains(t, fs[0].Message, "NAK PSN_SEQUENCE_ERROR with PSN 0x000067")
}

// TestBadRetransmission: captured at A (the requester), which here skips
// PSN 102 in every go-back after B's NAK of 102: its retransmissions of 102
// are taken off the wire and out of the capture. Every go-back starts at
// 103, after the PSN the NAK named, and 102 is never sent again (§5.5); A
// runs out of retries, and its SENDs stay outstanding.
func TestBadRetransmission(t *testing.T) {
	cfg := defaultCfg(256)
	cfg.RetryCnt, cfg.RetryCnt7Infinite = 2, false
	x := newExchange(t, cfg, 100, 500, rctest.A, 1)
	sent := 0
	x.net.Filter = func(from rctest.Side, f *packet.Fields) rctest.Verdict {
		if from == rctest.A && f.BTH.PSN == 102 {
			sent++
			return rctest.Drop
		}
		return rctest.Pass
	}
	x.post(t, rctest.A, 1, rc.WRSend, 1000, 0)
	x.post(t, rctest.A, 2, rc.WRSend, 1000, 1000)
	x.runAll(t, 2, 0)
	require.Greater(t, sent, 2)
	var pkts []pkt
	seen := false
	for _, p := range x.capture() {
		if p.from == rctest.A && p.f.BTH.PSN == 102 {
			if seen {
				continue // the requester "skips" it
			}
			seen = true
		}
		pkts = append(pkts, p)
	}
	nak := find(t, pkts, 0, isSeqNAK)
	require.Equal(t, uint32(103), pkts[nak+1].f.BTH.PSN, describe(pkts))
	fs, sum := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	require.NotEmpty(t, fs)
	assert.Equal(t, want(nak+2, conform.BadRetransmission), briefs(fs)[0], "%s%s", describe(pkts), dump(fs))
	for _, f := range fs {
		assert.Equal(t, conform.BadRetransmission, f.Kind, dump(fs))
		assert.Equal(t, "§5.5", f.Rule)
	}
	assert.Contains(t, fs[0].Expected, "PSN 0x000066, where the NAK at frame")
	assert.Equal(t, 2, sum.Connections[0].AtoB.Outstanding, "both SENDs' Last packets (AckReq) await their ACK")
	assert.Equal(t, 4, sum.Connections[0].AtoB.OutstandingFrame)
}

// TestOutstandingNotMissing: the last ACK of a clean exchange is removed;
// the AckReq requests it covered are outstanding at the end of the
// capture, not findings. The oldest is the first AckReq request no
// remaining ACK covers.
func TestOutstandingNotMissing(t *testing.T) {
	x := newExchange(t, defaultCfg(512), rc.PSNMask-3, 7, rctest.A, 1)
	x.post(t, rctest.A, 1, rc.WRSend, 1200, 0)
	x.post(t, rctest.A, 2, rc.WRRDMAWrite, 40, 2000)
	x.post(t, rctest.A, 3, rc.WRSendWithImm, 3, 4000)
	x.runAll(t, 3, 2)
	pkts := x.capture()
	last := len(pkts) - 1
	require.Equal(t, opcode.RCAcknowledge, pkts[last].f.BTH.Opcode, describe(pkts))
	pkts = pkts[:last]
	level := uint32(rc.PSNMask - 3)
	for _, p := range pkts {
		if p.from == rctest.B && rc.DiffPSN(p.f.BTH.PSN+1, level) > 0 {
			level = rc.AddPSN(p.f.BTH.PSN, 1)
		}
	}
	wantFrame := 1 + find(t, pkts, 0, func(p *pkt) bool {
		return p.from == rctest.A && p.f.BTH.AckReq && rc.DiffPSN(p.f.BTH.PSN, level) >= 0
	})
	fs, sum := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Empty(t, fs, "%s%s", describe(pkts), dump(fs))
	require.Len(t, sum.Connections, 1)
	ch := sum.Connections[0].AtoB
	assert.Positive(t, ch.Outstanding)
	assert.Equal(t, wantFrame, ch.OutstandingFrame, describe(pkts))
	assert.Equal(t, pkts[wantFrame-1].f.BTH.PSN, ch.OutstandingPSN)
	assert.Equal(t, ch.Outstanding, sum.Outstanding)
}

// TestPSNReuseOnRetransmission: A's go-back resends PSN 102 with other
// payload bytes (§5.3).
func TestPSNReuseOnRetransmission(t *testing.T) {
	x := newExchange(t, defaultCfg(256), 100, 500, rctest.A, 1)
	drop := dropOnce(rctest.A, opcode.RCSendMiddle, 102)
	seen := 0
	x.net.Filter = func(from rctest.Side, f *packet.Fields) rctest.Verdict {
		if from == rctest.A && f.BTH.PSN == 102 {
			seen++
			if seen == 2 {
				b := append([]byte(nil), f.Payload...)
				b[0] ^= 0xFF
				f.Payload = b
			}
		}
		return drop(from, f)
	}
	x.post(t, rctest.A, 1, rc.WRSend, 1000, 0)
	x.post(t, rctest.A, 2, rc.WRSend, 1000, 1000)
	x.runAll(t, 2, 2)
	pkts := x.capture()
	i := find(t, pkts, 1, func(p *pkt) bool { return p.from == rctest.A && p.f.BTH.PSN == 102 })
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.PSNReuse)}, briefs(fs), dump(fs))
}

// TestBadICRC: one frame of a clean exchange carries a wrong ICRC (§3).
func TestBadICRC(t *testing.T) {
	pkts := goBackExchange(t, rctest.A)
	pkts[5].icrcXor = 0x1
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(6, conform.BadICRC)}, briefs(fs), dump(fs))
}

// TestMiddleWithoutFirst: A's second SEND First goes out as a SEND Middle;
// B NAKs it with invalid request and both QPs fail (§5.6).
func TestMiddleWithoutFirst(t *testing.T) {
	x := newExchange(t, defaultCfg(256), 100, 500, rctest.A, 1)
	x.net.Filter = func(from rctest.Side, f *packet.Fields) rctest.Verdict {
		if from == rctest.A && f.BTH.PSN == 104 {
			f.BTH.Opcode = opcode.RCSendMiddle
		}
		return rctest.Pass
	}
	x.post(t, rctest.A, 1, rc.WRSend, 1000, 0)
	x.post(t, rctest.A, 2, rc.WRSend, 1000, 1000)
	x.runAll(t, 2, 2)
	pkts := x.capture()
	i := find(t, pkts, 0, func(p *pkt) bool { return p.from == rctest.A && p.f.BTH.PSN == 104 })
	fs, sum := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.OpcodeSequence)}, briefs(fs), "%s%s", describe(pkts), dump(fs))
	assert.NotZero(t, sum.Connections[0].ErrorFrame)
}

// TestReadResponseCountOffByOne: B's fourth response to a 4096-byte READ at
// PMTU 1024 goes out as a Middle instead of the Last: the READ would need
// a fifth response (§5.3). A fails the READ.
func TestReadResponseCountOffByOne(t *testing.T) {
	x := newExchange(t, defaultCfg(1024), 1000, 2000, rctest.B, 1)
	x.net.Filter = func(from rctest.Side, f *packet.Fields) rctest.Verdict {
		if from == rctest.B && f.BTH.Opcode == opcode.RCRDMAReadResponseLast {
			f.BTH.Opcode = opcode.RCRDMAReadResponseMiddle
		}
		return rctest.Pass
	}
	x.post(t, rctest.A, 1, rc.WRRDMARead, 4096, 0)
	x.runAll(t, 1, 0)
	pkts := x.capture()
	i := find(t, pkts, 0, func(p *pkt) bool { return p.from == rctest.B && p.f.BTH.PSN == 1003 })
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.ReadResponse)}, briefs(fs), "%s%s", describe(pkts), dump(fs))
}

// TestReadResponseExtra: a fifth response follows the four a 4096-byte
// READ at PMTU 1024 reserved: one finding for the READ, at the response
// where the Last was due.
func TestReadResponseExtra(t *testing.T) {
	x := newExchange(t, defaultCfg(1024), 1000, 2000, rctest.A, 1)
	x.post(t, rctest.A, 1, rc.WRRDMARead, 4096, 0)
	x.runAll(t, 1, 0)
	pkts := x.capture()
	i := find(t, pkts, 0, func(p *pkt) bool { return p.f.BTH.Opcode == opcode.RCRDMAReadResponseLast })
	extra := pkts[i]
	extra.f.BTH.PSN++
	pkts[i].f.BTH.Opcode = opcode.RCRDMAReadResponseMiddle
	pkts = append(pkts[:i+1:i+1], append([]pkt{extra}, pkts[i+1:]...)...)
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.ReadResponse)}, briefs(fs), "%s%s", describe(pkts), dump(fs))
}

// TestWrongPadCnt: A's 18-byte RDMA WRITE Only goes out with PadCnt 1
// (needs 2): payload and pad make 19 bytes. B NAKs it (§5.2).
func TestWrongPadCnt(t *testing.T) {
	x := newExchange(t, defaultCfg(1024), 5, 6, rctest.A, 1)
	x.net.Filter = func(from rctest.Side, f *packet.Fields) rctest.Verdict {
		if from == rctest.A && f.BTH.Opcode == opcode.RCRDMAWriteOnly {
			f.BTH.PadCnt = 1
		}
		return rctest.Pass
	}
	x.post(t, rctest.A, 1, rc.WRSend, 8, 0)
	x.post(t, rctest.A, 2, rc.WRRDMAWrite, 18, 100)
	x.runAll(t, 2, 1)
	pkts := x.capture()
	i := find(t, pkts, 0, func(p *pkt) bool { return p.f.BTH.Opcode == opcode.RCRDMAWriteOnly })
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.PadCount)}, briefs(fs), "%s%s", describe(pkts), dump(fs))
	assert.Equal(t, "§5.2", fs[0].Rule)
}

// TestShortMiddle: A's SEND Middle carries 1000 bytes at PMTU 1024; B NAKs
// it (§5.2).
func TestShortMiddle(t *testing.T) {
	x := newExchange(t, defaultCfg(1024), 5, 6, rctest.A, 1)
	x.net.Filter = func(from rctest.Side, f *packet.Fields) rctest.Verdict {
		if from == rctest.A && f.BTH.Opcode == opcode.RCSendMiddle {
			f.Payload = f.Payload[:1000]
		}
		return rctest.Pass
	}
	x.post(t, rctest.A, 1, rc.WRSend, 3000, 0)
	x.runAll(t, 1, 1)
	pkts := x.capture()
	i := find(t, pkts, 0, func(p *pkt) bool { return p.f.BTH.Opcode == opcode.RCSendMiddle })
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.PayloadSize)}, briefs(fs), "%s%s", describe(pkts), dump(fs))
}

// TestWrongMSN: one ACK of a clean exchange carries MSN+1 (§5.9).
func TestWrongMSN(t *testing.T) {
	x := newExchange(t, defaultCfg(1024), 5, 6, rctest.A, 1)
	for i := 0; i < 4; i++ {
		x.post(t, rctest.A, uint64(i+1), rc.WRSend, 100, i*100)
	}
	x.runAll(t, 4, 4)
	pkts := x.capture()
	i := find(t, pkts, 1, func(p *pkt) bool { return p.f.BTH.Opcode == opcode.RCAcknowledge })
	pkts[i].f.AETH.MSN++
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(i+1, conform.MSN)}, briefs(fs), "%s%s", describe(pkts), dump(fs))
}

// TestTVerAndPKey: one request with TVer 1, one response with a P_Key of
// another partition (§5.11).
func TestTVerAndPKey(t *testing.T) {
	pkts := goBackExchange(t, rctest.A)
	pkts[2].tver = 1
	j := find(t, pkts, 0, func(p *pkt) bool { return p.from == rctest.B })
	pkts[j].f.BTH.PKey = 0x8001
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(3, conform.TVer), want(j+1, conform.PKeyMismatch)}, briefs(fs), dump(fs))
}
