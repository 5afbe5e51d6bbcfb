package iblayers_test

import (
	"net"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit/iblayers"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

var encaps = []packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1, packet.IBLocal, packet.IBGlobal}

// gopacketLayers returns the gopacket layers that describe ff: gopacket's own
// Ethernet, Dot1Q, IPv4, IPv6 and UDP, and this package's GRHFields,
// LRHFields and TransportFields. Lengths are left for FixLengths.
func gopacketLayers(ff *packet.FrameFields) []gopacket.SerializableLayer {
	var ls []gopacket.SerializableLayer
	var et layers.EthernetType
	switch ff.Encap {
	case packet.RoCEv2IPv4:
		et = layers.EthernetTypeIPv4
	case packet.RoCEv2IPv6:
		et = layers.EthernetTypeIPv6
	case packet.RoCEv1:
		et = iblayers.EthernetTypeRoCEv1
	}
	if et != 0 {
		eth := &layers.Ethernet{SrcMAC: net.HardwareAddr(ff.Eth.Src[:]), DstMAC: net.HardwareAddr(ff.Eth.Dst[:])}
		ls = append(ls, eth)
		next := &eth.EthernetType
		for i, v := range ff.Eth.VLANs {
			*next = layers.EthernetTypeDot1Q
			if len(ff.Eth.VLANs) == 2 && i == 0 {
				*next = layers.EthernetTypeQinQ
			}
			q := &layers.Dot1Q{Priority: v.PCP, DropEligible: v.DEI, VLANIdentifier: v.VID}
			ls = append(ls, q)
			next = &q.Type
		}
		*next = et
	}
	udp := func() gopacket.SerializableLayer {
		u := &layers.UDP{SrcPort: layers.UDPPort(ff.UDP.SrcPort), DstPort: layers.UDPPort(ff.UDP.DstPort)}
		if ff.UDP.Checksum {
			return u
		}
		return iblayers.ZeroUDPChecksum(u)
	}
	switch ff.Encap {
	case packet.RoCEv2IPv4:
		ip := &layers.IPv4{Version: 4, TOS: ff.IPv4.TOS, Id: ff.IPv4.ID, TTL: ff.IPv4.TTL, Protocol: layers.IPProtocolUDP,
			SrcIP: net.IP(ff.IPv4.Src[:]), DstIP: net.IP(ff.IPv4.Dst[:])}
		if ff.IPv4.DF {
			ip.Flags = layers.IPv4DontFragment
		}
		ls = append(ls, ip, udp())
	case packet.RoCEv2IPv6:
		ip := &layers.IPv6{Version: 6, TrafficClass: ff.IPv6.TrafficClass, FlowLabel: ff.IPv6.FlowLabel, NextHeader: layers.IPProtocolUDP,
			HopLimit: ff.IPv6.HopLimit, SrcIP: net.IP(ff.IPv6.Src[:]), DstIP: net.IP(ff.IPv6.Dst[:])}
		ls = append(ls, ip, udp())
	case packet.RoCEv1:
		ls = append(ls, &iblayers.GRHFields{Fields: ff.GRH})
	case packet.IBLocal:
		ls = append(ls, &iblayers.LRHFields{Fields: ff.LRH})
	case packet.IBGlobal:
		ls = append(ls, &iblayers.LRHFields{Fields: ff.LRH}, &iblayers.GRHFields{Fields: ff.GRH})
	}
	return append(ls, &iblayers.TransportFields{Fields: ff.Transport})
}

func firstLayer(e packet.Encap) gopacket.LayerType {
	if e == packet.IBLocal || e == packet.IBGlobal {
		return iblayers.LayerTypeLRH
	}
	return layers.LayerTypeEthernet
}

// sameFrame requires got to be want, except that an Ethernet frame shorter
// than 60 bytes comes back padded with zeros by layers.Ethernet.
func sameFrame(t require.TestingT, e packet.Encap, want, got []byte) {
	n := len(want)
	if firstLayer(e) == layers.LayerTypeEthernet && n < 60 {
		n = 60
	}
	require.Len(t, got, n)
	require.Equal(t, want, got[:len(want)])
	require.Equal(t, make([]byte, n-len(want)), got[len(want):], "Ethernet padding")
}

