package grh_test

import (
	"encoding/hex"
	"errors"
	"net/netip"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func gid(t testing.TB, s string) [16]byte { return [16]byte(hdrtest.Unhex(t, s)) }

const (
	// ib-facts.md §3.4 vector D, RDMA WRITE Only: the GRH after Ethertype 0x8915
	// of a real RoCEv1 capture (Mellanox NIC).
	vectorDWrite = "6020000000281b40" + "00000000000000000000ffff0f000002" + "00000000000000000000ffff0f000002"
	// ib-facts.md §3.4 vector D, RC Acknowledge: same GRH with PayLen 20.
	vectorDAck = "6020000000141b40" + "00000000000000000000ffff0f000002" + "00000000000000000000ffff0f000002"
	// Frame 3 of srinivaskoritala-rdma-softroce-demo_infiniband.pcap: native IB
	// global (LNH=3) SA MAD, GRH at IB offset 8. tshark: ipver 6, tclass 0,
	// flowlabel 0, paylen 124, nxthdr 27, hoplmt 0,
	// sgid fe80::2:c903:0:1f2d, dgid ff12:401b:ffff::ffff:ffff.
	frame3 = "60000000007c1b00" + "fe800000000000000002c90300001f2d" + "ff12401bffff000000000000ffffffff"
)

func TestGolden(t *testing.T) {
	mapped := gid(t, "00000000000000000000ffff0f000002")
	cases := []hdrtest.Case[grh.Fields]{
		{Hex: vectorDWrite, Want: grh.Fields{IPVer: 6, TClass: 2, PayLen: 40, NxtHdr: grh.NxtHdrIBA, HopLmt: 0x40, SGID: mapped, DGID: mapped}},
		{Hex: vectorDAck, Want: grh.Fields{IPVer: 6, TClass: 2, PayLen: 20, NxtHdr: grh.NxtHdrIBA, HopLmt: 0x40, SGID: mapped, DGID: mapped}},
		{Hex: frame3, Want: grh.Fields{IPVer: 6, PayLen: 124, NxtHdr: 0x1B,
			SGID: gid(t, "fe800000000000000002c90300001f2d"), DGID: gid(t, "ff12401bffff000000000000ffffffff")}},
	}
	hdr.Golden(t, cases)
	addrs := []struct{ name, sgid, dgid string }{
		{"vector D write", "::ffff:15.0.0.2", "::ffff:15.0.0.2"},
		{"vector D ack", "::ffff:15.0.0.2", "::ffff:15.0.0.2"},
		{"pcap frame 3", "fe80::2:c903:0:1f2d", "ff12:401b:ffff::ffff:ffff"},
	}
	for i, c := range cases {
		a := addrs[i]
		h, err := grh.New(hdrtest.Unhex(t, c.Hex))
		require.NoError(t, err)
		assert.NoError(t, h.Validate(), a.name)
		assert.Equal(t, a.sgid, h.SGIDAddr().String(), a.name)
		assert.Equal(t, a.dgid, h.DGIDAddr().String(), a.name)
		assert.Equal(t, c.Want.SGID[:], h.SGID(), a.name)
		assert.Equal(t, c.Want.DGID[:], h.DGID(), a.name)
	}
}

func TestGIDZeroCopy(t *testing.T) {
	b := hdrtest.Unhex(t, vectorDWrite)
	h, _ := grh.New(b)
	s, d := h.SGID(), h.DGID()
	require.Len(t, s, 16)
	require.Len(t, d, 16)
	assert.Equal(t, 16, cap(s), "capacity capped so append cannot overwrite the DGID")
	assert.Same(t, &b[8], &s[0])
	assert.Same(t, &b[24], &d[0])
	s[15] = 0x09
	d[0] = 0xfe
	assert.Equal(t, byte(0x09), b[23])
	assert.Equal(t, byte(0xfe), b[24])
	assert.Equal(t, netip.MustParseAddr("::ffff:15.0.0.9"), h.SGIDAddr())
	assert.True(t, h.SGIDAddr().Is6(), "GIDs stay 16-byte addresses, not unmapped")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, grh.Len)
	h, _ := grh.New(b)
	h.SetIPVer(0x6)
	h.SetTClass(0xAB)
	h.SetFlowLabel(0xCDEF1)
	h.SetPayLen(0x1234)
	h.SetNxtHdr(0x1B)
	h.SetHopLmt(0x40)
	h.SetSGID(gid(t, "0102030405060708090a0b0c0d0e0f10"))
	h.SetDGID(gid(t, "1112131415161718191a1b1c1d1e1f20"))
	want := "6abcdef112341b40" + "0102030405060708090a0b0c0d0e0f10" + "1112131415161718191a1b1c1d1e1f20"
	assert.Equal(t, want, hex.EncodeToString(b))
	assert.Equal(t, uint8(6), h.IPVer())
	assert.Equal(t, uint8(0xAB), h.TClass())
	assert.Equal(t, uint32(0xCDEF1), h.FlowLabel())
	assert.Equal(t, uint16(0x1234), h.PayLen())
	assert.Equal(t, uint8(0x1B), h.NxtHdr())
	assert.Equal(t, uint8(0x40), h.HopLmt())

	ones := [16]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	h.SetIPVer(0xF)
	h.SetTClass(0xFF)
	h.SetFlowLabel(0xFFFFF)
	h.SetPayLen(0xFFFF)
	h.SetNxtHdr(0xFF)
	h.SetHopLmt(0xFF)
	h.SetSGID(ones)
	h.SetDGID(ones)
	allOnes := "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
	assert.Equal(t, allOnes, hex.EncodeToString(b))

	// Each setter clears only its own bits.
	steps := []struct {
		set  func()
		want string
	}{
		{func() { h.SetIPVer(0) }, "0fffffff"},
		{func() { h.SetTClass(0) }, "000fffff"},
		{func() { h.SetFlowLabel(0) }, "00000000"},
	}
	for _, s := range steps {
		s.set()
		assert.Equal(t, s.want, hex.EncodeToString(b[:4]))
	}
	assert.Equal(t, allOnes[8:], hex.EncodeToString(b[4:]))
	h.SetPayLen(0)
	assert.Equal(t, "00000000"+"0000ffff", hex.EncodeToString(b[:8]))
	h.SetNxtHdr(0)
	assert.Equal(t, "00000000"+"000000ff", hex.EncodeToString(b[:8]))
	h.SetHopLmt(0)
	assert.Equal(t, "0000000000000000", hex.EncodeToString(b[:8]))
	h.SetSGID([16]byte{})
	assert.Equal(t, allOnes[48:], hex.EncodeToString(b[24:]))
	h.SetDGID([16]byte{})
	assert.Equal(t, make([]byte, grh.Len), []byte(b))

	// TClass straddles bytes 0 and 1; FlowLabel shares byte 1.
	h.SetTClass(0x5A)
	assert.Equal(t, "05a00000", hex.EncodeToString(b[:4]))
	h.SetFlowLabel(0x3_0000)
	assert.Equal(t, "05a30000", hex.EncodeToString(b[:4]))
	// Setters mask values wider than the field.
	h.SetIPVer(0x16)
	h.SetFlowLabel(0xF12345)
	assert.Equal(t, "65a12345", hex.EncodeToString(b[:4]))
}

