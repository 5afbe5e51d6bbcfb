package packet_test

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/lrh"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Property tests of the transport packet and frame codecs: round trips of
// random valid input, ICRC coverage and masking, and decoding of arbitrary
// bytes. The generators are package proptest's.

var rtEncaps = []packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1, packet.IBLocal, packet.IBGlobal}

// rtSameFields fails unless a and b are equal, comparing Payload by bytes
// (nil and empty are the same payload) and every other field by value.
func rtSameFields(t require.TestingT, want, got packet.Fields, msg ...any) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
	require.True(t, bytes.Equal(want.Payload, got.Payload), "payload: want %x, got %x %v", want.Payload, got.Payload, msg)
	want.Payload, got.Payload = nil, nil
	require.Equal(t, want, got, msg...)
}

// rtEncodeFrame builds f and checks the length Encode reports.
func rtEncodeFrame(t require.TestingT, f *packet.FrameFields) []byte {
	b := make([]byte, f.Len())
	n, err := f.Encode(b)
	require.NoError(t, err)
	require.Equal(t, len(b), n)
	return b
}

// rtDecodeFrame decodes b with the decoder for encap.
func rtDecodeFrame(fr *packet.Frame, encap packet.Encap, b []byte) error {
	if encap == packet.IBLocal || encap == packet.IBGlobal {
		return fr.DecodeIB(b)
	}
	return fr.DecodeEthernet(b)
}

// rtICRC computes the ICRC of net (network header through pad, ICRC
// excluded) the way encap says.
func rtICRC(encap packet.Encap, net []byte) (uint32, error) {
	switch encap {
	case packet.RoCEv2IPv4:
		return icrc.IPv4(net)
	case packet.RoCEv2IPv6:
		return icrc.IPv6(net)
	case packet.RoCEv1:
		return icrc.GRH(net)
	}
	return icrc.LRH(net)
}

// (a) Every valid opcode: random valid packet -> Encode -> Decode -> Fields
// gives back the input, and the ICRC bytes are where Decode says.
func TestPropPacketRoundTrip(t *testing.T) {
	for _, op := range opcode.All() {
		t.Run(op.String(), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				in := proptest.PacketFields(op).Draw(rt, "packet")
				require.Equal(rt, op, in.BTH.Opcode)
				crc := rapid.SliceOfN(rapid.Byte(), icrc.Len, icrc.Len).Draw(rt, "icrc")
				b := make([]byte, in.Len()+icrc.Len)
				n, err := in.Encode(b)
				require.NoError(rt, err)
				require.Equal(rt, in.Len(), n)
				copy(b[n:], crc)

				var p packet.Packet
				require.NoError(rt, p.Decode(b))
				require.Equal(rt, op, p.Opcode())
				rtSameFields(rt, in, p.Fields())
				require.Equal(rt, crc, p.ICRC)
				require.Len(rt, p.Pad, int(in.BTH.PadCnt))
				for _, h := range op.Headers() {
					require.GreaterOrEqual(rt, op.Info().Offset(h), 0)
				}
				if !op.HasPayload() {
					require.Empty(rt, p.Payload)
				}
			})
		})
	}
}

// (b) Random whole frames of every encapsulation: Encode -> decode gives back
// every lower-layer field (lengths and checksums as computed), the transport
// fields, a valid ICRC, and a valid VCRC on native IB.
func TestPropFrameRoundTrip(t *testing.T) {
	for _, e := range rtEncaps {
		t.Run(e.String(), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				ff := proptest.FrameFieldsFor(e).Draw(rt, "frame")
				b := rtEncodeFrame(rt, &ff)
				var fr packet.Frame
				require.NoError(rt, rtDecodeFrame(&fr, e, b))
				require.Equal(rt, e, fr.Encap)
				rtCheckLower(rt, &ff, &fr, b)
				rtSameFields(rt, ff.Transport, fr.Transport.Fields())
				require.Empty(rt, fr.Trailer)

				ok, want, got, err := fr.CheckICRC()
				require.NoError(rt, err)
				require.True(rt, ok, "ICRC want %08x got %08x", want, got)
				if e == packet.IBLocal || e == packet.IBGlobal {
					ok, want, got, err := fr.CheckVCRC()
					require.NoError(rt, err)
					require.True(rt, ok, "VCRC want %04x got %04x", want, got)
				} else {
					require.Nil(rt, fr.VCRC)
				}
			})
		})
	}
	// FrameFields draws every encapsulation.
	seen := map[packet.Encap]bool{}
	for i := 0; i < 200; i++ {
		seen[proptest.FrameFields().Example(i).Encap] = true
	}
	assert.Len(t, seen, len(rtEncaps))
}

