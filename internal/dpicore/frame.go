package dpicore

import (
	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// Fields are what a scoreboard checks of one frame.
type Fields struct {
	Encap  packet.Encap
	Opcode opcode.Opcode
	DestQP uint32
	PSN    uint32
	AckReq bool
	SE     bool
	PKey   uint16

	HasAETH  bool // the opcode carries an AETH (ACK, READ response First/Last/Only, ATOMIC ACK)
	Syndrome aeth.Syndrome
	MSN      uint32

	HasRETH bool // the opcode carries a RETH (WRITE First/Only, READ request)
	VA      uint64
	RKey    uint32
	DMALen  uint32

	PayloadLen int  // payload bytes, pad excluded
	ICRCOK     bool // the ICRC matches the frame (ib-facts.md §3)
}

// Parser decodes frames; its scratch space is reused, so Parse allocates
// nothing.
type Parser struct {
	fr packet.Frame
}

// Parse decodes an Ethernet frame carrying RoCEv2 (over IPv4 or IPv6, UDP
// port 4791) or RoCEv1 (Ethertype 0x8915), with up to two VLAN tags, into
// out. A frame that does not decode as such is an ErrFrame.
func (p *Parser) Parse(data []byte, out *Fields) error {
	fr := &p.fr
	err := fr.DecodeEthernet(data)
	if !fr.IsRoCE() || fr.Transport.BTH == nil {
		if err != nil {
			return errf(ErrFrame, "frame of %d bytes: %v", len(data), err)
		}
		return errf(ErrFrame, "frame of %d bytes is not a RoCE frame (RoCEv2 over IPv4/IPv6 UDP 4791, or RoCEv1)", len(data))
	}
	if err != nil {
		return errf(ErrFrame, "frame of %d bytes: %v", len(data), err)
	}
	t := &fr.Transport
	*out = Fields{Encap: fr.Encap, Opcode: t.BTH.Opcode(), DestQP: t.BTH.DestQP(), PSN: t.BTH.PSN(),
		AckReq: t.BTH.AckReq(), SE: t.BTH.SE(), PKey: t.BTH.PKey(), PayloadLen: len(t.Payload)}
	if t.AETH != nil {
		out.HasAETH, out.Syndrome, out.MSN = true, t.AETH.Syndrome(), t.AETH.MSN()
	}
	if t.RETH != nil {
		out.HasRETH, out.VA, out.RKey, out.DMALen = true, t.RETH.VA(), t.RETH.RKey(), t.RETH.DMALen()
	}
	ok, _, _, cerr := fr.CheckICRC()
	out.ICRCOK = ok && cerr == nil
	return nil
}

// BuildFields are the values of a frame to build. Headers the opcode does
// not carry are ignored; those it carries and no field names are zero
// (DETH, XRCETH, the AtomicETH's swap and compare values, FETH).
type BuildFields struct {
	// Encap is RoCEv2IPv4 (the zero value means it too), RoCEv2IPv6 or
	// RoCEv1.
	Encap packet.Encap
	// Reverse swaps the addresses of packet.DefaultFrame: the frame goes
	// from 02:00:00:00:00:02 / 192.168.1.2 (fd00::2) to :01 / .1 (fd00::1).
	Reverse bool

	Opcode opcode.Opcode // any valid opcode of the opcode table
	DestQP uint32
	PSN    uint32
	AckReq bool
	SE     bool
	PKey   uint16 // 0 means 0xFFFF

	Syndrome aeth.Syndrome // AETH
	MSN      uint32        // AETH
	VA       uint64        // RETH or AtomicETH
	RKey     uint32        // RETH or AtomicETH
	DMALen   uint32        // RETH
	Imm      uint32        // ImmDt, or the IETH's R_Key

	Payload []byte
	// ICRCXor is XORed into the computed ICRC: 0 builds a correct frame, any
	// other value a deliberately wrong ICRC.
	ICRCXor uint32
}

// Builder builds frames with package packet's frame builder; Build
// allocates nothing.
type Builder struct {
	ff   packet.FrameFields
	calc icrc.Calc
}

// Build writes the frame b describes into dst and returns its length. A
// dst too small is an ErrSpace whose message gives the size needed.
func (bl *Builder) Build(b *BuildFields, dst []byte) (int, error) {
	e := b.Encap
	if e == packet.EncapNone {
		e = packet.RoCEv2IPv4
	}
	switch e {
	case packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1:
	default:
		return 0, errf(ErrArg, "encap %d: want 1 (RoCEv2/IPv4), 2 (RoCEv2/IPv6) or 3 (RoCEv1)", uint8(e))
	}
	op := b.Opcode
	switch {
	case !op.Valid():
		return 0, errf(ErrArg, "opcode 0x%02x is not in the opcode table (reserved)", uint8(op))
	case b.DestQP > 0xFFFFFF:
		return 0, errf(ErrArg, "dest_qp 0x%x: QP numbers are 24 bits", b.DestQP)
	case b.PSN > 0xFFFFFF:
		return 0, errf(ErrArg, "psn 0x%x: PSNs are 24 bits", b.PSN)
	case len(b.Payload) > 0 && !op.HasPayload():
		return 0, errf(ErrArg, "payload of %d bytes: opcode %s carries none", len(b.Payload), op)
	case len(b.Payload) > 1<<16:
		return 0, errf(ErrArg, "payload of %d bytes: more than a frame can carry", len(b.Payload))
	}
	ff := &bl.ff
	*ff = packet.DefaultFrame(e)
	if b.Reverse {
		ff.Eth.Src, ff.Eth.Dst = ff.Eth.Dst, ff.Eth.Src
		ff.IPv4.Src, ff.IPv4.Dst = ff.IPv4.Dst, ff.IPv4.Src
		ff.IPv6.Src, ff.IPv6.Dst = ff.IPv6.Dst, ff.IPv6.Src
		ff.GRH.SGID, ff.GRH.DGID = ff.GRH.DGID, ff.GRH.SGID
	}
	t := &ff.Transport
	t.BTH.Opcode, t.BTH.DestQP, t.BTH.PSN, t.BTH.AckReq, t.BTH.SE = op, b.DestQP, b.PSN, b.AckReq, b.SE
	if b.PKey != 0 {
		t.BTH.PKey = b.PKey
	}
	t.AETH.Syndrome, t.AETH.MSN = b.Syndrome, b.MSN
	t.RETH.VA, t.RETH.RKey, t.RETH.DMALen = b.VA, b.RKey, b.DMALen
	t.AtomicETH.VA, t.AtomicETH.RKey = b.VA, b.RKey
	t.ImmDt.Imm, t.IETH.RKey = b.Imm, b.Imm
	t.Payload = b.Payload
	t.SetPad()
	ff.ICRCXor = b.ICRCXor
	n := ff.Len()
	if len(dst) < n {
		return 0, errf(ErrSpace, "buffer of %d bytes: the frame needs %d", len(dst), n)
	}
	if _, err := ff.EncodeWith(dst, &bl.calc); err != nil {
		return 0, errf(ErrArg, "%v", err)
	}
	return n, nil
}
