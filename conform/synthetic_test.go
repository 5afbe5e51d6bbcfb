package conform_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc/rctest"
)

var unlimited = aeth.ACKSyndrome(aeth.Unlimited)

// check runs a hand-built stream and compares the findings.
func check(t *testing.T, opts conform.Options, pkts []pkt, wantFs ...brief) []conform.Finding {
	t.Helper()
	fs, _ := run(t, opts, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, wantFs, briefs(fs), "%s%s", describe(pkts), dump(fs))
	return fs
}

// TestCleanCMConnection: a CM exchange (PMTU 1024, A from PSN 5000, B from
// 9000), a 3-packet SEND with one coalesced ACK, a WRITE, a READ of 2500
// bytes (3 responses) and a SEND from B: MSNs from 0, nothing to report.
func TestCleanCMConnection(t *testing.T) {
	pkts := append(cmExchange(5000, 9000, 3),
		req(opcode.RCSendFirst, 5000, 1024, false),
		req(opcode.RCSendMiddle, 5001, 1024, false),
		req(opcode.RCSendLast, 5002, 10, true),
		write(opcode.RCRDMAWriteOnly, 5003, 100, 100, true),
		ack(5003, 2), // covers 5002 too
		read(5004, 2500),
		resp(opcode.RCRDMAReadResponseFirst, 5004, unlimited, 3, 1024),
		resp(opcode.RCRDMAReadResponseMiddle, 5005, 0, 0, 1024),
		resp(opcode.RCRDMAReadResponseLast, 5006, unlimited, 3, 452),
		req(opcode.RCSendOnly, 5007, 0, true),
		ack(5007, 4),
	)
	fromB := req(opcode.RCSendOnlyWithImmediate, 9000, 33, true)
	fromB.from, fromB.f.BTH.DestQP = rctest.B, qa
	ackA := ack(9000, 1)
	ackA.from, ackA.f.BTH.DestQP = rctest.A, qb
	pkts = append(pkts, fromB, ackA)
	_, sum := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	fs := check(t, conform.Options{}, pkts)
	_ = fs
	require.Len(t, sum.Connections, 1)
	cn := sum.Connections[0]
	assert.Equal(t, "cm", cn.PairedBy)
	assert.Equal(t, 1024, cn.PMTU)
	assert.Equal(t, "cm", cn.PMTUFrom)
	assert.Equal(t, uint32(qa), cn.QPA)
	assert.Equal(t, uint32(qb), cn.QPB)
	assert.Equal(t, 6, cn.AtoB.Requests)
	assert.Equal(t, 1, cn.BtoA.Requests)
	assert.Equal(t, 3, cn.AtoB.ReadResponses)
}

// TestCMStartAndMSN: with the CM, MSN counts from 0 and the first packet
// must open a message.
func TestCMStartAndMSN(t *testing.T) {
	pkts := append(cmExchange(100, 200, 3),
		req(opcode.RCSendMiddle, 100, 1024, false), // 3: no First before it
		req(opcode.RCSendLast, 101, 4, true),
		ack(101, 1), // 5: the responder had to NAK PSN 100
	)
	check(t, conform.Options{}, pkts, want(3, conform.OpcodeSequence), want(5, conform.NAKCode))

	pkts = append(cmExchange(100, 200, 3), req(opcode.RCSendOnly, 100, 4, true), ack(100, 7))
	fs := check(t, conform.Options{}, pkts, want(4, conform.MSN))
	assert.Equal(t, "MSN 1", fs[0].Expected)
}

// TestMSNConsistentOffset: a responder whose MSN is off by the same amount
// every time is reported once.
func TestMSNConsistentOffset(t *testing.T) {
	pkts := cmExchange(0, 0, 3)
	for i := uint32(0); i < 5; i++ {
		pkts = append(pkts, req(opcode.RCSendOnly, i, 8, true), ack(i, i+2))
	}
	check(t, conform.Options{}, pkts, want(4, conform.MSN))
}

