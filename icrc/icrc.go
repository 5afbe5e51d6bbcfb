// Package icrc computes and checks the InfiniBand invariant CRC (ICRC) of
// RoCEv2 (IPv4 and IPv6), RoCEv1 and native InfiniBand packets, and the
// variant CRC (VCRC) of native InfiniBand packets (ib-facts.md §3).
//
// The ICRC is CRC-32 (IEEE, reflected, as hash/crc32.ChecksumIEEE) over a
// pseudo packet in which every field a switch or router may change is set to
// all ones. Nothing is copied or written: masked bytes are masked in
// registers as they are read, then the CRC continues over the rest of the
// packet in place.
//
// Every function takes the packet from its network header (IPv4, IPv6, GRH or
// LRH) through the last pad byte, with the ICRC itself excluded. The ICRC is
// sent least-significant byte first: use Put and Get to move it to and from
// the wire.
package icrc

import (
	"encoding/binary"
	"hash/crc32"

	"github.com/rocekit/rocekit"
)

// Len is the size of the ICRC on the wire.
const Len = 4

// VCRCLen is the size of the VCRC on the wire.
const VCRCLen = 2

// seed is crc32.ChecksumIEEE of eight 0xFF bytes: the state after the
// all-ones stand-in for the LRH that RoCE and global IB packets start with
// (ib-facts.md §3.2).
const seed = 0x2144DF1C

const (
	bthLen  = 12
	udpLen  = 8
	ipv6Len = 40
	grhLen  = 40
	lrhLen  = 8
)

// Put writes v into b[0:4] in wire order (least significant byte first).
func Put(b []byte, v uint32) { binary.LittleEndian.PutUint32(b, v) }

// Get reads an ICRC from b[0:4] in wire order.
func Get(b []byte) uint32 { return binary.LittleEndian.Uint32(b) }

// On amd64 CPUs with carry-less multiply (fold.go: AVX-512, AVX2 or SSE
// kernels, the widest the CPU runs), the whole packet goes through one
// kernel that masks in registers. Elsewhere (other architectures, or the
// rare x86-64 CPU without PCLMULQDQ) the masked
// head of the packet is never written anywhere: it is read eight bytes at a
// time, ORed in a register with a read-only mask that has 0xFF
// (or 0xF0 for the LRH VL nibble) where the field is masked, and fed to a
// slicing-by-8 CRC. The rest of the packet goes to hash/crc32 in place, cut so
// that it is a whole number of 16-byte blocks (its vector path takes those
// without a byte-at-a-time tail). An earlier version masked a copy of the
// head; the vector loads then hit bytes still in the store buffer and
// stalled, which cost more than the CRC itself on short packets.

// Calc is kept for callers that hold one per goroutine; ICRC computation
// needs no scratch space, and its zero value is ready to use.
type Calc struct{}

// IPv4 returns the ICRC of a RoCEv2 packet over IPv4: b runs from the first
// byte of the IPv4 header through the pad. TOS, TTL, header checksum, UDP
// checksum and BTH byte 4 (FECN, BECN, Resv6) are masked. IPv4 options, where
// present, are covered as they are (ib-facts.md §3.1 leaves this unverified).
func IPv4(b []byte) (uint32, error) {
	if len(b) < 20 {
		return 0, rocekit.Truncated("ipv4", 20, len(b))
	}
	ihl := int(b[0] & 0x0F)
	if ihl < 5 {
		return 0, rocekit.Invalid("ipv4", "IHL", "%d bytes, less than 20", ihl*4)
	}
	return ipv4Shapes[ihl].sum(b)
}

// IPv6 returns the ICRC of a RoCEv2 packet over IPv6: b runs from the first
// byte of the IPv6 header through the pad. Traffic class, flow label, hop
// limit, UDP checksum and BTH byte 4 are masked.
func IPv6(b []byte) (uint32, error) {
	return ipv6Shape.sum(b)
}

// GRH returns the ICRC of a packet that starts with a GRH: RoCEv1 (after the
// Ethernet header). b runs from the first GRH byte through the pad.
func GRH(b []byte) (uint32, error) {
	return grhShape.sum(b)
}

// LRH returns the ICRC of a native InfiniBand packet: b runs from the first
// LRH byte through the pad (ICRC and VCRC excluded). With LNH 3 (GRH follows)
// the whole LRH counts as all ones and the GRH is masked; with LNH 2 the LRH
// is covered as sent but with VL set to 0xF. Other LNH values carry no IBA
// transport and give an error.
func LRH(b []byte) (uint32, error) {
	if len(b) < lrhLen {
		return 0, rocekit.Truncated("lrh", lrhLen, len(b))
	}
	switch lnh := b[1] & 0x3; lnh {
	case 3:
		return GRH(b[lrhLen:])
	case 2:
		return lrhShape.sum(b)
	default:
		return 0, rocekit.Invalid("lrh", "LNH", "%d carries no IBA transport header", lnh)
	}
}

// IPv4 is IPv4 for callers holding a Calc.
func (*Calc) IPv4(b []byte) (uint32, error) { return IPv4(b) }

// IPv6 is IPv6 for callers holding a Calc.
func (*Calc) IPv6(b []byte) (uint32, error) { return IPv6(b) }

// GRH is GRH for callers holding a Calc.
func (*Calc) GRH(b []byte) (uint32, error) { return GRH(b) }

// LRH is LRH for callers holding a Calc.
func (*Calc) LRH(b []byte) (uint32, error) { return LRH(b) }

// Masks, per packet shape, of the bytes from the network header through the
// BTH: 0xFF where the byte is masked, 0xF0 for the LRH VL nibble, 0 where it
// is covered as sent (ib-facts.md §3.1).
var (
	ipv4Masks [16][]byte // by IHL 5..15
	ipv6Mask  [ipv6Len + udpLen + bthLen]byte
	grhMask   [grhLen + bthLen]byte
	lrhMask   [lrhLen + bthLen]byte
)

