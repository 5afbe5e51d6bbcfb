// Package aeth is the InfiniBand ACK Extended Transport Header (4 bytes),
// carried by RC/RD acknowledges and by the first and last (or only) READ
// response packets: a zero-copy view over the caller's bytes, with getters and
// setters for every field, a Fields struct for decoding and encoding, and the
// decoding of the syndrome byte (ACK credits, RNR NAK timer, NAK code).
//
// Layout (ib-facts.md §1.5, §5.6):
//
//	byte 0      Syndrome: Resv(7) Kind(6-5) Value(4-0)
//	bytes 1-3   MSN (24)
package aeth

import (
	"fmt"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/internal/be"
)

// Len is the size of an AETH.
const Len = 4

const name = "aeth"

// AETH is a view over the first Len bytes of an ACK Extended Transport Header.
type AETH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (AETH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return AETH(b[:Len]), nil
}

// Validate checks the syndrome a receiver must reject: reserved bit 7 set,
// the reserved kind (0x40-0x5F), or a reserved NAK code (0x65-0x7F). The
// header stays readable whatever it returns.
func (h AETH) Validate() error {
	s := h.Syndrome()
	switch {
	case s.Reserved():
		return rocekit.Invalid(name, "Syndrome", "0x%02x: reserved bit 7 set", uint8(s))
	case s.Kind() == Reserved:
		return rocekit.Invalid(name, "Syndrome", "0x%02x: reserved syndrome type 10", uint8(s))
	case s.Kind() == NAK && !s.NAKCode().Valid():
		return rocekit.Invalid(name, "Syndrome", "0x%02x: reserved NAK code %d", uint8(s), s.Value())
	}
	return nil
}

// Getters.

func (h AETH) Syndrome() Syndrome { return Syndrome(h[0]) }
func (h AETH) MSN() uint32        { return be.Uint24(h[1:]) }

// Setters. Values wider than their field are masked to it.

func (h AETH) SetSyndrome(s Syndrome) { h[0] = uint8(s) }
func (h AETH) SetMSN(v uint32)        { be.PutUint24(h[1:], v) }

// Fields holds every AETH field as a plain value.
type Fields struct {
	Syndrome Syndrome
	MSN      uint32
}

// Fields decodes the view.
func (h AETH) Fields() Fields {
	return Fields{Syndrome: h.Syndrome(), MSN: h.MSN()}
}

// Check reports the first field whose value does not fit its width.
func (f *Fields) Check() error {
	if f.MSN > 0xFFFFFF {
		return rocekit.Invalid(name, "MSN", "0x%X does not fit 24 bits", f.MSN)
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
	AETH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view. Values wider than their field
// are masked; use Fields.Encode to have them rejected instead.
func (h AETH) SetFields(f *Fields) {
	h[0] = uint8(f.Syndrome)
	be.PutUint24(h[1:], f.MSN)
}

func (f Fields) String() string {
	return fmt.Sprintf("AETH syndrome=0x%02x (%s) msn=%d", uint8(f.Syndrome), f.Syndrome, f.MSN)
}

func (h AETH) String() string { return h.Fields().String() }
