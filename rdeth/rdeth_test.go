package rdeth_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/rocekit/rocekit/rdeth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed RDETHs (no RD vector in ib-facts.md §3.4): distinct values in
// every byte, so a wrong offset fails.
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[rdeth.Fields]{
		{Hex: "a5123456", Want: rdeth.Fields{Resv8: 0xA5, EEContext: 0x123456}},
		{Hex: "00000001", Want: rdeth.Fields{EEContext: 1}},
		{Hex: "00ffffff", Want: rdeth.Fields{EEContext: 0xFFFFFF}},
	}
	hdr.Golden(t, cases)
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "a5123456eeee")
	h, err := rdeth.New(b)
	require.NoError(t, err)
	assert.Len(t, h, rdeth.Len)
	h.SetEEContext(0xABCDEF)
	assert.Equal(t, "a5abcdefeeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, rdeth.Len)
	h, _ := rdeth.New(b)
	h.SetResv8(0xFF)
	h.SetEEContext(0xFFFFFF)
	assert.Equal(t, "ffffffff", hex.EncodeToString(b))
	h.SetResv8(0)
	assert.Equal(t, "00ffffff", hex.EncodeToString(b))
	h.SetResv8(0x5A)
	h.SetEEContext(0)
	assert.Equal(t, "5a000000", hex.EncodeToString(b))
	h.SetEEContext(0xFF123456)
	assert.Equal(t, "5a123456", hex.EncodeToString(b), "masked to 24 bits")
	assert.Equal(t, uint8(0x5A), h.Resv8())
	assert.Equal(t, uint32(0x123456), h.EEContext())
}

var hdr = hdrtest.Header[rdeth.RDETH, rdeth.Fields]{
	Name:   "rdeth",
	Len:    rdeth.Len,
	New:    rdeth.New,
	Decode: rdeth.RDETH.Fields,
	Encode: (*rdeth.Fields).Encode,
	Gen:    proptest.RDETHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestEncodeRejectsWideFields(t *testing.T) {
	b := make([]byte, rdeth.Len)
	for _, f := range []rdeth.Fields{{EEContext: 1 << 24}, {Resv8: 0xFF, EEContext: 0xFFFFFFFF}} {
		err := f.Encode(b)
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "%+v", f)
		assert.Contains(t, err.Error(), "rdeth.EEContext")
	}
	assert.Equal(t, make([]byte, rdeth.Len), b, "nothing written on error")
}

func TestString(t *testing.T) {
	f := rdeth.Fields{EEContext: 0x123456}
	assert.Equal(t, "RDETH resv8=0x00 eecnxt=0x123456", f.String())
	h, _ := rdeth.New(hdrtest.Unhex(t, "a5000001"))
	assert.Equal(t, "RDETH resv8=0xa5 eecnxt=0x000001", h.String())
}

var sink rdeth.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "a5123456")
	b.ReportAllocs()
	var n uint32
	for i := 0; i < b.N; i++ {
		h, err := rdeth.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.EEContext() + uint32(h.Resv8())
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "a5123456")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := rdeth.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := rdeth.Fields{EEContext: 0x123456}
	buf := make([]byte, rdeth.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
