package analysis_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/cm"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// tflow is a flow that sent requests with PSNs lo..hi-1, a READ at lo.
type tflow struct {
	analysis.Link[tflow]
	lo, hi uint32
}

func (f *tflow) FlowLink() *analysis.Link[tflow] { return &f.Link }
func (f *tflow) Requested(q uint32, resp opcode.Opcode) bool {
	return f.hi > f.lo && q >= f.lo && q < f.hi && (resp != opcode.RCRDMAReadResponseOnly || q == f.lo)
}

func newTable() *analysis.Conns[tflow, *tflow] {
	return analysis.NewConns(func(k analysis.FlowKey) *tflow {
		f := &tflow{}
		f.Key = k
		return f
	})
}

var hostA, hostB = analysis.IPv4Addr([4]byte{10, 0, 0, 1}), analysis.IPv4Addr([4]byte{10, 0, 0, 2})

func key(src, dst analysis.Addr, qp uint32) analysis.FlowKey {
	return analysis.FlowKey{Encap: packet.RoCEv2IPv4, Src: src, Dst: dst, DstQP: qp}
}

func TestConnsFlow(t *testing.T) {
	c := newTable()
	a := c.Flow(key(hostA, hostB, 7))
	require.Same(t, a, c.Flow(key(hostA, hostB, 7)))
	b := c.Flow(key(hostB, hostA, 9))
	assert.Equal(t, []*tflow{a, b}, c.Flows())
	assert.Equal(t, 2, c.Len())
	assert.Equal(t, uint32(9), b.Key.DstQP)
}

// threeFlows returns a table with a response flow B -> A and two request
// flows A -> B that sent PSNs [loOld, 200) and [loNewer, 250).
func threeFlows(loOld, loNewer uint32) (c *analysis.Conns[tflow, *tflow], resp, old, newer *tflow) {
	c = newTable()
	resp = c.Flow(key(hostB, hostA, 0x11))
	old = c.Flow(key(hostA, hostB, 0x21))
	old.lo, old.hi = loOld, 200
	newer = c.Flow(key(hostA, hostB, 0x22))
	newer.lo, newer.hi = loNewer, 250
	return c, resp, old, newer
}

func TestConnsPairByPSN(t *testing.T) {
	c, resp, old, newer := threeFlows(100, 150)
	other := c.Flow(key(hostA, analysis.IPv4Addr([4]byte{10, 0, 0, 3}), 0x23))
	other.lo, other.hi = 0, 1000

	assert.Nil(t, c.PairByPSN(resp, 300, opcode.RCAcknowledge), "no reverse flow sent PSN 300")
	assert.Nil(t, resp.Peer)
	assert.Equal(t, analysis.Unpaired, resp.PairedBy)

	// Both old and newer sent PSN 160: the capture does not say which one
	// resp answers.
	assert.Nil(t, c.PairByPSN(resp, 160, opcode.RCAcknowledge))
	assert.Nil(t, resp.Peer)
	assert.Equal(t, analysis.Ambiguous, resp.PairedBy)
	assert.Equal(t, analysis.Ambiguous, old.PairedBy)
	assert.Equal(t, analysis.Ambiguous, newer.PairedBy)
	assert.Equal(t, analysis.Unpaired, other.PairedBy, "a flow to another host is no candidate")
	assert.Equal(t, "ambiguous", resp.PairedBy.String())

	// Only newer sent PSN 220.
	require.Same(t, newer, c.PairByPSN(resp, 220, opcode.RCAcknowledge))
	assert.Same(t, newer, resp.Peer)
	assert.Same(t, resp, newer.Peer)
	assert.Equal(t, analysis.PairedByPSN, resp.PairedBy)
	assert.Equal(t, "psn", newer.PairedBy.String())

	// Both sent PSN 150, but only the READ of old2 is answered by a READ
	// response at 150.
	c2, resp2, old2, newer2 := threeFlows(150, 100)
	require.Same(t, old2, c2.PairByPSN(resp2, 150, opcode.RCRDMAReadResponseOnly))
	assert.Equal(t, analysis.Unpaired, newer2.PairedBy)

	// Pairing resp with another flow unpairs newer.
	c.Pair(resp, old, analysis.PairedByCM)
	assert.Same(t, old, resp.Peer)
	assert.Nil(t, newer.Peer)
	assert.Equal(t, analysis.Unpaired, newer.PairedBy)
	assert.Equal(t, "", newer.PairedBy.String())
	assert.Equal(t, "cm", old.PairedBy.String())
}

