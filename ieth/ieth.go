// Package ieth is the InfiniBand Invalidate Extended Transport Header
// (4 bytes), carried by SEND Last/Only with Invalidate: a zero-copy view over
// the caller's bytes, with a getter and a setter for its one field, and a
// Fields struct for decoding and encoding.
//
// Layout (ib-facts.md §1.5):
//
//	bytes 0-3   R_Key to invalidate at the responder
package ieth

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
)

// Len is the size of an IETH.
const Len = 4

const name = "ieth"

// IETH is a view over the first Len bytes of an Invalidate Extended Transport
// Header.
type IETH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (IETH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return IETH(b[:Len]), nil
}

// Getters.

func (h IETH) RKey() uint32 { return binary.BigEndian.Uint32(h[0:]) }

// Setters.

func (h IETH) SetRKey(v uint32) { binary.BigEndian.PutUint32(h[0:], v) }

// Fields holds every IETH field as a plain value.
type Fields struct {
	RKey uint32 // R_Key
}

// Fields decodes the view.
func (h IETH) Fields() Fields {
	return Fields{RKey: h.RKey()}
}

// Encode writes the header into b[:Len]. It fails if b is short; nothing is
// written then. The field fills its Go type, so there is no width check.
func (f *Fields) Encode(b []byte) error {
	if len(b) < Len {
		return rocekit.Truncated(name, Len, len(b))
	}
	IETH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view.
func (h IETH) SetFields(f *Fields) {
	binary.BigEndian.PutUint32(h[0:], f.RKey)
}

func (f Fields) String() string {
	return fmt.Sprintf("IETH r_key=0x%08x", f.RKey)
}

func (h IETH) String() string { return h.Fields().String() }
