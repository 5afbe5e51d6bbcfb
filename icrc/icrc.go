// Package icrc computes and checks the InfiniBand invariant CRC (ICRC) of
// RoCEv2 (IPv4 and IPv6), RoCEv1 and native InfiniBand packets, and the
// variant CRC (VCRC) of native InfiniBand packets (ib-facts.md §3).
//
// The ICRC is CRC-32 (IEEE, reflected, as hash/crc32.ChecksumIEEE) over a
// pseudo packet in which every field a switch or router may change is set to
// all ones. Nothing is copied but the few header bytes that need masking: they
// are masked in a small stack buffer, then the CRC continues over the rest of
// the packet in place.
//
// Every function takes the packet from its network header (IPv4, IPv6, GRH or
// LRH) through the last pad byte, with the ICRC itself excluded. The ICRC is
// sent least-significant byte first: use Put and Get to move it to and from
// the wire.
package icrc

import (
	"encoding/binary"
	"hash/crc32"
	"sync"

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

// Calc computes ICRCs without allocating: hash/crc32 keeps the buffers it
// is given on the heap, so the masked copy of the headers lives in this
// reusable scratch space. A Calc must not be used by two goroutines at once.
// Its zero value is ready to use. The package-level functions borrow one
// from a pool.
type Calc struct {
	buf [prefixMax + scratch]byte
}

// scratch is how much of the packet is copied before masking: at least the
// largest masked prefix, and enough that short packets go to the CRC in one
// call.
const scratch = 128

// prefixMax is room for a forcing prefix in front of the copy (see finish).
const prefixMax = 64

var pool = sync.Pool{New: func() any { return new(Calc) }}

// IPv4 returns the ICRC of a RoCEv2 packet over IPv4: b runs from the first
// byte of the IPv4 header through the pad. TOS, TTL, header checksum, UDP
// checksum and BTH byte 4 (FECN, BECN, Resv6) are masked. IPv4 options, where
// present, are covered as they are (ib-facts.md §3.1 leaves this unverified).
func IPv4(b []byte) (uint32, error) {
	c := pool.Get().(*Calc)
	v, err := c.IPv4(b)
	pool.Put(c)
	return v, err
}

// IPv6 returns the ICRC of a RoCEv2 packet over IPv6: b runs from the first
// byte of the IPv6 header through the pad. Traffic class, flow label, hop
// limit, UDP checksum and BTH byte 4 are masked.
func IPv6(b []byte) (uint32, error) {
	c := pool.Get().(*Calc)
	v, err := c.IPv6(b)
	pool.Put(c)
	return v, err
}

// GRH returns the ICRC of a packet that starts with a GRH: RoCEv1 (after the
// Ethernet header). b runs from the first GRH byte through the pad.
func GRH(b []byte) (uint32, error) {
	c := pool.Get().(*Calc)
	v, err := c.GRH(b)
	pool.Put(c)
	return v, err
}

// LRH returns the ICRC of a native InfiniBand packet: b runs from the first
// LRH byte through the pad (ICRC and VCRC excluded). With LNH 3 (GRH follows)
// the whole LRH counts as all ones and the GRH is masked; with LNH 2 the LRH
// is covered as sent but with VL set to 0xF. Other LNH values carry no IBA
// transport and give an error.
func LRH(b []byte) (uint32, error) {
	c := pool.Get().(*Calc)
	v, err := c.LRH(b)
	pool.Put(c)
	return v, err
}

// IPv4 is the allocation-free form of the package-level IPv4.
func (c *Calc) IPv4(b []byte) (uint32, error) {
	if len(b) < 20 {
		return 0, rocekit.Truncated("ipv4", 20, len(b))
	}
	ihl := int(b[0]&0x0F) * 4
	if ihl < 20 {
		return 0, rocekit.Invalid("ipv4", "IHL", "%d bytes, less than 20", ihl)
	}
	n := ihl + udpLen + bthLen
	if len(b) < n {
		return 0, rocekit.Truncated("icrc", n, len(b))
	}
	p, rest := c.split(b)
	p[1] = 0xFF                     // TOS (DSCP + ECN)
	p[8] = 0xFF                     // TTL
	p[10], p[11] = 0xFF, 0xFF       // header checksum
	p[ihl+6], p[ihl+7] = 0xFF, 0xFF // UDP checksum
	p[ihl+udpLen+4] = 0xFF          // BTH FECN/BECN/Resv6
	return c.finish(forceSeed, p, rest), nil
}

// IPv6 is the allocation-free form of the package-level IPv6.
func (c *Calc) IPv6(b []byte) (uint32, error) {
	const n = ipv6Len + udpLen + bthLen
	if len(b) < n {
		return 0, rocekit.Truncated("icrc", n, len(b))
	}
	p, rest := c.split(b)
	maskGRH(p)
	p[ipv6Len+6], p[ipv6Len+7] = 0xFF, 0xFF
	p[ipv6Len+udpLen+4] = 0xFF
	return c.finish(forceSeed, p, rest), nil
}

// GRH is the allocation-free form of the package-level GRH.
func (c *Calc) GRH(b []byte) (uint32, error) {
	const n = grhLen + bthLen
	if len(b) < n {
		return 0, rocekit.Truncated("icrc", n, len(b))
	}
	p, rest := c.split(b)
	maskGRH(p)
	p[grhLen+4] = 0xFF
	return c.finish(forceSeed, p, rest), nil
}

// LRH is the allocation-free form of the package-level LRH.
func (c *Calc) LRH(b []byte) (uint32, error) {
	if len(b) < lrhLen {
		return 0, rocekit.Truncated("lrh", lrhLen, len(b))
	}
	switch lnh := b[1] & 0x3; lnh {
	case 3:
		return c.GRH(b[lrhLen:])
	case 2:
		const n = lrhLen + bthLen
		if len(b) < n {
			return 0, rocekit.Truncated("icrc", n, len(b))
		}
		p, rest := c.split(b)
		p[0] |= 0xF0 // VL
		p[lrhLen+4] = 0xFF
		return c.finish(forceLocal, p, rest), nil
	default:
		return 0, rocekit.Invalid("lrh", "LNH", "%d carries no IBA transport header", lnh)
	}
}

// split copies the head of b into the scratch buffer for masking and returns
// the copy and the part of b left to read in place. Packets up to the buffer
// size are copied whole. For longer ones the copy is 80 bytes plus len(b) mod
// 16 (80 holds every masked byte: IPv4 with 40 bytes of options masks byte
// 72), so the part read in place is a whole number of 16-byte blocks.
func (c *Calc) split(b []byte) (masked, rest []byte) {
	k := len(b)
	if k > scratch {
		k = 80 + k%16
	}
	copy(c.buf[prefixMax:prefixMax+k], b)
	return c.buf[prefixMax : prefixMax+k], b[k:]
}

// finish runs the CRC over the masked copy and then the rest in place.
//
// hash/crc32 is fast (carry-less multiply) only for runs of 64 bytes or more
// and only on whole 16-byte blocks; the rest goes a byte at a time. So the
// masked copy is preceded by a forcing prefix: f bytes chosen (at init) so
// that the CRC state after them is exactly the state the packet's CRC starts
// from (after the eight 0xFF bytes, or the plain initial state for a local
// IB packet). f makes the copy plus prefix at least 64 bytes and a multiple
// of 16, so both calls run entirely on the fast path.
func (c *Calc) finish(t *forceTable, masked, rest []byte) uint32 {
	k := len(masked)
	f := 16 - k%16
	for f < 4 || f+k < 64 {
		f += 16
	}
	start := prefixMax - f
	copy(c.buf[start:prefixMax], t[f][:f])
	crc := crc32.Update(0, crc32.IEEETable, c.buf[start:prefixMax+k])
	if len(rest) > 0 {
		crc = crc32.Update(crc, crc32.IEEETable, rest)
	}
	return crc
}

// forceTable[f] holds f bytes after which crc32.Update(0, IEEETable, ...)
// equals the table's target checksum.
type forceTable [prefixMax + 1][prefixMax]byte

var (
	forceSeed  = makeForceTable(seed) // RoCE and global IB: after 8 x 0xFF
	forceLocal = makeForceTable(0)    // local IB: the plain initial state
)

func makeForceTable(target uint32) *forceTable {
	t := new(forceTable)
	for f := 4; f <= prefixMax; f++ {
		w := solveForce(f, target)
		binary.LittleEndian.PutUint32(t[f][f-4:], w)
	}
	return t
}

// solveForce finds the last four bytes w of an f-byte run (zeros before
// them) whose CRC is target. The CRC is affine in w over GF(2), so w solves
// a 32x32 linear system.
func solveForce(f int, target uint32) uint32 {
	buf := make([]byte, f)
	g := func(w uint32) uint32 {
		binary.LittleEndian.PutUint32(buf[f-4:], w)
		return crc32.Update(0, crc32.IEEETable, buf)
	}
	c0 := g(0)
	var col [32]uint32
	for i := range col {
		col[i] = g(1<<i) ^ c0
	}
	// Gaussian elimination on the columns: find w with XOR of col[i] for
	// set bits i equal to y.
	y := target ^ c0
	var basis [32]uint32 // basis[bit] = combined column whose top bit is bit
	var combo [32]uint32 // which w bits make up basis[bit]
	for i, v := range col {
		m := uint32(1) << i
		for b := 31; b >= 0; b-- {
			if v>>b&1 == 0 {
				continue
			}
			if basis[b] == 0 {
				basis[b], combo[b] = v, m
				break
			}
			v ^= basis[b]
			m ^= combo[b]
		}
	}
	var w uint32
	for b := 31; b >= 0; b-- {
		if y>>b&1 != 0 {
			if basis[b] == 0 {
				panic("icrc: forcing system is singular")
			}
			y ^= basis[b]
			w ^= combo[b]
		}
	}
	return w
}

// maskGRH sets traffic class, flow label and hop limit of an IPv6 header or
// GRH to all ones: bytes 0-3 become 0xVF FF FF FF, byte 7 0xFF.
func maskGRH(p []byte) {
	p[0] |= 0x0F
	p[1], p[2], p[3] = 0xFF, 0xFF, 0xFF
	p[7] = 0xFF
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
