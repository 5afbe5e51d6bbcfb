// Package cnp is the body of a RoCEv2 Congestion Notification Packet (BTH
// OpCode 0x81): 16 reserved bytes between the BTH and the ICRC. It is a
// zero-copy view over the caller's bytes, with a getter and a setter for the
// reserved bytes, and a Fields struct for decoding and encoding.
//
// The bytes must be zero on send and are covered by the ICRC. A receiver
// reports non-zero bytes (Validate) and never clears them.
//
// Layout (ib-facts.md §1.6; IBA Annex A17):
//
//	bytes 0-15  Reserved
package cnp

import (
	"fmt"

	"github.com/rocekit/rocekit"
)

// Len is the size of a CNP body.
const Len = 16

const name = "cnp"

// CNP is a view over the first Len bytes of a RoCEv2 CNP body.
type CNP []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (CNP, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return CNP(b[:Len]), nil
}

// Validate checks the rule a receiver must report: every reserved byte is
// zero. It changes nothing; the body stays readable whatever it returns.
func (h CNP) Validate() error {
	for i, v := range h[:Len] {
		if v != 0 {
			return rocekit.Invalid(name, "Reserved", "byte %d is 0x%02x, want 0", i, v)
		}
	}
	return nil
}

// Getters.

// Reserved returns the reserved bytes: the view's own slice, not a copy.
func (h CNP) Reserved() []byte { return h[:Len:Len] }

// Setters.

func (h CNP) SetReserved(v [Len]byte) { copy(h[:Len], v[:]) }

// Fields holds every CNP field as a plain value.
type Fields struct {
	Reserved [Len]byte // zero on send
}

// Fields decodes the view.
func (h CNP) Fields() Fields {
	return Fields{Reserved: [Len]byte(h[:Len])}
}

// Encode writes the body into b[:Len]. It fails if b is short; nothing is
// written then. The reserved bytes are written as given, zero or not.
func (f *Fields) Encode(b []byte) error {
	if len(b) < Len {
		return rocekit.Truncated(name, Len, len(b))
	}
	CNP(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view.
func (h CNP) SetFields(f *Fields) {
	copy(h[:Len], f.Reserved[:])
}

func (f Fields) String() string {
	return fmt.Sprintf("CNP reserved=%x", f.Reserved)
}

func (h CNP) String() string { return h.Fields().String() }
