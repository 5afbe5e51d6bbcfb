package bth_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Golden BTHs from ib-facts.md §3.4 (vectors A, C, D).
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[bth.Fields]{
		{Hex: "0450ffff0000001280000001", Want: bth.Fields{Opcode: opcode.RCSendOnly, MigReq: true, PadCnt: 1, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 1}},
		{Hex: "8100ffff4000011800000000", Want: bth.Fields{Opcode: opcode.CNP, PKey: 0xFFFF, BECN: true, DestQP: 0x118}},
		{Hex: "0a70ffff0000010a80a788bc", Want: bth.Fields{Opcode: opcode.RCRDMAWriteOnly, MigReq: true, PadCnt: 3, PKey: 0xFFFF, DestQP: 0x10a, AckReq: true, PSN: 0xa788bc}},
		{Hex: "1140ffff0000010900a788c0", Want: bth.Fields{Opcode: opcode.RCAcknowledge, MigReq: true, PKey: 0xFFFF, DestQP: 0x109, PSN: 0xa788c0}},
	}
	hdr.Golden(t, cases)
	for _, c := range cases {
		h, err := bth.New(hdrtest.Unhex(t, c.Hex))
		require.NoError(t, err)
		assert.NoError(t, h.Validate(), c.Hex)
	}
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, bth.Len)
	h, _ := bth.New(b)
	h.SetOpcode(0xAB)
	h.SetSE(true)
	h.SetMigReq(true)
	h.SetPadCnt(3)
	h.SetTVer(0xF)
	h.SetPKey(0x1234)
	h.SetFECN(true)
	h.SetBECN(true)
	h.SetResv6(0x3F)
	h.SetDestQP(0xFEDCBA)
	h.SetAckReq(true)
	h.SetResv7(0x7F)
	h.SetPSN(0x123456)
	assert.Equal(t, "abff1234fffedcbaff123456", hex.EncodeToString(b))
	h.SetSE(false)
	h.SetPadCnt(0)
	h.SetFECN(false)
	h.SetResv6(0)
	h.SetAckReq(false)
	assert.Equal(t, "ab4f123440fedcba7f123456", hex.EncodeToString(b))
	h.SetMigReq(false)
	h.SetTVer(0)
	h.SetBECN(false)
	h.SetResv7(0)
	assert.Equal(t, "ab00123400fedcba00123456", hex.EncodeToString(b))
}

var hdr = hdrtest.Header[bth.BTH, bth.Fields]{
	Name:   "bth",
	Len:    bth.Len,
	New:    bth.New,
	Decode: bth.BTH.Fields,
	Encode: (*bth.Fields).Encode,
	Gen:    proptest.BTHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestValidate(t *testing.T) {
	b := hdrtest.Unhex(t, "0450ffff0000001280000001")
	h, _ := bth.New(b)
	h.SetTVer(1)
	err := h.Validate()
	assert.ErrorIs(t, err, rocekit.ErrInvalid)
	assert.Contains(t, err.Error(), "bth.TVer")
	h.SetTVer(0)
	h.SetOpcode(0x18)
	err = h.Validate()
	assert.ErrorIs(t, err, rocekit.ErrUnknownOpcode)
	assert.Contains(t, err.Error(), "UNKNOWN_0x18")
	assert.Equal(t, opcode.Opcode(0x18), h.Opcode(), "BTH still readable")
}

func TestEncodeRejectsWideFields(t *testing.T) {
	b := make([]byte, bth.Len)
	for _, f := range []bth.Fields{{PadCnt: 4}, {TVer: 16}, {Resv6: 64}, {DestQP: 1 << 24}, {Resv7: 128}, {PSN: 1 << 24}} {
		err := f.Encode(b)
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "%+v", f)
	}
	assert.Equal(t, make([]byte, bth.Len), b, "nothing written on error")
}

func TestString(t *testing.T) {
	f := bth.Fields{Opcode: opcode.RCSendOnly, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 1}
	assert.Equal(t, "BTH opcode=RC_SEND_ONLY(0x04) se=0 m=0 padcnt=0 tver=0 p_key=0xffff fecn=0 becn=0 resv6=0x00 destqp=0x000012 a=1 resv7=0x00 psn=1", f.String())
}

var sink bth.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "0450ffff0000001280000001")
	b.ReportAllocs()
	var n uint32
	for i := 0; i < b.N; i++ {
		h, err := bth.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.PSN() + h.DestQP() + uint32(h.Opcode())
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "0450ffff0000001280000001")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := bth.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := bth.Fields{Opcode: opcode.RCSendOnly, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 1}
	buf := make([]byte, bth.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
