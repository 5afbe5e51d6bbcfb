package iblayers_test

import (
	"encoding/hex"
	"net"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/iblayers"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/reth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// Frames of ib-facts.md §3.4 (A, B, E, F computed with scapy and three
// independent CRCs; C and D captured from Mellanox NICs).
const (
	vecA  = "020000000002020000000001080045020038123440004011a52bc0a80101c0a80102c00012b7002400000450ffff000000128000000168656c6c6f20526f43452100d870fd70"
	vecB  = "02000000000202000000000186dd6021234500301140fd000000000000000000000000000001fd000000000000000000000000000002c00112b7003000000a40ffff0000001180abcdef00000000123456780000123400000008010203040506070897f03724"
	vecC  = "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a"
	vecD1 = "7cfe90753cd87cfe90753cd889156020000000281b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000020a70ffff0000010a80a788bc000055d4c0726000000047b3000000050000000001000000e3d856bb"
	vecD2 = "7cfe90753cd87cfe90753cd889156020000000141b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000021140ffff0000010900a788c00000000525f0c038"
	vecE  = "020000000001020000000002080045020030000140004011b766c0a80102c0a80101c00012b7001c00001100ffff00000034000000011f0000054260c0b4"
	vecF  = "020000000001020000000002080045c2003c000240004011b699c0a80102c0a80101c00012b7002800008100ffff400000120000000000000000000000000000000000000000bcd115ff"
)

var (
	roceV2IPv4 = []gopacket.LayerType{layers.LayerTypeEthernet, layers.LayerTypeIPv4, layers.LayerTypeUDP, iblayers.LayerTypeBTH}
	roceV2IPv6 = []gopacket.LayerType{layers.LayerTypeEthernet, layers.LayerTypeIPv6, layers.LayerTypeUDP, iblayers.LayerTypeBTH}
	roceV1     = []gopacket.LayerType{layers.LayerTypeEthernet, iblayers.LayerTypeGRH, iblayers.LayerTypeBTH}
)

func withPayload(ts []gopacket.LayerType) []gopacket.LayerType {
	return append(append([]gopacket.LayerType(nil), ts...), gopacket.LayerTypePayload)
}

type vector struct {
	name   string
	hex    string
	layers []gopacket.LayerType
	op     opcode.Opcode
	destQP uint32
	psn    uint32
	icrc   string // wire bytes
	check  func(t *testing.T, p gopacket.Packet, tr *iblayers.Transport)
}

var vectors = []vector{
	{"A", vecA, withPayload(roceV2IPv4), opcode.RCSendOnly, 0x12, 1, "d870fd70", func(t *testing.T, p gopacket.Packet, tr *iblayers.Transport) {
		assert.Equal(t, "hello RoCE!", string(p.ApplicationLayer().Payload()))
		assert.Equal(t, []byte{0}, tr.Pad)
		assert.Equal(t, uint8(1), tr.BTH.PadCnt())
		assert.True(t, tr.BTH.MigReq())
		assert.True(t, tr.BTH.AckReq())
		assert.Equal(t, uint16(0xFFFF), tr.BTH.PKey())
		assert.Equal(t, uint32(0x70FD70D8), tr.ICRCValue())
		assert.Equal(t, layers.UDPPort(0xC000), p.Layer(layers.LayerTypeUDP).(*layers.UDP).SrcPort)
		assert.Equal(t, "192.168.1.2", p.NetworkLayer().(*layers.IPv4).DstIP.String())
	}},
	{"B", vecB, withPayload(roceV2IPv6), opcode.RCRDMAWriteOnly, 0x11, 0xABCDEF, "97f03724", func(t *testing.T, p gopacket.Packet, tr *iblayers.Transport) {
		assert.Equal(t, reth.Fields{VA: 0x12345678, RKey: 0x1234, DMALen: 8}, tr.RETH.Fields())
		assert.Equal(t, []byte{1, 2, 3, 4, 5, 6, 7, 8}, p.ApplicationLayer().Payload())
		assert.Equal(t, uint32(0x12345), p.NetworkLayer().(*layers.IPv6).FlowLabel)
		assert.Empty(t, tr.Pad)
	}},
	{"C", vecC, roceV2IPv4, opcode.CNP, 0x000118, 0, "82fd002a", func(t *testing.T, p gopacket.Packet, tr *iblayers.Transport) {
		require.NotNil(t, tr.CNP)
		assert.NoError(t, tr.CNP.Validate())
		assert.True(t, tr.BTH.BECN())
		assert.False(t, tr.BTH.FECN())
		assert.Nil(t, p.ApplicationLayer(), "a CNP carries no payload")
		assert.Equal(t, uint8(0xC2), p.NetworkLayer().(*layers.IPv4).TOS)
		assert.Equal(t, layers.UDPPort(0), p.Layer(layers.LayerTypeUDP).(*layers.UDP).SrcPort)
	}},
	{"D1", vecD1, withPayload(roceV1), opcode.RCRDMAWriteOnly, 0x00010A, 0xA788BC, "e3d856bb", func(t *testing.T, p gopacket.Packet, tr *iblayers.Transport) {
		g := p.Layer(iblayers.LayerTypeGRH).(*iblayers.GRH)
		assert.Equal(t, uint8(6), g.IPVer())
		assert.Equal(t, uint8(2), g.TClass())
		assert.Equal(t, uint8(0x40), g.HopLmt())
		assert.Equal(t, uint8(grh.NxtHdrIBA), g.NxtHdr())
		assert.Equal(t, "::ffff:15.0.0.2", g.SGIDAddr().String())
		assert.Equal(t, g, p.NetworkLayer())
		assert.Equal(t, "15.0.0.2->15.0.0.2", g.NetworkFlow().String())
		assert.Equal(t, reth.Fields{VA: 0x000055D4C0726000, RKey: 0x47B3, DMALen: 5}, tr.RETH.Fields())
		assert.Equal(t, uint8(3), tr.BTH.PadCnt())
		assert.Equal(t, []byte{0, 0, 0, 0, 1}, p.ApplicationLayer().Payload())
		assert.Equal(t, []byte{0, 0, 0}, tr.Pad)
	}},
	{"D2", vecD2, roceV1, opcode.RCAcknowledge, 0x000109, 0xA788C0, "25f0c038", func(t *testing.T, p gopacket.Packet, tr *iblayers.Transport) {
		assert.Equal(t, aeth.Fields{Syndrome: 0x00, MSN: 5}, tr.AETH.Fields())
	}},
	{"E", vecE, roceV2IPv4, opcode.RCAcknowledge, 0x34, 1, "4260c0b4", func(t *testing.T, p gopacket.Packet, tr *iblayers.Transport) {
		assert.Equal(t, aeth.Fields{Syndrome: 0x1F, MSN: 5}, tr.AETH.Fields())
	}},
	{"F", vecF, roceV2IPv4, opcode.CNP, 0x12, 0, "bcd115ff", func(t *testing.T, p gopacket.Packet, tr *iblayers.Transport) {
		assert.True(t, tr.BTH.BECN())
		assert.Equal(t, uint8(0xC2), p.NetworkLayer().(*layers.IPv4).TOS)
	}},
}

func layerTypes(p gopacket.Packet) []gopacket.LayerType {
	var ts []gopacket.LayerType
	for _, l := range p.Layers() {
		ts = append(ts, l.LayerType())
	}
	return ts
}

// TestVectorsNewPacket decodes the §3.4 frames with gopacket.NewPacket from
// Ethernet: RoCEv2 through UDP port 4791, RoCEv1 through Ethertype 0x8915.
func TestVectorsNewPacket(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			frame := unhex(t, v.hex)
			p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.DecodeOptions{SkipDecodeRecovery: true})
			require.Nil(t, p.ErrorLayer())
			require.Equal(t, v.layers, layerTypes(p))
			tr, ok := p.Layer(iblayers.LayerTypeBTH).(*iblayers.Transport)
			require.True(t, ok)
			assert.Equal(t, v.op, tr.BTH.Opcode())
			assert.Equal(t, v.op.String(), tr.Opcode().String())
			assert.Equal(t, v.destQP, tr.BTH.DestQP())
			assert.Equal(t, v.psn, tr.BTH.PSN())
			assert.Equal(t, v.icrc, hex.EncodeToString(tr.ICRC))
			assert.Equal(t, bth.Len+v.op.HeaderLen(), len(tr.LayerContents()))
			assert.Contains(t, tr.String(), v.op.String())
			assert.Contains(t, p.String(), "IBTransport")
			assert.Contains(t, p.Dump(), "psn=")
			v.check(t, p, tr)

			ok, want, got, err := iblayers.CheckICRC(p.Data(), p.Layers()[0].LayerType())
			require.NoError(t, err)
			assert.True(t, ok, "ICRC want %08x got %08x", want, got)
			assert.Equal(t, icrc.Get(tr.ICRC), got)
		})
	}
}

