package atomicacketh_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit/atomicacketh"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed AtomicAckETHs (no atomic vector in ib-facts.md §3.4): a
// distinct value in every byte, so a wrong byte order fails.
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[atomicacketh.Fields]{
		{Hex: "0102030405060708", Want: atomicacketh.Fields{OrigRemDt: 0x0102030405060708}},
		{Hex: "0000000000000005", Want: atomicacketh.Fields{OrigRemDt: 5}},
		{Hex: "ffffffffffffffff", Want: atomicacketh.Fields{OrigRemDt: 0xFFFFFFFFFFFFFFFF}},
	}
	hdr.Golden(t, cases)
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "0102030405060708eeee")
	h, err := atomicacketh.New(b)
	require.NoError(t, err)
	assert.Len(t, h, atomicacketh.Len)
	h.SetOrigRemDt(0)
	assert.Equal(t, "0000000000000000eeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, atomicacketh.Len)
	h, _ := atomicacketh.New(b)
	h.SetOrigRemDt(0xFFFFFFFFFFFFFFFF)
	assert.Equal(t, "ffffffffffffffff", hex.EncodeToString(b))
	h.SetOrigRemDt(0x8000000000000001)
	assert.Equal(t, "8000000000000001", hex.EncodeToString(b))
	assert.Equal(t, uint64(0x8000000000000001), h.OrigRemDt())
	h.SetOrigRemDt(0)
	assert.Equal(t, "0000000000000000", hex.EncodeToString(b))
}

var hdr = hdrtest.Header[atomicacketh.AtomicAckETH, atomicacketh.Fields]{
	Name:   "atomicacketh",
	Len:    atomicacketh.Len,
	New:    atomicacketh.New,
	Decode: atomicacketh.AtomicAckETH.Fields,
	Encode: (*atomicacketh.Fields).Encode,
	Gen:    proptest.AtomicAckETHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestString(t *testing.T) {
	f := atomicacketh.Fields{OrigRemDt: 5}
	assert.Equal(t, "AtomicAckETH origremdt=0x0000000000000005", f.String())
	h, _ := atomicacketh.New(hdrtest.Unhex(t, "0102030405060708"))
	assert.Equal(t, "AtomicAckETH origremdt=0x0102030405060708", h.String())
}

var sink atomicacketh.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "0102030405060708")
	b.ReportAllocs()
	var n uint64
	for i := 0; i < b.N; i++ {
		h, err := atomicacketh.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.OrigRemDt()
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "0102030405060708")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := atomicacketh.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := atomicacketh.Fields{OrigRemDt: 0x0102030405060708}
	buf := make([]byte, atomicacketh.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
