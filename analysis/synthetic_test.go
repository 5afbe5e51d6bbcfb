package analysis_test

import (
	"testing"
	"time"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/cm"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type W = []analysis.Warning

const (
	ackUnlimited = 0x1F
	nakSeq       = 0x60
)

// expectStream sends each packet and checks the warnings of each frame.
func expectStream(t *testing.T, c *conv, steps []struct {
	p    pkt
	want W
}) {
	t.Helper()
	for i, s := range steps {
		got := c.send(s.p)
		if len(s.want) == 0 {
			assert.Empty(t, got, "step %d (%s psn %d)", i, s.p.op, s.p.psn)
		} else {
			assert.Equal(t, s.want, got, "step %d (%s psn %d)", i, s.p.op, s.p.psn)
		}
	}
}

type step = struct {
	p    pkt
	want W
}

func direction(t *testing.T, c *conv, fromB bool) *analysis.Direction {
	t.Helper()
	src := "192.168.1.1"
	if fromB {
		src = "192.168.1.2"
	}
	for _, conn := range c.tr.Summary().Connections {
		for _, d := range []*analysis.Direction{conn.A, conn.B} {
			if d != nil && d.Src.String() == src {
				return d
			}
		}
	}
	t.Fatalf("no direction from %s", src)
	return nil
}

func TestWarnPSNGap(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendOnly, psn: 100, payload: 10}, nil}, // first packet: nothing to compare
		{pkt{op: opcode.RCSendOnly, psn: 101, payload: 10}, nil},
		{pkt{op: opcode.RCSendOnly, psn: 104, payload: 10}, W{analysis.PSNGap}},
		{pkt{op: opcode.RCSendOnly, psn: 105, payload: 10}, nil},
	})
	d := direction(t, c, false)
	assert.Equal(t, uint64(1), d.PSNGaps)
	assert.Equal(t, uint64(2), d.MissingPSNs)
}

func TestWarnDuplicatePSN(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendOnly, psn: 100, payload: 10, ackReq: true}, nil},
		{pkt{op: opcode.RCAcknowledge, psn: 100, syn: ackUnlimited, fromB: true}, nil},
		{pkt{op: opcode.RCSendOnly, psn: 100, payload: 10, ackReq: true}, W{analysis.DuplicatePSN}},
		{pkt{op: opcode.RCSendOnly, psn: 101, payload: 10}, nil},
	})
	assert.Equal(t, uint64(1), direction(t, c, false).DuplicatePSNs)
	assert.Equal(t, uint64(2), direction(t, c, false).Message("send").Count, "the duplicate is not a new message")

	// UC never retransmits: any repeat is a duplicate.
	c = newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.UCSendOnly, psn: 7, payload: 1}, nil},
		{pkt{op: opcode.UCSendOnly, psn: 7, payload: 1}, W{analysis.DuplicatePSN}},
	})
}

func TestWarnRetransmissionAfterNAK(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendOnly, psn: 100, payload: 10}, nil},
		{pkt{op: opcode.RCSendOnly, psn: 102, payload: 10}, W{analysis.PSNGap}}, // 101 lost
		{pkt{op: opcode.RCAcknowledge, psn: 101, syn: nakSeq, fromB: true}, W{analysis.NAKPSNSequenceError}},
		{pkt{op: opcode.RCSendOnly, psn: 101, payload: 10}, W{analysis.Retransmission}},
		{pkt{op: opcode.RCSendOnly, psn: 102, payload: 10}, W{analysis.Retransmission}},
		{pkt{op: opcode.RCSendOnly, psn: 103, payload: 10, ackReq: true}, nil},
		{pkt{op: opcode.RCAcknowledge, psn: 103, syn: ackUnlimited, fromB: true}, nil},
	})
	a, b := direction(t, c, false), direction(t, c, true)
	assert.Equal(t, uint64(2), a.Retransmissions)
	assert.Equal(t, uint64(1), b.NAKs.PSNSequenceError)
	assert.Equal(t, uint64(1), b.ACKs)
	assert.Equal(t, int64(1), a.RTT.Samples)
	assert.Equal(t, 10*time.Microsecond, a.RTT.Min)
}

