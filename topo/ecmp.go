package topo

import (
	"encoding/binary"
	"math/bits"
	"net/netip"
)

// FiveTuple is what a switch hashes to choose among equal-cost next hops.
// For RoCEv2, Proto is 17 (UDP), DstPort 4791 and SrcPort the value of
// packet.UDPSourcePort for the QP pair.
type FiveTuple struct {
	Src, Dst         netip.Addr
	Proto            uint8
	SrcPort, DstPort uint16
}

// FlowHash returns the 32-bit MurmurHash3 (x86_32 variant) with this seed
// of the 37-byte key: the source and destination addresses as 16 bytes
// each (IPv4 as IPv4-mapped IPv6), source port and destination port
// big-endian, then the protocol. It is deterministic and does not allocate.
func FlowHash(seed uint32, ft FiveTuple) uint32 {
	var key [37]byte
	s, d := ft.Src.As16(), ft.Dst.As16()
	copy(key[0:16], s[:])
	copy(key[16:32], d[:])
	binary.BigEndian.PutUint16(key[32:], ft.SrcPort)
	binary.BigEndian.PutUint16(key[34:], ft.DstPort)
	key[36] = ft.Proto
	return murmur3(key[:], seed)
}

// FlowHashV4 is FlowHash of an IPv4 5-tuple given as bytes, as a switch
// reads it from a frame: the same value, without building netip.Addrs.
func FlowHashV4(seed uint32, src, dst [4]byte, proto uint8, srcPort, dstPort uint16) uint32 {
	var key [37]byte
	key[10], key[11] = 0xff, 0xff
	copy(key[12:16], src[:])
	key[26], key[27] = 0xff, 0xff
	copy(key[28:32], dst[:])
	binary.BigEndian.PutUint16(key[32:], srcPort)
	binary.BigEndian.PutUint16(key[34:], dstPort)
	key[36] = proto
	return murmur3(key[:], seed)
}

// SwitchSeed returns the ECMP hash seed of a switch: the MurmurHash3
// finaliser of its id plus one, so that neighbouring switches hash the same
// flow differently (a single shared seed would polarise ECMP: every tier
// would make the same choice).
func SwitchSeed(id NodeID) uint32 { return fmix32(uint32(id) + 1) }

// Pick returns hops[hash mod len(hops)], or NoPort if hops is empty.
func Pick(hops []Port, hash uint32) Port {
	if len(hops) == 0 {
		return NoPort
	}
	return hops[hash%uint32(len(hops))]
}

// SwitchHash is the hash a switch with seed picks a next hop by, from the
// flow's key FlowHash(0, ft): the MurmurHash3 finaliser of key xor seed. A
// flow's key is computed once (by the sender, which has the 5-tuple at
// hand), and every switch mixes it with its own seed; the finaliser's
// avalanche makes the choices of two switches independent.
func SwitchHash(seed, key uint32) uint32 { return fmix32(key ^ seed) }

// ECMP returns the egress port switch at chooses for a flow to host dst:
// Pick(NextHops(at, dst), SwitchHash(SwitchSeed(at), FlowHash(0, ft))).
// NoPort if there is no next hop.
func (t *Topology) ECMP(at, dst NodeID, ft FiveTuple) Port {
	hops := t.NextHops(at, dst)
	if len(hops) <= 1 {
		return Pick(hops, 0)
	}
	return Pick(hops, SwitchHash(SwitchSeed(at), FlowHash(0, ft)))
}

func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

func murmur3(data []byte, seed uint32) uint32 {
	const c1, c2 = 0xcc9e2d51, 0x1b873593
	h := seed
	n := len(data) / 4
	for i := 0; i < n; i++ {
		k := binary.LittleEndian.Uint32(data[4*i:])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	tail := data[4*n:]
	var k uint32
	switch len(tail) {
	case 3:
		k ^= uint32(tail[2]) << 16
		fallthrough
	case 2:
		k ^= uint32(tail[1]) << 8
		fallthrough
	case 1:
		k ^= uint32(tail[0])
		k *= c1
		k = bits.RotateLeft32(k, 15)
		k *= c2
		h ^= k
	}
	h ^= uint32(len(data))
	return fmix32(h)
}
