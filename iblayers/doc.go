// Package iblayers registers rocekit's InfiniBand and RoCE headers as
// gopacket layers, so gopacket.NewPacket, gopacket.DecodingLayerParser and
// gopacket.SerializeLayers handle RoCEv2, RoCEv1 and native InfiniBand
// traffic.
//
// # Registration
//
// Importing the package registers everything, in its init function; a blank
// import is enough:
//
//	import _ "github.com/rocekit/rocekit/iblayers"
//
// It registers the layer types LayerTypeBTH ("IBTransport"), LayerTypeGRH and
// LayerTypeLRH (fixed numbers 4791-4793, above gopacket's reserved range) and
// the endpoint type EndpointLID, and wires them into gopacket/layers:
//
//   - UDP destination port 4791 -> LayerTypeBTH (layers.RegisterUDPPortLayerType);
//   - Ethertype 0x8915 (RoCEv1) -> LayerTypeGRH (layers.EthernetTypeMetadata);
//   - link type 247, LINKTYPE_INFINIBAND -> LayerTypeLRH (layers.LinkTypeMetadata);
//   - GRH NxtHdr 0x1B -> LayerTypeBTH; LRH LNH 2 -> LayerTypeBTH, LNH 3 -> LayerTypeGRH;
//   - the transport payload -> gopacket.LayerTypePayload.
//
// So a RoCEv2 frame decodes as Ethernet, [Dot1Q,] IPv4 or IPv6, UDP,
// IBTransport, Payload; a RoCEv1 frame as Ethernet, GRH, IBTransport, Payload;
// a native IB packet (first decoder LayerTypeLRH or LinkTypeInfiniBand) as LRH,
// [GRH,] IBTransport, Payload.
//
// # One transport layer
//
// The BTH and every extension header its opcode implies (RDETH, DETH, XRCETH,
// RETH, AtomicETH, AETH, AtomicAckETH, ImmDt, IETH, FETH, the CNP body) form
// one layer, Transport, which holds the packet.Packet views. They are not
// split into one gopacket layer per header because gopacket chooses the next
// layer from the current layer's own bytes (NextLayerType), while which
// extension header follows another depends on the BTH opcode alone: a RETH
// is followed by an ImmDt in RDMA WRITE Only with Immediate but by payload in
// RDMA WRITE First, and only the BTH knows which. The opcode table (package
// opcode) already gives the whole sequence at once; one layer uses it once,
// keeps the pad count (in the BTH) next to the pad, and needs no state passed
// between layers. The payload after the headers, pad excluded, is the
// transport layer's LayerPayload and decodes as gopacket.Payload; the pad and
// the ICRC are fields of the transport layer (Transport.Pad, Transport.ICRC).
//
// The VCRC of a native IB packet is a field of the LRH layer (LRH.VCRC), not
// of the transport layer: it follows the ICRC, covers the LRH through the
// ICRC, is recomputed on every link, and only the LRH (through PktLen) says
// where it is. The transport layer cannot tell whether one follows it.
//
// # Decoding
//
// Transport, GRH and LRH are gopacket.DecodingLayers whose DecodeFromBytes
// makes views into the given bytes and allocates nothing, so a reused
// gopacket.DecodingLayerParser decodes RoCE frames without allocating
// (BenchmarkDecodingLayerParser). Add a gopacket.Payload to the parser for the
// transport payload.
//
// Truncated or malformed input makes DecodeFromBytes return the rocekit error
// (a *rocekit.HeaderError naming the header and field, wrapping
// rocekit.ErrTruncated, ErrInvalid, ErrUnknownOpcode, ErrLength or
// ErrUnexpected); for truncation it also calls df.SetTruncated. Under
// gopacket.NewPacket the layer is then not added and the packet carries a
// gopacket.DecodeFailure (its ErrorLayer) holding the undecoded bytes and that
// error. The transport layer is decoded by packet.Packet.Decode, so it
// accepts exactly what package packet accepts (valid opcodes only, TVer 0,
// pad within the packet, no payload where the opcode allows none). The GRH
// layer rejects IPVer other than 6 and a PayLen beyond the bytes present; a
// NxtHdr other than 0x1B is carried as payload, as gopacket does for unknown
// protocols. The LRH layer rejects LVer other than 0 and a PktLen shorter
// than the LRH or longer than the bytes present (VCRC included).
//
// The ICRC is not checked while decoding (a layer sees only its own bytes):
// call CheckICRC with the frame's bytes.
//
// # Serialising and the ICRC
//
// gopacket serialises inside out: the innermost layer first, each outer layer
// then prepended. The ICRC covers the network header (IPv4, IPv6, GRH or LRH),
// which does not exist yet when the transport layer is serialised, and some
// of whose fields (IPv4 total length, UDP length) are only fixed while the
// outer layers are written. So the transport layer writes a zero ICRC
// placeholder, and the ICRC is written afterwards over the finished frame:
//
//   - SerializeRoCE(buf, opts, layers...) is gopacket.SerializeLayers followed
//     by the ICRC (and, for native IB, the VCRC). It is the one call to use.
//   - FixICRC(frame, firstLayer) does the second half on any frame bytes, for
//     frames serialised by other means or edited in place.
//
// Both locate the network header and the transport packet with
// packet.Frame, so the ICRC is computed exactly as package packet computes
// it, and the result equals packet.FrameFields.Encode for the same fields
// (TestSerializeMatchesFrameEncode) except that layers.Ethernet pads frames
// shorter than 60 bytes with zeros.
//
// opts.FixLengths is honoured by every layer: IPv4 total length, IPv6 payload
// length and UDP length by gopacket, GRH PayLen, LRH PktLen and BTH PadCnt
// (from the payload length) by this package. opts.ComputeChecksums computes
// the IPv4 header checksum and the UDP checksum; because the UDP checksum
// covers the ICRC, SerializeRoCE recomputes it after writing the ICRC, and it
// connects each layers.UDP to the IPv4 or IPv6 layer before it
// (SetNetworkLayerForChecksum) so that gopacket does not refuse. RoCEv2
// senders send UDP checksum 0 (the ICRC protects the packet): wrap the UDP
// layer in ZeroUDPChecksum to get that while the IPv4 header checksum is still
// computed.
//
// For building there are value types, TransportFields, GRHFields and
// LRHFields, which embed the rocekit Fields structs. The decoded types
// Transport, GRH and LRH serialise too, from their views, so a decoded packet
// can be changed through the views and serialised again (gopacket's
// decode-modify-serialise idiom). Transport.SerializeTo writes its headers
// around whatever the layers after it wrote (the gopacket.Payload of a
// decoded packet); TransportFields writes its Payload field followed by that.
package iblayers