func TestWarnNAKCodes(t *testing.T) {
	for syn, want := range map[uint8]analysis.Warning{
		0x60: analysis.NAKPSNSequenceError,
		0x61: analysis.NAKInvalidRequest,
		0x62: analysis.NAKRemoteAccessError,
		0x63: analysis.NAKRemoteOperationalError,
		0x64: analysis.NAKInvalidRDRequest,
		0x2E: analysis.RNRNAK,
	} {
		c := newConv(t, analysis.Options{})
		expectStream(t, c, []step{
			{pkt{op: opcode.RCSendOnly, psn: 5, payload: 4, ackReq: true}, nil},
			{pkt{op: opcode.RCAcknowledge, psn: 5, syn: syn, fromB: true}, W{want}},
		})
	}
	// A reserved NAK code is counted, not warned about.
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{{pkt{op: opcode.RCAcknowledge, psn: 5, syn: 0x65, fromB: true}, nil}})
	assert.Equal(t, uint64(1), direction(t, c, true).NAKs.Reserved)
}

func TestWarnRNRNAKThenRetry(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendOnly, psn: 100, payload: 10, ackReq: true}, nil},
		{pkt{op: opcode.RCAcknowledge, psn: 100, syn: 0x2E, fromB: true}, W{analysis.RNRNAK}},
		{pkt{op: opcode.RCSendOnly, psn: 100, payload: 10, ackReq: true}, W{analysis.Retransmission}},
		{pkt{op: opcode.RCAcknowledge, psn: 100, syn: ackUnlimited, fromB: true}, nil},
	})
	assert.Equal(t, uint64(1), direction(t, c, true).RNRNAKs)
	assert.Zero(t, direction(t, c, false).RTT.Samples, "Karn: the retransmitted request gives no RTT sample")
}

func TestWarnCNP(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendOnly, psn: 1, payload: 8}, nil},
		// B's notification point tells A's QP to slow down: to QP qa.
		{pkt{op: opcode.CNP, fromB: true}, W{analysis.CNP}},
		{pkt{op: opcode.RCSendOnly, psn: 2, payload: 8, ackReq: true}, nil},
		{pkt{op: opcode.RCAcknowledge, psn: 2, syn: ackUnlimited, fromB: true}, nil}, // pairs the directions
	})
	assert.Equal(t, uint64(1), direction(t, c, false).CNPs, "the CNP names A's traffic")
	assert.Equal(t, uint64(1), direction(t, c, true).CNPsSent)
	assert.Equal(t, uint64(0), direction(t, c, true).CNPs)
	assert.Equal(t, uint64(1), c.tr.Summary().Total(analysis.CNP))
}

func TestWarnECNCE(t *testing.T) {
	for _, e := range []packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1, packet.IBGlobal} {
		c := newConv(t, analysis.Options{})
		c.encap = e
		expectStream(t, c, []step{{pkt{op: opcode.RCSendOnly, psn: 1, payload: 8}, nil}}) // ECT(0): no mark
		c.edit = func(f *packet.FrameFields) {
			f.IPv4.TOS |= 3
			f.IPv6.TrafficClass |= 3
			f.GRH.TClass |= 3
		}
		expectStream(t, c, []step{{pkt{op: opcode.RCSendOnly, psn: 2, payload: 8}, W{analysis.ECNCE}}})
		assert.Equal(t, uint64(1), direction2(t, c).ECNCE, "%s", e)
	}
}

// direction2 returns the first direction of the first connection.
func direction2(t *testing.T, c *conv) *analysis.Direction {
	s := c.tr.Summary()
	require.NotEmpty(t, s.Connections)
	return s.Connections[0].A
}