// rtCheckLower compares every lower-layer header of the decoded frame with
// the fields it was built from.
func rtCheckLower(t *rapid.T, ff *packet.FrameFields, fr *packet.Frame, b []byte) {
	e := ff.Encap
	tlen := ff.Transport.Len() + icrc.Len // BTH through ICRC
	net := fr.Network()
	require.NotNil(t, net)
	switch e {
	case packet.IBLocal, packet.IBGlobal:
		require.Nil(t, fr.Eth)
		require.Equal(t, len(b)-icrc.VCRCLen, len(net))
		want := ff.LRH
		want.PktLen = uint16((len(b) - icrc.VCRCLen) / 4)
		require.Equal(t, want, fr.LRH.Fields())
		require.Equal(t, len(b)-icrc.VCRCLen, fr.LRH.PacketBytes())
		require.NoError(t, fr.LRH.Validate())
		if e == packet.IBGlobal {
			rtCheckGRH(t, ff, fr, tlen)
		} else {
			require.Nil(t, fr.GRH)
		}
		require.Nil(t, fr.IPv4)
		require.Nil(t, fr.IPv6)
		require.Nil(t, fr.UDP)
		return
	}

	// Ethernet and VLAN tags.
	require.NotNil(t, fr.Eth)
	require.Equal(t, ff.Eth.Dst, fr.Eth.Dst())
	require.Equal(t, ff.Eth.Src, fr.Eth.Src())
	require.Equal(t, len(ff.Eth.VLANs), fr.NVLAN)
	for i, v := range ff.Eth.VLANs {
		tpid := binary.BigEndian.Uint16(b[12+4*i:])
		if len(ff.Eth.VLANs) == 2 && i == 0 {
			require.Equal(t, uint16(packet.EtherTypeQinQ), tpid)
		} else {
			require.Equal(t, uint16(packet.EtherTypeVLAN), tpid)
		}
		require.Equal(t, v.PCP, fr.VLANs[i].PCP())
		require.Equal(t, v.DEI, fr.VLANs[i].DEI())
		require.Equal(t, v.VID, fr.VLANs[i].VID())
	}
	ethLen := packet.EthernetLen + packet.VLANLen*len(ff.Eth.VLANs)
	require.Equal(t, len(b)-ethLen, len(net))
	require.Nil(t, fr.LRH)

	switch e {
	case packet.RoCEv1:
		require.Equal(t, uint16(packet.EtherTypeRoCEv1), fr.EtherType)
		require.Nil(t, fr.IPv4)
		require.Nil(t, fr.IPv6)
		require.Nil(t, fr.UDP)
		rtCheckGRH(t, ff, fr, tlen)
		return
	case packet.RoCEv2IPv4:
		require.Equal(t, uint16(packet.EtherTypeIPv4), fr.EtherType)
		h := fr.IPv4
		require.NotNil(t, h)
		require.Nil(t, fr.IPv6)
		require.Equal(t, uint8(4), h.Version())
		require.Equal(t, packet.IPv4Len, h.HeaderLen())
		require.Equal(t, ff.IPv4.TOS, h.TOS())
		require.Equal(t, ff.IPv4.TOS>>2, h.DSCP())
		require.Equal(t, ff.IPv4.TOS&3, h.ECN())
		require.Equal(t, uint16(packet.IPv4Len+packet.UDPLen+tlen), h.TotalLength())
		require.Equal(t, ff.IPv4.ID, h.ID())
		require.Equal(t, ff.IPv4.DF, h.DF())
		require.False(t, h.MF())
		require.Zero(t, h.FragOffset())
		require.Equal(t, ff.IPv4.TTL, h.TTL())
		require.Equal(t, uint8(17), h.Protocol())
		require.Equal(t, h.ComputeChecksum(), h.Checksum())
		require.Equal(t, ff.IPv4.Src, h.Src().As4())
		require.Equal(t, ff.IPv4.Dst, h.Dst().As4())
	case packet.RoCEv2IPv6:
		require.Equal(t, uint16(packet.EtherTypeIPv6), fr.EtherType)
		h := fr.IPv6
		require.NotNil(t, h)
		require.Nil(t, fr.IPv4)
		require.Equal(t, uint8(6), h.Version())
		require.Equal(t, ff.IPv6.TrafficClass, h.TrafficClass())
		require.Equal(t, ff.IPv6.FlowLabel, h.FlowLabel())
		require.Equal(t, uint16(packet.UDPLen+tlen), h.PayloadLength())
		require.Equal(t, uint8(17), h.NextHeader())
		require.Equal(t, ff.IPv6.HopLimit, h.HopLimit())
		require.Equal(t, ff.IPv6.Src, h.Src().As16())
		require.Equal(t, ff.IPv6.Dst, h.Dst().As16())
	}
	require.Nil(t, fr.GRH)
	u := fr.UDP
	require.NotNil(t, u)
	require.Equal(t, ff.UDP.SrcPort, u.SrcPort())
	require.Equal(t, uint16(packet.RoCEv2Port), u.DstPort())
	require.Equal(t, uint16(packet.UDPLen+tlen), u.Length())
	if ff.UDP.Checksum {
		require.NotZero(t, u.Checksum())
		require.True(t, rtUDPChecksumOK(e, net), "UDP checksum %04x does not verify", u.Checksum())
	} else {
		require.Zero(t, u.Checksum())
	}
}

