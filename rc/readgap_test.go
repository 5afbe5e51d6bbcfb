package rc_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

func readResp(op opcode.Opcode, psn uint32, n int) *packet.Fields {
	f := &packet.Fields{Payload: make([]byte, n)}
	f.BTH.Opcode, f.BTH.PSN, f.BTH.DestQP, f.BTH.PKey = op, psn, 0x101, 0xFFFF
	if op != opcode.RCRDMAReadResponseMiddle {
		f.AETH.Syndrome = unlimited
	}
	f.SetPad()
	return f
}

// A READ response past the expected PSN re-requests the READ from the
// first missing response at once, not at the local ACK timeout: a new READ
// request with that PSN, the VA advanced and the length reduced by what
// arrived (§5.5). Later responses of the same gap start no second retry;
// the first missing response ends the retry, and the next gap starts one.
func TestReadGapReissuedAtOnce(t *testing.T) {
	a := newA(t, nil) // MTU 256, first PSN 100
	require.NoError(t, a.PostSend(rc.WR{ID: 1, Opcode: rc.WRRDMARead, Local: make([]byte, 3000), RemoteAddr: 0x5000, RKey: 0x77}))
	o := a.AppendOutgoing(0, nil)
	require.Len(t, o, 1)
	assert.Equal(t, uint32(112), a.NextPSN(), "12 responses")

	a.ReceiveFields(0, readResp(opcode.RCRDMAReadResponseFirst, 100, 256))
	a.ReceiveFields(0, readResp(opcode.RCRDMAReadResponseMiddle, 101, 256))
	assert.Empty(t, a.AppendOutgoing(0, nil))
	a.ReceiveFields(0, readResp(opcode.RCRDMAReadResponseMiddle, 103, 256)) // 102 lost
	o = a.AppendOutgoing(0, nil)
	require.Len(t, o, 1, "re-issued at once")
	assert.Equal(t, opcode.RCRDMAReadRequest, o[0].BTH.Opcode)
	assert.Equal(t, uint32(102), o[0].BTH.PSN)
	assert.True(t, o[0].BTH.AckReq)
	assert.Equal(t, uint64(0x5000+512), o[0].RETH.VA)
	assert.Equal(t, uint32(0x77), o[0].RETH.RKey)
	assert.Equal(t, uint32(3000-512), o[0].RETH.DMALen)
	s := a.Stats()
	assert.Equal(t, uint64(1), s.Retries)
	assert.Zero(t, s.Timeouts)

	for psn := uint32(104); psn <= 110; psn++ { // the rest of the first stream
		a.ReceiveFields(0, readResp(opcode.RCRDMAReadResponseMiddle, psn, 256))
	}
	assert.Empty(t, a.AppendOutgoing(0, nil), "one retry per gap")
	assert.Equal(t, uint64(1), a.Stats().Retries)

	a.ReceiveFields(0, readResp(opcode.RCRDMAReadResponseMiddle, 102, 256)) // the replay
	a.ReceiveFields(0, readResp(opcode.RCRDMAReadResponseMiddle, 104, 256)) // 103 lost this time
	o = a.AppendOutgoing(0, nil)
	require.Len(t, o, 1)
	assert.Equal(t, uint32(103), o[0].BTH.PSN)
	assert.Equal(t, uint64(0x5000+768), o[0].RETH.VA)
	assert.Equal(t, uint32(3000-768), o[0].RETH.DMALen)
	for psn := uint32(103); psn <= 110; psn++ {
		a.ReceiveFields(0, readResp(opcode.RCRDMAReadResponseMiddle, psn, 256))
	}
	a.ReceiveFields(0, readResp(opcode.RCRDMAReadResponseLast, 111, 3000-11*256))
	c := a.AppendCompletions(nil)
	require.Len(t, c, 1)
	assert.Equal(t, rc.Success, c[0].Status)
	assert.Equal(t, uint64(2), a.Stats().Retries)
	assert.Zero(t, a.Stats().Timeouts)
}

// A duplicate READ request for PSN p drops the READ responses still queued
// from p on: the requester has what came before p and asks again for the
// rest, so only the replay goes out (§5.4, §5.5).
func TestDuplicateReadDropsQueuedResponses(t *testing.T) {
	b, mr := newB(t, nil) // MTU 256, expects PSN 100
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 100, nil), bAddr, 3000))
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 112, nil), bAddr+4096, 600))
	var f packet.Fields
	for psn := uint32(100); psn <= 102; psn++ {
		require.True(t, b.NextPacket(0, &f))
		assert.Equal(t, psn, f.BTH.PSN)
	}
	// 101 was lost: the requester asks again from 101, then for the second
	// READ again (go-back-N).
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 101, nil), bAddr+256, 3000-256))
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 112, nil), bAddr+4096, 600))
	o := out(b)
	var psns []uint32
	for _, f := range o {
		psns = append(psns, f.BTH.PSN)
	}
	assert.Equal(t, []uint32{101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114}, psns)
	assert.Equal(t, opcode.RCRDMAReadResponseMiddle, o[0].BTH.Opcode)
	assert.Equal(t, mr.Buf[256:512], o[0].Payload)
	assert.Equal(t, opcode.RCRDMAReadResponseLast, o[10].BTH.Opcode)
	assert.Equal(t, opcode.RCRDMAReadResponseFirst, o[11].BTH.Opcode)
	assert.Equal(t, mr.Buf[4096:4096+256], o[11].Payload)
	assert.Equal(t, opcode.RCRDMAReadResponseLast, o[13].BTH.Opcode)
	assert.Equal(t, uint32(115), b.ExpectedPSN())
}

// A duplicate READ request that the requester did not send again (the
// network duplicated it) does not lose the responses of the READ queued
// after it: they follow the replay.
func TestDuplicateReadKeepsLaterReads(t *testing.T) {
	b, _ := newB(t, nil)
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 100, nil), bAddr, 3000))
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 112, nil), bAddr+4096, 600))
	var f packet.Fields
	for psn := uint32(100); psn <= 102; psn++ {
		require.True(t, b.NextPacket(0, &f))
	}
	b.ReceiveFields(0, withRETH(req(opcode.RCRDMAReadRequest, 100, nil), bAddr, 3000))
	var psns []uint32
	for _, f := range out(b) {
		psns = append(psns, f.BTH.PSN)
	}
	assert.Equal(t, []uint32{100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113, 114}, psns)
}