func TestWarnICRCBad(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{{pkt{op: opcode.RCSendOnly, psn: 1, payload: 8}, nil}})
	c.edit = func(f *packet.FrameFields) { f.ICRCXor = 1 }
	expectStream(t, c, []step{{pkt{op: opcode.RCSendOnly, psn: 2, payload: 8}, W{analysis.ICRCBad}}})
	c.edit = nil
	// The corrupted packet was dropped by the receiver: its good copy is
	// not a duplicate.
	expectStream(t, c, []step{{pkt{op: opcode.RCSendOnly, psn: 2, payload: 8}, nil}})
	d := direction2(t, c)
	assert.Equal(t, uint64(1), d.ICRCBad)
	assert.Equal(t, uint64(2), d.Message("send").Count)
}

func TestWarnVCRCBad(t *testing.T) {
	c := newConv(t, analysis.Options{})
	c.encap = packet.IBLocal
	expectStream(t, c, []step{{pkt{op: opcode.RCSendOnly, psn: 1, payload: 8}, nil}})
	c.edit = func(f *packet.FrameFields) { f.VCRCXor = 1 }
	expectStream(t, c, []step{{pkt{op: opcode.RCSendOnly, psn: 2, payload: 8}, W{analysis.VCRCBad}}})
	assert.Equal(t, uint64(1), direction2(t, c).VCRCBad)
	assert.Equal(t, "lid:1", direction2(t, c).Src.String())

	// With SkipVCRC the caller checks; Observe does not.
	c = newConv(t, analysis.Options{SkipVCRC: true})
	c.encap = packet.IBLocal
	c.edit = func(f *packet.FrameFields) { f.VCRCXor = 1 }
	expectStream(t, c, []step{{pkt{op: opcode.RCSendOnly, psn: 2, payload: 8}, nil}})
}

func TestWarnUnexpectedOpcodeSequence(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendOnly, psn: 100, payload: 10}, nil},
		{pkt{op: opcode.RCSendMiddle, psn: 101, payload: 1024}, W{analysis.UnexpectedOpcodeSequence}}, // middle without first
		{pkt{op: opcode.RCSendLast, psn: 102, payload: 10}, nil},
		{pkt{op: opcode.RCSendFirst, psn: 103, payload: 1024}, nil},
		{pkt{op: opcode.RCSendFirst, psn: 104, payload: 1024}, W{analysis.UnexpectedOpcodeSequence}},       // first inside a message
		{pkt{op: opcode.RCRDMAWriteMiddle, psn: 105, payload: 1024}, W{analysis.UnexpectedOpcodeSequence}}, // write inside a send
		{pkt{op: opcode.RCRDMAWriteLast, psn: 106, payload: 1}, nil},
		{pkt{op: opcode.RCSendLast, psn: 107, payload: 1}, W{analysis.UnexpectedOpcodeSequence}}, // last without first
	})
	d := direction2(t, c)
	assert.Equal(t, uint64(4), d.SequenceErrors)
	assert.Equal(t, uint64(1), d.Message("send").Count, "only the SEND Only was seen whole")
	// Fragments not reassembled: 101-102, the SEND First 103 cut by 104,
	// 104 cut by the WRITE Middle, 105-106, 107.
	assert.Equal(t, uint64(5), d.PartialMessages)

	// The first packet of a flow may be anywhere in a message.
	c = newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendMiddle, psn: 7, payload: 1024}, nil},
		{pkt{op: opcode.RCSendLast, psn: 8, payload: 1}, nil},
		{pkt{op: opcode.RCSendOnly, psn: 9, payload: 1}, nil},
	})
	// So may the first after a gap.
	expectStream(t, c, []step{{pkt{op: opcode.RCSendLast, psn: 20, payload: 1}, W{analysis.PSNGap}}})
}

