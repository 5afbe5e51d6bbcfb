// Package deth is the InfiniBand Datagram Extended Transport Header (8 bytes),
// present in every UD and RD request: a zero-copy view over the caller's
// bytes, with getters and setters for every field including the reserved
// byte, and a Fields struct for decoding and encoding.
//
// Layout (ib-facts.md §1.5):
//
//	bytes 0-3   Q_Key
//	byte 4      Resv8
//	bytes 5-7   SrcQP (24)
package deth

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/internal/be"
)

// Len is the size of a DETH.
const Len = 8

// GSIQKey is the well-known Q_Key of the General Services Interface (QP1).
const GSIQKey = 0x80010000

const name = "deth"

// DETH is a view over the first Len bytes of a Datagram Extended Transport
// Header.
type DETH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (DETH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return DETH(b[:Len]), nil
}

// Getters.

func (h DETH) QKey() uint32  { return binary.BigEndian.Uint32(h[0:]) }
func (h DETH) Resv8() uint8  { return h[4] }
func (h DETH) SrcQP() uint32 { return be.Uint24(h[5:]) }

// Setters. Values wider than their field are masked to it.

func (h DETH) SetQKey(v uint32)  { binary.BigEndian.PutUint32(h[0:], v) }
func (h DETH) SetResv8(v uint8)  { h[4] = v }
func (h DETH) SetSrcQP(v uint32) { be.PutUint24(h[5:], v) }

// Fields holds every DETH field as a plain value.
type Fields struct {
	QKey  uint32 // Q_Key
	Resv8 uint8
	SrcQP uint32
}

// Fields decodes the view.
func (h DETH) Fields() Fields {
	return Fields{QKey: h.QKey(), Resv8: h.Resv8(), SrcQP: h.SrcQP()}
}

// Check reports the first field whose value does not fit its width.
func (f *Fields) Check() error {
	if f.SrcQP > 0xFFFFFF {
		return rocekit.Invalid(name, "SrcQP", "0x%X does not fit 24 bits", f.SrcQP)
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
	DETH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view. Values wider than their field
// are masked; use Fields.Encode to have them rejected instead.
func (h DETH) SetFields(f *Fields) {
	binary.BigEndian.PutUint32(h[0:], f.QKey)
	h[4] = f.Resv8
	be.PutUint24(h[5:], f.SrcQP)
}

func (f Fields) String() string {
	return fmt.Sprintf("DETH q_key=0x%08x resv8=0x%02x srcqp=0x%06x", f.QKey, f.Resv8, f.SrcQP)
}

func (h DETH) String() string { return h.Fields().String() }
