package xrceth_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/rocekit/rocekit/xrceth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed XRCETHs (no XRC vector in ib-facts.md §3.4): distinct values in
// every byte, so a wrong offset fails.
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[xrceth.Fields]{
		{Hex: "a5123456", Want: xrceth.Fields{Resv8: 0xA5, XRCSRQ: 0x123456}},
		{Hex: "00000001", Want: xrceth.Fields{XRCSRQ: 1}},
		{Hex: "00ffffff", Want: xrceth.Fields{XRCSRQ: 0xFFFFFF}},
	}
	hdr.Golden(t, cases)
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "a5123456eeee")
	h, err := xrceth.New(b)
	require.NoError(t, err)
	assert.Len(t, h, xrceth.Len)
	h.SetXRCSRQ(0xABCDEF)
	assert.Equal(t, "a5abcdefeeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, xrceth.Len)
	h, _ := xrceth.New(b)
	h.SetResv8(0xFF)
	h.SetXRCSRQ(0xFFFFFF)
	assert.Equal(t, "ffffffff", hex.EncodeToString(b))
	h.SetResv8(0)
	assert.Equal(t, "00ffffff", hex.EncodeToString(b))
	h.SetResv8(0x5A)
	h.SetXRCSRQ(0)
	assert.Equal(t, "5a000000", hex.EncodeToString(b))
	h.SetXRCSRQ(0xFF123456)
	assert.Equal(t, "5a123456", hex.EncodeToString(b), "masked to 24 bits")
	assert.Equal(t, uint8(0x5A), h.Resv8())
	assert.Equal(t, uint32(0x123456), h.XRCSRQ())
}

var hdr = hdrtest.Header[xrceth.XRCETH, xrceth.Fields]{
	Name:   "xrceth",
	Len:    xrceth.Len,
	New:    xrceth.New,
	Decode: xrceth.XRCETH.Fields,
	Encode: (*xrceth.Fields).Encode,
	Gen:    proptest.XRCETHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestEncodeRejectsWideFields(t *testing.T) {
	b := make([]byte, xrceth.Len)
	for _, f := range []xrceth.Fields{{XRCSRQ: 1 << 24}, {Resv8: 0xFF, XRCSRQ: 0xFFFFFFFF}} {
		err := f.Encode(b)
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "%+v", f)
		assert.Contains(t, err.Error(), "xrceth.XRCSRQ")
	}
	assert.Equal(t, make([]byte, xrceth.Len), b, "nothing written on error")
}

func TestString(t *testing.T) {
	f := xrceth.Fields{XRCSRQ: 0x123456}
	assert.Equal(t, "XRCETH resv8=0x00 xrcsrq=0x123456", f.String())
	h, _ := xrceth.New(hdrtest.Unhex(t, "a5000001"))
	assert.Equal(t, "XRCETH resv8=0xa5 xrcsrq=0x000001", h.String())
}

var sink xrceth.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "a5123456")
	b.ReportAllocs()
	var n uint32
	for i := 0; i < b.N; i++ {
		h, err := xrceth.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.XRCSRQ() + uint32(h.Resv8())
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "a5123456")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := xrceth.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := xrceth.Fields{XRCSRQ: 0x123456}
	buf := make([]byte, xrceth.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
