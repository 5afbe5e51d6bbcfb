package packet_test

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/reth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// Frames of ib-facts.md §3.4.
const (
	vecA  = "020000000002020000000001080045020038123440004011a52bc0a80101c0a80102c00012b7002400000450ffff000000128000000168656c6c6f20526f43452100d870fd70"
	vecB  = "02000000000202000000000186dd6021234500301140fd000000000000000000000000000001fd000000000000000000000000000002c00112b7003000000a40ffff0000001180abcdef00000000123456780000123400000008010203040506070897f03724"
	vecC  = "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a"
	vecD1 = "7cfe90753cd87cfe90753cd889156020000000281b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000020a70ffff0000010a80a788bc000055d4c0726000000047b3000000050000000001000000e3d856bb"
	vecD2 = "7cfe90753cd87cfe90753cd889156020000000141b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000021140ffff0000010900a788c00000000525f0c038"
	vecE  = "020000000001020000000002080045020030000140004011b766c0a80102c0a80101c00012b7001c00001100ffff00000034000000011f0000054260c0b4"
	vecF  = "020000000001020000000002080045c2003c000240004011b699c0a80102c0a80101c00012b7002800008100ffff400000120000000000000000000000000000000000000000bcd115ff"
)

func TestDecodeVectors(t *testing.T) {
	cases := []struct {
		name, hex string
		encap     packet.Encap
		op        opcode.Opcode
		payload   string
		check     func(t *testing.T, f *packet.Frame)
	}{
		{"A", vecA, packet.RoCEv2IPv4, opcode.RCSendOnly, "68656c6c6f20526f434521", func(t *testing.T, f *packet.Frame) {
			assert.Equal(t, []byte{0}, f.Transport.Pad)
			assert.Equal(t, uint16(0xC000), f.UDP.SrcPort())
			assert.Equal(t, "192.168.1.2", f.IPv4.Dst().String())
		}},
		{"B", vecB, packet.RoCEv2IPv6, opcode.RCRDMAWriteOnly, "0102030405060708", func(t *testing.T, f *packet.Frame) {
			assert.Equal(t, reth.Fields{VA: 0x12345678, RKey: 0x1234, DMALen: 8}, f.Transport.RETH.Fields())
			assert.Equal(t, uint32(0x12345), f.IPv6.FlowLabel())
			assert.Equal(t, uint8(2), f.IPv6.TrafficClass())
		}},
		{"C", vecC, packet.RoCEv2IPv4, opcode.CNP, "", func(t *testing.T, f *packet.Frame) {
			assert.NotNil(t, f.Transport.CNP)
			assert.NoError(t, f.Transport.CNP.Validate())
			assert.True(t, f.Transport.BTH.BECN())
		}},
		{"D1", vecD1, packet.RoCEv1, opcode.RCRDMAWriteOnly, "0000000001", func(t *testing.T, f *packet.Frame) {
			assert.Equal(t, uint8(3), f.Transport.BTH.PadCnt())
			assert.Equal(t, uint32(5), f.Transport.RETH.DMALen())
			assert.Equal(t, uint8(0x40), f.GRH.HopLmt())
		}},
		{"D2", vecD2, packet.RoCEv1, opcode.RCAcknowledge, "", func(t *testing.T, f *packet.Frame) {
			assert.Equal(t, aeth.Fields{Syndrome: 0, MSN: 5}, f.Transport.AETH.Fields())
		}},
		{"E", vecE, packet.RoCEv2IPv4, opcode.RCAcknowledge, "", func(t *testing.T, f *packet.Frame) {
			assert.Equal(t, aeth.Fields{Syndrome: 0x1F, MSN: 5}, f.Transport.AETH.Fields())
		}},
		{"F", vecF, packet.RoCEv2IPv4, opcode.CNP, "", nil},
	}
	var f packet.Frame
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := unhex(t, c.hex)
			require.NoError(t, f.DecodeEthernet(b))
			assert.Equal(t, c.encap, f.Encap)
			assert.Equal(t, c.op, f.Transport.Opcode())
			assert.Equal(t, c.payload, hex.EncodeToString(f.Transport.Payload))
			assert.Empty(t, f.Trailer)
			ok, want, got, err := f.CheckICRC()
			require.NoError(t, err)
			assert.True(t, ok, "want %08x got %08x", want, got)
			if c.check != nil {
				c.check(t, &f)
			}
		})
	}
}

