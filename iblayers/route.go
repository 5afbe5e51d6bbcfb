package iblayers

import (
	"errors"
	"fmt"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/lrh"
)

// GRH is the decoded Global Route Header layer (LayerTypeGRH): a view into
// the bytes given to DecodeFromBytes, with every grh.GRH getter and setter.
// Its payload is the PayLen bytes after it (transport packet through ICRC);
// bytes beyond PayLen (Ethernet padding, an FCS) belong to no layer. It is a
// gopacket.NetworkLayer whose flow runs from SGID to DGID (as IPv6
// endpoints).
type GRH struct {
	grh.GRH
	payload []byte
}

var (
	_ gopacket.NetworkLayer      = (*GRH)(nil)
	_ gopacket.DecodingLayer     = (*GRH)(nil)
	_ gopacket.SerializableLayer = (*GRH)(nil)
	_ gopacket.SerializableLayer = (*GRHFields)(nil)
)

// LayerType returns LayerTypeGRH.
func (g *GRH) LayerType() gopacket.LayerType { return LayerTypeGRH }

// LayerContents returns the 40 GRH bytes.
func (g *GRH) LayerContents() []byte { return g.GRH }

// LayerPayload returns the PayLen bytes after the GRH.
func (g *GRH) LayerPayload() []byte { return g.payload }

// CanDecode returns LayerTypeGRH.
func (g *GRH) CanDecode() gopacket.LayerClass { return LayerTypeGRH }

// NextLayerType returns LayerTypeBTH for NxtHdr 0x1B and
// gopacket.LayerTypePayload for any other value.
func (g *GRH) NextLayerType() gopacket.LayerType {
	if g.GRH == nil {
		return gopacket.LayerTypeZero
	}
	if t := grhNext[g.NxtHdr()]; t != 0 {
		return t
	}
	return gopacket.LayerTypePayload
}

// NetworkFlow returns the flow from SGID to DGID.
func (g *GRH) NetworkFlow() gopacket.Flow {
	return gopacket.NewFlow(layers.EndpointIPv6, g.SGID(), g.DGID())
}

// DecodeFromBytes decodes the GRH at the start of data. It fails, naming the
// field, when data is shorter than a GRH, IPVer is not 6, or PayLen runs
// beyond data; truncation is reported to df. It allocates nothing unless it
// fails.
func (g *GRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	g.GRH, g.payload = nil, nil
	h, err := grh.New(data)
	if err != nil {
		return truncatedTo(df, err)
	}
	if v := h.IPVer(); v != grh.IPVer6 {
		return rocekit.Invalid("grh", "IPVer", "%d, want 6", v)
	}
	end := grh.Len + int(h.PayLen())
	if end > len(data) {
		df.SetTruncated()
		return &rocekit.HeaderError{Header: "grh", Field: "PayLen", Err: rocekit.ErrTruncated, Need: end, Have: len(data),
			Detail: fmt.Sprintf("payload length %d, %d bytes follow the GRH", h.PayLen(), len(data)-grh.Len)}
	}
	g.GRH = h
	g.payload = data[grh.Len:end:end]
	return nil
}

// String returns the GRH fields.
func (g *GRH) String() string {
	if g.GRH == nil {
		return "GRH (not decoded)"
	}
	return g.GRH.String()
}

// SerializeTo writes the GRH, read back through the view, in front of what
// the layers after it wrote; with opts.FixLengths PayLen is set to that length
// (the view is not changed).
func (g *GRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if g.GRH == nil {
		return errors.New("iblayers: serialising a GRH that holds no decoded header")
	}
	f := g.GRH.Fields()
	return serializeGRH(b, opts, &f)
}

// GRHFields is the GRH as plain values, for building. With opts.FixLengths
// PayLen is set to the length of what the layers after it wrote (and stored
// in the field, as gopacket layers store the lengths they fix).
type GRHFields struct {
	grh.Fields
}

// LayerType returns LayerTypeGRH.
func (g *GRHFields) LayerType() gopacket.LayerType { return LayerTypeGRH }

// SerializeTo implements gopacket.SerializableLayer (see GRHFields).
func (g *GRHFields) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return serializeGRH(b, opts, &g.Fields)
}

func serializeGRH(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions, f *grh.Fields) error {
	if opts.FixLengths {
		n := len(b.Bytes())
		if n > 0xFFFF {
			return rocekit.Invalid("grh", "PayLen", "%d bytes do not fit 16 bits", n)
		}
		f.PayLen = uint16(n)
	}
	if err := f.Check(); err != nil {
		return err
	}
	h, err := b.PrependBytes(grh.Len)
	if err != nil {
		return err
	}
	return f.Encode(h)
}

func decodeGRH(data []byte, p gopacket.PacketBuilder) error {
	g := &GRH{}
	if err := g.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(g)
	p.SetNetworkLayer(g)
	return p.NextDecoder(g.NextLayerType())
}

// LRH is the decoded Local Route Header layer (LayerTypeLRH) of a native
// InfiniBand packet: a view into the bytes given to DecodeFromBytes, with
// every lrh.LRH getter and setter. Its payload is what PktLen covers after
// the LRH (GRH or BTH through the ICRC); VCRC is the two bytes after that.
// It is a gopacket.LinkLayer whose flow runs from SLID to DLID (EndpointLID).
type LRH struct {
	lrh.LRH
	// VCRC is the variant CRC as sent (least significant byte first; see
	// icrc.GetVCRC), a view like the header.
	VCRC    []byte
	payload []byte
}

