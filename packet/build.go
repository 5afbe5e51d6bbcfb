package packet

import (
	"encoding/binary"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/lrh"
)

// EthernetFields are the Ethernet header's values for building.
type EthernetFields struct {
	Dst, Src [6]byte
	// VLANs are written outermost first. The first uses TPID 0x88A8 when
	// there are two (QinQ), else 0x8100.
	VLANs []VLANFields
}

// VLANFields is one 802.1Q tag.
type VLANFields struct {
	PCP uint8
	DEI bool
	VID uint16
}

// IPv4Fields are the IPv4 header's values for building. Total length and
// header checksum are computed.
type IPv4Fields struct {
	TOS      uint8 // DSCP << 2 | ECN
	ID       uint16
	DF       bool
	TTL      uint8
	Src, Dst [4]byte
}

// IPv6Fields are the IPv6 header's values for building. Payload length is
// computed.
type IPv6Fields struct {
	TrafficClass uint8
	FlowLabel    uint32
	HopLimit     uint8
	Src, Dst     [16]byte
}

// UDPFields are the UDP header's values for building. Length is computed;
// the checksum is 0, as RoCE senders send it, unless Checksum is set.
type UDPFields struct {
	SrcPort, DstPort uint16
	Checksum         bool
}

// FrameFields is a whole frame as plain values. Which lower headers are
// written depends on Encap: RoCEv2 uses Eth, IPv4 or IPv6, and UDP; RoCEv1
// uses Eth and GRH; native IB uses LRH (and GRH for IBGlobal) and appends a
// VCRC. Every length field (IPv4 total length, IPv6 payload length, UDP
// length, GRH PayLen, LRH PktLen) and the IPv4 header checksum are computed.
type FrameFields struct {
	Encap     Encap
	Eth       EthernetFields
	IPv4      IPv4Fields
	IPv6      IPv6Fields
	UDP       UDPFields
	LRH       lrh.Fields
	GRH       grh.Fields
	Transport Fields
	// ICRCXor is XORed into the computed ICRC: 0 sends a correct ICRC, any
	// other value a deliberately wrong one. VCRCXor does the same for the VCRC.
	ICRCXor uint32
	VCRCXor uint16
}

// DefaultFrame returns FrameFields with the values a RoCE NIC would use for
// encap: locally administered MACs 02:00:00:00:00:01 -> :02, 192.168.1.1 ->
// 192.168.1.2 (fd00::1 -> fd00::2 for IPv6), ECT(0), TTL/hop limit 64, DF,
// UDP source port 0xC000, destination 4791, P_Key 0xFFFF; for native IB
// SLID 1 -> DLID 2 and, with a GRH, IPv6-style GIDs of the same addresses.
func DefaultFrame(encap Encap) FrameFields {
	f := FrameFields{Encap: encap}
	f.Eth.Dst = [6]byte{2, 0, 0, 0, 0, 2}
	f.Eth.Src = [6]byte{2, 0, 0, 0, 0, 1}
	f.IPv4 = IPv4Fields{TOS: 0x02, DF: true, TTL: 64, Src: [4]byte{192, 168, 1, 1}, Dst: [4]byte{192, 168, 1, 2}}
	src6 := [16]byte{0xfd, 15: 1}
	dst6 := [16]byte{0xfd, 15: 2}
	f.IPv6 = IPv6Fields{TrafficClass: 0x02, HopLimit: 64, Src: src6, Dst: dst6}
	f.UDP = UDPFields{SrcPort: 0xC000, DstPort: RoCEv2Port}
	f.LRH = lrh.Fields{DLID: 2, SLID: 1, LNH: lrh.LNHIBALocal}
	if encap == IBGlobal {
		f.LRH.LNH = lrh.LNHIBAGlobal
	}
	f.GRH = grh.Fields{IPVer: 6, TClass: 0x02, NxtHdr: grh.NxtHdrIBA, HopLmt: 64, SGID: src6, DGID: dst6}
	f.Transport.BTH.PKey = 0xFFFF
	return f
}

// Len is the encoded size of the frame.
func (f *FrameFields) Len() int {
	t := f.Transport.Len() + icrc.Len
	switch f.Encap {
	case RoCEv2IPv4:
		return f.ethLen() + IPv4Len + UDPLen + t
	case RoCEv2IPv6:
		return f.ethLen() + IPv6Len + UDPLen + t
	case RoCEv1:
		return f.ethLen() + grh.Len + t
	case IBLocal:
		return lrh.Len + t + icrc.VCRCLen
	case IBGlobal:
		return lrh.Len + grh.Len + t + icrc.VCRCLen
	}
	return 0
}

