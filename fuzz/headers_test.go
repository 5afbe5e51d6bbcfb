package fuzz

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/atomicacketh"
	"github.com/rocekit/rocekit/atomiceth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/cnp"
	"github.com/rocekit/rocekit/deth"
	"github.com/rocekit/rocekit/feth"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/ieth"
	"github.com/rocekit/rocekit/immdt"
	"github.com/rocekit/rocekit/lrh"
	"github.com/rocekit/rocekit/rdeth"
	"github.com/rocekit/rocekit/reth"
	"github.com/rocekit/rocekit/xrceth"
)

// One fuzz target per header constructor. Each checks, for any input b:
//
//   - New never panics; it fails exactly when b is shorter than the header,
//     with a rocekit.ErrTruncated error;
//   - otherwise the view is b[:Len] itself (no copy), and
//     Fields -> Fields.Encode reproduces b[:Len] bit for bit, as does
//     SetFields over a buffer full of other bytes; decoding what was encoded
//     gives the same Fields;
//   - Fields.Encode into a buffer one byte short fails and writes nothing;
//   - Validate and String, where the header has them, do not panic.

// codecHeader runs the checks above for one header type: V is the view, F
// its Fields.
func codecHeader[V ~[]byte, F comparable](t *testing.T, b []byte, n int,
	newView func([]byte) (V, error), fields func(V) F, encode func(*F, []byte) error, set func(V, *F)) {
	t.Helper()
	v, err := newView(b)
	if len(b) < n {
		if err == nil {
			t.Fatalf("New accepted %d bytes, header needs %d", len(b), n)
		}
		if !errors.Is(err, rocekit.ErrTruncated) {
			t.Fatalf("New of %d bytes: %v, want ErrTruncated", len(b), err)
		}
		return
	}
	if err != nil {
		t.Fatalf("New of %d bytes (needs %d): %v", len(b), n, err)
	}
	if len(v) != n || &v[0] != &b[0] {
		t.Fatalf("view is %d bytes, not b[:%d]", len(v), n)
	}
	f := fields(v)

	out := make([]byte, n)
	if err := encode(&f, out); err != nil {
		t.Fatalf("Encode of decoded fields %+v: %v", f, err)
	}
	if !bytes.Equal(out, b[:n]) {
		t.Fatalf("Encode(Fields(b)) = %x, want %x", out, b[:n])
	}
	if g := fields(V(out)); g != f {
		t.Fatalf("Fields(Encode(f)) = %+v, want %+v", g, f)
	}

	other := bytes.Repeat([]byte{0xA5}, n)
	set(V(other), &f)
	if !bytes.Equal(other, b[:n]) {
		t.Fatalf("SetFields(Fields(b)) = %x, want %x", other, b[:n])
	}

	short := bytes.Repeat([]byte{0x5A}, n-1)
	if err := encode(&f, short); err == nil {
		t.Fatalf("Encode into %d bytes succeeded, header needs %d", n-1, n)
	}
	if !bytes.Equal(short, bytes.Repeat([]byte{0x5A}, n-1)) {
		t.Fatalf("failed Encode wrote into the buffer")
	}

	if x, ok := any(v).(interface{ Validate() error }); ok {
		_ = x.Validate()
	}
	_ = fmt.Sprint(v)
	_ = fmt.Sprint(f)
}

// codecHeaderSeeds adds the header seeds: byte strings starting at every
// header of every seed frame, plus the empty input.
func codecHeaderSeeds(f *testing.F) {
	f.Add([]byte{})
	for _, b := range codecSeeds().headers {
		f.Add(b)
	}
}

func FuzzBTH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, bth.Len, bth.New, bth.BTH.Fields, (*bth.Fields).Encode, bth.BTH.SetFields)
	})
}

func FuzzRDETH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, rdeth.Len, rdeth.New, rdeth.RDETH.Fields, (*rdeth.Fields).Encode, rdeth.RDETH.SetFields)
	})
}

func FuzzDETH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, deth.Len, deth.New, deth.DETH.Fields, (*deth.Fields).Encode, deth.DETH.SetFields)
	})
}

func FuzzXRCETH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, xrceth.Len, xrceth.New, xrceth.XRCETH.Fields, (*xrceth.Fields).Encode, xrceth.XRCETH.SetFields)
	})
}

func FuzzRETH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, reth.Len, reth.New, reth.RETH.Fields, (*reth.Fields).Encode, reth.RETH.SetFields)
	})
}

func FuzzAtomicETH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, atomiceth.Len, atomiceth.New, atomiceth.AtomicETH.Fields, (*atomiceth.Fields).Encode, atomiceth.AtomicETH.SetFields)
	})
}

func FuzzAETH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, aeth.Len, aeth.New, aeth.AETH.Fields, (*aeth.Fields).Encode, aeth.AETH.SetFields)
		if h, err := aeth.New(b); err == nil {
			// The syndrome decoders must not panic on any byte.
			_ = fmt.Sprint(h.Syndrome())
		}
	})
}

func FuzzAtomicAckETH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, atomicacketh.Len, atomicacketh.New, atomicacketh.AtomicAckETH.Fields, (*atomicacketh.Fields).Encode, atomicacketh.AtomicAckETH.SetFields)
	})
}

func FuzzImmDt(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, immdt.Len, immdt.New, immdt.ImmDt.Fields, (*immdt.Fields).Encode, immdt.ImmDt.SetFields)
	})
}

func FuzzIETH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, ieth.Len, ieth.New, ieth.IETH.Fields, (*ieth.Fields).Encode, ieth.IETH.SetFields)
	})
}

func FuzzFETH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, feth.Len, feth.New, feth.FETH.Fields, (*feth.Fields).Encode, feth.FETH.SetFields)
	})
}

func FuzzCNP(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, cnp.Len, cnp.New, cnp.CNP.Fields, (*cnp.Fields).Encode, cnp.CNP.SetFields)
	})
}

func FuzzLRH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, lrh.Len, lrh.New, lrh.LRH.Fields, (*lrh.Fields).Encode, lrh.LRH.SetFields)
		if h, err := lrh.New(b); err == nil {
			_ = h.PacketBytes()
		}
	})
}

func FuzzGRH(f *testing.F) {
	codecHeaderSeeds(f)
	f.Fuzz(func(t *testing.T, b []byte) {
		codecHeader(t, b, grh.Len, grh.New, grh.GRH.Fields, (*grh.Fields).Encode, grh.GRH.SetFields)
		if h, err := grh.New(b); err == nil {
			_, _ = h.SGIDAddr(), h.DGIDAddr()
		}
	})
}