func TestWarnReadResponseUnmatched(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCRDMAWriteOnly, psn: 100, payload: 8, reth: 8, ackReq: true}, nil},
		{pkt{op: opcode.RCAcknowledge, psn: 100, syn: ackUnlimited, fromB: true}, nil}, // pairs the directions
		{pkt{op: opcode.RCRDMAReadResponseOnly, psn: 101, payload: 8, syn: ackUnlimited, fromB: true}, W{analysis.ReadResponseUnmatched}},
	})
	assert.Equal(t, uint64(1), direction(t, c, true).ReadResponsesUnmatched)

	// Responses to READs issued before the capture started are not flagged.
	c = newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendOnly, psn: 100, payload: 8, ackReq: true}, nil},
		{pkt{op: opcode.RCAcknowledge, psn: 100, syn: ackUnlimited, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseLast, psn: 99, payload: 8, syn: ackUnlimited, fromB: true}, nil},
	})
	// Nor are responses whose requests were never seen at all.
	c = newConv(t, analysis.Options{})
	expectStream(t, c, []step{{pkt{op: opcode.RCRDMAReadResponseMiddle, psn: 5, payload: 1024, fromB: true}, nil}})
}

func TestReadResponses(t *testing.T) {
	// Position errors and gaps inside a READ's responses (PMTU known).
	c := newConv(t, analysis.Options{PMTU: 1024})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCRDMAReadRequest, psn: 100, reth: 4096, ackReq: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseFirst, psn: 100, payload: 1024, syn: ackUnlimited, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseMiddle, psn: 101, payload: 1024, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseLast, psn: 103, payload: 1024, syn: ackUnlimited, fromB: true}, W{analysis.PSNGap}},
		{pkt{op: opcode.RCSendOnly, psn: 104, payload: 1}, nil},
		{pkt{op: opcode.RCRDMAReadRequest, psn: 105, reth: 2048}, nil},
		{pkt{op: opcode.RCRDMAReadResponseMiddle, psn: 105, payload: 1024, fromB: true}, W{analysis.UnexpectedOpcodeSequence}},
		{pkt{op: opcode.RCRDMAReadResponseLast, psn: 106, payload: 1024, syn: ackUnlimited, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseLast, psn: 106, payload: 1024, syn: ackUnlimited, fromB: true}, W{analysis.ReadResponseUnmatched}},
	})
	a := direction(t, c, false)
	assert.Equal(t, uint64(2), a.ReadRequests)
	assert.Equal(t, uint64(1), a.ReadsCompleted)
	assert.Equal(t, uint64(1), a.PartialMessages, "the READ with a missing response")

	// PMTU unknown: the next request's PSN tells how many PSNs the READ
	// took, and the responses may come after it.
	c = newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCRDMAReadRequest, psn: 0xFFFFFE, reth: 4096, ackReq: true}, nil},
		{pkt{op: opcode.RCSendOnly, psn: 2, payload: 1, ackReq: true}, nil}, // 0xFFFFFE..1: 4 PSNs
		{pkt{op: opcode.RCRDMAReadResponseFirst, psn: 0xFFFFFE, payload: 1024, syn: ackUnlimited, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseMiddle, psn: 0xFFFFFF, payload: 1024, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseMiddle, psn: 0, payload: 1024, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseLast, psn: 1, payload: 1024, syn: ackUnlimited, fromB: true}, nil},
		{pkt{op: opcode.RCAcknowledge, psn: 2, syn: ackUnlimited, fromB: true}, nil},
		{pkt{op: opcode.RCSendOnly, psn: 3, payload: 1}, nil},
	})
	s := c.tr.Summary()
	require.Len(t, s.Connections, 1)
	assert.Equal(t, 1024, s.Connections[0].PMTU)
	a = s.Connections[0].A
	assert.Equal(t, uint64(4096), a.Message("read").Bytes)
	assert.Equal(t, int64(2), a.RTT.Samples)
	assert.Equal(t, uint64(4), s.Connections[0].B.ReadResponsesMatched)
}

