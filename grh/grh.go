// Package grh is the InfiniBand Global Route Header (40 bytes, the shape of an
// IPv6 header), present in native IB global packets (LNH=3) and in RoCEv1: a
// zero-copy view over the caller's bytes, with getters and setters for every
// field, and a Fields struct for decoding and encoding.
//
// Layout (ib-facts.md §1.3):
//
//	byte 0      IPVer(7-4) TClass(3-0: high nibble)
//	byte 1      TClass(7-4: low nibble) FlowLabel(3-0: bits 19-16)
//	bytes 2-3   FlowLabel (bits 15-0)               TClass, FlowLabel ICRC-masked
//	bytes 4-5   PayLen
//	byte 6      NxtHdr
//	byte 7      HopLmt                              ICRC-masked
//	bytes 8-23  SGID
//	bytes 24-39 DGID
package grh

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/rocekit/rocekit"
)

// Len is the size of a GRH.
const Len = 40

const name = "grh"

// IPVer6 is the only IPVer a GRH may carry.
const IPVer6 = 6

// NxtHdrIBA is the NxtHdr value announcing an IBA transport header (BTH).
const NxtHdrIBA = 0x1B

// GRH is a view over the first Len bytes of a Global Route Header.
type GRH []byte

// New returns a view over b[:Len], or an error if b is shorter than Len.
func New(b []byte) (GRH, error) {
	if len(b) < Len {
		return nil, rocekit.Truncated(name, Len, len(b))
	}
	return GRH(b[:Len]), nil
}

// Validate checks the fields a receiver must reject: IPVer must be 6 and
// NxtHdr must be NxtHdrIBA. The header stays readable whatever it returns.
func (h GRH) Validate() error {
	if v := h.IPVer(); v != IPVer6 {
		return rocekit.Invalid(name, "IPVer", "%d, want 6", v)
	}
	if v := h.NxtHdr(); v != NxtHdrIBA {
		return rocekit.Invalid(name, "NxtHdr", "0x%02x, want 0x1b", v)
	}
	return nil
}

// Getters. SGID and DGID return sub-slices of the view (no copy).

func (h GRH) IPVer() uint8         { return h[0] >> 4 }
func (h GRH) TClass() uint8        { return h[0]<<4 | h[1]>>4 }
func (h GRH) FlowLabel() uint32    { return binary.BigEndian.Uint32(h[0:]) & 0xFFFFF }
func (h GRH) PayLen() uint16       { return binary.BigEndian.Uint16(h[4:]) }
func (h GRH) NxtHdr() uint8        { return h[6] }
func (h GRH) HopLmt() uint8        { return h[7] }
func (h GRH) SGID() []byte         { return h[8:24:24] }
func (h GRH) DGID() []byte         { return h[24:40:40] }
func (h GRH) SGIDAddr() netip.Addr { return netip.AddrFrom16([16]byte(h[8:24])) }
func (h GRH) DGIDAddr() netip.Addr { return netip.AddrFrom16([16]byte(h[24:40])) }

// Setters. Values wider than their field are masked to it.

func (h GRH) SetIPVer(v uint8)  { h[0] = h[0]&0x0F | v<<4 }
func (h GRH) SetTClass(v uint8) { h[0], h[1] = h[0]&0xF0|v>>4, h[1]&0x0F|v<<4 }
func (h GRH) SetFlowLabel(v uint32) {
	h[1], h[2], h[3] = h[1]&0xF0|uint8(v>>16)&0x0F, uint8(v>>8), uint8(v)
}
func (h GRH) SetPayLen(v uint16) { binary.BigEndian.PutUint16(h[4:], v) }
func (h GRH) SetNxtHdr(v uint8)  { h[6] = v }
func (h GRH) SetHopLmt(v uint8)  { h[7] = v }
func (h GRH) SetSGID(v [16]byte) { copy(h[8:24], v[:]) }
func (h GRH) SetDGID(v [16]byte) { copy(h[24:40], v[:]) }

// Fields holds every GRH field as a plain value.
type Fields struct {
	IPVer     uint8
	TClass    uint8
	FlowLabel uint32
	PayLen    uint16 // bytes after the GRH through the ICRC
	NxtHdr    uint8
	HopLmt    uint8
	SGID      [16]byte
	DGID      [16]byte
}

// Fields decodes the view.
func (h GRH) Fields() Fields {
	return Fields{
		IPVer: h.IPVer(), TClass: h.TClass(), FlowLabel: h.FlowLabel(), PayLen: h.PayLen(),
		NxtHdr: h.NxtHdr(), HopLmt: h.HopLmt(), SGID: [16]byte(h[8:24]), DGID: [16]byte(h[24:40]),
	}
}

// Check reports the first field whose value does not fit its width.
func (f *Fields) Check() error {
	switch {
	case f.IPVer > 0xF:
		return rocekit.Invalid(name, "IPVer", "%d does not fit 4 bits", f.IPVer)
	case f.FlowLabel > 0xFFFFF:
		return rocekit.Invalid(name, "FlowLabel", "0x%X does not fit 20 bits", f.FlowLabel)
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
	GRH(b).SetFields(f)
	return nil
}

// SetFields writes every field into the view. Values wider than their field
// are masked; use Fields.Encode to have them rejected instead.
func (h GRH) SetFields(f *Fields) {
	binary.BigEndian.PutUint32(h[0:], uint32(f.IPVer&0xF)<<28|uint32(f.TClass)<<20|f.FlowLabel&0xFFFFF)
	binary.BigEndian.PutUint16(h[4:], f.PayLen)
	h[6] = f.NxtHdr
	h[7] = f.HopLmt
	copy(h[8:24], f.SGID[:])
	copy(h[24:40], f.DGID[:])
}

func (f Fields) String() string {
	return fmt.Sprintf("GRH ipver=%d tclass=0x%02x flowlabel=0x%05x paylen=%d nxthdr=0x%02x hoplmt=%d sgid=%s dgid=%s",
		f.IPVer, f.TClass, f.FlowLabel, f.PayLen, f.NxtHdr, f.HopLmt, netip.AddrFrom16(f.SGID), netip.AddrFrom16(f.DGID))
}

func (h GRH) String() string { return h.Fields().String() }
