package proptest

import (
	"fmt"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/feth"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/lrh"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"pgregory.net/rapid"
)

// MaxPayload is the largest payload PacketFields draws.
const MaxPayload = 600

// AtomicWriteLen is the payload size of an ATOMIC WRITE: one 64-bit value.
const AtomicWriteLen = 8

// PacketFields draws a valid transport packet of opcode op: every extension
// header the opcode table lists for op, with random field values, and only
// those (the others stay zero, as packet.Packet.Fields leaves them). What a
// receiver would reject is not drawn: TVer is 0, an AETH carries a defined
// syndrome (ValidSyndrome), a FETH a defined selectivity level, and a CNP body
// is all zero. Other fields, reserved bits included, take any value that fits.
//
// The payload is absent when op carries none, exactly AtomicWriteLen bytes for
// ATOMIC WRITE, and 0 to MaxPayload random bytes otherwise. PadCnt is
// packet.PadFor(len(Payload)); the pad bytes themselves are random. Decoding
// the encoded packet gives back the same Fields.
//
// op must be valid (op.Valid()); PacketFields panics otherwise.
func PacketFields(op opcode.Opcode) *rapid.Generator[packet.Fields] {
	if !op.Valid() {
		panic(fmt.Sprintf("proptest: PacketFields of invalid opcode 0x%02X", uint8(op)))
	}
	return rapid.Custom(func(t *rapid.T) packet.Fields {
		var f packet.Fields
		f.BTH = BTHFields().Draw(t, "bth")
		f.BTH.Opcode = op
		f.BTH.TVer = 0
		for _, h := range op.Headers() {
			switch h {
			case opcode.RDETH:
				f.RDETH = RDETHFields().Draw(t, "rdeth")
			case opcode.DETH:
				f.DETH = DETHFields().Draw(t, "deth")
			case opcode.XRCETH:
				f.XRCETH = XRCETHFields().Draw(t, "xrceth")
			case opcode.RETH:
				f.RETH = RETHFields().Draw(t, "reth")
			case opcode.AtomicETH:
				f.AtomicETH = AtomicETHFields().Draw(t, "atomiceth")
			case opcode.AETH:
				f.AETH = aeth.Fields{
					Syndrome: ValidSyndrome().Draw(t, "syndrome"),
					MSN:      Uint24().Draw(t, "msn"),
				}
			case opcode.AtomicAckETH:
				f.AtomicAckETH = AtomicAckETHFields().Draw(t, "atomicacketh")
			case opcode.ImmDt:
				f.ImmDt = ImmDtFields().Draw(t, "immdt")
			case opcode.IETH:
				f.IETH = IETHFields().Draw(t, "ieth")
			case opcode.FETH:
				f.FETH = FETHFields().Draw(t, "feth")
				f.FETH.SEL = rapid.SampledFrom([]uint8{feth.SelRange, feth.SelRegion}).Draw(t, "sel")
			case opcode.CNPBody:
				// reserved bytes stay zero
			}
		}
		switch {
		case !op.HasPayload():
		case op.Operation() == opcode.AtomicWrite:
			f.Payload = rapid.SliceOfN(rapid.Byte(), AtomicWriteLen, AtomicWriteLen).Draw(t, "payload")
		default:
			// The length is drawn on its own: a slice generator alone
			// rarely draws long slices, and long packets take other paths
			// (the ICRC's in-place part, for one).
			n := rapid.IntRange(0, MaxPayload).Draw(t, "len")
			f.Payload = rapid.SliceOfN(rapid.Byte(), n, n).Draw(t, "payload")
		}
		f.SetPad()
		for i := 0; i < int(f.BTH.PadCnt); i++ {
			f.PadBytes[i] = rapid.Byte().Draw(t, "pad")
		}
		return f
	})
}

// AnyPacketFields draws a valid transport packet (PacketFields) of any valid
// opcode (opcode.All): RC, UC, RD, UD, XRC and both CNPs.
func AnyPacketFields() *rapid.Generator[packet.Fields] {
	return rapid.Custom(func(t *rapid.T) packet.Fields {
		op := rapid.SampledFrom(opcode.All()).Draw(t, "opcode")
		return PacketFields(op).Draw(t, "packet")
	})
}

// encaps lists every encapsulation FrameFields draws.
var encaps = []packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1, packet.IBLocal, packet.IBGlobal}

