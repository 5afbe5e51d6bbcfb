package ieth_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/ieth"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(s)
	require.NoError(t, err)
	return b
}

// Hand-computed IETHs (no Send-with-Invalidate vector in ib-facts.md §3.4):
// a distinct value in every byte, so a wrong byte order fails.
func TestGolden(t *testing.T) {
	cases := []struct {
		hex  string
		want ieth.Fields
	}{
		{"12345678", ieth.Fields{RKey: 0x12345678}},
		{"deadbeef", ieth.Fields{RKey: 0xDEADBEEF}},
		{"00000001", ieth.Fields{RKey: 1}},
	}
	for _, c := range cases {
		b := unhex(t, c.hex)
		h, err := ieth.New(b)
		require.NoError(t, err)
		assert.Equal(t, c.want, h.Fields(), c.hex)
		out := make([]byte, ieth.Len)
		require.NoError(t, c.want.Encode(out))
		assert.Equal(t, b, out)
	}
}

func TestNewIsView(t *testing.T) {
	b := unhex(t, "12345678eeee")
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

func TestTruncated(t *testing.T) {
	for n := 0; n < ieth.Len; n++ {
		_, err := ieth.New(make([]byte, n))
		require.Error(t, err)
		assert.True(t, errors.Is(err, rocekit.ErrTruncated))
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "ieth", he.Header)
		assert.Equal(t, ieth.Len, he.Need)
		assert.Equal(t, n, he.Have)
	}
	f := ieth.Fields{RKey: 1}
	short := bytes.Repeat([]byte{0xEE}, ieth.Len-1)
	assert.ErrorIs(t, f.Encode(short), rocekit.ErrTruncated)
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, ieth.Len-1), short, "nothing written on error")
}

func TestRoundTripFields(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := proptest.IETHFields().Draw(t, "f")
		b := make([]byte, ieth.Len)
		if err := f.Encode(b); err != nil {
			t.Fatal(err)
		}
		h, err := ieth.New(b)
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
		b := rapid.SliceOfN(rapid.Byte(), ieth.Len, ieth.Len).Draw(t, "b")
		h, err := ieth.New(b)
		if err != nil {
			t.Fatal(err)
		}
		f := h.Fields()
		out := make([]byte, ieth.Len)
		if err := f.Encode(out); err != nil {
			t.Fatal(err)
		}
		if string(out) != string(b) {
			t.Fatalf("got %x want %x", out, b)
		}
	})
}

func TestString(t *testing.T) {
	f := ieth.Fields{RKey: 1}
	assert.Equal(t, "IETH r_key=0x00000001", f.String())
	h, _ := ieth.New(unhex(t, "deadbeef"))
	assert.Equal(t, "IETH r_key=0xdeadbeef", h.String())
}

var sink ieth.Fields

func BenchmarkView(b *testing.B) {
	buf := unhex(b, "deadbeef")
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
	buf := unhex(b, "deadbeef")
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
