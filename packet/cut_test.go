package packet_test

import (
	"errors"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// buildFrame encodes ff with a payload of n bytes.
func buildFrame(t *testing.T, ff packet.FrameFields, n int) []byte {
	t.Helper()
	ff.Transport.Payload = make([]byte, n)
	for i := range ff.Transport.Payload {
		ff.Transport.Payload[i] = byte(i)
	}
	ff.Transport.SetPad()
	b := make([]byte, ff.Len())
	_, err := ff.Encode(b)
	require.NoError(t, err)
	return b
}

// record is what a capture with snap length snap keeps of frame b (whole
// when snap is 0 or at least len(b)), with wire more bytes on the wire.
func record(lt pcap.LinkType, b []byte, snap int) *pcap.Record {
	data := b
	if snap > 0 && snap < len(b) {
		data = b[:snap]
	}
	return &pcap.Record{LinkType: lt, Data: data, CapLen: len(data), OrigLen: len(b)}
}

func writeFirst(encap packet.Encap) packet.FrameFields {
	ff := packet.DefaultFrame(encap)
	ff.Transport.BTH.Opcode = opcode.RCRDMAWriteFirst
	ff.Transport.BTH.DestQP = 0x12
	ff.Transport.BTH.PSN = 7
	ff.Transport.RETH.VA = 0x10000000
	ff.Transport.RETH.RKey = 0x100
	ff.Transport.RETH.DMALen = 1 << 20
	return ff
}

// A record the capture cut (captured length below the original length)
// decodes every header the capture kept whole, without error, as tshark
// does; a header it cut is absent. The payload length comes from the IP
// and UDP lengths, and there is no ICRC to check.
func TestDecodeRecordCut(t *testing.T) {
	b := buildFrame(t, writeFirst(packet.RoCEv2IPv4), 4096)
	require.Len(t, b, 14+20+8+12+16+4096+4)
	var f packet.Frame
	for _, snap := range []int{64, 69, 70, 100, 128, len(b) - 4, len(b) - 1} {
		require.NoError(t, f.DecodeRecord(record(pcap.LinkTypeEthernet, b, snap)), "snap %d", snap)
		assert.Equal(t, len(b)-snap, f.Cut, "snap %d", snap)
		assert.Equal(t, packet.RoCEv2IPv4, f.Encap)
		p := &f.Transport
		require.NotNil(t, p.BTH, "snap %d", snap)
		assert.Equal(t, uint32(7), p.BTH.PSN())
		assert.Equal(t, len(b)-snap, p.Cut, "snap %d: the transport packet ends the frame", snap)
		assert.True(t, p.Framed())
		assert.Equal(t, 4096, p.PayloadLen(), "snap %d", snap)
		assert.Equal(t, 0, p.PadLen())
		if snap >= 70 {
			require.NotNil(t, p.RETH, "snap %d", snap)
			assert.Equal(t, uint32(1<<20), p.RETH.DMALen())
			assert.Equal(t, string(b[70:min(snap, 70+4096)]), string(p.Payload), "snap %d: the payload bytes kept", snap)
		} else {
			assert.Nil(t, p.RETH, "snap %d: RETH cut", snap)
			assert.Empty(t, p.Payload)
		}
		assert.Nil(t, p.ICRC)
		assert.Nil(t, f.Network(), "no ICRC to check")
		_, _, _, err := f.CheckICRC()
		assert.Error(t, err)
	}

	// Cut before the transport: the headers kept, nothing else, no error.
	for _, c := range []struct {
		snap             int
		ip, udp, bth     bool
		encap            packet.Encap
		transportCutSeen bool
	}{
		{10, false, false, false, packet.EncapNone, false},
		{30, false, false, false, packet.EncapNone, false},
		{40, true, false, false, packet.EncapNone, false},
		{50, true, true, false, packet.RoCEv2IPv4, true},
		{54, true, true, true, packet.RoCEv2IPv4, true},
	} {
		rec := record(pcap.LinkTypeEthernet, b, c.snap)
		if c.snap < packet.EthernetLen {
			// The link layer itself is cut: pcap.Network says so.
			require.Error(t, f.DecodeRecord(rec))
			continue
		}
		require.NoError(t, f.DecodeRecord(rec), "snap %d", c.snap)
		assert.Equal(t, c.ip, f.IPv4 != nil, "snap %d", c.snap)
		assert.Equal(t, c.udp, f.UDP != nil, "snap %d", c.snap)
		assert.Equal(t, c.bth, f.Transport.BTH != nil, "snap %d", c.snap)
		assert.Equal(t, c.encap, f.Encap, "snap %d", c.snap)
		assert.Equal(t, c.bth, f.Transport.Framed(), "snap %d", c.snap)
		assert.Equal(t, c.transportCutSeen, f.Transport.Cut > 0, "snap %d", c.snap)
	}

	// Only the FCS cut: the packet is whole, its ICRC checked as usual.
	fcs := append(append([]byte(nil), b...), 1, 2, 3, 4)
	require.NoError(t, f.DecodeRecord(&pcap.Record{LinkType: pcap.LinkTypeEthernet, Data: b, CapLen: len(b), OrigLen: len(fcs)}))
	assert.Equal(t, 4, f.Cut)
	assert.Equal(t, 0, f.Transport.Cut)
	ok, _, _, err := f.CheckICRC()
	require.NoError(t, err)
	assert.True(t, ok)
}

// Without a snap length to explain it (captured length equal to the
// original length), a frame shorter than its IP header says stays an
// error, as it was; so does one whose IP length says more than even the
// original length.
func TestDecodeRecordTruncatedStaysError(t *testing.T) {
	b := buildFrame(t, writeFirst(packet.RoCEv2IPv4), 4096)
	var f packet.Frame
	for _, rec := range []*pcap.Record{
		{LinkType: pcap.LinkTypeEthernet, Data: b[:100], CapLen: 100, OrigLen: 100},
		{LinkType: pcap.LinkTypeEthernet, Data: b[:100], CapLen: 100, OrigLen: 200},
		{LinkType: pcap.LinkTypeEthernet, Data: b[:100], CapLen: 100, OrigLen: len(b) - 1},
	} {
		err := f.DecodeRecord(rec)
		var he *rocekit.HeaderError
		require.ErrorAs(t, err, &he, "orig %d", rec.OrigLen)
		assert.Equal(t, "ipv4", he.Header)
		assert.Equal(t, "TotalLength", he.Field)
		assert.True(t, errors.Is(err, rocekit.ErrTruncated))
		assert.Equal(t, packet.RoCEv2IPv4, f.Encap, "still recognised")
		assert.Equal(t, opcode.RCRDMAWriteFirst, f.Transport.Opcode())
		assert.Equal(t, 0, f.Transport.Cut)
		assert.False(t, f.Transport.Framed())
	}
	// The same through the plain decoder, which knows of no cut.
	require.Error(t, f.DecodeEthernet(b[:100]))
	assert.Equal(t, 0, f.Cut)
}

// What a cut frame's own lengths make impossible is an error, as in a whole
// frame: the capture explains missing bytes, not wrong lengths.
func TestDecodeRecordCutLengthErrors(t *testing.T) {
	var f packet.Frame
	// UDP length disagreeing with the IP length.
	b := buildFrame(t, writeFirst(packet.RoCEv2IPv4), 4096)
	b[14+20+4]++ // UDP length
	err := f.DecodeRecord(record(pcap.LinkTypeEthernet, b, 100))
	var he *rocekit.HeaderError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "udp", he.Header)

	// An unknown opcode.
	b = buildFrame(t, writeFirst(packet.RoCEv2IPv4), 4096)
	b[42] = 0x57
	err = f.DecodeRecord(record(pcap.LinkTypeEthernet, b, 100))
	assert.ErrorIs(t, err, rocekit.ErrUnknownOpcode)
	assert.False(t, f.Transport.Framed())

	// A PadCnt larger than the bytes between headers and ICRC.
	ack := packet.DefaultFrame(packet.RoCEv2IPv4)
	ack.Transport.BTH.Opcode = opcode.RCRDMAWriteOnly
	b = buildFrame(t, ack, 0)
	b[43] |= 0x30 // PadCnt 3, no payload
	require.Error(t, f.DecodeEthernet(b), "whole")
	err = f.DecodeRecord(record(pcap.LinkTypeEthernet, b, 64))
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "PadCnt", he.Field)

	// A length too short for the opcode's headers (RETH).
	b = buildFrame(t, writeFirst(packet.RoCEv2IPv4), 0)
	b[42] = byte(opcode.RCCompareSwap) // needs a 28-byte AtomicETH, 16 bytes follow the BTH
	err = f.DecodeRecord(record(pcap.LinkTypeEthernet, b, 60))
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "atomiceth", he.Header)
}

