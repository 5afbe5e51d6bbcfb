// Package reth is the InfiniBand RDMA Extended Transport Header (16 bytes),
// carried by RDMA WRITE First/Only, RDMA READ Request, FLUSH and ATOMIC WRITE:
// a zero-copy view over the caller's bytes, with getters and setters for every
// field, and a Fields struct for decoding and encoding.
//
// Layout (ib-facts.md §1.5):
//
//	bytes 0-7   Virtual Address
//	bytes 8-11  R_Key
//	bytes 12-15 DMA Length
package reth

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
)

// Len is the size of a RETH.
const Len = 16

const name = "reth"

// RETH is a view over the first Len bytes of an RDMA Extended Transport
// Header.
type RETH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (RETH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return RETH(b[:Len]), nil
}

// Getters.

func (h RETH) VA() uint64     { return binary.BigEndian.Uint64(h[0:]) }
func (h RETH) RKey() uint32   { return binary.BigEndian.Uint32(h[8:]) }
func (h RETH) DMALen() uint32 { return binary.BigEndian.Uint32(h[12:]) }

// Setters.

func (h RETH) SetVA(v uint64)     { binary.BigEndian.PutUint64(h[0:], v) }
func (h RETH) SetRKey(v uint32)   { binary.BigEndian.PutUint32(h[8:], v) }
func (h RETH) SetDMALen(v uint32) { binary.BigEndian.PutUint32(h[12:], v) }

// Fields holds every RETH field as a plain value.
type Fields struct {
	VA     uint64 // Virtual Address
	RKey   uint32 // R_Key
	DMALen uint32 // DMA Length
}

// Fields decodes the view.
func (h RETH) Fields() Fields {
	return Fields{VA: h.VA(), RKey: h.RKey(), DMALen: h.DMALen()}
}

// Encode writes the header into b[:Len]. It fails if b is short; nothing is
// written then. Every field fills its Go type, so there is no width check.
func (f *Fields) Encode(b []byte) error {
	if len(b) < Len {
		return rocekit.Truncated(name, Len, len(b))
	}
	RETH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view.
func (h RETH) SetFields(f *Fields) {
	binary.BigEndian.PutUint64(h[0:], f.VA)
	binary.BigEndian.PutUint32(h[8:], f.RKey)
	binary.BigEndian.PutUint32(h[12:], f.DMALen)
}

func (f Fields) String() string {
	return fmt.Sprintf("RETH va=0x%016x r_key=0x%08x dmalen=%d", f.VA, f.RKey, f.DMALen)
}

func (h RETH) String() string { return h.Fields().String() }