func TestPSNWraparound(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendFirst, psn: 0xFFFFFE, payload: 256}, nil},
		{pkt{op: opcode.RCSendMiddle, psn: 0xFFFFFF, payload: 256}, nil},
		{pkt{op: opcode.RCSendLast, psn: 0, payload: 3, ackReq: true}, nil},
		{pkt{op: opcode.RCAcknowledge, psn: 0, syn: ackUnlimited, fromB: true}, nil},
		{pkt{op: opcode.RCSendOnly, psn: 1, payload: 3}, nil},
		{pkt{op: opcode.RCSendOnly, psn: 0xFFFFFF, payload: 3}, W{analysis.DuplicatePSN}}, // before 0 modulo 2^24, acknowledged
	})
	m := direction2(t, c).Message("send")
	assert.Equal(t, uint64(2), m.Count)
	assert.Equal(t, uint64(515), m.Max)
	assert.Equal(t, 256, c.tr.Summary().Connections[0].PMTU)
}

func TestUDPSNsNotChecked(t *testing.T) {
	c := newConv(t, analysis.Options{})
	expectStream(t, c, []step{
		{pkt{op: opcode.UDSendOnly, psn: 10, payload: 100, srcQP: 5}, nil},
		{pkt{op: opcode.UDSendOnly, psn: 900, payload: 100, srcQP: 6}, nil},
		{pkt{op: opcode.UDSendOnly, psn: 11, payload: 100, srcQP: 5}, nil},
		{pkt{op: opcode.UDSendOnly, psn: 11, payload: 100, srcQP: 5}, nil},
		{pkt{op: opcode.UDSendOnly, psn: 50, payload: 100, srcQP: 5}, nil},
	})
	d := direction2(t, c)
	assert.Equal(t, "UD", d.Transport)
	assert.Equal(t, uint64(5), d.Message("send").Count)
	assert.False(t, d.SrcQPKnown, "two source QPs share the flow")
}

// buildREQ and buildREP make CM MADs for a connection from A (QP qa) to B
// (QP qb).
func buildCM(t *testing.T, a cm.AttrID, set func(cm.MAD)) []byte {
	m := cm.MAD(make([]byte, cm.MADLen))
	m.SetBaseVersion(cm.BaseVer)
	m.SetMgmtClass(cm.MgmtClass)
	m.SetClassVersion(cm.ClassVer)
	m.SetMethod(cm.MethodSend)
	m.SetAttributeID(a)
	set(m)
	return m
}

func cmExchange(t *testing.T, c *conv, qa, qb, psnA, psnB uint32, mtu uint8) {
	req := buildCM(t, cm.AttrREQ, func(m cm.MAD) {
		r, err := m.REQ()
		require.NoError(t, err)
		r.SetLocalCommID(0x1000 + qa)
		r.SetLocalQPN(qa)
		r.SetStartingPSN(psnB) // the passive side's first PSN
		r.SetPathMTU(mtu)
	})
	rep := buildCM(t, cm.AttrREP, func(m cm.MAD) {
		r, err := m.REP()
		require.NoError(t, err)
		r.SetLocalCommID(0x2000 + qb)
		r.SetRemoteCommID(0x1000 + qa)
		r.SetLocalQPN(qb)
		r.SetStartingPSN(psnA) // the active side's first PSN
	})
	rtu := buildCM(t, cm.AttrRTU, func(m cm.MAD) {
		r, _ := m.RTU()
		r.SetLocalCommID(0x1000 + qa)
		r.SetRemoteCommID(0x2000 + qb)
	})
	expectStream(t, c, []step{{pkt{mad: req}, nil}, {pkt{mad: rep, fromB: true}, nil}, {pkt{mad: rtu}, nil}})
}

