package pcap

import (
	"encoding/binary"
	"fmt"

	"github.com/rocekit/rocekit"
)

// LinkType is a LINKTYPE_ value from the tcpdump.org registry: what a
// record's bytes start with.
type LinkType uint16

// The link types this package reads, writes and strips.
const (
	LinkTypeEthernet   LinkType = 1   // LINKTYPE_ETHERNET: Ethernet II / 802.3 frame
	LinkTypeRaw12      LinkType = 12  // DLT_RAW as some systems write it: raw IPv4 or IPv6
	LinkTypeRaw        LinkType = 101 // LINKTYPE_RAW: raw IPv4 or IPv6
	LinkTypeLinuxSLL   LinkType = 113 // LINKTYPE_LINUX_SLL: 16-byte Linux cooked header
	LinkTypeERF        LinkType = 197 // LINKTYPE_ERF: Endace ERF record
	LinkTypeIPv4       LinkType = 228 // LINKTYPE_IPV4: raw IPv4
	LinkTypeIPv6       LinkType = 229 // LINKTYPE_IPV6: raw IPv6
	LinkTypeInfiniBand LinkType = 247 // LINKTYPE_INFINIBAND: native IB packet from the LRH
	LinkTypeLinuxSLL2  LinkType = 276 // LINKTYPE_LINUX_SLL2: 20-byte Linux cooked header v2
)

// String returns the link type's name, or "LinkType(N)" for one this
// package does not know.
func (t LinkType) String() string {
	switch t {
	case LinkTypeEthernet:
		return "Ethernet"
	case LinkTypeRaw12, LinkTypeRaw:
		return "Raw IP"
	case LinkTypeLinuxSLL:
		return "Linux SLL"
	case LinkTypeERF:
		return "ERF"
	case LinkTypeIPv4:
		return "IPv4"
	case LinkTypeIPv6:
		return "IPv6"
	case LinkTypeInfiniBand:
		return "InfiniBand"
	case LinkTypeLinuxSLL2:
		return "Linux SLL2"
	}
	return fmt.Sprintf("LinkType(%d)", uint16(t))
}

// Known reports whether the package knows t (reads, writes and strips it).
func (t LinkType) Known() bool {
	switch t {
	case LinkTypeEthernet, LinkTypeRaw12, LinkTypeRaw, LinkTypeLinuxSLL, LinkTypeERF,
		LinkTypeIPv4, LinkTypeIPv6, LinkTypeInfiniBand, LinkTypeLinuxSLL2:
		return true
	}
	return false
}

// Layer says what the bytes Network returns start with.
type Layer uint8

const (
	LayerEthernet   Layer = iota + 1 // an Ethernet frame (destination MAC first)
	LayerIPv4                        // an IPv4 packet
	LayerIPv6                        // an IPv6 packet
	LayerEtherType                   // the payload of Payload.EtherType (Linux SLL/SLL2 protocol field)
	LayerInfiniBand                  // a native InfiniBand packet starting at the LRH
)

func (l Layer) String() string {
	switch l {
	case LayerEthernet:
		return "Ethernet"
	case LayerIPv4:
		return "IPv4"
	case LayerIPv6:
		return "IPv6"
	case LayerEtherType:
		return "EtherType payload"
	case LayerInfiniBand:
		return "InfiniBand"
	}
	return fmt.Sprintf("Layer(%d)", uint8(l))
}

// Payload is what is left of a record once the link-layer encapsulation is
// stripped. Data is a sub-slice of the record's bytes (no copy).
type Payload struct {
	Layer Layer
	// EtherType is the protocol that Data carries when the link layer says
	// so: the Linux SLL/SLL2 protocol field (0x0800 for LayerIPv4, 0x86DD for
	// LayerIPv6, anything else for LayerEtherType); 0 otherwise.
	EtherType uint16
	Data      []byte
	// Cut is how many bytes at the end of the packet the capture did not
	// keep (a snap length, a header-only capture mode): the record's
	// original length less its captured length (Record.Network), or an ERF
	// header's wire length less the bytes stored. 0 when the whole packet
	// was captured.
	Cut int
}

// EtherTypes Network maps to LayerIPv4 and LayerIPv6.
const (
	etherTypeIPv4 = 0x0800
	etherTypeIPv6 = 0x86DD
)

// ERF record types Network understands.
const (
	erfTypeEth            = 2
	erfTypeColorEth       = 11
	erfTypeDSMColorEth    = 16
	erfTypeColorHashEth   = 20
	erfTypeInfiniBand     = 21
	erfTypeIPv4           = 22
	erfTypeIPv6           = 23
	erfTypeInfiniBandLink = 25
)

// ERFHeaderLen is the size of an ERF record header without extension headers.
const ERFHeaderLen = 16

