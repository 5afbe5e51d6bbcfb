package lrh_test

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/lrh"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Golden LRHs: the first 8 bytes of frames of
// /work/shared/captures/srinivaskoritala-rdma-softroce-demo_infiniband.pcap
// (ERF type 21; the IB packet starts right after the 16-byte ERF header).
// Field values as decoded by tshark 4.0 (infiniband.lrh.*); frameLen is
// tshark's frame.len, the IB bytes LRH..VCRC.
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[lrh.Fields]{
		// Frame 1: directed-route SMP SubnGet(SMInfo) on VL15, IBA local.
		{Hex: "f002ffff0048ffff", Want: lrh.Fields{VL: 15, LNH: lrh.LNHIBALocal, DLID: 0xFFFF, PktLen: 72, SLID: 0xFFFF}},
		// Frame 3: SA MAD with a GRH (IBA global), DLID 0xC000 (multicast).
		{Hex: "0003c000002b0005", Want: lrh.Fields{LNH: lrh.LNHIBAGlobal, DLID: 0xC000, PktLen: 43, SLID: 5}},
		// Frame 6: UD SEND Only (IPoIB), LID 1 -> LID 4.
		{Hex: "0002000400170001", Want: lrh.Fields{LNH: lrh.LNHIBALocal, DLID: 4, PktLen: 23, SLID: 1}},
		// Frame 11: RC Acknowledge, LID 1 -> LID 4, 30 bytes on the wire.
		{Hex: "0002000400070001", Want: lrh.Fields{LNH: lrh.LNHIBALocal, DLID: 4, PktLen: 7, SLID: 1}},
	}
	hdr.Golden(t, cases)
	frames := []struct{ frame, frameLen int }{{1, 290}, {3, 174}, {6, 94}, {11, 30}}
	for i, c := range cases {
		f := frames[i]
		h, err := lrh.New(hdrtest.Unhex(t, c.Hex))
		require.NoError(t, err)
		assert.NoError(t, h.Validate(), "frame %d", f.frame)
		assert.Equal(t, f.frameLen, h.PacketBytes()+2, "frame %d: PktLen*4 + VCRC = frame length", f.frame)
	}
}

func TestConstants(t *testing.T) {
	assert.Equal(t, 8, lrh.Len)
	assert.Equal(t, 0, lrh.LNHRaw)
	assert.Equal(t, 1, lrh.LNHIP)
	assert.Equal(t, 2, lrh.LNHIBALocal)
	assert.Equal(t, 3, lrh.LNHIBAGlobal)
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, lrh.Len)
	h, _ := lrh.New(b)
	h.SetVL(0xA)
	h.SetLVer(0x5)
	h.SetSL(0xC)
	h.SetResv2(2)
	h.SetLNH(1)
	h.SetDLID(0x1234)
	h.SetResv5(0x15)
	h.SetPktLen(0x5A5)
	h.SetSLID(0xBEEF)
	assert.Equal(t, "a5c91234ada5beef", hex.EncodeToString(b))
	assert.Equal(t, lrh.Fields{VL: 0xA, LVer: 5, SL: 0xC, Resv2: 2, LNH: 1, DLID: 0x1234, Resv5: 0x15, PktLen: 0x5A5, SLID: 0xBEEF}, h.Fields())

	h.SetVL(0xF)
	h.SetLVer(0xF)
	h.SetSL(0xF)
	h.SetResv2(3)
	h.SetLNH(3)
	h.SetDLID(0xFFFF)
	h.SetResv5(0x1F)
	h.SetPktLen(0x7FF)
	h.SetSLID(0xFFFF)
	assert.Equal(t, "ffffffffffffffff", hex.EncodeToString(b))

	// Each setter clears only its own bits.
	h.SetVL(0)
	assert.Equal(t, "0fffffffffffffff", hex.EncodeToString(b))
	h.SetLVer(0)
	assert.Equal(t, "00ffffffffffffff", hex.EncodeToString(b))
	h.SetSL(0)
	assert.Equal(t, "000fffffffffffff", hex.EncodeToString(b))
	h.SetResv2(0)
	assert.Equal(t, "0003ffffffffffff", hex.EncodeToString(b))
	h.SetLNH(0)
	assert.Equal(t, "0000ffffffffffff", hex.EncodeToString(b))
	h.SetDLID(0)
	assert.Equal(t, "00000000ffffffff", hex.EncodeToString(b))
	h.SetResv5(0)
	assert.Equal(t, "0000000007ffffff", hex.EncodeToString(b))
	h.SetPktLen(0)
	assert.Equal(t, "000000000000ffff", hex.EncodeToString(b))
	h.SetSLID(0)
	assert.Equal(t, "0000000000000000", hex.EncodeToString(b))

	// Setters mask values wider than the field.
	h.SetVL(0x1F)
	h.SetLVer(0x1F)
	h.SetSL(0x1F)
	h.SetResv2(0xFF)
	h.SetLNH(0xFE)
	h.SetResv5(0xE1)
	h.SetPktLen(0xF801)
	assert.Equal(t, "fffe000008010000", hex.EncodeToString(b))
}

