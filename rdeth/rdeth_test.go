package rdeth_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/proptest"
	"github.com/rocekit/rocekit/rdeth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// Hand-computed RDETHs (no RD vector in ib-facts.md §3.4): distinct values in
// every byte, so a wrong offset fails.
func TestGolden(t *testing.T) {
	cases := []struct {
		hex  string
		want rdeth.Fields
	}{
		{"a5123456", rdeth.Fields{Resv8: 0xA5, EEContext: 0x123456}},
		{"00000001", rdeth.Fields{EEContext: 1}},
		{"00ffffff", rdeth.Fields{EEContext: 0xFFFFFF}},
	}
	for _, c := range cases {
		b := unhex(t, c.hex)
		h, err := rdeth.New(b)
		require.NoError(t, err)
		assert.Equal(t, c.want, h.Fields(), c.hex)
		out := make([]byte, rdeth.Len)
		require.NoError(t, c.want.Encode(out))
		assert.Equal(t, b, out)
	}
}

func TestNewIsView(t *testing.T) {
	b := unhex(t, "a5123456eeee")
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

func TestTruncated(t *testing.T) {
	for n := 0; n < rdeth.Len; n++ {
		_, err := rdeth.New(make([]byte, n))
		require.Error(t, err)
		assert.True(t, errors.Is(err, rocekit.ErrTruncated))
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "rdeth", he.Header)
		assert.Equal(t, rdeth.Len, he.Need)
		assert.Equal(t, n, he.Have)
	}
	f := rdeth.Fields{EEContext: 1}
	short := bytes.Repeat([]byte{0xEE}, rdeth.Len-1)
	assert.ErrorIs(t, f.Encode(short), rocekit.ErrTruncated)
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, rdeth.Len-1), short, "nothing written on error")
}

func TestEncodeRejectsWideFields(t *testing.T) {
	b := make([]byte, rdeth.Len)
	for _, f := range []rdeth.Fields{{EEContext: 1 << 24}, {Resv8: 0xFF, EEContext: 0xFFFFFFFF}} {
		err := f.Encode(b)
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "%+v", f)
		assert.Contains(t, err.Error(), "rdeth.EEContext")
	}
	assert.Equal(t, make([]byte, rdeth.Len), b, "nothing written on error")
}

func TestRoundTripFields(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := proptest.RDETHFields().Draw(t, "f")
		b := make([]byte, rdeth.Len)
		if err := f.Encode(b); err != nil {
			t.Fatal(err)
		}
		h, err := rdeth.New(b)
		if err != nil {
			t.Fatal(err)
		}
		if h.Fields() != f {
			t.Fatalf("got %v want %v", h.Fields(), f)
		}
	})
}

func TestRoundTripBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), rdeth.Len, rdeth.Len).Draw(t, "b")
		h, err := rdeth.New(b)
		if err != nil {
			t.Fatal(err)
		}
		f := h.Fields()
		out := make([]byte, rdeth.Len)
		if err := f.Encode(out); err != nil {
			t.Fatal(err)
		}
		if string(out) != string(b) {
			t.Fatalf("got %x want %x", out, b)
		}
	})
}

func TestString(t *testing.T) {
	f := rdeth.Fields{EEContext: 0x123456}
	assert.Equal(t, "RDETH resv8=0x00 eecnxt=0x123456", f.String())
	h, _ := rdeth.New(unhex(t, "a5000001"))
	assert.Equal(t, "RDETH resv8=0xa5 eecnxt=0x000001", h.String())
}

var sink rdeth.Fields

func BenchmarkView(b *testing.B) {
	buf := unhex(b, "a5123456")
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
	buf := unhex(b, "a5123456")
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
