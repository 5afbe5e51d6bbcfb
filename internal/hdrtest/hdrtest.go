// Package hdrtest holds the checks every header package's tests run, so each
// rule (truncation errors, round trips both ways, writes staying inside the
// view) is written once. A header package describes itself with a Header
// value and calls the checks from its own tests.
package hdrtest

import (
	"bytes"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/rocekit/rocekit"
	"pgregory.net/rapid"
)

// Header describes one header package: V is its view type, F its Fields.
type Header[V ~[]byte, F comparable] struct {
	Name   string                  // lower-case header name errors carry ("reth")
	Len    int                     // the header's size
	New    func([]byte) (V, error) // the length-checked constructor
	Decode func(V) F               // V.Fields
	Encode func(*F, []byte) error  // (*F).Encode
	Gen    *rapid.Generator[F]     // every field over its full width
}

// Truncated checks that New rejects every length below Len with a
// *rocekit.HeaderError naming the header, bytes needed and present, and that
// Encode into any shorter buffer fails and writes nothing.
func (h Header[V, F]) Truncated(t *testing.T) {
	t.Helper()
	for n := 0; n < h.Len; n++ {
		_, err := h.New(make([]byte, n))
		if !errors.Is(err, rocekit.ErrTruncated) {
			t.Fatalf("New(%d bytes): got %v, want ErrTruncated", n, err)
		}
		var he *rocekit.HeaderError
		if !errors.As(err, &he) || he.Header != h.Name || he.Need != h.Len || he.Have != n {
			t.Fatalf("New(%d bytes): got %#v, want header %q need %d have %d", n, err, h.Name, h.Len, n)
		}
	}
	var f F
	for n := 0; n < h.Len; n++ {
		short := bytes.Repeat([]byte{0xEE}, n)
		if err := h.Encode(&f, short); !errors.Is(err, rocekit.ErrTruncated) {
			t.Fatalf("Encode into %d bytes: got %v, want ErrTruncated", n, err)
		}
		if !bytes.Equal(short, bytes.Repeat([]byte{0xEE}, n)) {
			t.Fatalf("Encode into %d bytes wrote %x", n, short)
		}
	}
}

// RoundTripFields checks Fields -> Encode -> New -> Fields gives the same
// values, and that New views exactly Len bytes of a longer buffer.
func (h Header[V, F]) RoundTripFields(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		f := h.Gen.Draw(t, "fields")
		b := bytes.Repeat([]byte{0xEE}, h.Len+4)
		if err := h.Encode(&f, b); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b[h.Len:], []byte{0xEE, 0xEE, 0xEE, 0xEE}) {
			t.Fatalf("Encode wrote past Len: %x", b)
		}
		v, err := h.New(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(v) != h.Len {
			t.Fatalf("view has %d bytes, want %d", len(v), h.Len)
		}
		if got := h.Decode(v); got != f {
			t.Fatalf("got %+v want %+v", got, f)
		}
	})
}

// RoundTripBytes checks arbitrary Len bytes -> Fields -> Encode gives the
// same bytes: every bit, reserved ones included, is a field.
func (h Header[V, F]) RoundTripBytes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), h.Len, h.Len).Draw(t, "bytes")
		v, err := h.New(b)
		if err != nil {
			t.Fatal(err)
		}
		f := h.Decode(v)
		out := make([]byte, h.Len)
		if err := h.Encode(&f, out); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out, b) {
			t.Fatalf("got %x want %x", out, b)
		}
	})
}

// Unhex decodes hex, ignoring spaces, and fails the test on bad input.
func Unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("Unhex(%q): %v", s, err)
	}
	return b
}

// Case is one golden vector: Hex starts with the header's bytes (anything
// after its first Len bytes is ignored) and Want is what they decode to.
type Case[F any] struct {
	Hex  string
	Want F
}

// Golden checks each vector both ways: New accepts the bytes, Decode gives
// Want, and Encode of Want into a fresh Len-byte buffer gives the header's
// bytes exactly.
func (h Header[V, F]) Golden(t *testing.T, cases []Case[F]) {
	t.Helper()
	for _, c := range cases {
		b := Unhex(t, c.Hex)
		v, err := h.New(b)
		if err != nil {
			t.Fatalf("New(%s): %v", c.Hex, err)
		}
		if got := h.Decode(v); got != c.Want {
			t.Errorf("%s: got %+v want %+v", c.Hex, got, c.Want)
		}
		out := make([]byte, h.Len)
		if err := h.Encode(&c.Want, out); err != nil {
			t.Errorf("%s: Encode(%+v): %v", c.Hex, c.Want, err)
			continue
		}
		if !bytes.Equal(out, b[:h.Len]) {
			t.Errorf("%s: Encode(%+v) gave %x", c.Hex, c.Want, out)
		}
	}
}

// All runs every check as a subtest.
func (h Header[V, F]) All(t *testing.T) {
	t.Run("Truncated", h.Truncated)
	t.Run("RoundTripFields", h.RoundTripFields)
	t.Run("RoundTripBytes", h.RoundTripBytes)
}
