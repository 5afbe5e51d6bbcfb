// Package atomicacketh is the InfiniBand Atomic Acknowledge Extended Transport
// Header (8 bytes), carried by the ATOMIC Acknowledge after the AETH: a
// zero-copy view over the caller's bytes, with a getter and a setter for its
// one field, and a Fields struct for decoding and encoding.
//
// Layout (ib-facts.md §1.5):
//
//	bytes 0-7   Original Remote Data (the value before the atomic operation)
package atomicacketh

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
)

// Len is the size of an AtomicAckETH.
const Len = 8

const name = "atomicacketh"

// AtomicAckETH is a view over the first Len bytes of an Atomic Acknowledge
// Extended Transport Header.
type AtomicAckETH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (AtomicAckETH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return AtomicAckETH(b[:Len]), nil
}

// Getters.

func (h AtomicAckETH) OrigRemDt() uint64 { return binary.BigEndian.Uint64(h[0:]) }

// Setters.

func (h AtomicAckETH) SetOrigRemDt(v uint64) { binary.BigEndian.PutUint64(h[0:], v) }

// Fields holds every AtomicAckETH field as a plain value.
type Fields struct {
	OrigRemDt uint64 // Original Remote Data
}

// Fields decodes the view.
func (h AtomicAckETH) Fields() Fields {
	return Fields{OrigRemDt: h.OrigRemDt()}
}

// Encode writes the header into b[:Len]. It fails if b is short; nothing is
// written then. The field fills its Go type, so there is no width check.
func (f *Fields) Encode(b []byte) error {
	if len(b) < Len {
		return rocekit.Truncated(name, Len, len(b))
	}
	AtomicAckETH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view.
func (h AtomicAckETH) SetFields(f *Fields) {
	binary.BigEndian.PutUint64(h[0:], f.OrigRemDt)
}

func (f Fields) String() string {
	return fmt.Sprintf("AtomicAckETH origremdt=0x%016x", f.OrigRemDt)
}

func (h AtomicAckETH) String() string { return h.Fields().String() }