// TestVectorsDecodingLayerParser decodes the same frames with a reused
// DecodingLayerParser.
func TestVectorsDecodingLayerParser(t *testing.T) {
	d := newDecoder()
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			frame := unhex(t, v.hex)
			require.NoError(t, d.eth.DecodeLayers(frame, &d.decoded))
			assert.Equal(t, v.layers, d.decoded)
			assert.Equal(t, v.op, d.tr.BTH.Opcode())
			assert.Equal(t, v.destQP, d.tr.BTH.DestQP())
			assert.Equal(t, v.psn, d.tr.BTH.PSN())
			assert.Equal(t, v.icrc, hex.EncodeToString(d.tr.ICRC))
		})
	}
}

// decoder is a set of reusable layers with one parser per first layer.
type decoder struct {
	ethL    layers.Ethernet
	dot1q   layers.Dot1Q
	ip4     layers.IPv4
	ip6     layers.IPv6
	udp     layers.UDP
	grh     iblayers.GRH
	lrh     iblayers.LRH
	tr      iblayers.Transport
	payload gopacket.Payload
	eth, ib *gopacket.DecodingLayerParser
	decoded []gopacket.LayerType
}

func newDecoder() *decoder {
	d := &decoder{decoded: make([]gopacket.LayerType, 0, 16)}
	ls := []gopacket.DecodingLayer{&d.ethL, &d.dot1q, &d.ip4, &d.ip6, &d.udp, &d.grh, &d.lrh, &d.tr, &d.payload}
	d.eth = gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, ls...)
	d.ib = gopacket.NewDecodingLayerParser(iblayers.LayerTypeLRH, ls...)
	return d
}