// Network strips the link-layer encapsulation of lt from data and says what
// the rest starts with. It does not copy and does not allocate unless it
// returns an error (a *rocekit.HeaderError).
//
//   - Ethernet: the frame itself (LayerEthernet).
//   - Raw IP (12, 101): LayerIPv4 or LayerIPv6 by the version nibble.
//   - IPv4 (228), IPv6 (229): the packet.
//   - Linux SLL (113) and SLL2 (276): the payload after the cooked header,
//     with EtherType from its protocol field (LayerIPv4/LayerIPv6 for
//     0x0800/0x86DD, LayerEtherType otherwise).
//   - ERF (197): the 16-byte header and any extension headers are skipped;
//     types 21 (INFINIBAND) and 25 (INFINIBAND_LINK) give LayerInfiniBand,
//     the Ethernet types (2, 11, 16, 20) skip 2 more bytes of pad and give
//     LayerEthernet, 22 and 23 give IPv4 and IPv6. The payload is cut to the
//     header's wlen when fewer bytes are on the wire than stored (rlen
//     alignment padding); rlen is not checked, since some writers do not
//     store the padding it counts. When fewer bytes are stored than wlen
//     says were on the wire, Cut says how many are missing.
//   - InfiniBand (247): the packet itself, LRH first.
func Network(lt LinkType, data []byte) (Payload, error) {
	switch lt {
	case LinkTypeEthernet:
		if len(data) < 14 {
			return Payload{}, rocekit.Truncated("ethernet", 14, len(data))
		}
		return Payload{Layer: LayerEthernet, Data: data}, nil
	case LinkTypeRaw12, LinkTypeRaw:
		if len(data) < 1 {
			return Payload{}, rocekit.Truncated("raw", 1, 0)
		}
		switch data[0] >> 4 {
		case 4:
			return Payload{Layer: LayerIPv4, EtherType: etherTypeIPv4, Data: data}, nil
		case 6:
			return Payload{Layer: LayerIPv6, EtherType: etherTypeIPv6, Data: data}, nil
		}
		return Payload{}, rocekit.Invalid("raw", "version", "%d, want 4 or 6", data[0]>>4)
	case LinkTypeIPv4:
		return Payload{Layer: LayerIPv4, EtherType: etherTypeIPv4, Data: data}, nil
	case LinkTypeIPv6:
		return Payload{Layer: LayerIPv6, EtherType: etherTypeIPv6, Data: data}, nil
	case LinkTypeLinuxSLL:
		if len(data) < 16 {
			return Payload{}, rocekit.Truncated("sll", 16, len(data))
		}
		return byEtherType(binary.BigEndian.Uint16(data[14:16]), data[16:]), nil
	case LinkTypeLinuxSLL2:
		if len(data) < 20 {
			return Payload{}, rocekit.Truncated("sll2", 20, len(data))
		}
		return byEtherType(binary.BigEndian.Uint16(data[0:2]), data[20:]), nil
	case LinkTypeERF:
		return erfPayload(data)
	case LinkTypeInfiniBand:
		return Payload{Layer: LayerInfiniBand, Data: data}, nil
	}
	return Payload{}, rocekit.Invalid("link", "type", "%d is not a known link type", uint16(lt))
}

func byEtherType(et uint16, data []byte) Payload {
	switch et {
	case etherTypeIPv4:
		return Payload{Layer: LayerIPv4, EtherType: et, Data: data}
	case etherTypeIPv6:
		return Payload{Layer: LayerIPv6, EtherType: et, Data: data}
	}
	return Payload{Layer: LayerEtherType, EtherType: et, Data: data}
}

func erfPayload(data []byte) (Payload, error) {
	if len(data) < ERFHeaderLen {
		return Payload{}, rocekit.Truncated("erf", ERFHeaderLen, len(data))
	}
	typ := data[8]
	wlen := int(binary.BigEndian.Uint16(data[14:16]))
	off := ERFHeaderLen
	if typ&0x80 != 0 {
		for more := true; more; {
			if len(data) < off+8 {
				return Payload{}, &rocekit.HeaderError{Header: "erf", Field: "extension", Err: rocekit.ErrTruncated,
					Need: off + 8, Have: len(data), Detail: "extension headers"}
			}
			more = data[off]&0x80 != 0
			off += 8
		}
	}
	var p Payload
	switch typ & 0x7F {
	case erfTypeInfiniBand, erfTypeInfiniBandLink:
		p.Layer = LayerInfiniBand
	case erfTypeEth, erfTypeColorEth, erfTypeDSMColorEth, erfTypeColorHashEth:
		off += 2 // pad before the Ethernet frame
		if len(data) < off {
			return Payload{}, &rocekit.HeaderError{Header: "erf", Field: "pad", Err: rocekit.ErrTruncated,
				Need: off, Have: len(data)}
		}
		p.Layer = LayerEthernet
	case erfTypeIPv4:
		p.Layer, p.EtherType = LayerIPv4, etherTypeIPv4
	case erfTypeIPv6:
		p.Layer, p.EtherType = LayerIPv6, etherTypeIPv6
	default:
		return Payload{}, rocekit.Invalid("erf", "type", "%d carries no Ethernet, IP or InfiniBand packet", typ&0x7F)
	}
	p.Data = data[off:]
	if wlen > 0 && wlen < len(p.Data) {
		p.Data = p.Data[:wlen]
	}
	p.Cut = max(wlen-len(p.Data), 0)
	return p, nil
}

// erfTime returns the timestamp of the ERF record in data (64-bit little-endian
// fixed point, 32 bits of seconds and 32 of binary fraction), rounded to the
// nearest nanosecond as Wireshark does. ok is false when data is too short.
func erfTime(data []byte) (sec int64, nsec int64, ok bool) {
	if len(data) < 8 {
		return 0, 0, false
	}
	ts := binary.LittleEndian.Uint64(data[0:8])
	sec = int64(ts >> 32)
	ns := (ts & 0xFFFFFFFF) * 1_000_000_000
	ns += (ns & 0x80000000) << 1 // round to nearest
	nsec = int64(ns >> 32)
	if nsec >= 1_000_000_000 {
		nsec -= 1_000_000_000
		sec++
	}
	return sec, nsec, true
}