// FrameFields draws a whole valid frame (FrameFieldsFor) of any
// encapsulation: RoCEv2 over IPv4 or IPv6, RoCEv1, native IB local or global.
func FrameFields() *rapid.Generator[packet.FrameFields] {
	return rapid.Custom(func(t *rapid.T) packet.FrameFields {
		e := rapid.SampledFrom(encaps).Draw(t, "encap")
		return FrameFieldsFor(e).Draw(t, "frame")
	})
}

// FrameFieldsFor draws a whole valid frame of encapsulation e around
// AnyPacketFields, with a correct ICRC and VCRC:
//
//   - Ethernet (RoCEv2 and RoCEv1): random MACs and 0 to 2 VLAN tags with
//     random PCP, DEI and VID.
//   - IPv4: random TOS (DSCP and ECN), ID, DF, TTL and addresses.
//   - IPv6: random traffic class, flow label, hop limit and addresses.
//   - UDP: random source port, destination port 4791, checksum 0 or computed.
//   - LRH: LVer 0, LNH 2 for IBLocal and 3 for IBGlobal, random VL, SL, LIDs
//     and reserved bits; PktLen is left 0 (Encode computes it).
//   - GRH: IPVer 6, NxtHdr 0x1B, random traffic class, flow label, hop limit
//     and GIDs; PayLen is left 0 (Encode computes it).
//
// Fields of headers e does not use are left zero.
func FrameFieldsFor(e packet.Encap) *rapid.Generator[packet.FrameFields] {
	return rapid.Custom(func(t *rapid.T) packet.FrameFields {
		f := packet.FrameFields{Encap: e}
		switch e {
		case packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1:
			f.Eth.Dst = mac().Draw(t, "dst")
			f.Eth.Src = mac().Draw(t, "src")
			f.Eth.VLANs = rapid.SliceOfN(vlan(), 0, packet.MaxVLANs).Draw(t, "vlans")
		}
		switch e {
		case packet.RoCEv2IPv4:
			f.IPv4 = packet.IPv4Fields{
				TOS: rapid.Uint8().Draw(t, "tos"),
				ID:  rapid.Uint16().Draw(t, "id"),
				DF:  rapid.Bool().Draw(t, "df"),
				TTL: rapid.Uint8().Draw(t, "ttl"),
				Src: [4]byte(rapid.SliceOfN(rapid.Byte(), 4, 4).Draw(t, "src")),
				Dst: [4]byte(rapid.SliceOfN(rapid.Byte(), 4, 4).Draw(t, "dst")),
			}
		case packet.RoCEv2IPv6:
			f.IPv6 = packet.IPv6Fields{
				TrafficClass: rapid.Uint8().Draw(t, "tc"),
				FlowLabel:    rapid.Uint32Range(0, 0xFFFFF).Draw(t, "flowlabel"),
				HopLimit:     rapid.Uint8().Draw(t, "hoplimit"),
				Src:          grhGID().Draw(t, "src"),
				Dst:          grhGID().Draw(t, "dst"),
			}
		}
		switch e {
		case packet.RoCEv2IPv4, packet.RoCEv2IPv6:
			f.UDP = packet.UDPFields{
				SrcPort:  rapid.Uint16().Draw(t, "sport"),
				DstPort:  packet.RoCEv2Port,
				Checksum: rapid.Bool().Draw(t, "udpcsum"),
			}
		case packet.IBLocal, packet.IBGlobal:
			f.LRH = LRHFields().Draw(t, "lrh")
			f.LRH.LVer = 0
			f.LRH.PktLen = 0
			f.LRH.LNH = lrh.LNHIBALocal
			if e == packet.IBGlobal {
				f.LRH.LNH = lrh.LNHIBAGlobal
			}
		}
		if e == packet.RoCEv1 || e == packet.IBGlobal {
			f.GRH = GRHFields().Draw(t, "grh")
			f.GRH.IPVer = grh.IPVer6
			f.GRH.NxtHdr = grh.NxtHdrIBA
			f.GRH.PayLen = 0
		}
		f.Transport = AnyPacketFields().Draw(t, "transport")
		return f
	})
}

func mac() *rapid.Generator[[6]byte] {
	return rapid.Map(rapid.SliceOfN(rapid.Byte(), 6, 6), func(b []byte) [6]byte { return [6]byte(b) })
}

func vlan() *rapid.Generator[packet.VLANFields] {
	return rapid.Custom(func(t *rapid.T) packet.VLANFields {
		return packet.VLANFields{
			PCP: Bits(3).Draw(t, "pcp"),
			DEI: rapid.Bool().Draw(t, "dei"),
			VID: rapid.Uint16Range(0, 0x0FFF).Draw(t, "vid"),
		}
	})
}