// TestACKCoalescingAndDuplicates: an ACK covering several AckReq requests
// is legal; a duplicate re-ACK of ePSN-1 too (§5.3, §5.4).
func TestACKCoalescingAndDuplicates(t *testing.T) {
	check(t, conform.Options{}, []pkt{
		req(opcode.RCSendOnly, 10, 8, true),
		req(opcode.RCSendOnly, 11, 8, true),
		req(opcode.RCSendOnly, 12, 8, true),
		ack(12, 3),
		req(opcode.RCSendOnly, 11, 8, true), // timeout retransmission (ACK lost)
		ack(12, 3),                          // re-ACK of the duplicate
	})
}

func TestACKPSN(t *testing.T) {
	three := func(extra ...pkt) []pkt {
		return append([]pkt{req(opcode.RCSendOnly, 10, 8, true), req(opcode.RCSendOnly, 11, 8, true),
			req(opcode.RCSendOnly, 12, 8, true), ack(10, 1)}, extra...)
	}
	// An ACK for a PSN never sent.
	check(t, conform.Options{}, three(ack(13, 4), ack(12, 3)), want(5, conform.ACKPSN))
	// An ACK going back before an acknowledged PSN.
	check(t, conform.Options{}, three(ack(12, 3), ack(10, 1)), want(6, conform.ACKPSN))
	// An ACK past a PSN that never passed the capture point (11 is
	// missing: lost before it).
	check(t, conform.Options{}, []pkt{req(opcode.RCSendOnly, 10, 8, true), req(opcode.RCSendOnly, 12, 8, true), ack(10, 1), ack(12, 3)},
		want(4, conform.ACKPSN))
	// An ATOMIC ACK for a SEND.
	check(t, conform.Options{}, three(ack(12, 3), resp(opcode.RCAtomicAcknowledge, 11, unlimited, 2, 0)), want(6, conform.ACKPSN))
}

func TestNAKPSNAndCode(t *testing.T) {
	four := func(extra ...pkt) []pkt {
		return append([]pkt{req(opcode.RCSendOnly, 10, 8, true), req(opcode.RCSendOnly, 11, 8, true),
			req(opcode.RCSendOnly, 12, 8, true), req(opcode.RCSendOnly, 13, 8, true), ack(10, 1)}, extra...)
	}
	done := ack(13, 4)
	// A sequence NAK at the expected PSN, then the go-back: fine.
	check(t, conform.Options{}, four(nak(11, aeth.PSNSequenceError, 1), req(opcode.RCSendOnly, 11, 8, true),
		req(opcode.RCSendOnly, 12, 8, true), req(opcode.RCSendOnly, 13, 8, true), done))
	// A sequence NAK going back before an acknowledged PSN.
	check(t, conform.Options{}, four(nak(10, aeth.PSNSequenceError, 0), done), want(6, conform.NAKPSN))
	// A sequence NAK for the last PSN sent: nothing came out of sequence.
	check(t, conform.Options{}, four(nak(13, aeth.PSNSequenceError, 3), done), want(6, conform.NAKPSN))
	// Reserved NAK code, reserved syndrome kind, the RD-only code.
	for _, syn := range []aeth.Syndrome{0x67, 0x41, aeth.NAKSyndrome(aeth.InvalidRDRequest)} {
		check(t, conform.Options{}, four(resp(opcode.RCAcknowledge, 11, syn, 1, 0), done), want(6, conform.NAKCode))
	}
	// A NAK invalid request for a request that never passed the capture
	// point (PSN 11 missing, 12 seen): only a sequence error can name 11.
	pkts := []pkt{
		req(opcode.RCSendOnly, 10, 8, true), req(opcode.RCSendOnly, 12, 8, true), ack(10, 1), nak(11, aeth.InvalidRequest, 1),
	}
	check(t, conform.Options{}, pkts, want(4, conform.NAKCode))
	// The NAK is not fatal then: 12 still awaits its ACK.
	assertOutstanding(t, conform.Options{}, pkts, 1, 12, 2)
	// The same NAK for a request seen: the responder may have judged it,
	// and the connection fails (nothing after is checked or missing).
	fs, sum := run(t, conform.Options{}, packet.RoCEv2IPv4, four(nak(11, aeth.RemoteAccessError, 1)))
	assert.Empty(t, fs, dump(fs))
	assert.Equal(t, 6, sum.Connections[0].ErrorFrame)
}