// Building the same frames from fields gives the same bytes.
func TestBuildVectors(t *testing.T) {
	a := packet.DefaultFrame(packet.RoCEv2IPv4)
	a.IPv4.ID = 0x1234
	a.Transport.BTH = bth.Fields{Opcode: opcode.RCSendOnly, MigReq: true, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 1}
	a.Transport.Payload = []byte("hello RoCE!")
	a.Transport.SetPad()

	b := packet.DefaultFrame(packet.RoCEv2IPv6)
	b.IPv6.FlowLabel = 0x12345
	b.UDP.SrcPort = 0xC001
	b.Transport.BTH = bth.Fields{Opcode: opcode.RCRDMAWriteOnly, MigReq: true, PKey: 0xFFFF, DestQP: 0x11, AckReq: true, PSN: 0xABCDEF}
	b.Transport.RETH = reth.Fields{VA: 0x12345678, RKey: 0x1234, DMALen: 8}
	b.Transport.Payload = []byte{1, 2, 3, 4, 5, 6, 7, 8}

	d := packet.DefaultFrame(packet.RoCEv1)
	d.Eth.Dst = [6]byte{0x7c, 0xfe, 0x90, 0x75, 0x3c, 0xd8}
	d.Eth.Src = d.Eth.Dst
	gid := [16]byte{10: 0xff, 11: 0xff, 12: 0x0f, 15: 0x02}
	d.GRH = grh.Fields{IPVer: 6, TClass: 2, NxtHdr: grh.NxtHdrIBA, HopLmt: 0x40, SGID: gid, DGID: gid}
	d.Transport.BTH = bth.Fields{Opcode: opcode.RCAcknowledge, MigReq: true, PKey: 0xFFFF, DestQP: 0x109, PSN: 0xa788c0}
	d.Transport.AETH = aeth.Fields{Syndrome: 0, MSN: 5}

	for _, c := range []struct {
		name string
		f    packet.FrameFields
		want string
	}{{"A", a, vecA}, {"B", b, vecB}, {"D2", d, vecD2}} {
		buf := make([]byte, c.f.Len()+10)
		n, err := c.f.Encode(buf)
		require.NoError(t, err, c.name)
		assert.Equal(t, c.f.Len(), n, c.name)
		assert.Equal(t, c.want, hex.EncodeToString(buf[:n]), c.name)
	}
}

func TestDecodeErrors(t *testing.T) {
	var f packet.Frame
	a := unhex(t, vecA)
	cases := []struct {
		name   string
		mutate func([]byte) []byte
		is     error
		header string
		field  string
	}{
		{"short eth", func(b []byte) []byte { return b[:10] }, rocekit.ErrTruncated, "eth", ""},
		{"short ip", func(b []byte) []byte { return b[:20] }, rocekit.ErrTruncated, "ipv4", ""},
		{"ip total length beyond frame", func(b []byte) []byte { return b[:60] }, rocekit.ErrTruncated, "ipv4", "TotalLength"},
		{"udp length wrong", func(b []byte) []byte { b[14+20+5]++; return b }, rocekit.ErrLength, "udp", "Length"},
		{"tver", func(b []byte) []byte { b[43] |= 1; return b }, rocekit.ErrInvalid, "bth", "TVer"},
		{"unknown opcode", func(b []byte) []byte { b[42] = 0x18; return b }, rocekit.ErrUnknownOpcode, "bth", "OpCode"},
		{"pad too big", func(b []byte) []byte {
			// ACK with PadCnt 3 and no bytes after the AETH
			return unhex(t, strings.Replace(vecE, "1100ffff", "1130ffff", 1))
		}, rocekit.ErrInvalid, "bth", "PadCnt"},
		{"payload on ack", func(b []byte) []byte {
			x := unhex(t, vecE)
			x = append(x[:len(x)-4], 0xAA, 0xBB, 0xCC, 0xDD, 0, 0, 0, 0)
			x[17] += 4 // IPv4 total length
			x[14+20+5] += 4
			return x
		}, rocekit.ErrUnexpected, "payload", ""},
		{"atomiceth truncated", func(b []byte) []byte {
			b[42] = byte(opcode.RCCompareSwap)
			return b
		}, rocekit.ErrTruncated, "atomiceth", ""},
		{"icrc truncated", func(b []byte) []byte {
			b[42] = byte(opcode.RCRDMAWriteOnly) // RETH takes the payload and the ICRC
			return b
		}, rocekit.ErrTruncated, "icrc", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := c.mutate(append([]byte(nil), a...))
			err := f.DecodeEthernet(b)
			require.Error(t, err)
			assert.ErrorIs(t, err, c.is)
			var he *rocekit.HeaderError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, c.header, he.Header, err.Error())
			assert.Equal(t, c.field, he.Field, err.Error())
		})
	}
	// an unknown opcode still leaves the BTH readable
	b := append([]byte(nil), a...)
	b[42] = 0x1E
	require.Error(t, f.DecodeEthernet(b))
	assert.Equal(t, uint32(0x12), f.Transport.BTH.DestQP())
}

