package reth_test

import (
	"encoding/hex"
	"testing"

	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/rocekit/rocekit/reth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Golden RETHs read straight out of the frames of ib-facts.md §3.4: vector B
// (RoCEv2/IPv6 RDMA WRITE Only, RETH after Ethernet 14 + IPv6 40 + UDP 8 + BTH
// 12) and vector D (real RoCEv1 capture, RETH after Ethernet 14 + GRH 40 + BTH
// 12); plus a hand-computed one with a distinct value in every byte.
func TestGolden(t *testing.T) {
	const (
		vectorB = "02000000000202000000000186dd6021234500301140fd000000000000000000000000000001fd000000000000000000000000000002c00112b7003000000a40ffff0000001180abcdef00000000123456780000123400000008010203040506070897f03724"
		vectorD = "7cfe90753cd87cfe90753cd889156020000000281b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000020a70ffff0000010a80a788bc000055d4c0726000000047b3000000050000000001000000e3d856bb"
	)
	cases := []hdrtest.Case[reth.Fields]{
		{Hex: vectorB[2*(14+40+8+12):], Want: reth.Fields{VA: 0x12345678, RKey: 0x1234, DMALen: 8}},
		{Hex: vectorD[2*(14+40+12):], Want: reth.Fields{VA: 0x000055d4c0726000, RKey: 0x47b3, DMALen: 5}},
		{Hex: "0102030405060708090a0b0c0d0e0f10", Want: reth.Fields{VA: 0x0102030405060708, RKey: 0x090a0b0c, DMALen: 0x0d0e0f10}},
	}
	hdr.Golden(t, cases)
	rest := []string{"010203040506070897f03724", "0000000001000000e3d856bb", ""} // the bytes after the RETH
	for i, c := range cases {
		assert.Equal(t, rest[i], hex.EncodeToString(hdrtest.Unhex(t, c.Hex)[reth.Len:]), c.Hex)
	}
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "0102030405060708090a0b0c0d0e0f10eeee")
	h, err := reth.New(b)
	require.NoError(t, err)
	assert.Len(t, h, reth.Len)
	h.SetDMALen(0)
	assert.Equal(t, "0102030405060708090a0b0c00000000eeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, reth.Len)
	h, _ := reth.New(b)
	h.SetVA(0xFFFFFFFFFFFFFFFF)
	h.SetRKey(0xFFFFFFFF)
	h.SetDMALen(0xFFFFFFFF)
	assert.Equal(t, "ffffffffffffffffffffffffffffffff", hex.EncodeToString(b))
	h.SetRKey(0)
	assert.Equal(t, "ffffffffffffffff00000000ffffffff", hex.EncodeToString(b))
	h.SetVA(0)
	h.SetRKey(0x12345678)
	assert.Equal(t, "000000000000000012345678ffffffff", hex.EncodeToString(b))
	h.SetDMALen(0)
	h.SetVA(0x8000000000000001)
	assert.Equal(t, "80000000000000011234567800000000", hex.EncodeToString(b))
	assert.Equal(t, uint64(0x8000000000000001), h.VA())
	assert.Equal(t, uint32(0x12345678), h.RKey())
	assert.Equal(t, uint32(0), h.DMALen())
}

var hdr = hdrtest.Header[reth.RETH, reth.Fields]{
	Name:   "reth",
	Len:    reth.Len,
	New:    reth.New,
	Decode: reth.RETH.Fields,
	Encode: (*reth.Fields).Encode,
	Gen:    proptest.RETHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestString(t *testing.T) {
	f := reth.Fields{VA: 0x12345678, RKey: 0x1234, DMALen: 8}
	assert.Equal(t, "RETH va=0x0000000012345678 r_key=0x00001234 dmalen=8", f.String())
	h, _ := reth.New(hdrtest.Unhex(t, "000055d4c0726000000047b3ffffffff"))
	assert.Equal(t, "RETH va=0x000055d4c0726000 r_key=0x000047b3 dmalen=4294967295", h.String())
}

var sink reth.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "00000000123456780000123400000008")
	b.ReportAllocs()
	var n uint64
	for i := 0; i < b.N; i++ {
		h, err := reth.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		n += h.VA() + uint64(h.RKey()) + uint64(h.DMALen())
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "00000000123456780000123400000008")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := reth.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := reth.Fields{VA: 0x12345678, RKey: 0x1234, DMALen: 8}
	buf := make([]byte, reth.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
