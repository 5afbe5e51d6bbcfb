package atomicacketh_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/atomicacketh"
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

// Hand-computed AtomicAckETHs (no atomic vector in ib-facts.md §3.4): a
// distinct value in every byte, so a wrong byte order fails.
func TestGolden(t *testing.T) {
	cases := []struct {
		hex  string
		want atomicacketh.Fields
	}{
		{"0102030405060708", atomicacketh.Fields{OrigRemDt: 0x0102030405060708}},
		{"0000000000000005", atomicacketh.Fields{OrigRemDt: 5}},
		{"ffffffffffffffff", atomicacketh.Fields{OrigRemDt: 0xFFFFFFFFFFFFFFFF}},
	}
	for _, c := range cases {
		b := unhex(t, c.hex)
		h, err := atomicacketh.New(b)
		require.NoError(t, err)
		assert.Equal(t, c.want, h.Fields(), c.hex)
		out := make([]byte, atomicacketh.Len)
		require.NoError(t, c.want.Encode(out))
		assert.Equal(t, b, out)
	}
}

func TestNewIsView(t *testing.T) {
	b := unhex(t, "0102030405060708eeee")
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

func TestTruncated(t *testing.T) {
	for n := 0; n < atomicacketh.Len; n++ {
		_, err := atomicacketh.New(make([]byte, n))
		require.Error(t, err)
		assert.True(t, errors.Is(err, rocekit.ErrTruncated))
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "atomicacketh", he.Header)
		assert.Equal(t, atomicacketh.Len, he.Need)
		assert.Equal(t, n, he.Have)
	}
	f := atomicacketh.Fields{OrigRemDt: 1}
	short := bytes.Repeat([]byte{0xEE}, atomicacketh.Len-1)
	assert.ErrorIs(t, f.Encode(short), rocekit.ErrTruncated)
	assert.Equal(t, bytes.Repeat([]byte{0xEE}, atomicacketh.Len-1), short, "nothing written on error")
}

func TestRoundTripFields(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := proptest.AtomicAckETHFields().Draw(t, "f")
		b := make([]byte, atomicacketh.Len)
		if err := f.Encode(b); err != nil {
			t.Fatal(err)
		}
		h, err := atomicacketh.New(b)
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
		b := rapid.SliceOfN(rapid.Byte(), atomicacketh.Len, atomicacketh.Len).Draw(t, "b")
		h, err := atomicacketh.New(b)
		if err != nil {
			t.Fatal(err)
		}
		f := h.Fields()
		out := make([]byte, atomicacketh.Len)
		if err := f.Encode(out); err != nil {
			t.Fatal(err)
		}
		if string(out) != string(b) {
			t.Fatalf("got %x want %x", out, b)
		}
	})
}

func TestString(t *testing.T) {
	f := atomicacketh.Fields{OrigRemDt: 5}
	assert.Equal(t, "AtomicAckETH origremdt=0x0000000000000005", f.String())
	h, _ := atomicacketh.New(unhex(t, "0102030405060708"))
	assert.Equal(t, "AtomicAckETH origremdt=0x0102030405060708", h.String())
}

var sink atomicacketh.Fields

func BenchmarkView(b *testing.B) {
	buf := unhex(b, "0102030405060708")
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
	buf := unhex(b, "0102030405060708")
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