// TestPSNReuse: a new SEND at a PSN still outstanding.
func TestPSNReuse(t *testing.T) {
	fs := check(t, conform.Options{}, []pkt{
		req(opcode.RCSendOnly, 10, 100, true),
		req(opcode.RCSendOnly, 10, 40, true),
		ack(10, 1),
	}, want(2, conform.PSNReuse))
	assert.Contains(t, fs[0].Message, "RC_SEND_ONLY with 40 bytes")
}

// TestReadPSNReservation: a READ of 4096 bytes at PMTU 1024 reserves PSNs
// 20-23; a SEND at 22 reuses one (§5.3). With the PMTU unknown when the
// SEND comes, the finding waits until a READ response teaches it, and names
// the SEND's frame. (The READ, never fully answered, stays outstanding.)
func TestReadPSNReservation(t *testing.T) {
	check(t, conform.Options{PMTU: 1024}, []pkt{read(20, 4096), req(opcode.RCSendOnly, 22, 8, true)},
		want(2, conform.ReadPSNReservation))
	check(t, conform.Options{}, []pkt{
		read(20, 4096), req(opcode.RCSendOnly, 22, 8, true),
		resp(opcode.RCRDMAReadResponseFirst, 20, unlimited, 1, 1024),
	}, want(2, conform.ReadPSNReservation))
	// Right after the READ's 4 PSNs: fine, and the PMTU comes from the
	// spacing once the responses confirm it.
	check(t, conform.Options{}, []pkt{
		read(20, 4096), req(opcode.RCSendOnly, 24, 8, true),
		resp(opcode.RCRDMAReadResponseFirst, 20, unlimited, 1, 1024),
		resp(opcode.RCRDMAReadResponseMiddle, 21, 0, 0, 1024),
		resp(opcode.RCRDMAReadResponseMiddle, 22, 0, 0, 1024),
		resp(opcode.RCRDMAReadResponseLast, 23, unlimited, 1, 1024),
		ack(24, 2),
	})
}

// TestReadRetry: a READ answered up to its second response is re-requested
// from its third (VA and length advanced, §5.5); the responder replays
// from there with Middle/Last (rxe) or restarts with First (IBA).
func TestReadRetry(t *testing.T) {
	retry := read(22, 2048)
	retry.f.RETH.VA += 2048
	for _, restart := range []opcode.Opcode{opcode.RCRDMAReadResponseMiddle, opcode.RCRDMAReadResponseFirst} {
		check(t, conform.Options{PMTU: 1024}, []pkt{
			read(20, 4096),
			resp(opcode.RCRDMAReadResponseFirst, 20, unlimited, 1, 1024),
			resp(opcode.RCRDMAReadResponseMiddle, 21, 0, 0, 1024),
			retry,
			resp(restart, 22, unlimited, 1, 1024),
			resp(opcode.RCRDMAReadResponseLast, 23, unlimited, 1, 1024),
		})
	}
	// A re-request that does not ask for the tail.
	bad := read(22, 2048)
	check(t, conform.Options{PMTU: 1024}, []pkt{
		read(20, 4096),
		resp(opcode.RCRDMAReadResponseFirst, 20, unlimited, 1, 1024),
		resp(opcode.RCRDMAReadResponseMiddle, 21, 0, 0, 1024),
		bad,
		resp(opcode.RCRDMAReadResponseMiddle, 22, 0, 0, 1024),
		resp(opcode.RCRDMAReadResponseLast, 23, unlimited, 1, 1024),
	}, want(4, conform.ReadPSNReservation))
}

