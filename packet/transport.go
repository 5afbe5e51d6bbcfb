// Package packet parses and builds whole InfiniBand transport packets (BTH,
// the extension headers its opcode implies, payload, pad and ICRC) and whole
// frames around them: RoCEv2 over IPv4 or IPv6 (Ethernet, 802.1Q/QinQ, UDP
// 4791), RoCEv1 (Ethertype 0x8915 + GRH) and native InfiniBand (LRH, optional
// GRH, VCRC).
//
// Decoding gives views into the caller's bytes and allocates nothing; a
// Packet or Frame can be reused for every frame of a capture. Building writes
// into the caller's buffer. Which extension headers a packet carries comes
// from the opcode table (package opcode) and nowhere else.
package packet

import (
	"fmt"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/atomicacketh"
	"github.com/rocekit/rocekit/atomiceth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/cnp"
	"github.com/rocekit/rocekit/deth"
	"github.com/rocekit/rocekit/feth"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/ieth"
	"github.com/rocekit/rocekit/immdt"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/rdeth"
	"github.com/rocekit/rocekit/reth"
	"github.com/rocekit/rocekit/xrceth"
)

// Packet is a decoded transport packet: views into the bytes given to
// Decode. A header the opcode does not carry is nil.
type Packet struct {
	BTH          bth.BTH
	RDETH        rdeth.RDETH
	DETH         deth.DETH
	XRCETH       xrceth.XRCETH
	RETH         reth.RETH
	AtomicETH    atomiceth.AtomicETH
	AETH         aeth.AETH
	AtomicAckETH atomicacketh.AtomicAckETH
	ImmDt        immdt.ImmDt
	IETH         ieth.IETH
	FETH         feth.FETH
	CNP          cnp.CNP
	Payload      []byte // pad excluded; of a cut packet, the payload bytes captured
	Pad          []byte // BTH.PadCnt bytes (nil in a cut packet)
	ICRC         []byte // the 4 ICRC bytes as sent (least significant first); nil in a cut packet

	// Cut is how many bytes at the end of the packet the capture did not
	// keep (a snap length; see Frame.DecodeRecord), 0 for a packet captured
	// whole. A cut packet has the BTH and every extension header the
	// capture kept whole; a header it cut is nil, like one the opcode does
	// not carry. Its lengths come from the headers below it (IP, UDP, GRH,
	// LRH), so PayloadLen is the payload's length on the wire; Payload
	// holds the part of it that was captured, Pad and ICRC are nil (the
	// ICRC cannot be checked).
	Cut int

	payLen    int  // a cut packet's payload length on the wire
	cutFramed bool // a cut packet whose opcode and lengths are consistent
}

// PayloadLen returns the payload's length on the wire, pad excluded:
// len(Payload), or for a cut packet what its lengths say.
func (p *Packet) PayloadLen() int {
	if p.Cut != 0 {
		return p.payLen
	}
	return len(p.Payload)
}

// PadLen returns the pad's length on the wire: len(Pad), or for a cut
// packet BTH.PadCnt.
func (p *Packet) PadLen() int {
	if p.Cut != 0 && p.BTH != nil {
		return int(p.BTH.PadCnt())
	}
	return len(p.Pad)
}

// Framed reports whether the packet's extent and layout are known: it
// decoded through its ICRC (ICRC set: the packet may still carry an error
// found after that, a PadCnt too large, a payload its opcode does not
// allow, a TVer other than 0), or a capture cut it and its opcode and
// lengths agree as far as they go. A packet whose opcode is unknown, or
// whose length is too short for its headers, is not framed.
func (p *Packet) Framed() bool { return p.ICRC != nil || p.cutFramed }

// Opcode returns the BTH opcode, or 0 if no BTH was decoded.
func (p *Packet) Opcode() opcode.Opcode {
	if p.BTH == nil {
		return 0
	}
	return p.BTH.Opcode()
}