func init() {
	for ihl := 5; ihl < 16; ihl++ {
		hl := ihl * 4
		m := make([]byte, hl+udpLen+bthLen)
		m[1] = 0xFF                   // TOS (DSCP + ECN)
		m[8] = 0xFF                   // TTL
		m[10], m[11] = 0xFF, 0xFF     // header checksum
		m[hl+6], m[hl+7] = 0xFF, 0xFF // UDP checksum
		m[hl+udpLen+4] = 0xFF         // BTH FECN/BECN/Resv6
		ipv4Masks[ihl] = m
	}
	maskGRH(ipv6Mask[:])
	ipv6Mask[ipv6Len+6], ipv6Mask[ipv6Len+7] = 0xFF, 0xFF
	ipv6Mask[ipv6Len+udpLen+4] = 0xFF
	maskGRH(grhMask[:])
	grhMask[grhLen+4] = 0xFF
	lrhMask[0] = 0xF0 // VL
	lrhMask[lrhLen+4] = 0xFF
	for ihl := 5; ihl < 16; ihl++ {
		ipv4Shapes[ihl] = newShape(ipv4Masks[ihl], seed)
	}
	ipv6Shape = newShape(ipv6Mask[:], seed)
	grhShape = newShape(grhMask[:], seed)
	lrhShape = newShape(lrhMask[:], 0)
}

// The packet shapes: each mask with its starting CRC.
var (
	ipv4Shapes                    [16]*shape
	ipv6Shape, grhShape, lrhShape *shape
)

// sum returns the ICRC of b with s applied: by the vector kernel where the
// CPU has it, else by the portable code. b must hold at least the masked
// head.
func (s *shape) sum(b []byte) (uint32, error) {
	if len(b) < len(s.mask) {
		return 0, rocekit.Truncated("icrc", len(s.mask), len(b))
	}
	return sumBy(kernel, b, s), nil
}

// maskGRH marks traffic class, flow label and hop limit of an IPv6 header or
// GRH: bytes 0-3 become 0xVF FF FF FF, byte 7 0xFF.
func maskGRH(m []byte) {
	m[0] = 0x0F
	m[1], m[2], m[3] = 0xFF, 0xFF, 0xFF
	m[7] = 0xFF
}

// finish returns the CRC (hash/crc32 form) of b, continuing from crc, with
// mask ORed into the first len(mask) bytes.
func finish(crc uint32, b, mask []byte) uint32 {
	h := len(b)
	if rest := len(b) - len(mask); rest >= 64 {
		h = len(mask) + rest%16
	}
	raw := ^crc
	i := 0
	for ; i+8 <= h; i += 8 {
		w := binary.LittleEndian.Uint64(b[i:])
		if i+8 <= len(mask) {
			w |= binary.LittleEndian.Uint64(mask[i:])
		} else {
			for k := i; k < len(mask) && k < i+8; k++ {
				w |= uint64(mask[k]) << (8 * (k - i))
			}
		}
		raw ^= uint32(w)
		hi := uint32(w >> 32)
		raw = slicing8[7][raw&0xFF] ^ slicing8[6][raw>>8&0xFF] ^ slicing8[5][raw>>16&0xFF] ^ slicing8[4][raw>>24] ^
			slicing8[3][hi&0xFF] ^ slicing8[2][hi>>8&0xFF] ^ slicing8[1][hi>>16&0xFF] ^ slicing8[0][hi>>24]
	}
	for ; i < h; i++ {
		x := b[i]
		if i < len(mask) {
			x |= mask[i]
		}
		raw = slicing8[0][byte(raw)^x] ^ raw>>8
	}
	crc = ^raw
	if h < len(b) {
		crc = crc32.Update(crc, crc32.IEEETable, b[h:])
	}
	return crc
}

// VCRC returns the variant CRC of a native InfiniBand packet: CRC-16 with
// polynomial 0x100B (reflected 0xD008), preset 0xFFFF, final complement, over
// b = LRH through ICRC (ib-facts.md §3.3). It is sent least significant byte
// first: use PutVCRC and GetVCRC.
func VCRC(b []byte) uint16 {
	c := uint16(0xFFFF)
	for len(b) >= 4 {
		c ^= uint16(b[0]) | uint16(b[1])<<8
		c = vcrcTable[3][c&0xFF] ^ vcrcTable[2][c>>8] ^ vcrcTable[1][b[2]] ^ vcrcTable[0][b[3]]
		b = b[4:]
	}
	for _, x := range b {
		c = vcrcTable[0][byte(c)^x] ^ c>>8
	}
	return ^c
}

// PutVCRC writes v into b[0:2] in wire order.
func PutVCRC(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }

// GetVCRC reads a VCRC from b[0:2] in wire order.
func GetVCRC(b []byte) uint16 { return binary.LittleEndian.Uint16(b) }

// vcrcTable is a slicing-by-4 table for the reflected polynomial 0xD008.
var vcrcTable [4][256]uint16

func init() {
	for i := 0; i < 256; i++ {
		c := uint16(i)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
		vcrcTable[0][i] = c
	}
	for i := 0; i < 256; i++ {
		c := vcrcTable[0][i]
		for t := 1; t < 4; t++ {
			c = vcrcTable[0][c&0xFF] ^ c>>8
			vcrcTable[t][i] = c
		}
	}
}

// Kernel names the code that computes ICRCs on this machine: "avx512",
// "avx2" or "sse" (the carry-less multiply kernels, widest first, on amd64),
// or "portable". Benchmark figures depend on it; `rocekit version` prints
// it.
func Kernel() string { return kernelNames[kernel] }