func TestReadResponses(t *testing.T) {
	first := resp(opcode.RCRDMAReadResponseFirst, 20, unlimited, 1, 1024)
	mid := resp(opcode.RCRDMAReadResponseMiddle, 21, 0, 0, 1024)
	// Count short: the Last comes at the third PSN of four.
	check(t, conform.Options{PMTU: 1024}, []pkt{read(20, 4096), first, mid,
		resp(opcode.RCRDMAReadResponseLast, 22, unlimited, 1, 1024)}, want(4, conform.ReadResponse))
	// A Middle of the wrong size.
	check(t, conform.Options{PMTU: 1024}, []pkt{read(20, 4096), first, resp(opcode.RCRDMAReadResponseMiddle, 21, 0, 0, 1000),
		resp(opcode.RCRDMAReadResponseMiddle, 22, 0, 0, 1024), resp(opcode.RCRDMAReadResponseLast, 23, unlimited, 1, 1024)},
		want(3, conform.ReadResponse))
	// A Last carrying more than the rest of the READ.
	check(t, conform.Options{PMTU: 1024}, []pkt{read(20, 1500), first, resp(opcode.RCRDMAReadResponseLast, 21, unlimited, 1, 1024)},
		want(3, conform.ReadResponse))
	// First with a NAK syndrome in its AETH.
	check(t, conform.Options{PMTU: 1024}, []pkt{read(20, 100), resp(opcode.RCRDMAReadResponseOnly, 20, aeth.NAKSyndrome(0), 1, 100)},
		want(2, conform.ReadResponse))
}

func TestReadResponseMatchesNoRead(t *testing.T) {
	check(t, conform.Options{PMTU: 1024}, []pkt{
		req(opcode.RCSendOnly, 20, 8, true),
		ack(20, 1),
		resp(opcode.RCRDMAReadResponseOnly, 20, unlimited, 1, 8),
	}, want(3, conform.ReadResponse))
}

func TestOpcodeSequence(t *testing.T) {
	// A First while a SEND is open; a WRITE Middle inside a SEND.
	check(t, conform.Options{}, []pkt{
		req(opcode.RCSendFirst, 1, 1024, false),
		req(opcode.RCSendFirst, 2, 1024, false),
	}, want(2, conform.OpcodeSequence))
	check(t, conform.Options{}, []pkt{
		req(opcode.RCSendFirst, 1, 1024, false),
		req(opcode.RCRDMAWriteMiddle, 2, 1024, false),
	}, want(2, conform.OpcodeSequence))
	// A capture that starts inside a message (no CM) raises nothing, nor
	// does a gap before a Middle.
	check(t, conform.Options{}, []pkt{
		req(opcode.RCSendMiddle, 1, 1024, false),
		req(opcode.RCSendLast, 2, 10, true),
		ack(2, 1),
		req(opcode.RCSendFirst, 3, 1024, false),
		req(opcode.RCSendLast, 5, 10, true), // PSN 4 lost before the capture point
	})
	// ... and when the gap is filled, the pair is judged.
	check(t, conform.Options{}, []pkt{
		req(opcode.RCSendOnly, 1, 10, true),
		req(opcode.RCSendLast, 3, 10, true),
		req(opcode.RCSendOnly, 2, 10, true),
		ack(3, 3),
	}, want(2, conform.OpcodeSequence), want(4, conform.NAKCode))
}

