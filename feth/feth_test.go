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

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// Hand-computed FETHs (no FLUSH vector in ib-facts.md §3.4). 0xabcdef12 =
// 0x2af37bc<<6 | 1<<4 | 2 puts a distinct value in every field, so a wrong
// shift or mask fails.
func TestGolden(t *testing.T) {
	cases := []struct {
		hex   string
		want  feth.Fields
		valid bool
	}{
		{"00000013", feth.Fields{SEL: feth.SelRegion, PLT: feth.PLTGlobalVisibility | feth.PLTPersistence}, true},
		{"00000001", feth.Fields{SEL: feth.SelRange, PLT: feth.PLTGlobalVisibility}, true},
		{"00000002", feth.Fields{SEL: feth.SelRange, PLT: feth.PLTPersistence}, true},
		{"abcdef12", feth.Fields{Resv: 0x2AF37BC, SEL: 1, PLT: 2}, true},
		{"ffffffc0", feth.Fields{Resv: 0x3FFFFFF}, true},
		{"0000002c", feth.Fields{SEL: 2, PLT: 0xC}, false},
		{"0000003f", feth.Fields{SEL: 3, PLT: 0xF}, false},
	}
	for _, c := range cases {
		b := unhex(t, c.hex)
		h, err := feth.New(b)
		require.NoError(t, err)
		assert.Equal(t, c.want, h.Fields(), c.hex)
		if c.valid {
			assert.NoError(t, h.Validate(), c.hex)
		} else {
			assert.ErrorIs(t, h.Validate(), rocekit.ErrInvalid, c.hex)
		}
		out := make([]byte, feth.Len)
		require.NoError(t, c.want.Encode(out))
		assert.Equal(t, b, out)
	}
}

func TestNewIsView(t *testing.T) {
	b := unhex(t, "abcdef12eeee")
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
	b := unhex(t, "00000013")
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
	h, _ := feth.New(unhex(t, "abcdef12"))
	assert.Equal(t, "FETH resv=0x2af37bc sel=1 plt=0x2", h.String())
}

var sink feth.Fields

func BenchmarkView(b *testing.B) {
	buf := unhex(b, "00000013")
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
	buf := unhex(b, "00000013")
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
