package rc

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rocekit/rocekit/opcode"
)

func TestValidMTU(t *testing.T) {
	for _, n := range []int{256, 512, 1024, 2048, 4096} {
		assert.True(t, ValidMTU(n), n)
	}
	for _, n := range []int{-256, 0, 128, 255, 257, 1500, 8192} {
		assert.False(t, ValidMTU(n), n)
	}
}

func TestPackets(t *testing.T) {
	cases := []struct {
		length uint32
		pmtu   int
		want   uint32
	}{
		{0, 1024, 1}, {1, 1024, 1}, {1024, 1024, 1}, {1025, 1024, 2}, {4096, 256, 16},
		{1 << 31, 256, 1 << 23}, {1<<32 - 1, 4096, 1 << 20}, {100, 0, 0}, {100, -1, 0},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, Packets(c.length, c.pmtu), "%d bytes at %d", c.length, c.pmtu)
	}
}

func TestEndsMessageAndConsumesWQE(t *testing.T) {
	ends := map[opcode.Opcode]bool{}
	wqe := map[opcode.Opcode]bool{}
	for _, o := range []opcode.Opcode{opcode.RCSendLast, opcode.RCSendOnly, opcode.RCSendLastWithImmediate,
		opcode.RCSendOnlyWithInvalidate, opcode.RCSendOnlyWithImmediate, opcode.RCSendLastWithInvalidate, opcode.RCRDMAWriteLast, opcode.RCRDMAWriteLastWithImmediate,
		opcode.RCRDMAWriteOnly, opcode.RCRDMAWriteOnlyWithImmediate,
		opcode.RCRDMAReadRequest, opcode.RCCompareSwap, opcode.RCFetchAdd, opcode.RCFlush, opcode.RCAtomicWrite} {
		ends[o] = true
	}
	for _, o := range []opcode.Opcode{opcode.RCSendFirst, opcode.RCSendOnly, opcode.RCSendOnlyWithImmediate,
		opcode.RCSendOnlyWithInvalidate, opcode.RCRDMAWriteLastWithImmediate, opcode.RCRDMAWriteOnlyWithImmediate} {
		wqe[o] = true
	}
	for i := 0; i < 0x20; i++ {
		o := opcode.Opcode(i)
		if !o.Valid() {
			assert.False(t, EndsMessage(o), o.String())
			assert.False(t, ConsumesWQE(o), o.String())
			continue
		}
		assert.Equal(t, ends[o], EndsMessage(o), o.String())
		assert.Equal(t, wqe[o], ConsumesWQE(o), o.String())
	}
}

func TestAnsweredByRead(t *testing.T) {
	for i := 0; i < 0x20; i++ {
		o := opcode.Opcode(i)
		read := o == opcode.RCRDMAReadRequest || o == opcode.RCFlush || o == opcode.RCAtomicWrite
		assert.Equal(t, read, AnsweredByRead(o), o.String())
		assert.Equal(t, read || o == opcode.RCCompareSwap || o == opcode.RCFetchAdd, NeedsResponse(o), o.String())
	}
}