func rtCheckGRH(t *rapid.T, ff *packet.FrameFields, fr *packet.Frame, tlen int) {
	require.NotNil(t, fr.GRH)
	want := ff.GRH
	want.PayLen = uint16(tlen)
	require.Equal(t, want, fr.GRH.Fields())
	require.NoError(t, fr.GRH.Validate())
}

// rtUDPChecksumOK verifies the UDP checksum of an IPv4 or IPv6 packet: the
// one's complement sum of pseudo header and segment is 0xFFFF.
func rtUDPChecksumOK(e packet.Encap, ip []byte) bool {
	var src, dst, seg []byte
	if e == packet.RoCEv2IPv4 {
		src, dst, seg = ip[12:16], ip[16:20], ip[packet.IPv4Len:]
	} else {
		src, dst, seg = ip[8:24], ip[24:40], ip[packet.IPv6Len:]
	}
	var s uint32
	add := func(b []byte) {
		for i := 0; i < len(b); i += 2 {
			w := uint32(b[i]) << 8
			if i+1 < len(b) {
				w |= uint32(b[i+1])
			}
			s += w
		}
	}
	add(src)
	add(dst)
	s += 17 + uint32(len(seg))
	add(seg)
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	return s == 0xFFFF
}

// rtMask returns, for the ICRC-covered bytes net[:len(net)-4] of a frame of
// encapsulation e (no IPv4 options), which bits the ICRC masks: a set bit is
// a bit a switch or router may change without breaking the ICRC
// (ib-facts.md §3.1). For IBGlobal the whole LRH counts as all ones, except
// LNH, which chooses the rule.
func rtMask(e packet.Encap, n int) []byte {
	m := make([]byte, n)
	grhMask := func(at int) { // IPv6 / GRH: traffic class, flow label, hop limit
		m[at] |= 0x0F
		m[at+1], m[at+2], m[at+3] = 0xFF, 0xFF, 0xFF
		m[at+7] = 0xFF
	}
	switch e {
	case packet.RoCEv2IPv4:
		m[1], m[8], m[10], m[11] = 0xFF, 0xFF, 0xFF, 0xFF // TOS, TTL, checksum
		m[packet.IPv4Len+6], m[packet.IPv4Len+7] = 0xFF, 0xFF
		m[packet.IPv4Len+packet.UDPLen+4] = 0xFF // BTH FECN, BECN, Resv6
	case packet.RoCEv2IPv6:
		grhMask(0)
		m[packet.IPv6Len+6], m[packet.IPv6Len+7] = 0xFF, 0xFF
		m[packet.IPv6Len+packet.UDPLen+4] = 0xFF
	case packet.RoCEv1:
		grhMask(0)
		m[grh.Len+4] = 0xFF
	case packet.IBLocal:
		m[0] = 0xF0 // VL
		m[lrh.Len+4] = 0xFF
	case packet.IBGlobal:
		for i := 0; i < lrh.Len; i++ {
			m[i] = 0xFF
		}
		m[1] &^= 0x03 // LNH
		grhMask(lrh.Len)
		m[lrh.Len+grh.Len+4] = 0xFF
	}
	return m
}