func TestTruncatedAtEveryLength(t *testing.T) {
	var f packet.Frame
	for _, v := range []string{vecA, vecB, vecC, vecD1, vecD2, vecE} {
		b := unhex(t, v)
		for n := 0; n < len(b); n++ {
			err := f.DecodeEthernet(b[:n])
			if n <= 14 && n >= 14 {
				continue
			}
			require.Error(t, err, "%s cut at %d", v[:20], n)
		}
	}
}

func TestVLANAndTrailer(t *testing.T) {
	fr := packet.DefaultFrame(packet.RoCEv2IPv4)
	fr.Eth.VLANs = []packet.VLANFields{{PCP: 1, VID: 100}, {PCP: 3, DEI: true, VID: 4000}}
	fr.Transport.BTH.Opcode = opcode.RCAcknowledge
	fr.Transport.AETH.Syndrome = aeth.Unlimited
	buf := make([]byte, 200)
	n, err := fr.Encode(buf)
	require.NoError(t, err)
	assert.Equal(t, fr.Len(), n)
	frame := append(buf[:n:n], 0xde, 0xad, 0xbe, 0xef) // an FCS
	var f packet.Frame
	require.NoError(t, f.DecodeEthernet(frame))
	assert.Equal(t, 2, f.NVLAN)
	assert.Equal(t, uint16(100), f.VLANs[0].VID())
	assert.Equal(t, uint8(3), f.VLANs[1].PCP())
	assert.True(t, f.VLANs[1].DEI())
	assert.Equal(t, uint16(4000), f.VLANs[1].VID())
	assert.Equal(t, []byte{0xde, 0xad, 0xbe, 0xef}, f.Trailer)
	ok, _, _, err := f.CheckICRC()
	require.NoError(t, err)
	assert.True(t, ok)
}

func TestNativeIBBuild(t *testing.T) {
	for _, e := range []packet.Encap{packet.IBLocal, packet.IBGlobal} {
		fr := packet.DefaultFrame(e)
		fr.Transport.BTH.Opcode = opcode.UDSendOnly
		fr.Transport.BTH.DestQP = 1
		fr.Transport.DETH.QKey = 0x80010000
		fr.Transport.Payload = []byte("abcdefg")
		fr.Transport.SetPad()
		buf := make([]byte, fr.Len())
		n, err := fr.Encode(buf)
		require.NoError(t, err)
		var f packet.Frame
		require.NoError(t, f.DecodeIB(buf[:n]))
		assert.Equal(t, e, f.Encap)
		assert.Equal(t, "abcdefg", string(f.Transport.Payload))
		ok, _, _, err := f.CheckICRC()
		require.NoError(t, err)
		assert.True(t, ok)
		ok, _, _, err = f.CheckVCRC()
		require.NoError(t, err)
		assert.True(t, ok)
		assert.Equal(t, n-2, f.LRH.PacketBytes())
	}
}

func TestUDPChecksum(t *testing.T) {
	for _, e := range []packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6} {
		fr := packet.DefaultFrame(e)
		fr.UDP.Checksum = true
		fr.Transport.BTH.Opcode = opcode.RCSendOnly
		fr.Transport.Payload = []byte("abc")
		fr.Transport.SetPad()
		buf := make([]byte, fr.Len())
		_, err := fr.Encode(buf)
		require.NoError(t, err)
		var f packet.Frame
		require.NoError(t, f.DecodeEthernet(buf))
		assert.NotZero(t, f.UDP.Checksum())
		// one's complement sum over pseudo header + segment is 0xFFFF
		ok, _, _, err := f.CheckICRC()
		require.NoError(t, err)
		assert.True(t, ok, "UDP checksum is masked in the ICRC")
	}
}

func TestICRCXor(t *testing.T) {
	fr := packet.DefaultFrame(packet.RoCEv2IPv4)
	fr.Transport.BTH.Opcode = opcode.RCSendOnly
	fr.ICRCXor = 1
	buf := make([]byte, fr.Len())
	_, err := fr.Encode(buf)
	require.NoError(t, err)
	var f packet.Frame
	require.NoError(t, f.DecodeEthernet(buf))
	ok, want, got, err := f.CheckICRC()
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, want^1, got)
	assert.Equal(t, icrc.Get(buf[len(buf)-4:]), got)
}

