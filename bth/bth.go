// Package bth is the InfiniBand Base Transport Header (12 bytes), present in
// every IB transport packet: a zero-copy view over the caller's bytes, with
// getters and setters for every field including the reserved bits, and a
// Fields struct for decoding and encoding.
//
// Layout (ib-facts.md §1.4):
//
//	byte 0      OpCode
//	byte 1      SE(7) M(6) PadCnt(5-4) TVer(3-0)
//	bytes 2-3   P_Key
//	byte 4      FECN(7) BECN(6) Resv6(5-0)      ICRC-masked
//	bytes 5-7   DestQP (24)
//	byte 8      AckReq(7) Resv7(6-0)
//	bytes 9-11  PSN (24)
package bth

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/internal/be"
	"github.com/rocekit/rocekit/opcode"
)

// Len is the size of a BTH.
const Len = 12

const name = "bth"

// BTH is a view over the first Len bytes of a Base Transport Header.
type BTH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (BTH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return BTH(b[:Len]), nil
}

// Validate checks the fields a receiver must reject: TVer must be 0, and the
// opcode must be defined. The header stays readable whatever it returns.
func (h BTH) Validate() error {
	if v := h.TVer(); v != 0 {
		return rocekit.Invalid(name, "TVer", "%d, want 0", v)
	}
	if op := h.Opcode(); !op.Valid() {
		return &rocekit.HeaderError{Header: name, Field: "OpCode", Err: rocekit.ErrUnknownOpcode, Detail: fmt.Sprintf("0x%02X (%s)", uint8(op), op)}
	}
	return nil
}

// Getters.

func (h BTH) Opcode() opcode.Opcode { return opcode.Opcode(h[0]) }
func (h BTH) SE() bool              { return h[1]&0x80 != 0 }
func (h BTH) MigReq() bool          { return h[1]&0x40 != 0 }
func (h BTH) PadCnt() uint8         { return (h[1] >> 4) & 0x3 }
func (h BTH) TVer() uint8           { return h[1] & 0x0F }
func (h BTH) PKey() uint16          { return binary.BigEndian.Uint16(h[2:]) }
func (h BTH) FECN() bool            { return h[4]&0x80 != 0 }
func (h BTH) BECN() bool            { return h[4]&0x40 != 0 }
func (h BTH) Resv6() uint8          { return h[4] & 0x3F }
func (h BTH) DestQP() uint32        { return be.Uint24(h[5:]) }
func (h BTH) AckReq() bool          { return h[8]&0x80 != 0 }
func (h BTH) Resv7() uint8          { return h[8] & 0x7F }
func (h BTH) PSN() uint32           { return be.Uint24(h[9:]) }

// Setters. Values wider than their field are masked to it.

func (h BTH) SetOpcode(o opcode.Opcode) { h[0] = uint8(o) }
func (h BTH) SetSE(v bool)              { be.SetFlag(&h[1], 0x80, v) }
func (h BTH) SetMigReq(v bool)          { be.SetFlag(&h[1], 0x40, v) }
func (h BTH) SetPadCnt(v uint8)         { h[1] = h[1]&^0x30 | (v&0x3)<<4 }
func (h BTH) SetTVer(v uint8)           { h[1] = h[1]&^0x0F | v&0x0F }
func (h BTH) SetPKey(v uint16)          { binary.BigEndian.PutUint16(h[2:], v) }
func (h BTH) SetFECN(v bool)            { be.SetFlag(&h[4], 0x80, v) }
func (h BTH) SetBECN(v bool)            { be.SetFlag(&h[4], 0x40, v) }
func (h BTH) SetResv6(v uint8)          { h[4] = h[4]&^0x3F | v&0x3F }
func (h BTH) SetDestQP(v uint32)        { be.PutUint24(h[5:], v) }
func (h BTH) SetAckReq(v bool)          { be.SetFlag(&h[8], 0x80, v) }
func (h BTH) SetResv7(v uint8)          { h[8] = h[8]&0x80 | v&0x7F }
func (h BTH) SetPSN(v uint32)           { be.PutUint24(h[9:], v) }

// Fields holds every BTH field as a plain value.
type Fields struct {
	Opcode opcode.Opcode
	SE     bool
	MigReq bool // M
	PadCnt uint8
	TVer   uint8
	PKey   uint16
	FECN   bool
	BECN   bool
	Resv6  uint8
	DestQP uint32
	AckReq bool // A
	Resv7  uint8
	PSN    uint32
}

// Fields decodes the view.
func (h BTH) Fields() Fields {
	return Fields{
		Opcode: h.Opcode(), SE: h.SE(), MigReq: h.MigReq(), PadCnt: h.PadCnt(), TVer: h.TVer(),
		PKey: h.PKey(), FECN: h.FECN(), BECN: h.BECN(), Resv6: h.Resv6(), DestQP: h.DestQP(),
		AckReq: h.AckReq(), Resv7: h.Resv7(), PSN: h.PSN(),
	}
}

// Check reports the first field whose value does not fit its width.
func (f *Fields) Check() error {
	switch {
	case f.PadCnt > 3:
		return rocekit.Invalid(name, "PadCnt", "%d does not fit 2 bits", f.PadCnt)
	case f.TVer > 0xF:
		return rocekit.Invalid(name, "TVer", "%d does not fit 4 bits", f.TVer)
	case f.Resv6 > 0x3F:
		return rocekit.Invalid(name, "Resv6", "%d does not fit 6 bits", f.Resv6)
	case f.DestQP > 0xFFFFFF:
		return rocekit.Invalid(name, "DestQP", "0x%X does not fit 24 bits", f.DestQP)
	case f.Resv7 > 0x7F:
		return rocekit.Invalid(name, "Resv7", "%d does not fit 7 bits", f.Resv7)
	case f.PSN > 0xFFFFFF:
		return rocekit.Invalid(name, "PSN", "0x%X does not fit 24 bits", f.PSN)
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
	BTH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view. Values wider than their field
// are masked; use Fields.Encode to have them rejected instead.
func (h BTH) SetFields(f *Fields) {
	h[0] = uint8(f.Opcode)
	h[1] = be.Bit(f.SE)<<7 | be.Bit(f.MigReq)<<6 | (f.PadCnt&3)<<4 | f.TVer&0xF
	binary.BigEndian.PutUint16(h[2:], f.PKey)
	h[4] = be.Bit(f.FECN)<<7 | be.Bit(f.BECN)<<6 | f.Resv6&0x3F
	be.PutUint24(h[5:], f.DestQP)
	h[8] = be.Bit(f.AckReq)<<7 | f.Resv7&0x7F
	be.PutUint24(h[9:], f.PSN)
}

func (f Fields) String() string {
	return fmt.Sprintf("BTH opcode=%s(0x%02x) se=%d m=%d padcnt=%d tver=%d p_key=0x%04x fecn=%d becn=%d resv6=0x%02x destqp=0x%06x a=%d resv7=0x%02x psn=%d",
		f.Opcode, uint8(f.Opcode), be.Bit(f.SE), be.Bit(f.MigReq), f.PadCnt, f.TVer, f.PKey, be.Bit(f.FECN), be.Bit(f.BECN), f.Resv6, f.DestQP, be.Bit(f.AckReq), f.Resv7, f.PSN)
}

func (h BTH) String() string { return h.Fields().String() }