// TestSerializeVectors re-serialises every decoded vector with every length,
// checksum, pad count and ICRC recomputed (FixLengths, ComputeChecksums, UDP
// checksum 0) and gets the captured bytes back.
func TestSerializeVectors(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			frame := unhex(t, v.hex)
			p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
			var ls []gopacket.SerializableLayer
			for _, l := range p.Layers() {
				switch l := l.(type) {
				case *layers.UDP:
					ls = append(ls, iblayers.ZeroUDPChecksum(l))
				case *layers.IPv4:
					l.Checksum = 0
					ls = append(ls, l)
				case *iblayers.Transport:
					l.BTH.SetPadCnt(0) // FixLengths must put it back
					ls = append(ls, l)
				default:
					ls = append(ls, l.(gopacket.SerializableLayer))
				}
			}
			// Clobber what must be recomputed.
			for i := range p.Layer(iblayers.LayerTypeBTH).(*iblayers.Transport).ICRC {
				p.Layer(iblayers.LayerTypeBTH).(*iblayers.Transport).ICRC[i] = 0
			}
			buf := gopacket.NewSerializeBuffer()
			opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
			require.NoError(t, iblayers.SerializeRoCE(buf, opts, ls...))
			assert.Equal(t, v.hex, hex.EncodeToString(buf.Bytes()))
		})
	}
}

// TestBuildVectorA builds vector A from plain values: gopacket layers for
// Ethernet, IPv4 and UDP, TransportFields for the IB transport.
func TestBuildVectorA(t *testing.T) {
	var tf iblayers.TransportFields
	tf.BTH = bth.Fields{Opcode: opcode.RCSendOnly, MigReq: true, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 1}
	tf.Payload = []byte("hello RoCE!")
	ls := []gopacket.SerializableLayer{
		&layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2}, EthernetType: layers.EthernetTypeIPv4},
		&layers.IPv4{Version: 4, TOS: 0x02, Id: 0x1234, Flags: layers.IPv4DontFragment, TTL: 64, Protocol: layers.IPProtocolUDP,
			SrcIP: net.IP{192, 168, 1, 1}, DstIP: net.IP{192, 168, 1, 2}},
		iblayers.ZeroUDPChecksum(&layers.UDP{SrcPort: 0xC000, DstPort: iblayers.UDPPortRoCEv2}),
		&tf,
	}
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, iblayers.SerializeRoCE(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...))
	assert.Equal(t, vecA, hex.EncodeToString(buf.Bytes()))
	assert.Equal(t, uint8(1), tf.BTH.PadCnt, "FixLengths stores the pad count")

	// The payload may as well come from a gopacket.Payload after the
	// transport layer.
	tf.Payload = nil
	tf.BTH.PadCnt = 0
	ls = append(ls, gopacket.Payload("hello RoCE!"))
	require.NoError(t, iblayers.SerializeRoCE(buf, gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}, ls...))
	assert.Equal(t, vecA, hex.EncodeToString(buf.Bytes()))
}

// TestBuildVectorD builds the RoCEv1 vector D2 with GRHFields.
func TestBuildVectorD(t *testing.T) {
	gid := [16]byte{10: 0xFF, 11: 0xFF, 12: 15, 15: 2}
	mac := net.HardwareAddr{0x7c, 0xfe, 0x90, 0x75, 0x3c, 0xd8}
	var tf iblayers.TransportFields
	tf.BTH = bth.Fields{Opcode: opcode.RCAcknowledge, MigReq: true, PKey: 0xFFFF, DestQP: 0x109, PSN: 0xA788C0}
	tf.AETH = aeth.Fields{Syndrome: 0, MSN: 5}
	ls := []gopacket.SerializableLayer{
		&layers.Ethernet{SrcMAC: mac, DstMAC: mac, EthernetType: iblayers.EthernetTypeRoCEv1},
		&iblayers.GRHFields{Fields: grh.Fields{IPVer: 6, TClass: 2, NxtHdr: grh.NxtHdrIBA, HopLmt: 0x40, SGID: gid, DGID: gid}},
		&tf,
	}
	buf := gopacket.NewSerializeBuffer()
	require.NoError(t, iblayers.SerializeRoCE(buf, gopacket.SerializeOptions{FixLengths: true}, ls...))
	assert.Equal(t, vecD2, hex.EncodeToString(buf.Bytes()))
}