func encode(t require.TestingT, ff *packet.FrameFields) []byte {
	b := make([]byte, ff.Len())
	n, err := ff.Encode(b)
	require.NoError(t, err)
	return b[:n]
}

// TestSerializeMatchesFrameEncode: random frames of every encapsulation
// (proptest.FrameFieldsFor, every valid opcode, VLAN tags, UDP checksum on
// or off) serialised through gopacket with SerializeRoCE equal
// packet.FrameFields.Encode byte for byte.
func TestSerializeMatchesFrameEncode(t *testing.T) {
	for _, e := range encaps {
		t.Run(e.String(), func(t *testing.T) {
			buf := gopacket.NewSerializeBuffer()
			rapid.Check(t, func(rt *rapid.T) {
				ff := proptest.FrameFieldsFor(e).Draw(rt, "frame")
				want := encode(rt, &ff)
				opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
				require.NoError(rt, iblayers.SerializeRoCE(buf, opts, gopacketLayers(&ff)...))
				sameFrame(rt, e, want, buf.Bytes())
			})
		})
	}
}

// TestDecodeSerializeRoundTrip: a frame built by package packet decodes with
// gopacket.NewPacket into our layers, with the transport fields it was built
// from, and serialising the decoded layers as they are (no length or checksum
// fixing; SerializeRoCE writes the ICRC and VCRC again) gives the frame back.
func TestDecodeSerializeRoundTrip(t *testing.T) {
	for _, e := range encaps {
		t.Run(e.String(), func(t *testing.T) {
			buf := gopacket.NewSerializeBuffer()
			rapid.Check(t, func(rt *rapid.T) {
				ff := proptest.FrameFieldsFor(e).Draw(rt, "frame")
				frame := encode(rt, &ff)
				p := gopacket.NewPacket(frame, firstLayer(e), gopacket.DecodeOptions{SkipDecodeRecovery: true})
				require.Nil(rt, p.ErrorLayer())
				tr, ok := p.Layer(iblayers.LayerTypeBTH).(*iblayers.Transport)
				require.True(rt, ok, "layers %v", layerTypes(p))
				require.Equal(rt, withNilPayload(ff.Transport), withNilPayload(tr.Fields()))

				ok, _, _, err := iblayers.CheckICRC(frame, firstLayer(e))
				require.NoError(rt, err)
				require.True(rt, ok)

				var ls []gopacket.SerializableLayer
				for _, l := range p.Layers() {
					ls = append(ls, l.(gopacket.SerializableLayer))
				}
				require.NoError(rt, iblayers.SerializeRoCE(buf, gopacket.SerializeOptions{}, ls...))
				sameFrame(rt, e, frame, buf.Bytes())
			})
		})
	}
}

// withNilPayload makes empty payloads, nil or not, compare equal.
func withNilPayload(f packet.Fields) packet.Fields {
	if len(f.Payload) == 0 {
		f.Payload = nil
	}
	return f
}

// TestDecodingLayerParserRoundTrip: the same random frames through a reused
// DecodingLayerParser give the transport fields they were built from, and
// the LRH layer holds the VCRC.
func TestDecodingLayerParserRoundTrip(t *testing.T) {
	d := newDecoder()
	rapid.Check(t, func(rt *rapid.T) {
		ff := proptest.FrameFields().Draw(rt, "frame")
		frame := encode(rt, &ff)
		parser := d.eth
		if firstLayer(ff.Encap) == iblayers.LayerTypeLRH {
			parser = d.ib
		}
		require.NoError(rt, parser.DecodeLayers(frame, &d.decoded))
		require.False(rt, parser.Truncated)
		require.Contains(rt, d.decoded, iblayers.LayerTypeBTH)
		require.Equal(rt, withNilPayload(ff.Transport), withNilPayload(d.tr.Fields()))
		if len(ff.Transport.Payload) > 0 {
			require.Equal(rt, gopacket.LayerTypePayload, d.decoded[len(d.decoded)-1])
			require.Equal(rt, ff.Transport.Payload, []byte(d.payload))
		}
		if ff.Encap == packet.IBLocal || ff.Encap == packet.IBGlobal {
			require.Equal(rt, frame[len(frame)-2:], d.lrh.VCRC)
			require.Equal(rt, ff.LRH.SLID, d.lrh.SLID())
		}
	})
}