// Decode parses b, which runs from the first BTH byte through the ICRC (no
// VCRC, no Ethernet trailer). On error every header that could be located
// stays set; an unknown opcode leaves only the BTH. The returned error names
// the header and field: truncation (with bytes needed and present), unknown
// opcode, TVer not 0, a pad count larger than what follows the headers, or a
// payload where the opcode allows none.
func (p *Packet) Decode(b []byte) error {
	*p = Packet{}
	return p.decodeClean(b)
}

// decodeClean is Decode into a Packet that is already zero (a Frame's, after
// its reset): clearing it again cost more than anything else in decoding
// a frame.
func (p *Packet) decodeClean(b []byte) error {
	off, err := p.decodeHeaders(b, false)
	if err != nil {
		return err
	}
	h := p.BTH
	op := h.Opcode()
	info := op.Info()
	rest := len(b) - off
	if rest < icrc.Len {
		return &rocekit.HeaderError{Header: "icrc", Err: rocekit.ErrTruncated, Need: icrc.Len, Have: rest,
			Detail: fmt.Sprintf("%s headers end at offset %d", op, off)}
	}
	p.ICRC = b[len(b)-icrc.Len:]
	body := b[off : len(b)-icrc.Len]
	pad := int(h.PadCnt())
	if pad > len(body) {
		return rocekit.Invalid("bth", "PadCnt", "%d pad bytes, but only %d bytes between the headers and the ICRC", pad, len(body))
	}
	p.Payload = body[:len(body)-pad]
	p.Pad = body[len(body)-pad:]
	if !info.Payload && len(body) > 0 {
		return &rocekit.HeaderError{Header: "payload", Err: rocekit.ErrUnexpected, Have: len(body),
			Detail: fmt.Sprintf("%d bytes after the headers; %s carries no payload", len(body), op)}
	}
	if v := h.TVer(); v != 0 {
		return rocekit.Invalid("bth", "TVer", "%d, want 0", v)
	}
	return nil
}

// decodeHeaders sets the BTH and the extension headers its opcode implies
// and returns where they end. An unknown opcode leaves only the BTH. p must
// be zero. With cut, b is what a capture kept of the packet: the headers it
// holds whole are set, and decoding stops without error at the first one
// it does not.
func (p *Packet) decodeHeaders(b []byte, cut bool) (int, error) {
	h, err := bth.New(b)
	if err != nil {
		return 0, err
	}
	p.BTH = h
	op := h.Opcode()
	info := op.Info()
	if !info.Valid {
		return bth.Len, h.Validate()
	}
	off := bth.Len
	for _, hd := range info.Headers() {
		n := hd.Len()
		if len(b) < off+n {
			if cut {
				return off, nil
			}
			return off, &rocekit.HeaderError{Header: headerNames[hd], Err: rocekit.ErrTruncated, Need: n, Have: len(b) - off,
				Detail: fmt.Sprintf("%s carries %s at offset %d", op, hd, off)}
		}
		v := b[off : off+n : off+n]
		switch hd {
		case opcode.RDETH:
			p.RDETH = rdeth.RDETH(v)
		case opcode.DETH:
			p.DETH = deth.DETH(v)
		case opcode.XRCETH:
			p.XRCETH = xrceth.XRCETH(v)
		case opcode.RETH:
			p.RETH = reth.RETH(v)
		case opcode.AtomicETH:
			p.AtomicETH = atomiceth.AtomicETH(v)
		case opcode.AETH:
			p.AETH = aeth.AETH(v)
		case opcode.AtomicAckETH:
			p.AtomicAckETH = atomicacketh.AtomicAckETH(v)
		case opcode.ImmDt:
			p.ImmDt = immdt.ImmDt(v)
		case opcode.IETH:
			p.IETH = ieth.IETH(v)
		case opcode.FETH:
			p.FETH = feth.FETH(v)
		case opcode.CNPBody:
			p.CNP = cnp.CNP(v)
		}
		off += n
	}
	return off, nil
}