func (f *FrameFields) ethLen() int { return EthernetLen + VLANLen*len(f.Eth.VLANs) }

// Encode writes the frame into b and returns its length. It allocates nothing.
func (f *FrameFields) Encode(b []byte) (int, error) {
	var c icrc.Calc
	return f.encode(b, &c)
}

// EncodeWith is Encode with a caller-owned ICRC scratch space, for loops
// that build many frames.
func (f *FrameFields) EncodeWith(b []byte, c *icrc.Calc) (int, error) { return f.encode(b, c) }

func (f *FrameFields) encode(b []byte, c *icrc.Calc) (int, error) {
	n := f.Len()
	if n == 0 {
		return 0, rocekit.Invalid("frame", "Encap", "cannot build encapsulation %s", f.Encap)
	}
	if len(b) < n {
		return 0, rocekit.Truncated("frame", n, len(b))
	}
	if len(f.Eth.VLANs) > MaxVLANs {
		return 0, rocekit.Invalid("vlan", "", "%d tags, at most %d", len(f.Eth.VLANs), MaxVLANs)
	}
	tlen := f.Transport.Len() // BTH through pad
	off := 0
	var l3 int // where the ICRC coverage starts
	switch f.Encap {
	case RoCEv2IPv4, RoCEv2IPv6, RoCEv1:
		et := uint16(EtherTypeIPv4)
		if f.Encap == RoCEv2IPv6 {
			et = EtherTypeIPv6
		} else if f.Encap == RoCEv1 {
			et = EtherTypeRoCEv1
		}
		off = f.encodeEth(b, et)
	}
	l3 = off
	switch f.Encap {
	case RoCEv2IPv4:
		tot := IPv4Len + UDPLen + tlen + icrc.Len
		if tot > 0xFFFF {
			return 0, rocekit.Invalid("ipv4", "TotalLength", "%d bytes do not fit 16 bits", tot)
		}
		h := b[off : off+IPv4Len]
		h[0] = 0x45
		h[1] = f.IPv4.TOS
		binary.BigEndian.PutUint16(h[2:], uint16(tot))
		binary.BigEndian.PutUint16(h[4:], f.IPv4.ID)
		h[6], h[7] = 0, 0
		if f.IPv4.DF {
			h[6] = 0x40
		}
		h[8] = f.IPv4.TTL
		h[9] = 17
		copy(h[12:16], f.IPv4.Src[:])
		copy(h[16:20], f.IPv4.Dst[:])
		IPv4(h).SetChecksum(IPv4(h).ComputeChecksum())
		off += IPv4Len
		f.encodeUDP(b[off:], UDPLen+tlen+icrc.Len)
		off += UDPLen
	case RoCEv2IPv6:
		plen := UDPLen + tlen + icrc.Len
		if plen > 0xFFFF {
			return 0, rocekit.Invalid("ipv6", "PayloadLength", "%d bytes do not fit 16 bits", plen)
		}
		if f.IPv6.FlowLabel > 0xFFFFF {
			return 0, rocekit.Invalid("ipv6", "FlowLabel", "0x%X does not fit 20 bits", f.IPv6.FlowLabel)
		}
		h := b[off : off+IPv6Len]
		binary.BigEndian.PutUint32(h[0:], 6<<28|uint32(f.IPv6.TrafficClass)<<20|f.IPv6.FlowLabel)
		binary.BigEndian.PutUint16(h[4:], uint16(plen))
		h[6] = 17
		h[7] = f.IPv6.HopLimit
		copy(h[8:24], f.IPv6.Src[:])
		copy(h[24:40], f.IPv6.Dst[:])
		off += IPv6Len
		f.encodeUDP(b[off:], plen)
		off += UDPLen
	case RoCEv1:
		if err := f.encodeGRH(b[off:], tlen+icrc.Len); err != nil {
			return 0, err
		}
		off += grh.Len
	case IBLocal, IBGlobal:
		words := (n - icrc.VCRCLen) / 4
		if (n-icrc.VCRCLen)%4 != 0 {
			return 0, rocekit.Invalid("lrh", "PktLen", "packet of %d bytes is not whole 4-byte words (pad count %d for %d payload bytes)",
				n-icrc.VCRCLen, f.Transport.BTH.PadCnt, len(f.Transport.Payload))
		}
		l := f.LRH
		l.PktLen = uint16(words)
		if err := l.Encode(b[off:]); err != nil {
			return 0, err
		}
		off += lrh.Len
		if f.Encap == IBGlobal {
			if err := f.encodeGRH(b[off:], tlen+icrc.Len); err != nil {
				return 0, err
			}
			off += grh.Len
		}
	}
	m, err := f.Transport.Encode(b[off:])
	if err != nil {
		return 0, err
	}
	off += m
	var crc uint32
	switch f.Encap {
	case RoCEv2IPv4:
		crc, err = c.IPv4(b[l3:off])
	case RoCEv2IPv6:
		crc, err = c.IPv6(b[l3:off])
	case RoCEv1:
		crc, err = c.GRH(b[l3:off])
	default:
		crc, err = c.LRH(b[l3:off])
	}
	if err != nil {
		return 0, err
	}
	icrc.Put(b[off:], crc^f.ICRCXor)
	off += icrc.Len
	if f.Encap == IBLocal || f.Encap == IBGlobal {
		icrc.PutVCRC(b[off:], icrc.VCRC(b[l3:off])^f.VCRCXor)
		off += icrc.VCRCLen
	}
	if f.UDP.Checksum && (f.Encap == RoCEv2IPv4 || f.Encap == RoCEv2IPv6) {
		f.putUDPChecksum(b[l3:off])
	}
	return off, nil
}

