// Package atomiceth is the InfiniBand Atomic Extended Transport Header
// (28 bytes), carried by the CmpSwap and FetchAdd requests: a zero-copy view
// over the caller's bytes, with getters and setters for every field, and a
// Fields struct for decoding and encoding. The header is not 8-byte aligned
// inside a packet; the view reads it byte-wise, so that does not matter.
//
// Layout (ib-facts.md §1.5):
//
//	bytes 0-7   Virtual Address
//	bytes 8-11  R_Key
//	bytes 12-19 Swap (CmpSwap) or Add (FetchAdd) Data
//	bytes 20-27 Compare Data (CmpSwap; unused by FetchAdd)
package atomiceth

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
)

// Len is the size of an AtomicETH.
const Len = 28

const name = "atomiceth"

// AtomicETH is a view over the first Len bytes of an Atomic Extended
// Transport Header.
type AtomicETH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (AtomicETH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return AtomicETH(b[:Len]), nil
}

// Getters.

func (h AtomicETH) VA() uint64      { return binary.BigEndian.Uint64(h[0:]) }
func (h AtomicETH) RKey() uint32    { return binary.BigEndian.Uint32(h[8:]) }
func (h AtomicETH) SwapAdd() uint64 { return binary.BigEndian.Uint64(h[12:]) }
func (h AtomicETH) Compare() uint64 { return binary.BigEndian.Uint64(h[20:]) }

// Setters.

func (h AtomicETH) SetVA(v uint64)      { binary.BigEndian.PutUint64(h[0:], v) }
func (h AtomicETH) SetRKey(v uint32)    { binary.BigEndian.PutUint32(h[8:], v) }
func (h AtomicETH) SetSwapAdd(v uint64) { binary.BigEndian.PutUint64(h[12:], v) }
func (h AtomicETH) SetCompare(v uint64) { binary.BigEndian.PutUint64(h[20:], v) }

// Fields holds every AtomicETH field as a plain value.
type Fields struct {
	VA      uint64 // Virtual Address
	RKey    uint32 // R_Key
	SwapAdd uint64 // Swap (or Add) Data
	Compare uint64 // Compare Data
}

// Fields decodes the view.
func (h AtomicETH) Fields() Fields {
	return Fields{VA: h.VA(), RKey: h.RKey(), SwapAdd: h.SwapAdd(), Compare: h.Compare()}
}

// Encode writes the header into b[:Len]. It fails if b is short; nothing is
// written then. Every field fills its Go type, so there is no width check.
func (f *Fields) Encode(b []byte) error {
	if len(b) < Len {
		return rocekit.Truncated(name, Len, len(b))
	}
	AtomicETH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view.
func (h AtomicETH) SetFields(f *Fields) {
	binary.BigEndian.PutUint64(h[0:], f.VA)
	binary.BigEndian.PutUint32(h[8:], f.RKey)
	binary.BigEndian.PutUint64(h[12:], f.SwapAdd)
	binary.BigEndian.PutUint64(h[20:], f.Compare)
}

func (f Fields) String() string {
	return fmt.Sprintf("AtomicETH va=0x%016x r_key=0x%08x swapdt=0x%016x cmpdt=0x%016x", f.VA, f.RKey, f.SwapAdd, f.Compare)
}

func (h AtomicETH) String() string { return h.Fields().String() }
