// Package rdeth is the InfiniBand Reliable Datagram Extended Transport Header
// (4 bytes), present in every RD packet right after the BTH: a zero-copy view
// over the caller's bytes, with getters and setters for every field including
// the reserved byte, and a Fields struct for decoding and encoding.
//
// Layout (ib-facts.md §1.5):
//
//	byte 0      Resv8
//	bytes 1-3   EE-Context (24)
package rdeth

import (
	"fmt"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/internal/be"
)

// Len is the size of an RDETH.
const Len = 4

const name = "rdeth"

// RDETH is a view over the first Len bytes of a Reliable Datagram Extended
// Transport Header.
type RDETH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (RDETH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return RDETH(b[:Len]), nil
}

// Getters.

func (h RDETH) Resv8() uint8      { return h[0] }
func (h RDETH) EEContext() uint32 { return be.Uint24(h[1:]) }

// Setters. Values wider than their field are masked to it.

func (h RDETH) SetResv8(v uint8)      { h[0] = v }
func (h RDETH) SetEEContext(v uint32) { be.PutUint24(h[1:], v) }

// Fields holds every RDETH field as a plain value.
type Fields struct {
	Resv8     uint8
	EEContext uint32 // EE-Context
}

// Fields decodes the view.
func (h RDETH) Fields() Fields {
	return Fields{Resv8: h.Resv8(), EEContext: h.EEContext()}
}

// Check reports the first field whose value does not fit its width.
func (f *Fields) Check() error {
	if f.EEContext > 0xFFFFFF {
		return rocekit.Invalid(name, "EEContext", "0x%X does not fit 24 bits", f.EEContext)
	}
	return nil
}

// Encode writes the header into b[:Len]. It fails if b is short or a field
// does not fit its width; nothing is written then.
func (f *Fields) Encode(b []byte) error {
	if len(b) < Len {
		return rocekit.Truncated(name, Len, len(b))
	}
	if err := f.Check(); err != nil {
		return err
	}
	RDETH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view. Values wider than their field
// are masked; use Fields.Encode to have them rejected instead.
func (h RDETH) SetFields(f *Fields) {
	h[0] = f.Resv8
	be.PutUint24(h[1:], f.EEContext)
}

func (f Fields) String() string {
	return fmt.Sprintf("RDETH resv8=0x%02x eecnxt=0x%06x", f.Resv8, f.EEContext)
}

func (h RDETH) String() string { return h.Fields().String() }
