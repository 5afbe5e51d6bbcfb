package ieth_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit/ieth"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed IETHs (no Send-with-Invalidate vector in ib-facts.md §3.4):
// a distinct value in every byte, so a wrong byte order fails.
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[ieth.Fields]{
		{Hex: "12345678", Want: ieth.Fields{RKey: 0x12345678}},
		{Hex: "deadbeef", Want: ieth.Fields{RKey: 0xDEADBEEF}},
		{Hex: "00000001", Want: ieth.Fields{RKey: 1}},
	}
	hdr.Golden(t, cases)
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "12345678eeee")
	h, err := ieth.New(b)
	require.NoError(t, err)
	assert.Len(t, h, ieth.Len)
	h.SetRKey(0)
	assert.Equal(t, "00000000eeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, ieth.Len)
	h, _ := ieth.New(b)
	h.SetRKey(0xFFFFFFFF)
	assert.Equal(t, "ffffffff", hex.EncodeToString(b))
	h.SetRKey(0x80000001)
	assert.Equal(t, "80000001", hex.EncodeToString(b))
	assert.Equal(t, uint32(0x80000001), h.RKey())
	h.SetRKey(0)
	assert.Equal(t, "00000000", hex.EncodeToString(b))
}

var hdr = hdrtest.Header[ieth.IETH, ieth.Fields]{
	Name:   "ieth",
	Len:    ieth.Len,
	New:    ieth.New,
	Decode: ieth.IETH.Fields,
	Encode: (*ieth.Fields).Encode,
	Gen:    proptest.IETHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestString(t *testing.T) {
	f := ieth.Fields{RKey: 1}
	assert.Equal(t, "IETH r_key=0x00000001", f.String())
	h, _ := ieth.New(hdrtest.Unhex(t, "deadbeef"))
	assert.Equal(t, "IETH r_key=0xdeadbeef", h.String())
}

var sink ieth.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "deadbeef")
	b.ReportAllocs()
	var n uint32
	for i := 0; i < b.N; i++ {
		h, err := ieth.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.RKey()
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "deadbeef")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := ieth.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := ieth.Fields{RKey: 0xDEADBEEF}
	buf := make([]byte, ieth.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