func TestPayloadSizes(t *testing.T) {
	// First not a PMTU size (PMTU unknown), Only over the PMTU, Last empty.
	check(t, conform.Options{}, []pkt{req(opcode.RCSendFirst, 1, 1000, false)}, want(1, conform.PayloadSize))
	check(t, conform.Options{PMTU: 256}, []pkt{req(opcode.RCSendOnly, 1, 300, true), ack(1, 1)},
		want(1, conform.PayloadSize), want(2, conform.NAKCode))
	check(t, conform.Options{}, []pkt{req(opcode.RCSendFirst, 1, 256, false), req(opcode.RCSendLast, 2, 0, true)},
		want(2, conform.PayloadSize))
	// A WRITE whose packets do not add up to its RETH length.
	check(t, conform.Options{}, []pkt{
		write(opcode.RCRDMAWriteFirst, 1, 512, 1100, false),
		req(opcode.RCRDMAWriteMiddle, 2, 512, false),
		req(opcode.RCRDMAWriteLast, 3, 70, true),
		ack(3, 1),
	}, want(3, conform.PayloadSize), want(4, conform.NAKCode))
	// A WRITE Middle where only the Last should come.
	check(t, conform.Options{PMTU: 512}, []pkt{
		write(opcode.RCRDMAWriteFirst, 1, 512, 900, false),
		req(opcode.RCRDMAWriteMiddle, 2, 512, false),
	}, want(2, conform.PayloadSize))
	// A multi-packet WRITE that fits one packet; a WRITE Only shorter than
	// its RETH length.
	check(t, conform.Options{PMTU: 512}, []pkt{write(opcode.RCRDMAWriteFirst, 1, 512, 500, false)}, want(1, conform.PayloadSize))
	check(t, conform.Options{}, []pkt{write(opcode.RCRDMAWriteOnly, 1, 10, 100, true), nak(1, aeth.InvalidRequest, 0)},
		want(1, conform.PayloadSize))
}

func TestPadCount(t *testing.T) {
	// 18 payload bytes with PadCnt 0: 18 bytes, not a multiple of 4.
	p := req(opcode.RCSendOnly, 1, 18, true)
	p.f.BTH.PadCnt = 0
	check(t, conform.Options{}, []pkt{p}, want(1, conform.PadCount))
	// Pad on a First.
	p = req(opcode.RCSendFirst, 1, 252, false)
	p.f.BTH.PadCnt = 1
	p.f.Payload = payloadBytes[:255]
	check(t, conform.Options{}, []pkt{p}, want(1, conform.PadCount))
	// A PadCnt that shortens a WRITE Only against its RETH length (20
	// bytes sent, PadCnt 1: 19 of payload, RETH says 18).
	p = write(opcode.RCRDMAWriteOnly, 1, 19, 18, true)
	p.f.BTH.PadCnt = 1
	check(t, conform.Options{}, []pkt{p, nak(1, aeth.InvalidRequest, 0)}, want(1, conform.PadCount))
	// On a READ response.
	r := resp(opcode.RCRDMAReadResponseOnly, 1, unlimited, 1, 10)
	r.f.BTH.PadCnt = 0
	check(t, conform.Options{}, []pkt{read(1, 10), r}, want(2, conform.PadCount))
}

// assertOutstanding checks what the summary of a one-connection stream says
// is outstanding from A to B at its end: how many requests, and the PSN and
// frame of the oldest.
func assertOutstanding(t *testing.T, opts conform.Options, pkts []pkt, n int, psn uint32, frame int) conform.Channel {
	t.Helper()
	_, sum := run(t, opts, packet.RoCEv2IPv4, pkts)
	require.Len(t, sum.Connections, 1, describe(pkts))
	ch := sum.Connections[0].AtoB
	assert.Equal(t, n, ch.Outstanding, describe(pkts))
	assert.Equal(t, psn, ch.OutstandingPSN, describe(pkts))
	assert.Equal(t, frame, ch.OutstandingFrame, describe(pkts))
	assert.Equal(t, n, sum.Outstanding)
	return ch
}