var hdr = hdrtest.Header[grh.GRH, grh.Fields]{
	Name:   "grh",
	Len:    grh.Len,
	New:    grh.New,
	Decode: grh.GRH.Fields,
	Encode: (*grh.Fields).Encode,
	Gen:    proptest.GRHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

// The shared check encodes into Len-1 bytes only; this covers every shorter
// length too.
func TestRoundTripGIDAddrs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := hdr.Gen.Draw(t, "f")
		var h grh.GRH = make([]byte, grh.Len)
		if err := f.Encode(h); err != nil || h.SGIDAddr() != netip.AddrFrom16(f.SGID) || h.DGIDAddr() != netip.AddrFrom16(f.DGID) {
			t.Fatalf("err %v, GID addresses %v %v for %+v", err, h.SGIDAddr(), h.DGIDAddr(), f)
		}
	})
}

func TestValidate(t *testing.T) {
	b := hdrtest.Unhex(t, vectorDWrite)
	h, _ := grh.New(b)
	require.NoError(t, h.Validate())
	for v := uint8(0); v < 16; v++ {
		if v == 6 {
			continue
		}
		h.SetIPVer(v)
		err := h.Validate()
		assert.ErrorIs(t, err, rocekit.ErrInvalid)
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "grh", he.Header)
		assert.Equal(t, "IPVer", he.Field)
		assert.Equal(t, v, h.IPVer(), "GRH still readable")
	}
	h.SetIPVer(6)
	for _, v := range []uint8{0x00, 0x11, 0x1A, 0x1C, 0x3B, 0xFF} {
		h.SetNxtHdr(v)
		err := h.Validate()
		assert.ErrorIs(t, err, rocekit.ErrInvalid)
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "NxtHdr", he.Field)
	}
	h.SetNxtHdr(0x11)
	assert.Equal(t, "grh.NxtHdr: invalid: 0x11, want 0x1b", h.Validate().Error())
	h.SetIPVer(4)
	assert.Equal(t, "grh.IPVer: invalid: 4, want 6", h.Validate().Error())
	assert.Equal(t, 0x1B, grh.NxtHdrIBA)
}