// IPv6, RoCEv1 and native InfiniBand (LRH, LRH+GRH) cut the same way.
func TestDecodeRecordCutEncaps(t *testing.T) {
	var f packet.Frame
	for _, c := range []struct {
		encap packet.Encap
		lt    pcap.LinkType
		hdrs  int // bytes before the BTH
	}{
		{packet.RoCEv2IPv6, pcap.LinkTypeEthernet, 14 + 40 + 8},
		{packet.RoCEv1, pcap.LinkTypeEthernet, 14 + 40},
		{packet.IBLocal, pcap.LinkTypeInfiniBand, 8},
		{packet.IBGlobal, pcap.LinkTypeInfiniBand, 8 + 40},
	} {
		b := buildFrame(t, writeFirst(c.encap), 1024)
		for _, snap := range []int{c.hdrs + 12, c.hdrs + 12 + 16, c.hdrs + 100} {
			require.NoError(t, f.DecodeRecord(record(c.lt, b, snap)), "%s snap %d", c.encap, snap)
			assert.Equal(t, c.encap, f.Encap)
			require.NotNil(t, f.Transport.BTH, "%s snap %d", c.encap, snap)
			assert.Equal(t, snap >= c.hdrs+12+16, f.Transport.RETH != nil, "%s snap %d", c.encap, snap)
			assert.Equal(t, 1024, f.Transport.PayloadLen(), "%s snap %d", c.encap, snap)
			assert.Nil(t, f.Network())
			assert.Nil(t, f.VCRC)
		}
	}
	// Native IB with only the VCRC cut: the packet is whole.
	b := buildFrame(t, writeFirst(packet.IBLocal), 1024)
	require.NoError(t, f.DecodeRecord(record(pcap.LinkTypeInfiniBand, b, len(b)-1)))
	assert.Nil(t, f.VCRC)
	assert.Equal(t, 0, f.Transport.Cut)
	ok, _, _, err := f.CheckICRC()
	require.NoError(t, err)
	assert.True(t, ok)
}