func TestConnsCM(t *testing.T) {
	c := newTable()
	req := analysis.CMMessage{Attr: cm.AttrREQ, OK: true, Local: 0x1000, QPN: 0x11, PSN: 0x500, MTU: 3, PKey: 0x8001,
		Transport: cm.ServiceRC, Service: 0x42}
	rep := analysis.CMMessage{Attr: cm.AttrREP, OK: true, Local: 0x2000, Remote: 0x1000, QPN: 0x33, PSN: 0x900}
	assert.Nil(t, c.LearnCM(packet.RoCEv2IPv4, hostA, hostB, &req, 1))
	assert.Nil(t, c.LearnCM(packet.RoCEv2IPv4, hostA, hostB, &req, 2), "a retried REQ")
	info := c.LearnCM(packet.RoCEv2IPv4, hostB, hostA, &rep, 3)
	require.NotNil(t, info)
	assert.Equal(t, analysis.CMInfo{ServiceID: 0x42, Transport: "RC", Active: hostA, Passive: hostB,
		ActiveCommID: 0x1000, PassiveCommID: 0x2000, ActiveQPN: 0x11, PassiveQPN: 0x33,
		REQStartingPSN: 0x500, REPStartingPSN: 0x900, PMTU: 1024, PKey: 0x8001, REQFrame: 1, REPFrame: 3}, *info)
	assert.Nil(t, c.LearnCM(packet.RoCEv2IPv4, hostB, hostA, &rep, 4), "a REP without a pending REQ")

	rtu := analysis.CMMessage{Attr: cm.AttrRTU, OK: true, Local: 0x1000, Remote: 0x2000}
	assert.Nil(t, c.LearnCM(packet.RoCEv2IPv4, hostA, hostB, &rtu, 5))
	dreq := analysis.CMMessage{Attr: cm.AttrDREQ, OK: true, Local: 0x2000, Remote: 0x1000}
	c.LearnCM(packet.RoCEv2IPv4, hostB, hostA, &dreq, 6)
	assert.Equal(t, 5, info.RTUFrame)
	assert.Equal(t, 6, info.DREQFrame)

	ap, pa := c.PairCM(packet.RoCEv2IPv4, info)
	assert.Equal(t, key(hostA, hostB, 0x33), ap.Key, "active -> passive requests go to the REP's QPN")
	assert.Equal(t, key(hostB, hostA, 0x11), pa.Key)
	assert.Same(t, pa, ap.Peer)
	assert.Equal(t, analysis.PairedByCM, pa.PairedBy)
	assert.Same(t, info, ap.CM)

	// A REJ forgets the REQ.
	req2 := req
	req2.Local = 0x3000
	rej := analysis.CMMessage{Attr: cm.AttrREJ, OK: true, Local: 0x4000, Remote: 0x3000}
	c.LearnCM(packet.RoCEv2IPv4, hostA, hostB, &req2, 7)
	c.LearnCM(packet.RoCEv2IPv4, hostB, hostA, &rej, 8)
	rep2 := rep
	rep2.Remote = 0x3000
	assert.Nil(t, c.LearnCM(packet.RoCEv2IPv4, hostB, hostA, &rep2, 9))
	assert.Equal(t, uint64(1), c.CMRejects())
}
