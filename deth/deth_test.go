package deth_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/deth"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed DETHs (no UD vector in ib-facts.md §3.4): distinct values in
// every byte, so a wrong offset fails; and a GSI (QP1) DETH.
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[deth.Fields]{
		{Hex: "123456789abcdef0", Want: deth.Fields{QKey: 0x12345678, Resv8: 0x9A, SrcQP: 0xBCDEF0}},
		{Hex: "8001000000000001", Want: deth.Fields{QKey: deth.GSIQKey, SrcQP: 1}},
		{Hex: "ffffffff00ffffff", Want: deth.Fields{QKey: 0xFFFFFFFF, SrcQP: 0xFFFFFF}},
	}
	hdr.Golden(t, cases)
	assert.Equal(t, uint32(0x80010000), uint32(deth.GSIQKey))
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "123456789abcdef0eeee")
	h, err := deth.New(b)
	require.NoError(t, err)
	assert.Len(t, h, deth.Len)
	h.SetSrcQP(0x000001)
	assert.Equal(t, "123456789a000001eeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, deth.Len)
	h, _ := deth.New(b)
	h.SetQKey(0xFFFFFFFF)
	h.SetResv8(0xFF)
	h.SetSrcQP(0xFFFFFF)
	assert.Equal(t, "ffffffffffffffff", hex.EncodeToString(b))
	h.SetResv8(0)
	assert.Equal(t, "ffffffff00ffffff", hex.EncodeToString(b))
	h.SetQKey(0)
	h.SetResv8(0x5A)
	assert.Equal(t, "000000005affffff", hex.EncodeToString(b))
	h.SetSrcQP(0)
	assert.Equal(t, "000000005a000000", hex.EncodeToString(b))
	h.SetSrcQP(0xFF123456)
	assert.Equal(t, "000000005a123456", hex.EncodeToString(b), "masked to 24 bits")
	h.SetQKey(deth.GSIQKey)
	assert.Equal(t, "800100005a123456", hex.EncodeToString(b))
	assert.Equal(t, uint32(deth.GSIQKey), h.QKey())
	assert.Equal(t, uint8(0x5A), h.Resv8())
	assert.Equal(t, uint32(0x123456), h.SrcQP())
}

var hdr = hdrtest.Header[deth.DETH, deth.Fields]{
	Name:   "deth",
	Len:    deth.Len,
	New:    deth.New,
	Decode: deth.DETH.Fields,
	Encode: (*deth.Fields).Encode,
	Gen:    proptest.DETHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestEncodeRejectsWideFields(t *testing.T) {
	b := make([]byte, deth.Len)
	for _, f := range []deth.Fields{{SrcQP: 1 << 24}, {QKey: deth.GSIQKey, Resv8: 0xFF, SrcQP: 0xFFFFFFFF}} {
		err := f.Encode(b)
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "%+v", f)
		assert.Contains(t, err.Error(), "deth.SrcQP")
	}
	assert.Equal(t, make([]byte, deth.Len), b, "nothing written on error")
}

func TestString(t *testing.T) {
	f := deth.Fields{QKey: deth.GSIQKey, SrcQP: 1}
	assert.Equal(t, "DETH q_key=0x80010000 resv8=0x00 srcqp=0x000001", f.String())
	h, _ := deth.New(hdrtest.Unhex(t, "123456789abcdef0"))
	assert.Equal(t, "DETH q_key=0x12345678 resv8=0x9a srcqp=0xbcdef0", h.String())
}

var sink deth.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "8001000000000001")
	b.ReportAllocs()
	var n uint32
	for i := 0; i < b.N; i++ {
		h, err := deth.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.QKey() + h.SrcQP()
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "8001000000000001")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := deth.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := deth.Fields{QKey: deth.GSIQKey, SrcQP: 1}
	buf := make([]byte, deth.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
