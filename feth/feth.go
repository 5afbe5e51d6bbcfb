// Package feth is the InfiniBand FLUSH Extended Transport Header (4 bytes,
// IBA 1.5 Memory Placement Extensions), carried by the FLUSH request before
// its RETH: a zero-copy view over the caller's bytes, with getters and setters
// for every field including the reserved bits, and a Fields struct for
// decoding and encoding.
//
// Layout (ib-facts.md §1.5), as one big-endian 32-bit word:
//
//	bits 31-6   Resv (26)
//	bits 5-4    SEL, selectivity level: 0 range, 1 whole region, 2-3 reserved
//	bits 3-0    PLT, placement type: bit 0 global visibility, bit 1
//	            persistence, bits 3-2 reserved; both defined bits may be set
package feth

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
)

// Len is the size of a FETH.
const Len = 4

// Selectivity levels (SEL).
const (
	// SelRange flushes the memory-region range given by the RETH VA, R_Key
	// and DMA length.
	SelRange uint8 = 0
	// SelRegion flushes the whole memory region named by the RETH R_Key; the
	// RETH VA and DMA length are ignored.
	SelRegion uint8 = 1
)

// Placement type bits (PLT).
const (
	PLTGlobalVisibility uint8 = 1 << 0
	PLTPersistence      uint8 = 1 << 1
)

const name = "feth"

// FETH is a view over the first Len bytes of a FLUSH Extended Transport
// Header.
type FETH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (FETH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return FETH(b[:Len]), nil
}

// Validate checks the field a receiver must reject: SEL 2 and 3 are reserved.
// The header stays readable whatever it returns.
func (h FETH) Validate() error {
	if v := h.SEL(); v > SelRegion {
		return rocekit.Invalid(name, "SEL", "%d is reserved, want 0 (range) or 1 (region)", v)
	}
	return nil
}

// Getters.

func (h FETH) Resv() uint32 { return binary.BigEndian.Uint32(h[0:]) >> 6 }
func (h FETH) SEL() uint8   { return (h[3] >> 4) & 0x3 }
func (h FETH) PLT() uint8   { return h[3] & 0x0F }

// Setters. Values wider than their field are masked to it.

func (h FETH) SetResv(v uint32) { binary.BigEndian.PutUint32(h[0:], v<<6|uint32(h[3]&0x3F)) }
func (h FETH) SetSEL(v uint8)   { h[3] = h[3]&^0x30 | (v&0x3)<<4 }
func (h FETH) SetPLT(v uint8)   { h[3] = h[3]&^0x0F | v&0x0F }

// Fields holds every FETH field as a plain value.
type Fields struct {
	Resv uint32
	SEL  uint8 // selectivity level
	PLT  uint8 // placement type
}

// Fields decodes the view.
func (h FETH) Fields() Fields {
	return Fields{Resv: h.Resv(), SEL: h.SEL(), PLT: h.PLT()}
}

// Check reports the first field whose value does not fit its width.
func (f *Fields) Check() error {
	switch {
	case f.Resv > 0x3FFFFFF:
		return rocekit.Invalid(name, "Resv", "0x%X does not fit 26 bits", f.Resv)
	case f.SEL > 3:
		return rocekit.Invalid(name, "SEL", "%d does not fit 2 bits", f.SEL)
	case f.PLT > 0xF:
		return rocekit.Invalid(name, "PLT", "%d does not fit 4 bits", f.PLT)
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
	FETH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view. Values wider than their field
// are masked; use Fields.Encode to have them rejected instead.
func (h FETH) SetFields(f *Fields) {
	binary.BigEndian.PutUint32(h[0:], f.Resv<<6|uint32(f.SEL&0x3)<<4|uint32(f.PLT&0xF))
}

func (f Fields) String() string {
	return fmt.Sprintf("FETH resv=0x%07x sel=%d plt=0x%x", f.Resv, f.SEL, f.PLT)
}

func (h FETH) String() string { return h.Fields().String() }
