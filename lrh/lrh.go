// Package lrh is the InfiniBand Local Route Header (8 bytes), the first header
// of every native IB packet (RoCE has none): a zero-copy view over the
// caller's bytes, with getters and setters for every field including the
// reserved bits, and a Fields struct for decoding and encoding.
//
// Layout (ib-facts.md §1.2):
//
//	byte 0      VL(7-4) LVer(3-0)                VL ICRC-masked
//	byte 1      SL(7-4) Resv2(3-2) LNH(1-0)
//	bytes 2-3   DLID
//	bytes 4-5   Resv5(15-11) PktLen(10-0)
//	bytes 6-7   SLID
package lrh

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
)

// Len is the size of an LRH.
const Len = 8

const name = "lrh"

// Link Next Header values (LNH): what follows the LRH.
const (
	LNHRaw       = 0 // raw packet
	LNHIP        = 1 // IP (non-IBA IPv6)
	LNHIBALocal  = 2 // IBA local: BTH follows
	LNHIBAGlobal = 3 // IBA global: GRH follows
)

// LRH is a view over the first Len bytes of a Local Route Header.
type LRH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (LRH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return LRH(b[:Len]), nil
}

// Validate checks the fields a receiver must reject: LVer must be 0. The
// header stays readable whatever it returns.
func (h LRH) Validate() error {
	if v := h.LVer(); v != 0 {
		return rocekit.Invalid(name, "LVer", "%d, want 0", v)
	}
	return nil
}

// PacketBytes returns the packet length PktLen announces, in bytes: from the
// first LRH byte through the ICRC inclusive, VCRC excluded.
func (h LRH) PacketBytes() int { return int(h.PktLen()) * 4 }

// Getters.

func (h LRH) VL() uint8      { return h[0] >> 4 }
func (h LRH) LVer() uint8    { return h[0] & 0x0F }
func (h LRH) SL() uint8      { return h[1] >> 4 }
func (h LRH) Resv2() uint8   { return (h[1] >> 2) & 0x3 }
func (h LRH) LNH() uint8     { return h[1] & 0x3 }
func (h LRH) DLID() uint16   { return binary.BigEndian.Uint16(h[2:]) }
func (h LRH) Resv5() uint8   { return h[4] >> 3 }
func (h LRH) PktLen() uint16 { return binary.BigEndian.Uint16(h[4:]) & 0x7FF }
func (h LRH) SLID() uint16   { return binary.BigEndian.Uint16(h[6:]) }

// Setters. Values wider than their field are masked to it.

func (h LRH) SetVL(v uint8)      { h[0] = h[0]&0x0F | v<<4 }
func (h LRH) SetLVer(v uint8)    { h[0] = h[0]&0xF0 | v&0x0F }
func (h LRH) SetSL(v uint8)      { h[1] = h[1]&0x0F | v<<4 }
func (h LRH) SetResv2(v uint8)   { h[1] = h[1]&^0x0C | (v&0x3)<<2 }
func (h LRH) SetLNH(v uint8)     { h[1] = h[1]&^0x03 | v&0x3 }
func (h LRH) SetDLID(v uint16)   { binary.BigEndian.PutUint16(h[2:], v) }
func (h LRH) SetResv5(v uint8)   { h[4] = h[4]&0x07 | v<<3 }
func (h LRH) SetPktLen(v uint16) { h[4], h[5] = h[4]&0xF8|uint8(v>>8)&0x07, uint8(v) }
func (h LRH) SetSLID(v uint16)   { binary.BigEndian.PutUint16(h[6:], v) }

// Fields holds every LRH field as a plain value.
type Fields struct {
	VL     uint8
	LVer   uint8
	SL     uint8
	Resv2  uint8
	LNH    uint8
	DLID   uint16
	Resv5  uint8
	PktLen uint16 // 4-byte words, LRH through ICRC
	SLID   uint16
}

// Fields decodes the view.
func (h LRH) Fields() Fields {
	return Fields{
		VL: h.VL(), LVer: h.LVer(), SL: h.SL(), Resv2: h.Resv2(), LNH: h.LNH(),
		DLID: h.DLID(), Resv5: h.Resv5(), PktLen: h.PktLen(), SLID: h.SLID(),
	}
}

// Check reports the first field whose value does not fit its width.
func (f *Fields) Check() error {
	switch {
	case f.VL > 0xF:
		return rocekit.Invalid(name, "VL", "%d does not fit 4 bits", f.VL)
	case f.LVer > 0xF:
		return rocekit.Invalid(name, "LVer", "%d does not fit 4 bits", f.LVer)
	case f.SL > 0xF:
		return rocekit.Invalid(name, "SL", "%d does not fit 4 bits", f.SL)
	case f.Resv2 > 3:
		return rocekit.Invalid(name, "Resv2", "%d does not fit 2 bits", f.Resv2)
	case f.LNH > 3:
		return rocekit.Invalid(name, "LNH", "%d does not fit 2 bits", f.LNH)
	case f.Resv5 > 0x1F:
		return rocekit.Invalid(name, "Resv5", "%d does not fit 5 bits", f.Resv5)
	case f.PktLen > 0x7FF:
		return rocekit.Invalid(name, "PktLen", "%d does not fit 11 bits", f.PktLen)
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
	LRH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view. Values wider than their field
// are masked; use Fields.Encode to have them rejected instead.
func (h LRH) SetFields(f *Fields) {
	h[0] = f.VL<<4 | f.LVer&0xF
	h[1] = f.SL<<4 | (f.Resv2&3)<<2 | f.LNH&3
	binary.BigEndian.PutUint16(h[2:], f.DLID)
	binary.BigEndian.PutUint16(h[4:], uint16(f.Resv5&0x1F)<<11|f.PktLen&0x7FF)
	binary.BigEndian.PutUint16(h[6:], f.SLID)
}

func (f Fields) String() string {
	return fmt.Sprintf("LRH vl=%d lver=%d sl=%d resv2=%d lnh=%d dlid=0x%04x resv5=0x%02x pktlen=%d slid=0x%04x",
		f.VL, f.LVer, f.SL, f.Resv2, f.LNH, f.DLID, f.Resv5, f.PktLen, f.SLID)
}

func (h LRH) String() string { return h.Fields().String() }