// The ICRC covers the transport packet whatever its opcode: once the
// encapsulation's lengths bound it, it is checked, even when the opcode is
// unknown or its headers do not fit (single-byte corruption of the opcode
// byte, as a scapy corpus showed).
func TestICRCVerdictWithoutTransport(t *testing.T) {
	send := packet.DefaultFrame(packet.RoCEv2IPv4)
	send.Transport.BTH.Opcode = opcode.RCSendOnly
	ack := packet.DefaultFrame(packet.RoCEv2IPv4)
	ack.Transport.BTH.Opcode = opcode.RCAcknowledge
	ib := packet.DefaultFrame(packet.IBLocal)
	ib.Transport.BTH.Opcode = opcode.RCSendOnly
	var f packet.Frame
	for _, c := range []struct {
		name string
		ff   packet.FrameFields
		n    int
		bth  int
		op   byte
		err  error
	}{
		{"unknown 0x57", send, 32, 42, 0x57, rocekit.ErrUnknownOpcode},
		{"unknown 0x75", send, 32, 42, 0x75, rocekit.ErrUnknownOpcode},
		{"unknown 0xE5", send, 32, 42, 0xE5, rocekit.ErrUnknownOpcode},
		{"ack made CmpSwap", ack, 0, 42, byte(opcode.RCCompareSwap), rocekit.ErrTruncated},
		{"native IB unknown", ib, 32, 8, 0x57, rocekit.ErrUnknownOpcode},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := buildFrame(t, c.ff, c.n)
			decode := func() error {
				if c.ff.Encap == packet.IBLocal {
					return f.DecodeIB(b)
				}
				return f.DecodeEthernet(b)
			}
			b[c.bth] = c.op
			require.ErrorIs(t, decode(), c.err)
			require.NotNil(t, f.Network(), "the encapsulation bounds the transport packet")
			ok, want, got, err := f.CheckICRC()
			require.NoError(t, err)
			assert.False(t, ok, "the corrupted byte is covered")
			assert.NotEqual(t, want, got)

			// The same opcode with an ICRC computed over it: correct.
			icrc.Put(f.Network()[len(f.Network())-icrc.Len:], want)
			if f.VCRC != nil {
				icrc.PutVCRC(f.VCRC, icrc.VCRC(f.Network()))
			}
			require.ErrorIs(t, decode(), c.err)
			ok, _, _, err = f.CheckICRC()
			require.NoError(t, err)
			assert.True(t, ok)
			assert.Nil(t, f.Transport.ICRC, "the transport packet still did not decode")
		})
	}
}