func TestEncodeRejectsWideFields(t *testing.T) {
	b := make([]byte, grh.Len)
	cases := []struct {
		f     grh.Fields
		field string
	}{
		{grh.Fields{IPVer: 16}, "IPVer"},
		{grh.Fields{IPVer: 6, FlowLabel: 1 << 20}, "FlowLabel"},
	}
	for _, c := range cases {
		c.f.PayLen, c.f.HopLmt, c.f.SGID[0] = 0xFFFF, 0xFF, 0xFF // would be written if anything were
		err := c.f.Encode(b)
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "%+v", c.f)
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, c.field, he.Field)
	}
	assert.Equal(t, make([]byte, grh.Len), b, "nothing written on error")
}

func TestString(t *testing.T) {
	h, _ := grh.New(hdrtest.Unhex(t, vectorDWrite))
	assert.Equal(t, "GRH ipver=6 tclass=0x02 flowlabel=0x00000 paylen=40 nxthdr=0x1b hoplmt=64 sgid=::ffff:15.0.0.2 dgid=::ffff:15.0.0.2", h.String())
	f := grh.Fields{IPVer: 6, TClass: 0xAB, FlowLabel: 0xCDEF1, PayLen: 124, NxtHdr: 0x1B, HopLmt: 255,
		SGID: gid(t, "fe800000000000000002c90300001f2d"), DGID: gid(t, "ff12401bffff000000000000ffffffff")}
	assert.Equal(t, "GRH ipver=6 tclass=0xab flowlabel=0xcdef1 paylen=124 nxthdr=0x1b hoplmt=255 sgid=fe80::2:c903:0:1f2d dgid=ff12:401b:ffff::ffff:ffff", f.String())
}

var (
	sink     grh.Fields
	sinkAddr netip.Addr
)

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, vectorDWrite)
	b.ReportAllocs()
	var n int
	for i := 0; i < b.N; i++ {
		h, err := grh.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += int(h.PayLen()) + int(h.NxtHdr()) + int(h.FlowLabel()) + int(h.SGID()[15]) + int(h.DGID()[15])
		sinkAddr = h.DGIDAddr()
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, vectorDWrite)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := grh.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := grh.Fields{IPVer: 6, TClass: 2, PayLen: 40, NxtHdr: grh.NxtHdrIBA, HopLmt: 0x40,
		SGID: [16]byte{10: 0xff, 11: 0xff, 12: 15, 15: 2}, DGID: [16]byte{10: 0xff, 11: 0xff, 12: 15, 15: 2}}
	buf := make([]byte, grh.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