func TestPacketBytes(t *testing.T) {
	h, _ := lrh.New(make([]byte, lrh.Len))
	h.SetResv5(0x1F)
	for _, n := range []uint16{0, 1, 7, 72, 0x7FF} {
		h.SetPktLen(n)
		assert.Equal(t, int(n)*4, h.PacketBytes())
	}
}

var hdr = hdrtest.Header[lrh.LRH, lrh.Fields]{
	Name:   "lrh",
	Len:    lrh.Len,
	New:    lrh.New,
	Decode: lrh.LRH.Fields,
	Encode: (*lrh.Fields).Encode,
	Gen:    proptest.LRHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

// The shared check encodes into Len-1 bytes only; this covers every shorter
// length too.
func TestRoundTripPacketBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := hdr.Gen.Draw(t, "f")
		var h lrh.LRH = make([]byte, lrh.Len)
		if err := f.Encode(h); err != nil || h.PacketBytes() != int(f.PktLen)*4 {
			t.Fatalf("err %v, PacketBytes %d for PktLen %d", err, h.PacketBytes(), f.PktLen)
		}
	})
}

func TestValidate(t *testing.T) {
	b := hdrtest.Unhex(t, "f002ffff0048ffff")
	h, _ := lrh.New(b)
	require.NoError(t, h.Validate())
	for v := uint8(1); v < 16; v++ {
		h.SetLVer(v)
		err := h.Validate()
		assert.ErrorIs(t, err, rocekit.ErrInvalid)
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "LVer", he.Field)
		assert.Contains(t, err.Error(), "lrh.LVer")
		assert.Equal(t, v, h.LVer(), "LRH still readable")
	}
	// Reserved bits, VL and LNH are not checked.
	b2 := hdrtest.Unhex(t, "f0ffffffffffffff")
	h2, _ := lrh.New(b2)
	assert.NoError(t, h2.Validate())
}

func TestEncodeRejectsWideFields(t *testing.T) {
	b := make([]byte, lrh.Len)
	cases := []struct {
		f     lrh.Fields
		field string
	}{
		{lrh.Fields{VL: 16}, "VL"}, {lrh.Fields{LVer: 16}, "LVer"}, {lrh.Fields{SL: 16}, "SL"},
		{lrh.Fields{Resv2: 4}, "Resv2"}, {lrh.Fields{LNH: 4}, "LNH"}, {lrh.Fields{Resv5: 32}, "Resv5"},
		{lrh.Fields{PktLen: 0x800}, "PktLen"},
	}
	for _, c := range cases {
		c.f.DLID, c.f.SLID = 0xFFFF, 0xFFFF // would be written if anything were
		err := c.f.Encode(b)
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "%+v", c.f)
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, c.field, he.Field)
	}
	assert.Equal(t, make([]byte, lrh.Len), b, "nothing written on error")
}

func TestString(t *testing.T) {
	f := lrh.Fields{VL: 15, LNH: lrh.LNHIBALocal, DLID: 0xFFFF, PktLen: 72, SLID: 0xFFFF}
	assert.Equal(t, "LRH vl=15 lver=0 sl=0 resv2=0 lnh=2 dlid=0xffff resv5=0x00 pktlen=72 slid=0xffff", f.String())
	h, _ := lrh.New(hdrtest.Unhex(t, "a5c91234ada5beef"))
	assert.Equal(t, "LRH vl=10 lver=5 sl=12 resv2=2 lnh=1 dlid=0x1234 resv5=0x15 pktlen=1445 slid=0xbeef", h.String())
}

var sink lrh.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "0003c000002b0005")
	b.ReportAllocs()
	var n int
	for i := 0; i < b.N; i++ {
		h, err := lrh.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.PacketBytes() + int(h.DLID()) + int(h.SLID()) + int(h.LNH())
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "0003c000002b0005")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := lrh.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := lrh.Fields{LNH: lrh.LNHIBAGlobal, DLID: 0xC000, PktLen: 43, SLID: 5}
	buf := make([]byte, lrh.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