// (c) ICRC: a built frame verifies; flipping any single bit the ICRC covers
// breaks it (the CRC changes, or the header that selects the rule no longer
// makes sense); flipping any masked bit does not; flipping an ICRC bit does.
func TestPropICRCBitFlips(t *testing.T) {
	for _, e := range rtEncaps {
		t.Run(e.String(), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				ff := proptest.FrameFieldsFor(e).Draw(rt, "frame")
				b := rtEncodeFrame(rt, &ff)
				var fr packet.Frame
				require.NoError(rt, rtDecodeFrame(&fr, e, b))
				ok, _, _, err := fr.CheckICRC()
				require.NoError(rt, err)
				require.True(rt, ok)

				net := fr.Network()
				covered := net[:len(net)-icrc.Len]
				carried := icrc.Get(net[len(net)-icrc.Len:])
				mask := rtMask(e, len(covered))
				for i := range covered {
					for bit := 0; bit < 8; bit++ {
						covered[i] ^= 1 << bit
						got, err := rtICRC(e, covered)
						covered[i] ^= 1 << bit
						if mask[i]&(1<<bit) != 0 {
							require.NoError(rt, err, "masked byte %d bit %d", i, bit)
							require.Equal(rt, carried, got, "masked byte %d bit %d changed the ICRC", i, bit)
						} else if err == nil {
							require.NotEqual(rt, carried, got, "covered byte %d bit %d did not change the ICRC", i, bit)
						}
					}
				}
				// The ICRC bytes themselves.
				for i := 0; i < icrc.Len*8; i++ {
					net[len(covered)+i/8] ^= 1 << (i % 8)
					ok, _, _, err := fr.CheckICRC()
					net[len(covered)+i/8] ^= 1 << (i % 8)
					require.NoError(rt, err)
					require.False(rt, ok, "ICRC bit %d flipped and still verifies", i)
				}
			})
		})
	}
}

