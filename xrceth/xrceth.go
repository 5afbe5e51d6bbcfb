// Package xrceth is the InfiniBand XRC Extended Transport Header (4 bytes),
// present in every XRC request right after the BTH: a zero-copy view over the
// caller's bytes, with getters and setters for every field including the
// reserved byte, and a Fields struct for decoding and encoding.
//
// Layout (ib-facts.md §1.5):
//
//	byte 0      Resv8
//	bytes 1-3   XRC SRQ number (24)
package xrceth

import (
	"fmt"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/internal/be"
)

// Len is the size of an XRCETH.
const Len = 4

const name = "xrceth"

// XRCETH is a view over the first Len bytes of an XRC Extended Transport
// Header.
type XRCETH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (XRCETH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return XRCETH(b[:Len]), nil
}

// Getters.

func (h XRCETH) Resv8() uint8   { return h[0] }
func (h XRCETH) XRCSRQ() uint32 { return be.Uint24(h[1:]) }

// Setters. Values wider than their field are masked to it.

func (h XRCETH) SetResv8(v uint8)   { h[0] = v }
func (h XRCETH) SetXRCSRQ(v uint32) { be.PutUint24(h[1:], v) }

// Fields holds every XRCETH field as a plain value.
type Fields struct {
	Resv8  uint8
	XRCSRQ uint32 // XRC SRQ number
}

// Fields decodes the view.
func (h XRCETH) Fields() Fields {
	return Fields{Resv8: h.Resv8(), XRCSRQ: h.XRCSRQ()}
}

// Check reports the first field whose value does not fit its width.
func (f *Fields) Check() error {
	if f.XRCSRQ > 0xFFFFFF {
		return rocekit.Invalid(name, "XRCSRQ", "0x%X does not fit 24 bits", f.XRCSRQ)
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
	XRCETH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view. Values wider than their field
// are masked; use Fields.Encode to have them rejected instead.
func (h XRCETH) SetFields(f *Fields) {
	h[0] = f.Resv8
	be.PutUint24(h[1:], f.XRCSRQ)
}

func (f Fields) String() string {
	return fmt.Sprintf("XRCETH resv8=0x%02x xrcsrq=0x%06x", f.Resv8, f.XRCSRQ)
}

func (h XRCETH) String() string { return h.Fields().String() }
