package analysis_test

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// observeCut observes frames as a capture of snap length snap keeps them
// (0: whole) and returns the summary and each frame's warnings.
func observeCut(t *testing.T, frames [][]byte, snap int) ([]byte, [][]analysis.Warning) {
	t.Helper()
	tr := analysis.New(analysis.Options{})
	var f packet.Frame
	var warns [][]analysis.Warning
	ts := time.Unix(1700000000, 0)
	for i, b := range frames {
		rec := pcap.Record{Index: i + 1, LinkType: pcap.LinkTypeEthernet, Data: b, OrigLen: len(b)}
		if snap > 0 && snap < len(b) {
			rec.Data = b[:snap]
		}
		rec.CapLen = len(rec.Data)
		require.NoError(t, f.DecodeRecord(&rec), "frame %d", i+1)
		ic := analysis.NotChecked
		if f.Network() != nil {
			ok, _, _, err := f.CheckICRC()
			require.NoError(t, err)
			ic = analysis.CheckOK
			if !ok {
				ic = analysis.CheckBad
			}
		} else {
			require.Equal(t, snap > 0 && snap < len(b), f.Transport.Cut > 0, "frame %d", i+1)
		}
		warns = append(warns, tr.ObserveChecked(i+1, ts.Add(time.Duration(i)*time.Microsecond), &f, ic, analysis.NotChecked, nil))
	}
	return tr.Summary().AppendJSON(nil), warns
}

// A capture that kept only headers has the same per-QP summary and the
// same per-frame warnings as the whole capture: payload lengths come from
// the IP and UDP lengths, and a READ whose RETH the capture cut (at 64
// bytes) has its PSN count learnt from the next request or its responses.
func TestCutCaptureSameSummary(t *testing.T) {
	c := newConv(t, analysis.Options{})
	ack := uint8(aeth.ACKSyndrome(aeth.Unlimited))
	var frames [][]byte
	for _, p := range []pkt{
		{op: opcode.RCRDMAWriteFirst, psn: 0, payload: 1024, reth: 2500},
		{op: opcode.RCRDMAWriteMiddle, psn: 1, payload: 1024},
		{op: opcode.RCRDMAWriteLast, psn: 2, payload: 452, ackReq: true},
		{op: opcode.RCAcknowledge, psn: 2, syn: ack, fromB: true},
		{op: opcode.RCRDMAReadRequest, psn: 3, reth: 3000, ackReq: true}, // 3 PSNs
		{op: opcode.RCRDMAReadRequest, psn: 6, reth: 100, ackReq: true},
		{op: opcode.RCRDMAReadResponseFirst, psn: 3, payload: 1024, syn: ack, fromB: true},
		{op: opcode.RCRDMAReadResponseMiddle, psn: 4, payload: 1024, fromB: true},
		{op: opcode.RCRDMAReadResponseLast, psn: 5, payload: 952, syn: ack, fromB: true},
		{op: opcode.RCRDMAReadResponseOnly, psn: 6, payload: 100, syn: ack, fromB: true},
		{op: opcode.RCRDMAReadRequest, psn: 7, reth: 2048, ackReq: true}, // answered before the next request
		{op: opcode.RCRDMAReadResponseFirst, psn: 7, payload: 1024, syn: ack, fromB: true},
		{op: opcode.RCRDMAReadResponseLast, psn: 8, payload: 1024, syn: ack, fromB: true},
		{op: opcode.RCSendFirst, psn: 9, payload: 1024},
		{op: opcode.RCSendLast, psn: 11, payload: 10, ackReq: true}, // PSN 10 lost
		{op: opcode.RCAcknowledge, psn: 9, syn: uint8(aeth.NAKSyndrome(aeth.PSNSequenceError)), fromB: true},
		{op: opcode.RCSendMiddle, psn: 10, payload: 1024},
		{op: opcode.RCSendLast, psn: 11, payload: 10, ackReq: true},
		{op: opcode.RCAcknowledge, psn: 11, syn: ack, fromB: true},
	} {
		frames = append(frames, bytes.Clone(c.encode(p)))
	}
	whole, ww := observeCut(t, frames, 0)
	assert.Contains(t, string(whole), `"reads_completed":3`)
	for _, snap := range []int{58, 64, 100, 128} {
		s, w := observeCut(t, frames, snap)
		assert.Equal(t, string(whole), string(s), "snap %d", snap)
		assert.Equal(t, ww, w, "snap %d", snap)
	}
}

// A frame whose transport packet does not decode (its opcode damaged) has
// its ICRC checked all the same: a bad one is warned about and counted in
// the summary, though the frame belongs to no flow.
func TestUndecodedFrameICRCBad(t *testing.T) {
	c := newConv(t, analysis.Options{})
	b := bytes.Clone(c.encode(pkt{op: opcode.RCSendOnly, psn: 0, payload: 64}))
	b[42] = 0x57
	var f packet.Frame
	require.Error(t, f.DecodeEthernet(b))
	ok, _, _, err := f.CheckICRC()
	require.NoError(t, err)
	require.False(t, ok)
	tr := analysis.New(analysis.Options{})
	w := tr.ObserveChecked(1, time.Unix(0, 0), &f, analysis.CheckBad, analysis.NotChecked, nil)
	assert.Equal(t, []analysis.Warning{analysis.ICRCBad}, w)
	s := tr.Summary()
	assert.Equal(t, uint64(1), s.Undecoded)
	assert.Equal(t, uint64(1), s.Total(analysis.ICRCBad))
	assert.Empty(t, s.Connections)
	// The old-style Observe says the same.
	tr = analysis.New(analysis.Options{})
	assert.Equal(t, []analysis.Warning{analysis.ICRCBad}, tr.Observe(1, time.Unix(0, 0), &f, false, nil))
}