// TestOutstandingAtEnd: requests still awaiting their answer when the
// capture ends are outstanding, not findings: a capture is a window.
func TestOutstandingAtEnd(t *testing.T) {
	// A READ answered in part.
	pkts := []pkt{read(20, 4096), resp(opcode.RCRDMAReadResponseFirst, 20, unlimited, 1, 1024)}
	check(t, conform.Options{PMTU: 1024}, pkts)
	ch := assertOutstanding(t, conform.Options{PMTU: 1024}, pkts, 1, 20, 1)
	assert.Equal(t, "RC_RDMA_READ_REQUEST", ch.OutstandingOp)
	// Two AckReq SENDs with no ACK at all.
	pkts = []pkt{req(opcode.RCSendOnly, 5, 1, true), req(opcode.RCSendOnly, 6, 1, true)}
	check(t, conform.Options{}, pkts)
	assertOutstanding(t, conform.Options{}, pkts, 2, 5, 1)
	// A third; a NAK naming the second covers the first (§5.5): the second
	// awaits its resend, the third its ACK.
	pkts = append(pkts, req(opcode.RCSendOnly, 7, 1, true), nak(6, aeth.PSNSequenceError, 1))
	check(t, conform.Options{}, pkts)
	assertOutstanding(t, conform.Options{}, pkts, 2, 6, 2)
	// A READ response for a later PSN answers an AckReq SEND (implicit ACK).
	pkts = []pkt{req(opcode.RCSendOnly, 5, 1, true), read(6, 8), resp(opcode.RCRDMAReadResponseOnly, 6, unlimited, 2, 8)}
	check(t, conform.Options{}, pkts)
	assertOutstanding(t, conform.Options{}, pkts, 0, 0, 0)
	// Requests without AckReq need no ACK.
	pkts = []pkt{req(opcode.RCSendOnly, 5, 1, false)}
	check(t, conform.Options{}, pkts)
	assertOutstanding(t, conform.Options{}, pkts, 0, 0, 0)
	// A connection in the Error state has nothing outstanding (§5.10).
	pkts = []pkt{req(opcode.RCSendOnly, 5, 1, true), req(opcode.RCSendOnly, 6, 1, true), nak(5, aeth.RemoteAccessError, 0)}
	check(t, conform.Options{}, pkts)
	assertOutstanding(t, conform.Options{}, pkts, 0, 0, 0)
}

func atomic(psn uint32) pkt {
	p := req(opcode.RCFetchAdd, psn, 0, true)
	p.f.AtomicETH.VA, p.f.AtomicETH.RKey, p.f.AtomicETH.SwapAdd = 0x30000, 0x79, 1
	return p
}