func TestCMPairsAndSetsPSNs(t *testing.T) {
	c := newConv(t, analysis.Options{})
	cmExchange(t, c, c.qa, c.qb, 5000, 9000, 2) // PMTU 512
	// Two QPs between the same hosts: the CM-learnt pair is used, and its
	// PMTU sizes the READ exactly.
	expectStream(t, c, []step{
		{pkt{op: opcode.RCRDMAReadRequest, psn: 5000, reth: 1500, ackReq: true}, nil}, // 3 PSNs at PMTU 512
		{pkt{op: opcode.RCSendOnly, psn: 5003, payload: 4}, nil},
		{pkt{op: opcode.RCSendOnly, psn: 9000, payload: 4, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseFirst, psn: 5000, payload: 512, syn: ackUnlimited, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseMiddle, psn: 5001, payload: 512, fromB: true}, nil},
		{pkt{op: opcode.RCRDMAReadResponseLast, psn: 5002, payload: 476, syn: ackUnlimited, fromB: true}, nil},
	})
	s := c.tr.Summary()
	var conn *analysis.Connection
	for _, x := range s.Connections {
		if x.CM != nil {
			conn = x
		}
	}
	require.NotNil(t, conn)
	assert.Equal(t, "cm", conn.PairedBy)
	assert.Equal(t, 512, conn.PMTU)
	assert.Equal(t, c.qb, conn.A.DstQP)
	assert.Equal(t, c.qa, conn.B.DstQP)
	assert.Equal(t, uint64(1500), conn.A.Message("read").Bytes)
	assert.Equal(t, 3, conn.CM.RTUFrame)

	// The first data PSN differs from the CM's: PSNs were lost.
	c = newConv(t, analysis.Options{})
	cmExchange(t, c, c.qa, c.qb, 5000, 9000, 3)
	expectStream(t, c, []step{{pkt{op: opcode.RCSendOnly, psn: 5002, payload: 4}, W{analysis.PSNGap}}})
}

// TestPMTUSources: full First/Middle packets are the path MTU whatever CM or
// the option said; CM overrides the option.
func TestPMTUSources(t *testing.T) {
	c := newConv(t, analysis.Options{PMTU: 4096})
	cmExchange(t, c, c.qa, c.qb, 10, 20, 5) // CM says 4096
	expectStream(t, c, []step{
		{pkt{op: opcode.RCSendFirst, psn: 10, payload: 1024}, nil},
		{pkt{op: opcode.RCSendLast, psn: 11, payload: 10}, nil},
		{pkt{op: opcode.RCRDMAReadRequest, psn: 12, reth: 3000}, nil}, // 3 PSNs at 1024
		{pkt{op: opcode.RCSendOnly, psn: 15, payload: 1}, nil},
	})
	var conn *analysis.Connection
	for _, x := range c.tr.Summary().Connections {
		if x.CM != nil {
			conn = x
		}
	}
	require.NotNil(t, conn)
	assert.Equal(t, 1024, conn.PMTU)
	assert.Equal(t, "packets", conn.PMTUFrom)
	assert.Equal(t, 4096, conn.CM.PMTU)

	c = newConv(t, analysis.Options{PMTU: 256})
	cmExchange(t, c, c.qa, c.qb, 10, 20, 3)
	for _, x := range c.tr.Summary().Connections {
		if x.CM != nil {
			assert.Equal(t, 1024, x.PMTU)
			assert.Equal(t, "cm", x.PMTUFrom)
		}
	}
	c = newConv(t, analysis.Options{PMTU: 512})
	expectStream(t, c, []step{
		{pkt{op: opcode.RCRDMAReadRequest, psn: 1, reth: 1024}, nil}, // 2 PSNs at 512
		{pkt{op: opcode.RCSendOnly, psn: 3, payload: 1}, nil},
	})
	assert.Equal(t, "option", c.tr.Summary().Connections[0].PMTUFrom)
}
