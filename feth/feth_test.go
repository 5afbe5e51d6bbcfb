package feth_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/feth"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed FETHs (no FLUSH vector in ib-facts.md §3.4). 0xabcdef12 =
// 0x2af37bc<<6 | 1<<4 | 2 puts a distinct value in every field, so a wrong
// shift or mask fails.
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[feth.Fields]{
		{Hex: "00000013", Want: feth.Fields{SEL: feth.SelRegion, PLT: feth.PLTGlobalVisibility | feth.PLTPersistence}},
		{Hex: "00000001", Want: feth.Fields{SEL: feth.SelRange, PLT: feth.PLTGlobalVisibility}},
		{Hex: "00000002", Want: feth.Fields{SEL: feth.SelRange, PLT: feth.PLTPersistence}},
		{Hex: "abcdef12", Want: feth.Fields{Resv: 0x2AF37BC, SEL: 1, PLT: 2}},
		{Hex: "ffffffc0", Want: feth.Fields{Resv: 0x3FFFFFF}},
		{Hex: "0000002c", Want: feth.Fields{SEL: 2, PLT: 0xC}},
		{Hex: "0000003f", Want: feth.Fields{SEL: 3, PLT: 0xF}},
	}
	hdr.Golden(t, cases)
	valid := []bool{true, true, true, true, true, false, false}
	for i, c := range cases {
		h, err := feth.New(hdrtest.Unhex(t, c.Hex))
		require.NoError(t, err)
		if valid[i] {
			assert.NoError(t, h.Validate(), c.Hex)
		} else {
			assert.ErrorIs(t, h.Validate(), rocekit.ErrInvalid, c.Hex)
		}
	}
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "abcdef12eeee")
	h, err := feth.New(b)
	require.NoError(t, err)
	assert.Len(t, h, feth.Len)
	h.SetPLT(0)
	assert.Equal(t, "abcdef10eeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, feth.Len)
	h, _ := feth.New(b)
	h.SetResv(0x3FFFFFF)
	h.SetSEL(3)
	h.SetPLT(0xF)
	assert.Equal(t, "ffffffff", hex.EncodeToString(b))
	h.SetSEL(0)
	assert.Equal(t, "ffffffcf", hex.EncodeToString(b))
	h.SetResv(0)
	assert.Equal(t, "0000000f", hex.EncodeToString(b))
	h.SetSEL(3)
	h.SetPLT(0)
	assert.Equal(t, "00000030", hex.EncodeToString(b))
	h.SetResv(0x2AF37BC)
	h.SetSEL(1)
	h.SetPLT(2)
	assert.Equal(t, "abcdef12", hex.EncodeToString(b))
	h.SetResv(0xFC000001)
	h.SetSEL(0xFE)
	h.SetPLT(0xF4)
	assert.Equal(t, "00000064", hex.EncodeToString(b), "masked to 26, 2 and 4 bits")
	assert.Equal(t, uint32(1), h.Resv())
	assert.Equal(t, uint8(2), h.SEL())
	assert.Equal(t, uint8(4), h.PLT())
}

var hdr = hdrtest.Header[feth.FETH, feth.Fields]{
	Name:   "feth",
	Len:    feth.Len,
	New:    feth.New,
	Decode: feth.FETH.Fields,
	Encode: (*feth.Fields).Encode,
	Gen:    proptest.FETHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestValidate(t *testing.T) {
	b := hdrtest.Unhex(t, "00000013")
	h, _ := feth.New(b)
	for plt := uint8(0); plt < 16; plt++ {
		h.SetPLT(plt)
		for _, sel := range []uint8{feth.SelRange, feth.SelRegion} {
			h.SetSEL(sel)
			assert.NoError(t, h.Validate(), "sel=%d plt=%d", sel, plt)
		}
		for _, sel := range []uint8{2, 3} {
			h.SetSEL(sel)
			err := h.Validate()
			assert.ErrorIs(t, err, rocekit.ErrInvalid)
			assert.Contains(t, err.Error(), "feth.SEL")
			assert.Equal(t, sel, h.SEL(), "FETH still readable")
		}
	}
	h.SetResv(0x3FFFFFF)
	h.SetSEL(feth.SelRange)
	assert.NoError(t, h.Validate(), "reserved bits are not a receive error")
}

func TestEncodeRejectsWideFields(t *testing.T) {
	b := make([]byte, feth.Len)
	for _, c := range []struct {
		f     feth.Fields
		field string
	}{{feth.Fields{Resv: 1 << 26}, "feth.Resv"}, {feth.Fields{SEL: 4}, "feth.SEL"}, {feth.Fields{PLT: 16}, "feth.PLT"}} {
		err := c.f.Encode(b)
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "%+v", c.f)
		assert.Contains(t, err.Error(), c.field)
	}
	assert.Equal(t, make([]byte, feth.Len), b, "nothing written on error")
}

func TestString(t *testing.T) {
	f := feth.Fields{SEL: feth.SelRegion, PLT: feth.PLTGlobalVisibility | feth.PLTPersistence}
	assert.Equal(t, "FETH resv=0x0000000 sel=1 plt=0x3", f.String())
	h, _ := feth.New(hdrtest.Unhex(t, "abcdef12"))
	assert.Equal(t, "FETH resv=0x2af37bc sel=1 plt=0x2", h.String())
}

var sink feth.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "00000013")
	b.ReportAllocs()
	var n uint32
	for i := 0; i < b.N; i++ {
		h, err := feth.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.Resv() + uint32(h.SEL()) + uint32(h.PLT())
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "00000013")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := feth.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := feth.Fields{SEL: feth.SelRegion, PLT: feth.PLTGlobalVisibility | feth.PLTPersistence}
	buf := make([]byte, feth.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