// TestMissingAnswerMidStream: the responder answers a PSN after a READ (or
// atomic) whose own responses never pass the capture point. Captured at
// the responder (PSN 11 is lost before the capture point and NAKed, never
// seen: nothing is seen lost after it), nothing the responder sent can have
// been lost before it: a missing_ack at the READ (§5.2, §5.4). Captured at
// the requester (11 seen, then NAKed: lost after the capture point), or
// with no loss at all, the responses may have been lost before the capture
// point: the READ stays outstanding.
func TestMissingAnswerMidStream(t *testing.T) {
	opts := conform.Options{PMTU: 1024}
	// Requests 10-12 with 11 lost; the go-back; 12 ACKed.
	atResponder := []pkt{
		req(opcode.RCSendOnly, 10, 8, true), req(opcode.RCSendOnly, 12, 8, true), nak(11, aeth.PSNSequenceError, 1),
		req(opcode.RCSendOnly, 11, 8, true), req(opcode.RCSendOnly, 12, 8, true), ack(12, 3),
	}
	atRequester := []pkt{
		req(opcode.RCSendOnly, 10, 8, true), req(opcode.RCSendOnly, 11, 8, true), req(opcode.RCSendOnly, 12, 8, true),
		nak(11, aeth.PSNSequenceError, 1), req(opcode.RCSendOnly, 11, 8, true), req(opcode.RCSendOnly, 12, 8, true), ack(12, 3),
	}
	noLoss := []pkt{req(opcode.RCSendOnly, 10, 8, true), req(opcode.RCSendOnly, 11, 8, true), req(opcode.RCSendOnly, 12, 8, true), ack(12, 3)}
	then := func(head []pkt, tail ...pkt) []pkt { return append(append([]pkt(nil), head...), tail...) }

	// The READ at 13 (one PSN) is skipped: the SEND at 14 is ACKed.
	skipped := []pkt{read(13, 1024), req(opcode.RCSendOnly, 14, 8, true), ack(14, 5)}
	fs := check(t, opts, then(atResponder, skipped...), want(len(atResponder)+1, conform.MissingACK))
	assert.Equal(t, "READ responses up to PSN 0x00000d before any answer to a later PSN", fs[0].Expected)
	assert.Contains(t, fs[0].Message, "RC_RDMA_READ_REQUEST at PSN 0x00000d was never answered, yet the responder went on to answer up to PSN 0x00000e (frame 9)")
	assertOutstanding(t, opts, then(atResponder, skipped...), 0, 0, 0)
	check(t, opts, then(atRequester, skipped...))
	assertOutstanding(t, opts, then(atRequester, skipped...), 1, 13, len(atRequester)+1)
	check(t, opts, then(noLoss, skipped...))
	assertOutstanding(t, opts, then(noLoss, skipped...), 1, 13, len(noLoss)+1)

	// Answered in part (First of 2), then the SEND after it ACKed.
	partial := []pkt{read(13, 2048), resp(opcode.RCRDMAReadResponseFirst, 13, unlimited, 4, 1024),
		req(opcode.RCSendOnly, 15, 8, true), ack(15, 5)}
	check(t, opts, then(atResponder, partial...), want(len(atResponder)+1, conform.MissingACK))
	check(t, opts, then(noLoss, partial...))

	// Two READs skipped: one finding, at the older.
	two := []pkt{read(13, 1024), read(14, 1024), req(opcode.RCSendOnly, 15, 8, true), ack(15, 6)}
	fs = check(t, opts, then(atResponder, two...), want(len(atResponder)+1, conform.MissingACK))
	assert.Contains(t, fs[0].Message, "RC_RDMA_READ_REQUEST at PSN 0x00000d was never answered (nor 1 later READs or atomics)")
	assertOutstanding(t, opts, then(atResponder, two...), 0, 0, 0)

	// An atomic skipped the same way.
	atom := []pkt{atomic(13), req(opcode.RCSendOnly, 14, 8, true), ack(14, 5)}
	fs = check(t, opts, then(atResponder, atom...), want(len(atResponder)+1, conform.MissingACK))
	assert.Equal(t, "an ATOMIC ACK with PSN 0x00000d before any answer to a later PSN", fs[0].Expected)
	check(t, opts, then(noLoss, atom...))

	// Not findings at the responder: an ACK dropped mid-stream (the later
	// ACK covers its SEND: ACKs coalesce), a READ and an atomic answered,
	// and a READ retried and answered after the responder passed it.
	clean := [][]pkt{
		{req(opcode.RCSendOnly, 13, 8, true), req(opcode.RCSendOnly, 14, 8, true), ack(14, 5)},
		{read(13, 1024), resp(opcode.RCRDMAReadResponseOnly, 13, unlimited, 4, 1024), req(opcode.RCSendOnly, 14, 8, true), ack(14, 5)},
		{atomic(13), resp(opcode.RCAtomicAcknowledge, 13, unlimited, 4, 0), req(opcode.RCSendOnly, 14, 8, true), ack(14, 5)},
		{read(13, 1024), req(opcode.RCSendOnly, 14, 8, true), ack(14, 5), read(13, 1024),
			resp(opcode.RCRDMAReadResponseOnly, 13, unlimited, 4, 1024), req(opcode.RCSendOnly, 14, 8, true), ack(14, 5)},
	}
	for _, tail := range clean {
		check(t, opts, then(atResponder, tail...))
		assertOutstanding(t, opts, then(atResponder, tail...), 0, 0, 0)
	}
}

