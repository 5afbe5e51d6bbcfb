package atomiceth_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit/atomiceth"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Hand-computed AtomicETHs (no atomic vector in ib-facts.md §3.4): one with a
// distinct value in every byte, so a wrong offset fails; a FetchAdd of 1 and a
// CmpSwap 5 -> 6 on realistic addresses.
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[atomiceth.Fields]{
		{Hex: "0102030405060708" + "090a0b0c" + "0d0e0f1011121314" + "15161718191a1b1c",
			Want: atomiceth.Fields{VA: 0x0102030405060708, RKey: 0x090a0b0c, SwapAdd: 0x0d0e0f1011121314, Compare: 0x15161718191a1b1c}},
		{Hex: "00007f0012340008" + "00001234" + "0000000000000001" + "0000000000000000",
			Want: atomiceth.Fields{VA: 0x00007f0012340008, RKey: 0x1234, SwapAdd: 1}},
		{Hex: "00007f0012340010" + "000047b3" + "0000000000000006" + "0000000000000005",
			Want: atomiceth.Fields{VA: 0x00007f0012340010, RKey: 0x47b3, SwapAdd: 6, Compare: 5}},
	}
	hdr.Golden(t, cases)
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1ceeee")
	h, err := atomiceth.New(b)
	require.NoError(t, err)
	assert.Len(t, h, atomiceth.Len)
	h.SetCompare(0)
	assert.Equal(t, "0102030405060708090a0b0c0d0e0f10111213140000000000000000eeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, atomiceth.Len)
	h, _ := atomiceth.New(b)
	h.SetVA(0xFFFFFFFFFFFFFFFF)
	h.SetRKey(0xFFFFFFFF)
	h.SetSwapAdd(0xFFFFFFFFFFFFFFFF)
	h.SetCompare(0xFFFFFFFFFFFFFFFF)
	assert.Equal(t, "ffffffffffffffff"+"ffffffff"+"ffffffffffffffff"+"ffffffffffffffff", hex.EncodeToString(b))
	h.SetRKey(0)
	h.SetCompare(0)
	assert.Equal(t, "ffffffffffffffff"+"00000000"+"ffffffffffffffff"+"0000000000000000", hex.EncodeToString(b))
	h.SetVA(0)
	h.SetSwapAdd(0)
	h.SetRKey(0x12345678)
	h.SetCompare(0x8000000000000001)
	assert.Equal(t, "0000000000000000"+"12345678"+"0000000000000000"+"8000000000000001", hex.EncodeToString(b))
	h.SetSwapAdd(0xA1A2A3A4A5A6A7A8)
	h.SetVA(0xB1B2B3B4B5B6B7B8)
	assert.Equal(t, "b1b2b3b4b5b6b7b8"+"12345678"+"a1a2a3a4a5a6a7a8"+"8000000000000001", hex.EncodeToString(b))
	assert.Equal(t, uint64(0xB1B2B3B4B5B6B7B8), h.VA())
	assert.Equal(t, uint32(0x12345678), h.RKey())
	assert.Equal(t, uint64(0xA1A2A3A4A5A6A7A8), h.SwapAdd())
	assert.Equal(t, uint64(0x8000000000000001), h.Compare())
}

var hdr = hdrtest.Header[atomiceth.AtomicETH, atomiceth.Fields]{
	Name:   "atomiceth",
	Len:    atomiceth.Len,
	New:    atomiceth.New,
	Decode: atomiceth.AtomicETH.Fields,
	Encode: (*atomiceth.Fields).Encode,
	Gen:    proptest.AtomicETHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestString(t *testing.T) {
	f := atomiceth.Fields{VA: 0x00007f0012340008, RKey: 0x1234, SwapAdd: 1}
	assert.Equal(t, "AtomicETH va=0x00007f0012340008 r_key=0x00001234 swapdt=0x0000000000000001 cmpdt=0x0000000000000000", f.String())
	h, _ := atomiceth.New(hdrtest.Unhex(t, "0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c"))
	assert.Equal(t, "AtomicETH va=0x0102030405060708 r_key=0x090a0b0c swapdt=0x0d0e0f1011121314 cmpdt=0x15161718191a1b1c", h.String())
}

var sink atomiceth.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "00007f0012340008000012340000000000000001ffffffffffffffff")
	b.ReportAllocs()
	var n uint64
	for i := 0; i < b.N; i++ {
		h, err := atomiceth.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.VA() + uint64(h.RKey()) + h.SwapAdd() + h.Compare()
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "00007f0012340008000012340000000000000001ffffffffffffffff")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := atomiceth.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := atomiceth.Fields{VA: 0x00007f0012340008, RKey: 0x1234, SwapAdd: 1, Compare: 0xFFFFFFFFFFFFFFFF}
	buf := make([]byte, atomiceth.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