func TestUDPSourcePort(t *testing.T) {
	p := packet.UDPSourcePort(0, 0x11, 0x12)
	assert.GreaterOrEqual(t, p, uint16(0xC000))
	assert.Equal(t, p, packet.UDPSourcePort(0, 0x12, 0x11), "symmetric")
	assert.Equal(t, uint16(0xC000|0x2345^(0x12345>>14)), packet.UDPSourcePort(0x12345, 1, 2))
	// From the QPNs (fabric-facts §2), by hand:
	// 0x11 x 0x12 = 0x132; both xor-shifts leave it; flow label 0x132;
	// (0x132 & 0x3FFF) ^ (0x132 >> 14) = 0x132; | 0xC000 = 0xC132.
	assert.Equal(t, uint16(0xC132), packet.UDPSourcePort(0, 0x11, 0x12))
	// 0x123456 x 0xABCDEF = 0xC379A59BA4A; ^ >>20: 0xC379A9AC3EF;
	// ^ >>40: 0xC379A9AC3E3; flow label 0xAC3E3;
	// 0x3E3 ^ (0xAC000 >> 14 = 0x2B) = 0x3C8; | 0xC000 = 0xC3C8.
	assert.Equal(t, uint16(0xC3C8), packet.UDPSourcePort(0, 0x123456, 0xABCDEF))
}

// A frame cut short (a snap length, a damaged record) is still recognised as
// RoCE: the error names the IP length, and every header the bytes still hold
// is decoded; the ICRC is absent and cannot be checked.
func TestDecodeCutFrame(t *testing.T) {
	var f packet.Frame
	b := unhex(t, vecB) // IPv6, RETH
	err := f.DecodeEthernet(b[:14+40+8+12+10])
	require.Error(t, err)
	var he *rocekit.HeaderError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "ipv6", he.Header)
	assert.Equal(t, "PayloadLength", he.Field)
	assert.Equal(t, packet.RoCEv2IPv6, f.Encap)
	assert.Equal(t, opcode.RCRDMAWriteOnly, f.Transport.Opcode())
	assert.Nil(t, f.Transport.RETH, "RETH cut after 10 of 16 bytes")
	assert.Nil(t, f.Transport.ICRC)
	_, _, _, err = f.CheckICRC()
	assert.Error(t, err)

	a := unhex(t, vecA)
	require.Error(t, f.DecodeEthernet(a[:60]))
	assert.Equal(t, packet.RoCEv2IPv4, f.Encap)
	assert.Equal(t, uint32(1), f.Transport.BTH.PSN())
	assert.Equal(t, "hello ", string(f.Transport.Payload), "the payload bytes kept")
	assert.Nil(t, f.Transport.ICRC)

	require.Error(t, f.DecodeEthernet(a[:14+20+8+5]))
	assert.Equal(t, packet.RoCEv2IPv4, f.Encap)
	assert.Nil(t, f.Transport.BTH, "BTH cut after 5 bytes")
}

// The IPv4 header checksum: the usual worked example (RFC 1071 style, the
// header of Wikipedia's "IPv4 header checksum" article), and every header
// length and random bytes against the plain 16-bit-word sum.
func TestIPv4Checksum(t *testing.T) {
	h := packet.IPv4(unhex(t, "450000730000400040110000c0a80001c0a800c7"))
	require.Equal(t, uint16(0xb861), h.ComputeChecksum())
	h[10], h[11] = 0xb8, 0x61
	require.Equal(t, uint16(0xb861), h.ComputeChecksum(), "the checksum field is not summed")
	rapid.Check(t, func(rt *rapid.T) {
		ihl := rapid.IntRange(0, 15).Draw(rt, "ihl")
		b := rapid.SliceOfN(rapid.Byte(), 60, 60).Draw(rt, "bytes")
		b[0] = 0x40 | byte(ihl)
		n := rapid.IntRange(1, 60).Draw(rt, "len")
		h := packet.IPv4(b[:n])
		m := min(ihl*4, n)
		var s uint32
		for i := 0; i+1 < m; i += 2 {
			if i != 10 {
				s += uint32(b[i])<<8 | uint32(b[i+1])
			}
		}
		for s>>16 != 0 {
			s = s&0xFFFF + s>>16
		}
		if got, want := h.ComputeChecksum(), ^uint16(s); got != want {
			rt.Fatalf("IHL %d, %d bytes: %#04x, want %#04x", ihl, n, got, want)
		}
	})
}