// (c) Changing the fields the ICRC masks, as switches and routers do, keeps
// the ICRC valid; the frame still decodes.
func TestPropICRCMaskedFields(t *testing.T) {
	for _, e := range rtEncaps {
		t.Run(e.String(), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) {
				ff := proptest.FrameFieldsFor(e).Draw(rt, "frame")
				b := rtEncodeFrame(rt, &ff)
				var fr packet.Frame
				require.NoError(rt, rtDecodeFrame(&fr, e, b))
				net := fr.Network()
				u8 := func(name string) uint8 { return rapid.Uint8().Draw(rt, name) }
				setGRH := func(g []byte) {
					gv := grh.GRH(g)
					gv.SetTClass(u8("tclass"))
					gv.SetFlowLabel(rapid.Uint32Range(0, 0xFFFFF).Draw(rt, "flowlabel"))
					gv.SetHopLmt(u8("hoplmt"))
				}
				var bthAt int
				switch e {
				case packet.RoCEv2IPv4:
					h := packet.IPv4(net)
					h.SetTOS(u8("tos"))
					net[8] = u8("ttl")
					h.SetChecksum(rapid.Uint16().Draw(rt, "ipcsum"))
					binary.BigEndian.PutUint16(net[packet.IPv4Len+6:], rapid.Uint16().Draw(rt, "udpcsum"))
					bthAt = packet.IPv4Len + packet.UDPLen
				case packet.RoCEv2IPv6:
					h := packet.IPv6(net)
					h.SetTrafficClass(u8("tc"))
					fl := rapid.Uint32Range(0, 0xFFFFF).Draw(rt, "flowlabel")
					binary.BigEndian.PutUint32(net[0:], binary.BigEndian.Uint32(net[0:])&^0xFFFFF|fl)
					net[7] = u8("hoplimit")
					binary.BigEndian.PutUint16(net[packet.IPv6Len+6:], rapid.Uint16().Draw(rt, "udpcsum"))
					bthAt = packet.IPv6Len + packet.UDPLen
				case packet.RoCEv1:
					setGRH(net)
					bthAt = grh.Len
				case packet.IBLocal:
					lrh.LRH(net).SetVL(rapid.Uint8Range(0, 15).Draw(rt, "vl"))
					bthAt = lrh.Len
				case packet.IBGlobal:
					l := lrh.LRH(net)
					l.SetVL(rapid.Uint8Range(0, 15).Draw(rt, "vl"))
					l.SetSL(rapid.Uint8Range(0, 15).Draw(rt, "sl"))
					l.SetDLID(rapid.Uint16().Draw(rt, "dlid"))
					l.SetSLID(rapid.Uint16().Draw(rt, "slid"))
					setGRH(net[lrh.Len:])
					bthAt = lrh.Len + grh.Len
				}
				// BTH byte 4: FECN, BECN, Resv6.
				net[bthAt+4] = u8("bth4")

				require.NoError(rt, rtDecodeFrame(&fr, e, b))
				ok, want, got, err := fr.CheckICRC()
				require.NoError(rt, err)
				require.True(rt, ok, "ICRC want %08x got %08x after changing masked fields", want, got)
			})
		})
	}
}

// rtBytes draws input for the decoders: random bytes, or a valid frame or
// transport packet, then damaged by a few random edits (byte overwrites,
// truncation, appended bytes).
func rtBytes(t *rapid.T) []byte {
	var b []byte
	switch rapid.IntRange(0, 2).Draw(t, "kind") {
	case 0:
		b = rapid.SliceOfN(rapid.Byte(), 0, 128).Draw(t, "random")
	case 1:
		ff := proptest.FrameFields().Draw(t, "frame")
		b = rtEncodeFrame(t, &ff)
	case 2:
		p := proptest.AnyPacketFields().Draw(t, "packet")
		b = make([]byte, p.Len()+icrc.Len)
		_, err := p.Encode(b)
		require.NoError(t, err)
	}
	for n := rapid.IntRange(0, 4).Draw(t, "edits"); n > 0; n-- {
		switch rapid.IntRange(0, 2).Draw(t, "edit") {
		case 0:
			if len(b) > 0 {
				b[rapid.IntRange(0, len(b)-1).Draw(t, "at")] = rapid.Byte().Draw(t, "value")
			}
		case 1:
			b = b[:rapid.IntRange(0, len(b)).Draw(t, "cut")]
		case 2:
			b = append(b, rapid.SliceOfN(rapid.Byte(), 1, 8).Draw(t, "extra")...)
		}
	}
	return b
}

// rtTransportRoundTrip re-encodes a decoded packet's Fields and compares them
// with the bytes it was decoded from, ICRC excluded.
func rtTransportRoundTrip(t require.TestingT, p *packet.Packet, b []byte) {
	f := p.Fields()
	require.Equal(t, len(b)-icrc.Len, f.Len())
	out := make([]byte, f.Len())
	n, err := f.Encode(out)
	require.NoError(t, err)
	require.Equal(t, b[:len(b)-icrc.Len], out[:n])
}