// DecodeTruncated decodes what a capture cut short kept of a transport
// packet (a snap length, a damaged record): the BTH and whichever extension
// headers are complete, with Payload holding the bytes after them and ICRC
// nil. It returns the error for the first header cut short, or nil when all
// headers are present.
func (p *Packet) DecodeTruncated(b []byte) error {
	*p = Packet{}
	off, err := p.decodeHeaders(b, false)
	if err == nil && off <= len(b) {
		p.Payload = b[off:]
	}
	return err
}

// decodeCut decodes a transport packet of n bytes on the wire (BTH through
// ICRC, as the headers below it say) of which a capture kept b, len(b) < n.
// Headers the capture cut are absent, not errors; what n itself makes
// impossible is an error, as in a whole packet: a length too short for the
// BTH, the opcode's headers or the ICRC, an unknown opcode, a PadCnt larger
// than the bytes between headers and ICRC, a payload on an opcode that
// carries none, a TVer other than 0. p must be zero.
func (p *Packet) decodeCut(b []byte, n int) error {
	p.Cut = n - len(b)
	if len(b) < bth.Len {
		if n < bth.Len {
			return rocekit.Truncated("bth", bth.Len, n)
		}
		return nil
	}
	off, err := p.decodeHeaders(b, true)
	if err != nil {
		return err
	}
	h := p.BTH
	op := h.Opcode()
	info := op.Info()
	hdrEnd := bth.Len + op.HeaderLen()
	if n < hdrEnd {
		// Name the first header the length leaves no room for.
		at := bth.Len
		for _, hd := range info.Headers() {
			if n < at+hd.Len() {
				return &rocekit.HeaderError{Header: headerNames[hd], Err: rocekit.ErrTruncated, Need: hd.Len(), Have: n - at,
					Detail: fmt.Sprintf("%s carries %s at offset %d", op, hd, at)}
			}
			at += hd.Len()
		}
	}
	if rest := n - hdrEnd; rest < icrc.Len {
		return &rocekit.HeaderError{Header: "icrc", Err: rocekit.ErrTruncated, Need: icrc.Len, Have: rest,
			Detail: fmt.Sprintf("%s headers end at offset %d", op, hdrEnd)}
	}
	p.cutFramed = true
	body := n - hdrEnd - icrc.Len
	pad := int(h.PadCnt())
	if pad > body {
		return rocekit.Invalid("bth", "PadCnt", "%d pad bytes, but only %d bytes between the headers and the ICRC", pad, body)
	}
	p.payLen = body - pad
	if off == hdrEnd && len(b) > hdrEnd {
		p.Payload = b[hdrEnd:min(len(b), hdrEnd+p.payLen)]
	}
	if !info.Payload && body > 0 {
		return &rocekit.HeaderError{Header: "payload", Err: rocekit.ErrUnexpected, Have: body,
			Detail: fmt.Sprintf("%d bytes after the headers; %s carries no payload", body, op)}
	}
	if v := h.TVer(); v != 0 {
		return rocekit.Invalid("bth", "TVer", "%d, want 0", v)
	}
	return nil
}

var headerNames = map[opcode.Header]string{
	opcode.RDETH: "rdeth", opcode.DETH: "deth", opcode.XRCETH: "xrceth", opcode.RETH: "reth",
	opcode.AtomicETH: "atomiceth", opcode.AETH: "aeth", opcode.AtomicAckETH: "atomicacketh",
	opcode.ImmDt: "immdt", opcode.IETH: "ieth", opcode.FETH: "feth", opcode.CNPBody: "cnp",
}

