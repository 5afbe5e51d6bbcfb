package immdt_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit/immdt"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed ImmDts (no immediate vector in ib-facts.md §3.4): a distinct
// value in every byte, so a wrong byte order fails.
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[immdt.Fields]{
		{Hex: "12345678", Want: immdt.Fields{Imm: 0x12345678}},
		{Hex: "deadbeef", Want: immdt.Fields{Imm: 0xDEADBEEF}},
		{Hex: "00000001", Want: immdt.Fields{Imm: 1}},
	}
	hdr.Golden(t, cases)
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "12345678eeee")
	h, err := immdt.New(b)
	require.NoError(t, err)
	assert.Len(t, h, immdt.Len)
	h.SetImm(0)
	assert.Equal(t, "00000000eeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, immdt.Len)
	h, _ := immdt.New(b)
	h.SetImm(0xFFFFFFFF)
	assert.Equal(t, "ffffffff", hex.EncodeToString(b))
	h.SetImm(0x80000001)
	assert.Equal(t, "80000001", hex.EncodeToString(b))
	assert.Equal(t, uint32(0x80000001), h.Imm())
	h.SetImm(0)
	assert.Equal(t, "00000000", hex.EncodeToString(b))
}

var hdr = hdrtest.Header[immdt.ImmDt, immdt.Fields]{
	Name:   "immdt",
	Len:    immdt.Len,
	New:    immdt.New,
	Decode: immdt.ImmDt.Fields,
	Encode: (*immdt.Fields).Encode,
	Gen:    proptest.ImmDtFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestString(t *testing.T) {
	f := immdt.Fields{Imm: 1}
	assert.Equal(t, "ImmDt imm=0x00000001", f.String())
	h, _ := immdt.New(hdrtest.Unhex(t, "deadbeef"))
	assert.Equal(t, "ImmDt imm=0xdeadbeef", h.String())
}

var sink immdt.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "deadbeef")
	b.ReportAllocs()
	var n uint32
	for i := 0; i < b.N; i++ {
		h, err := immdt.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.Imm()
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "deadbeef")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := immdt.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := immdt.Fields{Imm: 0xDEADBEEF}
	buf := make([]byte, immdt.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
