package cnp_test

import (
	"encoding/hex"
	"errors"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/cnp"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Golden CNP bodies read straight out of the RoCEv2/IPv4 frames of
// ib-facts.md §3.4, after Ethernet 14 + IPv4 20 + UDP 8 + BTH 12: vector C (a
// real ConnectX-4 Lx capture) and vector F; each is followed by its ICRC. And
// a hand-computed body with a distinct non-zero value in every byte.
func TestGolden(t *testing.T) {
	const (
		vectorC = "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a"
		vectorF = "020000000001020000000002080045c2003c000240004011b699c0a80102c0a80101c00012b7002800008100ffff400000120000000000000000000000000000000000000000bcd115ff"
	)
	cases := []hdrtest.Case[cnp.Fields]{
		{Hex: vectorC[2*(14+20+8+12):], Want: cnp.Fields{}},
		{Hex: vectorF[2*(14+20+8+12):], Want: cnp.Fields{}},
		{Hex: "0102030405060708090a0b0c0d0e0f10", Want: cnp.Fields{Reserved: [16]byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}}},
	}
	hdr.Golden(t, cases)
	rest := []string{"82fd002a", "bcd115ff", ""} // the bytes after the body
	valid := []bool{true, true, false}
	for i, c := range cases {
		b := hdrtest.Unhex(t, c.Hex)
		h, err := cnp.New(b)
		require.NoError(t, err)
		assert.Equal(t, rest[i], hex.EncodeToString(b[cnp.Len:]), c.Hex)
		if valid[i] {
			assert.NoError(t, h.Validate(), c.Hex)
		} else {
			assert.ErrorIs(t, h.Validate(), rocekit.ErrInvalid, c.Hex)
		}
	}
}

func TestNewIsView(t *testing.T) {
	b := hdrtest.Unhex(t, "0102030405060708090a0b0c0d0e0f10eeee")
	h, err := cnp.New(b)
	require.NoError(t, err)
	assert.Len(t, h, cnp.Len)
	r := h.Reserved()
	assert.Len(t, r, cnp.Len)
	assert.Equal(t, cnp.Len, cap(r), "cannot be appended into the bytes after the body")
	r[0] = 0xAA
	assert.Equal(t, byte(0xAA), b[0], "Reserved returns the view, not a copy")
	h.SetReserved([16]byte{})
	assert.Equal(t, "00000000000000000000000000000000eeee", hex.EncodeToString(b), "writes go to the caller's bytes, nothing past Len")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, cnp.Len)
	h, _ := cnp.New(b)
	var all [16]byte
	for i := range all {
		all[i] = 0xFF
	}
	h.SetReserved(all)
	assert.Equal(t, "ffffffffffffffffffffffffffffffff", hex.EncodeToString(b))
	assert.Equal(t, all[:], h.Reserved())
	h.SetReserved([16]byte{0: 0x80, 15: 0x01})
	assert.Equal(t, "80000000000000000000000000000001", hex.EncodeToString(b))
	h.SetReserved([16]byte{})
	assert.Equal(t, "00000000000000000000000000000000", hex.EncodeToString(b))
}

var hdr = hdrtest.Header[cnp.CNP, cnp.Fields]{
	Name:   "cnp",
	Len:    cnp.Len,
	New:    cnp.New,
	Decode: cnp.CNP.Fields,
	Encode: (*cnp.Fields).Encode,
	Gen:    proptest.CNPFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

func TestValidate(t *testing.T) {
	for i := 0; i < cnp.Len; i++ {
		b := make([]byte, cnp.Len)
		b[i] = 0x5A
		h, _ := cnp.New(b)
		err := h.Validate()
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "byte %d", i)
		assert.Contains(t, err.Error(), "cnp.Reserved")
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "Reserved", he.Field)
		assert.Equal(t, byte(0x5A), h.Reserved()[i], "reported, not fixed")
		assert.Equal(t, byte(0x5A), h.Fields().Reserved[i], "still readable")
	}
	h, _ := cnp.New(make([]byte, cnp.Len))
	assert.NoError(t, h.Validate())
}

func TestString(t *testing.T) {
	f := cnp.Fields{}
	assert.Equal(t, "CNP reserved=00000000000000000000000000000000", f.String())
	h, _ := cnp.New(hdrtest.Unhex(t, "0102030405060708090a0b0c0d0e0fff"))
	assert.Equal(t, "CNP reserved=0102030405060708090a0b0c0d0e0fff", h.String())
}

var sink cnp.Fields

func BenchmarkView(b *testing.B) {
	buf := make([]byte, cnp.Len)
	b.ReportAllocs()
	var n int
	for i := 0; i < b.N; i++ {
		h, err := cnp.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Validate(); err != nil {
			b.Fatal(err)
		}
		n += int(h.Reserved()[cnp.Len-1])
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := make([]byte, cnp.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := cnp.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := cnp.Fields{}
	buf := make([]byte, cnp.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
