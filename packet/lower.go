package packet

import (
	"encoding/binary"
	"net/netip"

	"github.com/rocekit/rocekit"
)

// Lower-layer views. They are rocekit's own, not gopacket's, because frame
// parsing must not allocate and must say exactly which length is wrong.

// Ethernet is a view over a 14-byte Ethernet II header.
type Ethernet []byte

// EthernetLen is the size of an Ethernet II header without VLAN tags.
const EthernetLen = 14

func (h Ethernet) Dst() [6]byte      { return [6]byte(h[0:6]) }
func (h Ethernet) Src() [6]byte      { return [6]byte(h[6:12]) }
func (h Ethernet) EtherType() uint16 { return binary.BigEndian.Uint16(h[12:]) }

// VLAN is a view over a 4-byte 802.1Q tag as it follows a TPID: TCI, then
// the EtherType of what follows.
type VLAN []byte

// VLANLen is the size of a VLAN tag after its TPID.
const VLANLen = 4

func (h VLAN) PCP() uint8            { return h[0] >> 5 }
func (h VLAN) DEI() bool             { return h[0]&0x10 != 0 }
func (h VLAN) VID() uint16           { return binary.BigEndian.Uint16(h[0:]) & 0x0FFF }
func (h VLAN) EtherType() uint16     { return binary.BigEndian.Uint16(h[2:]) }
func (h VLAN) TCI() uint16           { return binary.BigEndian.Uint16(h[0:]) }
func (h VLAN) setTCI(v uint16)       { binary.BigEndian.PutUint16(h[0:], v) }
func (h VLAN) setEtherType(v uint16) { binary.BigEndian.PutUint16(h[2:], v) }

// IPv4 is a view over an IPv4 header (options included).
type IPv4 []byte

// IPv4Len is the size of an IPv4 header without options.
const IPv4Len = 20

func (h IPv4) Version() uint8      { return h[0] >> 4 }
func (h IPv4) IHL() uint8          { return h[0] & 0x0F }
func (h IPv4) HeaderLen() int      { return int(h[0]&0x0F) * 4 }
func (h IPv4) TOS() uint8          { return h[1] }
func (h IPv4) DSCP() uint8         { return h[1] >> 2 }
func (h IPv4) ECN() uint8          { return h[1] & 3 }
func (h IPv4) TotalLength() uint16 { return binary.BigEndian.Uint16(h[2:]) }
func (h IPv4) ID() uint16          { return binary.BigEndian.Uint16(h[4:]) }
func (h IPv4) Flags() uint8        { return h[6] >> 5 }
func (h IPv4) DF() bool            { return h[6]&0x40 != 0 }
func (h IPv4) MF() bool            { return h[6]&0x20 != 0 }
func (h IPv4) FragOffset() uint16  { return binary.BigEndian.Uint16(h[6:]) & 0x1FFF }
func (h IPv4) TTL() uint8          { return h[8] }
func (h IPv4) Protocol() uint8     { return h[9] }
func (h IPv4) Checksum() uint16    { return binary.BigEndian.Uint16(h[10:]) }
func (h IPv4) Src() netip.Addr     { return netip.AddrFrom4([4]byte(h[12:16])) }
func (h IPv4) Dst() netip.Addr     { return netip.AddrFrom4([4]byte(h[16:20])) }

// ComputeChecksum returns the header checksum the header should carry: the
// ones' complement of the ones' complement sum of its 16-bit words, the
// checksum field taken as zero (RFC 791, RFC 1071). A view shorter than its
// IHL says is summed as far as it goes.
func (h IPv4) ComputeChecksum() uint16 {
	n := min(h.HeaderLen(), len(h))
	var s uint64
	i := 0
	if n >= IPv4Len {
		// 32-bit words sum to the same ones' complement sum (2^16 is 1
		// modulo 2^16 - 1); the checksum is the low half of the third.
		s = uint64(binary.BigEndian.Uint32(h[0:])) + uint64(binary.BigEndian.Uint32(h[4:])) +
			uint64(binary.BigEndian.Uint32(h[8:])&0xFFFF0000) + uint64(binary.BigEndian.Uint32(h[12:])) +
			uint64(binary.BigEndian.Uint32(h[16:]))
		i = IPv4Len
	}
	for ; i+1 < n; i += 2 {
		if i != 10 {
			s += uint64(binary.BigEndian.Uint16(h[i:]))
		}
	}
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	return ^uint16(s)
}

// SetTOS sets the TOS byte (DSCP and ECN); switches do this when they mark
// congestion. The header checksum is not updated.
func (h IPv4) SetTOS(v uint8) { h[1] = v }

// SetChecksum writes the header checksum.
func (h IPv4) SetChecksum(v uint16) { binary.BigEndian.PutUint16(h[10:], v) }

func fold(s uint32) uint16 {
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	return uint16(s)
}

// IPv6 is a view over a fixed 40-byte IPv6 header.
type IPv6 []byte

// IPv6Len is the size of the fixed IPv6 header.
const IPv6Len = 40

func (h IPv6) Version() uint8        { return h[0] >> 4 }
func (h IPv6) TrafficClass() uint8   { return uint8(binary.BigEndian.Uint16(h[0:]) >> 4) }
func (h IPv6) FlowLabel() uint32     { return binary.BigEndian.Uint32(h[0:]) & 0xFFFFF }
func (h IPv6) PayloadLength() uint16 { return binary.BigEndian.Uint16(h[4:]) }
func (h IPv6) NextHeader() uint8     { return h[6] }
func (h IPv6) HopLimit() uint8       { return h[7] }
func (h IPv6) Src() netip.Addr       { return netip.AddrFrom16([16]byte(h[8:24])) }
func (h IPv6) Dst() netip.Addr       { return netip.AddrFrom16([16]byte(h[24:40])) }
func (h IPv6) SetTrafficClass(v uint8) {
	binary.BigEndian.PutUint16(h[0:], binary.BigEndian.Uint16(h[0:])&0xF00F|uint16(v)<<4)
}

// UDP is a view over an 8-byte UDP header.
type UDP []byte

// UDPLen is the size of a UDP header.
const UDPLen = 8

// RoCEv2Port is the UDP destination port of RoCEv2.
const RoCEv2Port = 4791

func (h UDP) SrcPort() uint16  { return binary.BigEndian.Uint16(h[0:]) }
func (h UDP) DstPort() uint16  { return binary.BigEndian.Uint16(h[2:]) }
func (h UDP) Length() uint16   { return binary.BigEndian.Uint16(h[4:]) }
func (h UDP) Checksum() uint16 { return binary.BigEndian.Uint16(h[6:]) }

// udpChecksum computes the UDP checksum of segment (header with a zero
// checksum field, and data) with the pseudo header of src and dst addresses.
func udpChecksum(src, dst []byte, segment []byte) uint16 {
	var s uint32
	sum := func(b []byte) {
		for i := 0; i+1 < len(b); i += 2 {
			s += uint32(b[i])<<8 | uint32(b[i+1])
		}
		if len(b)%2 == 1 {
			s += uint32(b[len(b)-1]) << 8
		}
	}
	sum(src)
	sum(dst)
	s += 17 + uint32(len(segment))
	sum(segment[:6])
	sum(segment[8:])
	c := ^fold(s)
	if c == 0 {
		c = 0xFFFF
	}
	return c
}

func truncated(h string, need, have int) error { return rocekit.Truncated(h, need, have) }
