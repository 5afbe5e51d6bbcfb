package iblayers

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/gopacket"
	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// Transport is the decoded IB transport layer (LayerTypeBTH): the
// packet.Packet views of BTH, extension headers, payload, pad and ICRC, into
// the bytes given to DecodeFromBytes. Headers the opcode does not carry are
// nil. Reuse one Transport for many packets; decoding allocates nothing.
//
// LayerContents is the BTH and the extension headers; LayerPayload is the
// payload without the pad (decoded as gopacket.Payload). Pad and ICRC are the
// embedded packet.Packet's Pad and ICRC fields.
type Transport struct {
	packet.Packet
	contents []byte
}

var (
	_ gopacket.Layer             = (*Transport)(nil)
	_ gopacket.DecodingLayer     = (*Transport)(nil)
	_ gopacket.SerializableLayer = (*Transport)(nil)
	_ gopacket.SerializableLayer = (*TransportFields)(nil)
)

// LayerType returns LayerTypeBTH.
func (t *Transport) LayerType() gopacket.LayerType { return LayerTypeBTH }

// LayerContents returns the BTH and the extension headers.
func (t *Transport) LayerContents() []byte { return t.contents }

// LayerPayload returns the payload, pad excluded.
func (t *Transport) LayerPayload() []byte { return t.Payload }

// CanDecode returns LayerTypeBTH.
func (t *Transport) CanDecode() gopacket.LayerClass { return LayerTypeBTH }

// NextLayerType returns gopacket.LayerTypePayload.
func (t *Transport) NextLayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// DecodeFromBytes decodes data, which runs from the first BTH byte through
// the ICRC, with packet.Packet.Decode, and returns its error (naming header
// and field). Truncation is reported to df. It allocates nothing unless it
// fails.
func (t *Transport) DecodeFromBytes(data []byte, df gopacket.DecodeFeedback) error {
	t.contents = nil
	if err := t.Packet.Decode(data); err != nil {
		return truncatedTo(df, err)
	}
	n := bth.Len + t.BTH.Opcode().HeaderLen()
	t.contents = data[:n:n]
	return nil
}

// ICRCValue returns the ICRC carried (as icrc.Get reads it), or 0 if none
// was decoded.
func (t *Transport) ICRCValue() uint32 {
	if len(t.ICRC) != icrc.Len {
		return 0
	}
	return icrc.Get(t.ICRC)
}

// String lists the headers in wire order, then payload, pad and ICRC.
func (t *Transport) String() string {
	if t.BTH == nil {
		return "IBTransport (not decoded)"
	}
	var sb strings.Builder
	sb.WriteString(t.BTH.String())
	for _, h := range t.BTH.Opcode().Headers() {
		if s := t.header(h); s != nil {
			sb.WriteString(" | ")
			sb.WriteString(s.String())
		}
	}
	fmt.Fprintf(&sb, " | payload=%d pad=%d icrc=%x", len(t.Payload), len(t.Pad), []byte(t.ICRC))
	return sb.String()
}

func (t *Transport) header(h opcode.Header) fmt.Stringer {
	p := &t.Packet
	switch {
	case h == opcode.RDETH && p.RDETH != nil:
		return p.RDETH
	case h == opcode.DETH && p.DETH != nil:
		return p.DETH
	case h == opcode.XRCETH && p.XRCETH != nil:
		return p.XRCETH
	case h == opcode.RETH && p.RETH != nil:
		return p.RETH
	case h == opcode.AtomicETH && p.AtomicETH != nil:
		return p.AtomicETH
	case h == opcode.AETH && p.AETH != nil:
		return p.AETH
	case h == opcode.AtomicAckETH && p.AtomicAckETH != nil:
		return p.AtomicAckETH
	case h == opcode.ImmDt && p.ImmDt != nil:
		return p.ImmDt
	case h == opcode.IETH && p.IETH != nil:
		return p.IETH
	case h == opcode.FETH && p.FETH != nil:
		return p.FETH
	case h == opcode.CNPBody && p.CNP != nil:
		return p.CNP
	}
	return nil
}

// SerializeTo writes the decoded headers (read back through the views, so
// changes made with their setters are kept) in front of what the layers after
// this one wrote, which is the payload (the gopacket.Payload of a decoded
// packet), then the pad and a zero ICRC placeholder: SerializeRoCE or FixICRC
// writes the ICRC. The payload field of the embedded packet.Packet is not
// written. With opts.FixLengths the pad count is recomputed from the
// payload length (the views are not changed).
func (t *Transport) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	if t.BTH == nil {
		return errors.New("iblayers: serialising a Transport that holds no decoded BTH")
	}
	f := t.Packet.Fields()
	f.Payload = nil
	return serializeTransport(b, opts, &f)
}

// TransportFields is the IB transport layer as plain values, for building:
// serialising it writes the BTH, the extension headers the BTH opcode
// carries (the others in packet.Fields are ignored), Payload, then what the
// layers after it wrote (if any), then the pad (PadBytes) and a zero ICRC
// placeholder that SerializeRoCE or FixICRC fills in.
//
// The pad count is BTH.PadCnt as given, or with opts.FixLengths the count the
// whole payload length needs; FixLengths stores it in BTH.PadCnt, as gopacket
// layers store the lengths they fix.
type TransportFields struct {
	packet.Fields
}

// LayerType returns LayerTypeBTH.
func (t *TransportFields) LayerType() gopacket.LayerType { return LayerTypeBTH }

// SerializeTo implements gopacket.SerializableLayer (see TransportFields).
func (t *TransportFields) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	return serializeTransport(b, opts, &t.Fields)
}

// maxHeaders is room for the BTH and the longest extension-header sequence.
const maxHeaders = bth.Len + 64

// serializeTransport writes f's headers and payload in front of b's bytes and
// the pad and ICRC placeholder after them.
func serializeTransport(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions, f *packet.Fields) error {
	if err := f.BTH.Check(); err != nil {
		return err
	}
	later := len(b.Bytes())
	if opts.FixLengths {
		f.BTH.PadCnt = packet.PadFor(len(f.Payload) + later)
	}
	pad := int(f.BTH.PadCnt)

	// Encode the headers alone first, so a field that does not fit is
	// reported before the buffer is touched.
	var scratch [maxHeaders]byte
	h := *f
	h.Payload = nil
	h.BTH.PadCnt = 0
	n, err := h.Encode(scratch[:])
	if err != nil {
		return err
	}
	bth.BTH(scratch[:]).SetPadCnt(uint8(pad))

	front, err := b.PrependBytes(n + len(f.Payload))
	if err != nil {
		return err
	}
	copy(front, scratch[:n])
	copy(front[n:], f.Payload)
	tail, err := b.AppendBytes(pad + icrc.Len)
	if err != nil {
		return err
	}
	copy(tail, f.PadBytes[:pad])
	clear(tail[pad:])
	return nil
}

func decodeTransport(data []byte, p gopacket.PacketBuilder) error {
	t := &Transport{}
	if err := t.DecodeFromBytes(data, p); err != nil {
		return err
	}
	p.AddLayer(t)
	return p.NextDecoder(t.NextLayerType())
}

func isTruncated(err error) bool { return errors.Is(err, rocekit.ErrTruncated) }
