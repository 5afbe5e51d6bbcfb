package conform_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// runCut is run with every frame as a capture of snap length snap keeps it
// (decoded from its record, which says how long the frame was).
func runCut(t tb, opts conform.Options, encap packet.Encap, pkts []pkt, snap int) ([]conform.Finding, conform.Summary) {
	t.Helper()
	c := conform.New(opts)
	var f packet.Frame
	ts := time.Unix(1700000000, 0)
	lt := pcap.LinkTypeEthernet
	if encap == packet.IBLocal || encap == packet.IBGlobal {
		lt = pcap.LinkTypeInfiniBand
	}
	for i := range pkts {
		b := encodeFrame(t, encap, &pkts[i])
		rec := pcap.Record{Index: i + 1, LinkType: lt, Data: b[:min(snap, len(b))], OrigLen: len(b)}
		rec.CapLen = len(rec.Data)
		err := f.DecodeRecord(&rec)
		c.Frame(i+1, ts.Add(time.Duration(i)*time.Microsecond), &f, err, nil)
	}
	c.Finish(nil)
	return c.Findings(), c.Summary()
}

// A capture that kept only headers (the RETH of READs and WRITEs cut at 64
// bytes, payloads at 100) of a conforming exchange has no findings, and
// the same connection summary as the whole capture: lengths come from the
// IP and UDP headers, a READ's PSN count from its responses.
func TestCutCaptureOfConformingExchange(t *testing.T) {
	ackSyn := aeth.ACKSyndrome(aeth.Unlimited)
	tail := read(8, 1024)
	tail.f.RETH.VA += 1024
	pkts := []pkt{
		write(opcode.RCRDMAWriteFirst, 0, 1024, 2500, false),
		req(opcode.RCRDMAWriteMiddle, 1, 1024, false),
		write(opcode.RCRDMAWriteFirst, 0, 1024, 2500, false), // a go-back: the same packet again
		req(opcode.RCRDMAWriteMiddle, 1, 1024, false),
		req(opcode.RCRDMAWriteLast, 2, 452, true),
		ack(2, 1),
		read(3, 3000), // 3 PSNs
		read(6, 100),
		resp(opcode.RCRDMAReadResponseFirst, 3, ackSyn, 2, 1024),
		resp(opcode.RCRDMAReadResponseMiddle, 4, 0, 0, 1024),
		resp(opcode.RCRDMAReadResponseLast, 5, ackSyn, 2, 952),
		resp(opcode.RCRDMAReadResponseOnly, 6, ackSyn, 3, 100),
		read(7, 2048), // 2 PSNs, answered before the next request
		resp(opcode.RCRDMAReadResponseFirst, 7, ackSyn, 4, 1024),
		tail, // re-requests the READ's tail
		resp(opcode.RCRDMAReadResponseLast, 8, ackSyn, 4, 1024),
		req(opcode.RCSendOnly, 9, 700, true),
		ack(9, 5),
	}
	whole, sum := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	require.Empty(t, whole, dump(whole))
	for _, snap := range []int{54, 58, 64, 100, 128} {
		fs, s := runCut(t, conform.Options{}, packet.RoCEv2IPv4, pkts, snap)
		assert.Empty(t, fs, "snap %d:\n%s", snap, dump(fs))
		if snap >= 58 { // (at 54 the AETH is cut: ACK and NAK counts are unknown)
			assert.Equal(t, sum, s, "snap %d", snap)
		}
	}
}

// Faults in what the capture kept are still found in a cut capture; what
// it cut (the RETH's DMA length here) is not judged.
func TestCutCaptureFaults(t *testing.T) {
	pkts := []pkt{
		write(opcode.RCRDMAWriteOnly, 0, 100, 200, true), // DMA length 200, 100 bytes sent
		ack(0, 1),
		req(opcode.RCSendMiddle, 1, 1024, true), // no SEND First
		ack(1, 1),
	}
	fs, _ := run(t, conform.Options{}, packet.RoCEv2IPv4, pkts)
	assert.Equal(t, []brief{want(1, conform.PayloadSize), want(2, conform.NAKCode), want(3, conform.OpcodeSequence), want(4, conform.NAKCode)}, briefs(fs), dump(fs))
	fs, _ = runCut(t, conform.Options{}, packet.RoCEv2IPv4, pkts, 64)
	assert.Equal(t, []brief{want(3, conform.OpcodeSequence), want(4, conform.NAKCode)}, briefs(fs), dump(fs))
}

// A frame the capture cut before its BTH (IPv6 at 64 bytes keeps the UDP
// header and 2 bytes more) is an IB frame with nothing to check, not a
// malformed one; the same frame truncated with no snap length to explain
// it is malformed, as before.
func TestCutBeforeBTH(t *testing.T) {
	p := req(opcode.RCSendOnly, 0, 100, false)
	b := encodeFrame(t, packet.RoCEv2IPv6, &p)
	var f packet.Frame
	for _, c := range []struct {
		orig int
		want []brief
	}{
		{len(b), nil},
		{64, []brief{want(1, conform.Malformed)}},
	} {
		c0 := conform.New(conform.Options{})
		rec := pcap.Record{Index: 1, LinkType: pcap.LinkTypeEthernet, Data: b[:64], CapLen: 64, OrigLen: c.orig}
		err := f.DecodeRecord(&rec)
		c0.Frame(1, time.Time{}, &f, err, nil)
		c0.Finish(nil)
		assert.Equal(t, c.want, briefs(c0.Findings()), "orig %d", c.orig)
		assert.Equal(t, 1, c0.Summary().IBFrames)
	}
}

// The ICRC covers the transport packet whatever its opcode: a packet whose
// opcode byte was damaged into an unknown opcode, or into one whose headers
// do not fit, is malformed and, its ICRC being checked all the same, has a
// bad ICRC too. With an ICRC computed over the unknown opcode, it is only
// malformed.
func TestUndecodablePacketICRC(t *testing.T) {
	for _, c := range []struct {
		name string
		p    pkt
		op   opcode.Opcode
	}{
		{"unknown 0x57", req(opcode.RCSendOnly, 0, 64, true), 0x57},
		{"unknown 0xE5", req(opcode.RCSendOnly, 0, 64, true), 0xE5},
		{"ACK made CmpSwap", ack(0, 1), opcode.RCCompareSwap},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := encodeFrame(t, packet.RoCEv2IPv4, &c.p)
			var f packet.Frame
			b[42] = byte(c.op)
			check := func() []conform.Finding {
				cc := conform.New(conform.Options{})
				err := f.DecodeEthernet(b)
				require.Error(t, err)
				cc.Frame(1, time.Time{}, &f, err, nil)
				cc.Finish(nil)
				return cc.Findings()
			}
			fs := check()
			assert.Equal(t, []brief{want(1, conform.BadICRC), want(1, conform.Malformed)}, briefs(fs), dump(fs))

			_, wantICRC, _, err := f.CheckICRC()
			require.NoError(t, err)
			b[len(b)-4], b[len(b)-3], b[len(b)-2], b[len(b)-1] = byte(wantICRC), byte(wantICRC>>8), byte(wantICRC>>16), byte(wantICRC>>24)
			fs = check()
			assert.Equal(t, []brief{want(1, conform.Malformed)}, briefs(fs), dump(fs))
		})
	}
}