var (
	_ gopacket.LinkLayer         = (*LRH)(nil)
	_ gopacket.DecodingLayer     = (*LRH)(nil)
	_ gopacket.SerializableLayer = (*LRH)(nil)
	_ gopacket.SerializableLayer = (*LRHFields)(nil)
)

// LayerType returns LayerTypeLRH.
func (l *LRH) LayerType() gopacket.LayerType { return LayerTypeLRH }

// LayerContents returns the 8 LRH bytes.
func (l *LRH) LayerContents() []byte { return l.LRH }

// LayerPayload returns the bytes after the LRH through the ICRC.
func (l *LRH) LayerPayload() []byte { return l.payload }

// CanDecode returns LayerTypeLRH.
func (l *LRH) CanDecode() gopacket.LayerClass { return LayerTypeLRH }

// NextLayerType returns LayerTypeBTH for LNH 2 (IBA local), LayerTypeGRH for
// LNH 3 (IBA global) and gopacket.LayerTypePayload for raw and IP packets.
func (l *LRH) NextLayerType() gopacket.LayerType {
	if l.LRH == nil {
		return gopacket.LayerTypeZero
	}
	switch l.LNH() {
	case lrh.LNHIBALocal:
		return LayerTypeBTH
	case lrh.LNHIBAGlobal:
		return LayerTypeGRH
	}
	return gopacket.LayerTypePayload
}

// LinkFlow returns the flow from SLID to DLID.
func (l *LRH) LinkFlow() gopacket.Flow {
	return gopacket.NewFlow(EndpointLID, l.LRH[6:8], l.LRH[2:4])
}

// VCRCValue returns the VCRC carried (as icrc.GetVCRC reads it), or 0 if
// none was decoded.
func (l *LRH) VCRCValue() uint16 {
	if len(l.VCRC) != icrc.VCRCLen {
		return 0
	}
	return icrc.GetVCRC(l.VCRC)
}

// DecodeFromBytes decodes the LRH at the start of data. It fails, naming the
// field, when data is shorter than an LRH, LVer is not 0, or PktLen is shorter
// than the LRH or runs (with the VCRC) beyond data; truncation is reported to
// df. It allocates nothing unless it fails.
func (l *LRH) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	l.LRH, l.VCRC, l.payload = nil, nil, nil
	h, err := lrh.New(data)
	if err != nil {
		return truncatedTo(df, err)
	}
	n := h.PacketBytes()
	if n < lrh.Len {
		return rocekit.BadLength("lrh", "PktLen", lrh.Len, n, "%d words (%d bytes), shorter than the LRH", h.PktLen(), n)
	}
	if n+icrc.VCRCLen > len(data) {
		df.SetTruncated()
		return &rocekit.HeaderError{Header: "lrh", Field: "PktLen", Err: rocekit.ErrTruncated, Need: n + icrc.VCRCLen, Have: len(data),
			Detail: fmt.Sprintf("packet length %d words plus the VCRC", h.PktLen())}
	}
	if err := h.Validate(); err != nil {
		return err
	}
	l.LRH = h
	l.payload = data[lrh.Len:n:n]
	l.VCRC = data[n : n+icrc.VCRCLen : n+icrc.VCRCLen]
	return nil
}

// String returns the LRH fields and the VCRC.
func (l *LRH) String() string {
	if l.LRH == nil {
		return "LRH (not decoded)"
	}
	return fmt.Sprintf("%s vcrc=0x%04x", l.LRH.String(), l.VCRCValue())
}

// SerializeTo writes the LRH, read back through the view, in front of what
// the layers after it wrote, and a zero VCRC placeholder after it
// (SerializeRoCE or FixICRC computes it); with opts.FixLengths PktLen is set
// from that length (the view is not changed).
func (l *LRH) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if l.LRH == nil {
		return errors.New("iblayers: serialising an LRH that holds no decoded header")
	}
	f := l.LRH.Fields()
	return serializeLRH(b, opts, &f)
}

// LRHFields is the LRH as plain values, for building. Serialising it writes
// the LRH in front of what the layers after it wrote and a zero VCRC
// placeholder after it. With opts.FixLengths PktLen is set to the length in
// words, LRH through ICRC (and stored in the field); that length must then be
// a multiple of 4.
type LRHFields struct {
	lrh.Fields
}

// LayerType returns LayerTypeLRH.
func (l *LRHFields) LayerType() gopacket.LayerType { return LayerTypeLRH }

// SerializeTo implements gopacket.SerializableLayer (see LRHFields).
func (l *LRHFields) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return serializeLRH(b, opts, &l.Fields)
}

func serializeLRH(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions, f *lrh.Fields) error {
	if opts.FixLengths {
		n := lrh.Len + len(b.Bytes())
		if n%4 != 0 {
			return rocekit.Invalid("lrh", "PktLen", "packet of %d bytes is not whole 4-byte words", n)
		}
		if n/4 > 0x7FF {
			return rocekit.Invalid("lrh", "PktLen", "%d words do not fit 11 bits", n/4)
		}
		f.PktLen = uint16(n / 4)
	}
	if err := f.Check(); err != nil {
		return err
	}
	h, err := b.PrependBytes(lrh.Len)
	if err != nil {
		return err
	}
	if err := f.Encode(h); err != nil {
		return err
	}
	v, err := b.AppendBytes(icrc.VCRCLen)
	if err != nil {
		return err
	}
	clear(v)
	return nil
}

func decodeLRH(data []byte, p gopacket.PacketBuilder) error {
	l := &LRH{}
	if err := l.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(l)
	p.SetLinkLayer(l)
	return p.NextDecoder(l.NextLayerType())
}