func TestMalformedAndVCRC(t *testing.T) {
	// An ACK carrying payload bytes does not decode.
	p := ack(1, 1)
	p.f.Payload = payloadBytes[:8]
	check(t, conform.Options{}, []pkt{req(opcode.RCSendOnly, 1, 8, false), p}, want(2, conform.Malformed))
	// Native IB: a wrong VCRC.
	q := req(opcode.RCSendOnly, 1, 8, false)
	q.vcrcXor = 1
	fs, _ := run(t, conform.Options{}, packet.IBLocal, []pkt{q})
	assert.Equal(t, []brief{want(1, conform.BadVCRC)}, briefs(fs), dump(fs))
}

func TestRNRNAKForSendIsFine(t *testing.T) {
	check(t, conform.Options{}, []pkt{
		req(opcode.RCSendOnly, 1, 8, true),
		resp(opcode.RCAcknowledge, 1, aeth.RNRNAKSyndrome(3), 0, 0),
		req(opcode.RCSendOnly, 1, 8, true),
		ack(1, 1),
	})
}

// TestTextAndJSON: the finding's text and JSON forms.
func TestTextAndJSON(t *testing.T) {
	f := conform.Finding{Frame: 12, Rule: "§5.4", Kind: conform.NAKPSN, Message: "NAK \"x\"", Expected: "PSN 0x000001", Got: "PSN 0x000002", Conn: 3}
	assert.Equal(t, `frame 12: §5.4 nak_psn: NAK "x"; expected PSN 0x000001`, f.String())
	assert.Equal(t, `{"type":"finding","frame":12,"rule":"§5.4","kind":"nak_psn","message":"NAK \"x\"","expected":"PSN 0x000001","got":"PSN 0x000002","connection":3}`,
		string(f.AppendJSON(nil)))
	for _, k := range conform.Kinds {
		assert.NotEmpty(t, k.Rule(), k)
	}
}

// TestSkippedReadKept: a READ the responder passed stays known however many
// requests are acknowledged after it (acknowledged slots are otherwise
// forgotten after 64): captured at the responder it is still a missing_ack
// 100 SENDs later, and a retry answered that late still counts. Past 65536
// later requests it is forgotten and counted outstanding.
func TestSkippedReadKept(t *testing.T) {
	opts := conform.Options{PMTU: 1024}
	head := []pkt{
		req(opcode.RCSendOnly, 10, 8, true), req(opcode.RCSendOnly, 12, 8, true), nak(11, aeth.PSNSequenceError, 1),
		req(opcode.RCSendOnly, 11, 8, true), req(opcode.RCSendOnly, 12, 8, true), ack(12, 3),
		read(13, 1024),
	}
	sends := func(n int) []pkt {
		out := append([]pkt(nil), head...)
		for i := uint32(0); i < uint32(n); i++ {
			out = append(out, req(opcode.RCSendOnly, 14+i, 8, true), ack(14+i, 5+i))
		}
		return out
	}
	check(t, opts, sends(100), want(len(head), conform.MissingACK))
	retried := append(sends(100), read(13, 1024), resp(opcode.RCRDMAReadResponseOnly, 13, unlimited, 4, 1024))
	check(t, opts, retried)
	assertOutstanding(t, opts, retried, 0, 0, 0)

	fs, sum := run(t, opts, packet.RoCEv2IPv4, sends(1<<16+100))
	assert.Empty(t, fs, dump(fs))
	require.Len(t, sum.Connections, 1)
	ch := sum.Connections[0].AtoB
	assert.Equal(t, 1, ch.Outstanding)
	assert.Equal(t, uint32(13), ch.OutstandingPSN)
	assert.Equal(t, len(head), ch.OutstandingFrame)
}
