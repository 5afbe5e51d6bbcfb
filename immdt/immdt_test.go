package immdt_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/immdt"
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

// Hand-computed ImmDts (no immediate vector in ib-facts.md §3.4): a distinct
// value in every byte, so a wrong byte order fails.
func TestGolden(t *testing.T) {
	cases := []struct {
		hex  string
		want immdt.Fields
	}{
		{"12345678", immdt.Fields{Imm: 0x12345678}},
		{"deadbeef", immdt.Fields{Imm: 0xDEADBEEF}},
		{"00000001", immdt.Fields{Imm: 1}},
	}
	for _, c := range cases {
		b := unhex(t, c.hex)
		h, err := immdt.New(b)
		require.NoError(t, err)
		assert.Equal(t, c.want, h.Fields(), c.hex)
		out := make([]byte, immdt.Len)
		require.NoError(t, c.want.Encode(out))
		assert.Equal(t, b, out)
	}
}

func TestNewIsView(t *testing.T) {
	b := unhex(t, "12345678eeee")
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

func TestTruncated(t *testing.T) {
	for n := 0; n < immdt.Len; n++ {
		_, err := immdt.New(make([]byte, n))
		require.Error(t, err)
		assert.True(t, errors.Is(err, rocekit.ErrTruncated))
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "immdt", he.Header)
		assert.Equal(t, immdt.Len, he.Need)
		assert.Equal(t, n, he.Have)
	}
	f := immdt.Fields{Imm: 1}
	short := bytes.Repeat([]byte{0xEE}, immdt.Len-1)
	assert.ErrorIs(t, f.Encode(short), rocekit.ErrTruncated)
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, immdt.Len-1), short, "nothing written on error")
}

func TestRoundTripFields(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := proptest.ImmDtFields().Draw(t, "f")
		b := make([]byte, immdt.Len)
		if err := f.Encode(b); err != nil {
			t.Fatal(err)
		}
		h, err := immdt.New(b)
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
		b := rapid.SliceOfN(rapid.Byte(), immdt.Len, immdt.Len).Draw(t, "b")
		h, err := immdt.New(b)
		if err != nil {
			t.Fatal(err)
		}
		f := h.Fields()
		out := make([]byte, immdt.Len)
		if err := f.Encode(out); err != nil {
			t.Fatal(err)
		}
		if string(out) != string(b) {
			t.Fatalf("got %x want %x", out, b)
		}
	})
}

func TestString(t *testing.T) {
	f := immdt.Fields{Imm: 1}
	assert.Equal(t, "ImmDt imm=0x00000001", f.String())
	h, _ := immdt.New(unhex(t, "deadbeef"))
	assert.Equal(t, "ImmDt imm=0xdeadbeef", h.String())
}

var sink immdt.Fields

func BenchmarkView(b *testing.B) {
	buf := unhex(b, "deadbeef")
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
	buf := unhex(b, "deadbeef")
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
