// Package immdt is the InfiniBand Immediate Data Extended Transport Header
// (4 bytes), carried by the "with Immediate" SENDs and RDMA WRITEs: a
// zero-copy view over the caller's bytes, with a getter and a setter for its
// one field, and a Fields struct for decoding and encoding.
//
// The value is opaque to the transport and reaches the receive completion
// unchanged. Imm reads it big-endian, as on the wire; a verbs consumer that
// keeps the network-order word (as rxe does) must convert it.
//
// Layout (ib-facts.md §1.5):
//
//	bytes 0-3   Immediate Data
package immdt

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
)

// Len is the size of an ImmDt.
const Len = 4

const name = "immdt"

// ImmDt is a view over the first Len bytes of an Immediate Data Extended
// Transport Header.
type ImmDt []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (ImmDt, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return ImmDt(b[:Len]), nil
}

// Getters.

func (h ImmDt) Imm() uint32 { return binary.BigEndian.Uint32(h[0:]) }

// Setters.

func (h ImmDt) SetImm(v uint32) { binary.BigEndian.PutUint32(h[0:], v) }

// Fields holds every ImmDt field as a plain value.
type Fields struct {
	Imm uint32 // Immediate Data, big-endian on the wire
}

// Fields decodes the view.
func (h ImmDt) Fields() Fields {
	return Fields{Imm: h.Imm()}
}

// Encode writes the header into b[:Len]. It fails if b is short; nothing is
// written then. The field fills its Go type, so there is no width check.
func (f *Fields) Encode(b []byte) error {
	if len(b) < Len {
		return rocekit.Truncated(name, Len, len(b))
	}
	ImmDt(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view.
func (h ImmDt) SetFields(f *Fields) {
	binary.BigEndian.PutUint32(h[0:], f.Imm)
}

func (f Fields) String() string {
	return fmt.Sprintf("ImmDt imm=0x%08x", f.Imm)
}

func (h ImmDt) String() string { return h.Fields().String() }