// (d) Arbitrary bytes never make the decoders panic; whatever Packet.Decode
// accepts re-encodes to the same bytes (ICRC excluded).
func TestPropDecodeArbitrary(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		b := rtBytes(rt)
		var p packet.Packet
		if err := p.Decode(b); err == nil {
			rtTransportRoundTrip(rt, &p, b)
		} else {
			_ = p.Fields()
		}

		var fr packet.Frame
		for _, decode := range []func([]byte) error{fr.DecodeEthernet, fr.DecodeIB, fr.DecodeIP} {
			err := decode(b)
			_, _, _, _ = fr.CheckICRC()
			_, _, _, _ = fr.CheckVCRC()
			if err == nil && fr.IsRoCE() {
				net := fr.Network()
				require.NotNil(rt, net)
				tf := fr.Transport.Fields()
				tb := net[len(net)-icrc.Len-tf.Len():]
				require.Same(rt, &fr.Transport.BTH[0], &tb[0], "transport bytes start at the BTH")
				rtTransportRoundTrip(rt, &fr.Transport, tb)
			}
		}
	})
}

// rtRefICRCIPv4 is an independent ICRC of a RoCEv2/IPv4 packet (ib-facts.md
// §3.1-§3.2): CRC-32 of eight 0xFF bytes and a copy of ip (IPv4 header with
// any options, through the pad) with TOS, TTL, header checksum, UDP checksum
// and BTH byte 4 set to all ones.
func rtRefICRCIPv4(ip []byte) uint32 {
	ihl := int(ip[0]&0x0F) * 4
	m := append(bytes.Repeat([]byte{0xFF}, 8), ip...)
	p := m[8:]
	p[1], p[8], p[10], p[11] = 0xFF, 0xFF, 0xFF, 0xFF
	p[ihl+6], p[ihl+7] = 0xFF, 0xFF
	p[ihl+packet.UDPLen+4] = 0xFF
	return crc32.ChecksumIEEE(m)
}

// IPv4 options (which rxe never sends, but a frame may carry) are covered by
// the ICRC as they are. Frames with 0 to 40 bytes of options decode, and
// their ICRC equals the independent computation. Regression: 32 or more
// bytes of options in a packet over 128 bytes made icrc.IPv4 panic.
func TestPropICRCIPv4Options(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ff := proptest.FrameFieldsFor(packet.RoCEv2IPv4).Draw(rt, "frame")
		b := rtEncodeFrame(rt, &ff)
		olen := 4 * rapid.IntRange(0, 10).Draw(rt, "optwords")
		opts := rapid.SliceOfN(rapid.Byte(), olen, olen).Draw(rt, "options")
		at := packet.EthernetLen + packet.VLANLen*len(ff.Eth.VLANs)
		nb := append(append(append([]byte{}, b[:at+packet.IPv4Len]...), opts...), b[at+packet.IPv4Len:]...)
		ip := nb[at:]
		ip[0] = 0x40 | byte(5+olen/4)
		binary.BigEndian.PutUint16(ip[2:], uint16(len(ip)))
		packet.IPv4(ip).SetChecksum(packet.IPv4(ip).ComputeChecksum())
		want := rtRefICRCIPv4(ip[:len(ip)-icrc.Len])
		icrc.Put(ip[len(ip)-icrc.Len:], want)

		var fr packet.Frame
		require.NoError(rt, fr.DecodeEthernet(nb))
		require.Equal(rt, packet.IPv4Len+olen, fr.IPv4.HeaderLen())
		rtSameFields(rt, ff.Transport, fr.Transport.Fields())
		ok, calc, got, err := fr.CheckICRC()
		require.NoError(rt, err)
		require.True(rt, ok, "ICRC computed %08x, independent %08x", calc, got)
	})
}

// RoCEv2/IPv4 frames with payloads of 100 to 199 bytes (every length mod 16,
// on both sides of the 128-byte copy in package icrc) carry the ICRC the
// independent computation gives.
func TestICRCIPv4Lengths(t *testing.T) {
	for n := 100; n < 200; n++ {
		ff := packet.DefaultFrame(packet.RoCEv2IPv4)
		ff.Transport.BTH.Opcode = opcode.RCSendOnly
		ff.Transport.Payload = bytes.Repeat([]byte{byte(n)}, n)
		ff.Transport.SetPad()
		b := rtEncodeFrame(t, &ff)
		ip := b[packet.EthernetLen:]
		require.Equal(t, rtRefICRCIPv4(ip[:len(ip)-icrc.Len]), icrc.Get(ip[len(ip)-icrc.Len:]), "payload %d", n)
	}
}