func (f *FrameFields) encodeEth(b []byte, et uint16) int {
	copy(b[0:6], f.Eth.Dst[:])
	copy(b[6:12], f.Eth.Src[:])
	off := 12
	for i, v := range f.Eth.VLANs {
		tpid := uint16(EtherTypeVLAN)
		if len(f.Eth.VLANs) == 2 && i == 0 {
			tpid = EtherTypeQinQ
		}
		binary.BigEndian.PutUint16(b[off:], tpid)
		tci := uint16(v.PCP&7)<<13 | v.VID&0x0FFF
		if v.DEI {
			tci |= 0x1000
		}
		binary.BigEndian.PutUint16(b[off+2:], tci)
		off += 4
	}
	binary.BigEndian.PutUint16(b[off:], et)
	return off + 2
}

func (f *FrameFields) encodeUDP(b []byte, length int) {
	binary.BigEndian.PutUint16(b[0:], f.UDP.SrcPort)
	binary.BigEndian.PutUint16(b[2:], f.UDP.DstPort)
	binary.BigEndian.PutUint16(b[4:], uint16(length))
	b[6], b[7] = 0, 0
}

func (f *FrameFields) encodeGRH(b []byte, payLen int) error {
	g := f.GRH
	if payLen > 0xFFFF {
		return rocekit.Invalid("grh", "PayLen", "%d bytes do not fit 16 bits", payLen)
	}
	g.PayLen = uint16(payLen)
	return g.Encode(b)
}

// putUDPChecksum fills in the UDP checksum of an IPv4 or IPv6 packet.
func (f *FrameFields) putUDPChecksum(ip []byte) {
	if f.Encap == RoCEv2IPv4 {
		seg := ip[IPv4Len:]
		binary.BigEndian.PutUint16(seg[6:], udpChecksum(ip[12:16], ip[16:20], seg))
		return
	}
	seg := ip[IPv6Len:]
	binary.BigEndian.PutUint16(seg[6:], udpChecksum(ip[8:24], ip[24:40], seg))
}

// UDPSourcePort returns the RoCEv2 UDP source port Linux derives from a flow
// label, computing the flow label from the two QPNs when it is 0
// (ib-facts.md §4): ports fall in 0xC000-0xFFFF.
func UDPSourcePort(flowLabel uint32, lqpn, rqpn uint32) uint16 {
	fl := flowLabel & 0xFFFFF
	if fl == 0 {
		v := uint64(lqpn) * uint64(rqpn)
		v ^= v >> 20
		v ^= v >> 40
		fl = uint32(v & 0xFFFFF)
	}
	return uint16((fl&0x3FFF)^((fl&0xFC000)>>14)) | 0xC000
}