// Fields is a transport packet as plain values, for building. Only the
// extension headers the BTH opcode carries are encoded; the others are
// ignored. PadCnt is taken from BTH as given: call SetPad for the count the
// payload length needs.
type Fields struct {
	BTH          bth.Fields
	RDETH        rdeth.Fields
	DETH         deth.Fields
	XRCETH       xrceth.Fields
	RETH         reth.Fields
	AtomicETH    atomiceth.Fields
	AETH         aeth.Fields
	AtomicAckETH atomicacketh.Fields
	ImmDt        immdt.Fields
	IETH         ieth.Fields
	FETH         feth.Fields
	CNP          cnp.Fields
	Payload      []byte
	PadBytes     [3]byte // contents of the pad (zero as senders send it)
}

// PadFor returns the pad count for a payload of n bytes: (-n) mod 4.
func PadFor(n int) uint8 { return uint8(-n & 3) }

// SetPad sets BTH.PadCnt to what the payload length needs.
func (f *Fields) SetPad() { f.BTH.PadCnt = PadFor(len(f.Payload)) }

// Len is the encoded size from the BTH through the pad, without the ICRC.
func (f *Fields) Len() int {
	return bth.Len + f.BTH.Opcode.HeaderLen() + len(f.Payload) + int(f.BTH.PadCnt&3)
}

// Encode writes BTH, extension headers, payload and pad into b and returns
// the number of bytes written (Len). The ICRC is not written: it depends on
// the network header, and the frame builder adds it.
func (f *Fields) Encode(b []byte) (int, error) {
	n := f.Len()
	if len(b) < n {
		return 0, rocekit.Truncated("packet", n, len(b))
	}
	if err := f.BTH.Encode(b); err != nil {
		return 0, err
	}
	off := bth.Len
	for _, hd := range f.BTH.Opcode.Headers() {
		v := b[off:]
		var err error
		switch hd {
		case opcode.RDETH:
			err = f.RDETH.Encode(v)
		case opcode.DETH:
			err = f.DETH.Encode(v)
		case opcode.XRCETH:
			err = f.XRCETH.Encode(v)
		case opcode.RETH:
			err = f.RETH.Encode(v)
		case opcode.AtomicETH:
			err = f.AtomicETH.Encode(v)
		case opcode.AETH:
			err = f.AETH.Encode(v)
		case opcode.AtomicAckETH:
			err = f.AtomicAckETH.Encode(v)
		case opcode.ImmDt:
			err = f.ImmDt.Encode(v)
		case opcode.IETH:
			err = f.IETH.Encode(v)
		case opcode.FETH:
			err = f.FETH.Encode(v)
		case opcode.CNPBody:
			err = f.CNP.Encode(v)
		}
		if err != nil {
			return 0, err
		}
		off += hd.Len()
	}
	off += copy(b[off:], f.Payload)
	off += copy(b[off:], f.PadBytes[:f.BTH.PadCnt&3])
	return off, nil
}

// Fields decodes every header present into plain values. Payload refers to
// the decoded bytes; it is not copied.
func (p *Packet) Fields() Fields {
	var f Fields
	if p.BTH == nil {
		return f
	}
	f.BTH = p.BTH.Fields()
	if p.RDETH != nil {
		f.RDETH = p.RDETH.Fields()
	}
	if p.DETH != nil {
		f.DETH = p.DETH.Fields()
	}
	if p.XRCETH != nil {
		f.XRCETH = p.XRCETH.Fields()
	}
	if p.RETH != nil {
		f.RETH = p.RETH.Fields()
	}
	if p.AtomicETH != nil {
		f.AtomicETH = p.AtomicETH.Fields()
	}
	if p.AETH != nil {
		f.AETH = p.AETH.Fields()
	}
	if p.AtomicAckETH != nil {
		f.AtomicAckETH = p.AtomicAckETH.Fields()
	}
	if p.ImmDt != nil {
		f.ImmDt = p.ImmDt.Fields()
	}
	if p.IETH != nil {
		f.IETH = p.IETH.Fields()
	}
	if p.FETH != nil {
		f.FETH = p.FETH.Fields()
	}
	if p.CNP != nil {
		f.CNP = p.CNP.Fields()
	}
	f.Payload = p.Payload
	copy(f.PadBytes[:], p.Pad)
	return f
}
