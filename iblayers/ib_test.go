package iblayers_test

import (
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/iblayers"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/immdt"
	"github.com/rocekit/rocekit/lrh"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/reth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func ibFrame(t *testing.T, e packet.Encap) ([]byte, packet.FrameFields) {
	ff := packet.DefaultFrame(e)
	ff.LRH.SL = 3
	ff.LRH.VL = 1
	ff.Transport.BTH = bth.Fields{Opcode: opcode.RCRDMAWriteOnlyWithImmediate, PKey: 0xFFFF, DestQP: 0x42, AckReq: true, PSN: 0x1234}
	ff.Transport.RETH = reth.Fields{VA: 0xDEAD0000, RKey: 0x77, DMALen: 5}
	ff.Transport.ImmDt = immdt.Fields{Imm: 0xCAFEBABE}
	ff.Transport.Payload = []byte("hello")
	ff.Transport.SetPad()
	return encode(t, &ff), ff
}

// TestNativeIB decodes native InfiniBand packets built with
// packet.DefaultFrame(packet.IBLocal) and (IBGlobal), from LayerTypeLRH and
// from LinkTypeInfiniBand (the pcap link type 247).
func TestNativeIB(t *testing.T) {
	for _, tc := range []struct {
		encap  packet.Encap
		layers []gopacket.LayerType
	}{
		{packet.IBLocal, []gopacket.LayerType{iblayers.LayerTypeLRH, iblayers.LayerTypeBTH, gopacket.LayerTypePayload}},
		{packet.IBGlobal, []gopacket.LayerType{iblayers.LayerTypeLRH, iblayers.LayerTypeGRH, iblayers.LayerTypeBTH, gopacket.LayerTypePayload}},
	} {
		t.Run(tc.encap.String(), func(t *testing.T) {
			frame, ff := ibFrame(t, tc.encap)
			for _, first := range []gopacket.Decoder{iblayers.LayerTypeLRH, iblayers.LinkTypeInfiniBand} {
				p := gopacket.NewPacket(frame, first, gopacket.DecodeOptions{SkipDecodeRecovery: true})
				require.Nil(t, p.ErrorLayer())
				require.Equal(t, tc.layers, layerTypes(p))

				l := p.Layer(iblayers.LayerTypeLRH).(*iblayers.LRH)
				assert.Equal(t, l, p.LinkLayer())
				assert.Equal(t, uint16(1), l.SLID())
				assert.Equal(t, uint16(2), l.DLID())
				assert.Equal(t, uint8(3), l.SL())
				assert.Equal(t, uint8(1), l.VL())
				assert.Equal(t, len(frame)-icrc.VCRCLen, l.PacketBytes())
				assert.Equal(t, frame[len(frame)-2:], l.VCRC)
				assert.Equal(t, icrc.VCRC(frame[:len(frame)-2]), l.VCRCValue())
				assert.Equal(t, "0x0001->0x0002", l.LinkFlow().String())
				assert.Contains(t, l.String(), "vcrc=0x")

				tr := p.Layer(iblayers.LayerTypeBTH).(*iblayers.Transport)
				assert.Equal(t, ff.Transport.BTH, tr.BTH.Fields())
				assert.Equal(t, ff.Transport.RETH, tr.RETH.Fields())
				assert.Equal(t, uint32(0xCAFEBABE), tr.ImmDt.Imm())
				assert.Equal(t, []byte("hello"), p.ApplicationLayer().Payload())
				assert.Equal(t, []byte{0, 0, 0}, tr.Pad)
				assert.Equal(t, frame[len(frame)-6:len(frame)-2], []byte(tr.ICRC))

				ok, want, got, err := iblayers.CheckICRC(frame, iblayers.LayerTypeLRH)
				require.NoError(t, err)
				assert.True(t, ok, "want %08x got %08x", want, got)
			}
		})
	}
}

// TestFixICRC: FixICRC restores an ICRC (and VCRC, and a non-zero UDP
// checksum) that was damaged, for every encapsulation and first layer.
func TestFixICRC(t *testing.T) {
	for _, tc := range []struct {
		encap packet.Encap
		first gopacket.LayerType
		strip int // bytes before the first layer
	}{
		{packet.RoCEv2IPv4, layers.LayerTypeEthernet, 0},
		{packet.RoCEv2IPv4, layers.LayerTypeIPv4, packet.EthernetLen},
		{packet.RoCEv2IPv6, layers.LayerTypeEthernet, 0},
		{packet.RoCEv2IPv6, layers.LayerTypeIPv6, packet.EthernetLen},
		{packet.RoCEv1, layers.LayerTypeEthernet, 0},
		{packet.RoCEv1, iblayers.LayerTypeGRH, packet.EthernetLen},
		{packet.IBLocal, iblayers.LayerTypeLRH, 0},
		{packet.IBGlobal, iblayers.LayerTypeLRH, 0},
	} {
		t.Run(tc.encap.String()+"/"+tc.first.String(), func(t *testing.T) {
			ff := packet.DefaultFrame(tc.encap)
			ff.UDP.Checksum = true
			ff.Transport.BTH.Opcode = opcode.RCSendOnly
			ff.Transport.BTH.PSN = 7
			ff.Transport.Payload = []byte("abcdefg")
			ff.Transport.SetPad()
			good := encode(t, &ff)[tc.strip:]
			ok, _, _, err := iblayers.CheckICRC(good, tc.first)
			require.NoError(t, err)
			require.True(t, ok)

			ff.ICRCXor, ff.VCRCXor = 0x5A5A5A5A, 0x5A5A
			bad := encode(t, &ff)[tc.strip:]
			require.NotEqual(t, good, bad)
			ok, want, got, err := iblayers.CheckICRC(bad, tc.first)
			require.NoError(t, err)
			assert.False(t, ok)
			assert.Equal(t, want^0x5A5A5A5A, got)

			require.NoError(t, iblayers.FixICRC(bad, tc.first))
			assert.Equal(t, good, bad)
		})
	}
}

func TestFixICRCErrors(t *testing.T) {
	// Not RoCE: UDP to another port.
	ff := packet.DefaultFrame(packet.RoCEv2IPv4)
	ff.UDP.DstPort = 4792
	ff.Transport.BTH.Opcode = opcode.RCSendOnly
	frame := encode(t, &ff)
	err := iblayers.FixICRC(frame, layers.LayerTypeEthernet)
	assert.ErrorContains(t, err, "no IB transport packet")
	_, _, _, err = iblayers.CheckICRC(frame, layers.LayerTypeEthernet)
	assert.Error(t, err)

	// A first layer it cannot read from.
	assert.ErrorContains(t, iblayers.FixICRC(frame, layers.LayerTypeUDP), "cannot locate")

	// Truncated network header.
	assert.ErrorContains(t, iblayers.FixICRC(frame[:20], layers.LayerTypeEthernet), "ipv4")

	// The transport packet need not decode: an unknown opcode still gets
	// its ICRC.
	ff = packet.DefaultFrame(packet.RoCEv2IPv4)
	ff.Transport.BTH.Opcode = 0x18
	ff.Transport.Payload = []byte{1, 2, 3, 4}
	good := encode(t, &ff)
	bad := append([]byte(nil), good...)
	bad[len(bad)-1] ^= 0xFF
	require.NoError(t, iblayers.FixICRC(bad, layers.LayerTypeEthernet))
	assert.Equal(t, good, bad)
}

// TestRegistration checks what importing the package wires into gopacket.
func TestRegistration(t *testing.T) {
	assert.Equal(t, "IBTransport", iblayers.LayerTypeBTH.String())
	assert.Equal(t, "GRH", iblayers.LayerTypeGRH.String())
	assert.Equal(t, "LRH", iblayers.LayerTypeLRH.String())
	assert.Equal(t, iblayers.LayerTypeBTH, layers.UDPPort(4791).LayerType())
	assert.Equal(t, iblayers.LayerTypeGRH, layers.EthernetType(0x8915).LayerType())
	assert.Equal(t, "RoCEv1", layers.EthernetType(0x8915).String())
	assert.Equal(t, iblayers.LayerTypeLRH, layers.LinkType(247).LayerType())
	assert.Equal(t, "InfiniBand", layers.LinkType(247).String())
	assert.Equal(t, "LID", iblayers.EndpointLID.String())
	for _, name := range []string{"IBTransport", "GRH", "LRH"} {
		assert.NotNil(t, gopacket.DecodersByLayerName[name], name)
	}
}

// TestGRHNextHeader: NxtHdr 0x1B leads to the transport layer, anything else
// to a payload.
func TestGRHNextHeader(t *testing.T) {
	frame := unhex(t, vecD2)[packet.EthernetLen:]
	var g iblayers.GRH
	require.NoError(t, g.DecodeFromBytes(frame, gopacket.NilDecodeFeedback))
	assert.Equal(t, iblayers.LayerTypeBTH, g.NextLayerType())
	g.SetNxtHdr(0x3B)
	assert.Equal(t, gopacket.LayerTypePayload, g.NextLayerType())
	p := gopacket.NewPacket(frame, iblayers.LayerTypeGRH, gopacket.DecodeOptions{SkipDecodeRecovery: true})
	assert.Equal(t, []gopacket.LayerType{iblayers.LayerTypeGRH, gopacket.LayerTypePayload}, layerTypes(p))
}

// TestLRHNextHeader: LNH 0 (raw) and 1 (IP) carry a payload, not a transport.
func TestLRHNextHeader(t *testing.T) {
	frame, _ := ibFrame(t, packet.IBLocal)
	for lnh, want := range map[uint8]gopacket.LayerType{
		lrh.LNHRaw: gopacket.LayerTypePayload, lrh.LNHIP: gopacket.LayerTypePayload,
		lrh.LNHIBALocal: iblayers.LayerTypeBTH, lrh.LNHIBAGlobal: iblayers.LayerTypeGRH,
	} {
		b := append([]byte(nil), frame...)
		lrh.LRH(b).SetLNH(lnh)
		var l iblayers.LRH
		require.NoError(t, l.DecodeFromBytes(b, gopacket.NilDecodeFeedback))
		assert.Equal(t, want, l.NextLayerType(), "LNH %d", lnh)
	}
}
