package analysis

import (
	"encoding/binary"
	"net/netip"
	"strconv"

	"github.com/rocekit/rocekit/packet"
)

// AddrKind says what an Addr holds.
type AddrKind uint8

// Address kinds: RoCEv2 flows are keyed by IP address, RoCEv1 and native IB
// packets with a GRH by GID, native IB packets without a GRH by LID.
const (
	AddrNone AddrKind = iota
	AddrIPv4
	AddrIPv6
	AddrGID
	AddrLID
)

// Addr is an endpoint address: an IPv4 or IPv6 address, a GID or a LID. It
// is comparable and allocation-free.
type Addr struct {
	Kind AddrKind
	b    [16]byte
}

// IPv4Addr, IPv6Addr, GIDAddr and LIDAddr build addresses.
func IPv4Addr(a [4]byte) Addr {
	x := Addr{Kind: AddrIPv4}
	copy(x.b[:], a[:])
	return x
}
func IPv6Addr(a [16]byte) Addr { return Addr{Kind: AddrIPv6, b: a} }
func GIDAddr(a [16]byte) Addr  { return Addr{Kind: AddrGID, b: a} }
func LIDAddr(lid uint16) Addr {
	x := Addr{Kind: AddrLID}
	binary.BigEndian.PutUint16(x.b[:], lid)
	return x
}

// IP returns the address as a netip.Addr (IPv4, IPv6, or the GID read as
// IPv6); the zero Addr for a LID.
func (a Addr) IP() netip.Addr {
	switch a.Kind {
	case AddrIPv4:
		return netip.AddrFrom4([4]byte(a.b[:4]))
	case AddrIPv6, AddrGID:
		return netip.AddrFrom16(a.b)
	}
	return netip.Addr{}
}

// LID returns the LID of an AddrLID address.
func (a Addr) LID() uint16 {
	if a.Kind != AddrLID {
		return 0
	}
	return binary.BigEndian.Uint16(a.b[:])
}

// String formats the address: 192.168.1.1, fd00::1, GID fe80::2:c902:24:f636
// (as IPv6), or lid:4.
func (a Addr) String() string { return string(a.AppendTo(nil)) }

// AppendTo appends the String form to b.
func (a Addr) AppendTo(b []byte) []byte {
	switch a.Kind {
	case AddrIPv4, AddrIPv6, AddrGID:
		return a.IP().AppendTo(b)
	case AddrLID:
		return strconv.AppendUint(append(b, "lid:"...), uint64(a.LID()), 10)
	}
	return append(b, '-')
}

// FlowKey identifies one direction of a conversation: the encapsulation,
// source and destination addresses and the destination QP (the BTH DestQP;
// the source QP is not in the BTH).
type FlowKey struct {
	Encap packet.Encap
	Src   Addr
	Dst   Addr
	DstQP uint32
}

// pairKey groups the flows between two addresses in one direction.
type pairKey struct {
	encap    packet.Encap
	src, dst Addr
}

// FrameAddrs returns the source and destination addresses of a decoded IB
// frame, as FlowKey uses them.
func FrameAddrs(f *packet.Frame) (src, dst Addr) {
	setAddrs(&src, &dst, f)
	return src, dst
}

// setAddrs sets *src and *dst to the addresses of a decoded IB frame, in
// place (building Addrs and copying them costs more: their 17 bytes move
// in overlapping pieces).
func setAddrs(src, dst *Addr, f *packet.Frame) {
	src.b, dst.b = [16]byte{}, [16]byte{}
	switch f.Encap {
	case packet.RoCEv2IPv4:
		src.Kind, dst.Kind = AddrIPv4, AddrIPv4
		copy(src.b[:4], f.IPv4[12:16])
		copy(dst.b[:4], f.IPv4[16:20])
	case packet.RoCEv2IPv6:
		src.Kind, dst.Kind = AddrIPv6, AddrIPv6
		copy(src.b[:], f.IPv6[8:24])
		copy(dst.b[:], f.IPv6[24:40])
	case packet.RoCEv1, packet.IBGlobal:
		src.Kind, dst.Kind = AddrGID, AddrGID
		copy(src.b[:], f.GRH.SGID())
		copy(dst.b[:], f.GRH.DGID())
	case packet.IBLocal:
		src.Kind, dst.Kind = AddrLID, AddrLID
		binary.BigEndian.PutUint16(src.b[:], f.LRH.SLID())
		binary.BigEndian.PutUint16(dst.b[:], f.LRH.DLID())
	default:
		src.Kind, dst.Kind = AddrNone, AddrNone
	}
}
