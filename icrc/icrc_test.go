package icrc_test

import (
	"encoding/hex"
	"hash/crc32"
	"strings"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/icrc"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func unhex(t testing.TB, s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// Vectors from ib-facts.md §3.4: whole Ethernet frames (no FCS) whose last
// four bytes are the ICRC. A, B, E, F were made with scapy and three other
// implementations; C and D are real NIC captures.
var vectors = []struct {
	name, frame string
	l3off       int
	kind        string
	icrcWire    string
}{
	{"A RoCEv2/IPv4 SEND Only", "020000000002020000000001080045020038123440004011a52bc0a80101c0a80102c00012b7002400000450ffff000000128000000168656c6c6f20526f43452100d870fd70", 14, "ipv4", "d870fd70"},
	{"B RoCEv2/IPv6 WRITE Only", "02000000000202000000000186dd6021234500301140fd000000000000000000000000000001fd000000000000000000000000000002c00112b7003000000a40ffff0000001180abcdef00000000123456780000123400000008010203040506070897f03724", 14, "ipv6", "97f03724"},
	{"C ConnectX-4 Lx CNP", "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a", 14, "ipv4", "82fd002a"},
	{"D RoCEv1 WRITE Only", "7cfe90753cd87cfe90753cd889156020000000281b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000020a70ffff0000010a80a788bc000055d4c0726000000047b3000000050000000001000000e3d856bb", 14, "grh", "e3d856bb"},
	{"D RoCEv1 Acknowledge", "7cfe90753cd87cfe90753cd889156020000000141b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000021140ffff0000010900a788c00000000525f0c038", 14, "grh", "25f0c038"},
	{"E RoCEv2/IPv4 Acknowledge", "020000000001020000000002080045020030000140004011b766c0a80102c0a80101c00012b7001c00001100ffff00000034000000011f0000054260c0b4", 14, "ipv4", "4260c0b4"},
	{"F RoCEv2 CNP", "020000000001020000000002080045c2003c000240004011b699c0a80102c0a80101c00012b7002800008100ffff400000120000000000000000000000000000000000000000bcd115ff", 14, "ipv4", "bcd115ff"},
}

func compute(kind string, b []byte) (uint32, error) {
	switch kind {
	case "ipv4":
		return icrc.IPv4(b)
	case "ipv6":
		return icrc.IPv6(b)
	case "grh":
		return icrc.GRH(b)
	case "lrh":
		return icrc.LRH(b)
	}
	panic(kind)
}

func TestVectors(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			f := unhex(t, v.frame)
			pkt := f[v.l3off : len(f)-4]
			got, err := compute(v.kind, pkt)
			require.NoError(t, err)
			var w [4]byte
			icrc.Put(w[:], got)
			assert.Equal(t, v.icrcWire, hex.EncodeToString(w[:]))
			assert.Equal(t, got, icrc.Get(f[len(f)-4:]))
		})
	}
}

// The ICRC input of vector A exactly as ib-facts.md §3.4 writes it out, fed
// to the plain library CRC: ties the masking to the documented pseudo packet.
func TestVectorAPseudoPacket(t *testing.T) {
	in := unhex(t, "ffffffffffffffff 45ff003812344000ff11ffffc0a80101c0a80102 c00012b70024ffff 0450ffffff00001280000001 68656c6c6f20526f434521 00")
	assert.Equal(t, uint32(0x70FD70D8), crc32.ChecksumIEEE(in))
}

// masked lists, per kind, offsets (from the start of b) of bytes the ICRC must
// not depend on, with the bit mask within the byte.
func maskedIPv4() map[int]byte {
	return map[int]byte{1: 0xFF, 8: 0xFF, 10: 0xFF, 11: 0xFF, 26: 0xFF, 27: 0xFF, 32: 0xFF}
}

func maskedIPv6() map[int]byte {
	return map[int]byte{0: 0x0F, 1: 0xFF, 2: 0xFF, 3: 0xFF, 7: 0xFF, 46: 0xFF, 47: 0xFF, 52: 0xFF}
}

func maskedGRH() map[int]byte {
	return map[int]byte{0: 0x0F, 1: 0xFF, 2: 0xFF, 3: 0xFF, 7: 0xFF, 44: 0xFF}
}

// Flipping any covered bit changes the ICRC; flipping any masked bit does not.
func TestMaskedAndCoveredBits(t *testing.T) {
	for _, v := range vectors {
		f := unhex(t, v.frame)
		pkt := f[v.l3off : len(f)-4]
		want, _ := compute(v.kind, pkt)
		var masked map[int]byte
		switch v.kind {
		case "ipv4":
			masked = maskedIPv4()
		case "ipv6":
			masked = maskedIPv6()
		case "grh":
			masked = maskedGRH()
		}
		for i := range pkt {
			for bit := 0; bit < 8; bit++ {
				m := byte(1) << bit
				if v.kind == "ipv4" && i == 0 && m&0x0F != 0 {
					continue // IHL: changes where the masked fields are, checked in TestErrors
				}
				pkt[i] ^= m
				got, err := compute(v.kind, pkt)
				pkt[i] ^= m
				require.NoError(t, err)
				if masked[i]&m != 0 {
					assert.Equal(t, want, got, "%s: masked byte %d bit %d moved the ICRC", v.name, i, bit)
				} else {
					assert.NotEqual(t, want, got, "%s: covered byte %d bit %d did not move the ICRC", v.name, i, bit)
				}
			}
		}
	}
}

// refICRC is an independent bit-at-a-time CRC-32 over an explicitly built
// pseudo packet, written from ib-facts.md §3.1/§3.2 without hash/crc32.
func refCRC32(data []byte) uint32 {
	c := uint32(0xFFFFFFFF)
	for _, b := range data {
		c ^= uint32(b)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = c>>1 ^ 0xEDB88320
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

func TestAgainstReferenceIPv4(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		payload := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "payload")
		hdr := rapid.SliceOfN(rapid.Byte(), 40, 40).Draw(t, "hdr")
		hdr[0] = 0x45
		b := append(hdr, payload...)
		got, err := icrc.IPv4(b)
		if err != nil {
			t.Fatal(err)
		}
		p := append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, b...)
		p[8+1], p[8+8], p[8+10], p[8+11], p[8+26], p[8+27], p[8+32] = 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
		if want := refCRC32(p); got != want {
			t.Fatalf("got %08x want %08x", got, want)
		}
	})
}

func TestAgainstReferenceLRHLocal(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 20, 200).Draw(t, "pkt")
		b[1] = b[1]&^3 | 2
		got, err := icrc.LRH(b)
		if err != nil {
			t.Fatal(err)
		}
		p := append([]byte(nil), b...)
		p[0] |= 0xF0
		p[12] = 0xFF
		if want := refCRC32(p); got != want {
			t.Fatalf("got %08x want %08x", got, want)
		}
		// global: LRH counts as all ones, GRH masked
		if len(b) < 60 {
			return
		}
		b[1] |= 3
		got, err = icrc.LRH(b)
		if err != nil {
			t.Fatal(err)
		}
		p = append([]byte(nil), b...)
		for i := 0; i < 8; i++ {
			p[i] = 0xFF
		}
		p[8] |= 0x0F
		p[9], p[10], p[11], p[15], p[52] = 0xFF, 0xFF, 0xFF, 0xFF, 0xFF
		if want := refCRC32(p); got != want {
			t.Fatalf("global: got %08x want %08x", got, want)
		}
	})
}

func refVCRC(data []byte) uint16 {
	c := uint16(0xFFFF)
	for _, b := range data {
		c ^= uint16(b)
		for k := 0; k < 8; k++ {
			if c&1 != 0 {
				c = c>>1 ^ 0xD008
			} else {
				c >>= 1
			}
		}
	}
	return ^c
}

func TestVCRCAgainstReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 0, 300).Draw(t, "pkt")
		if got, want := icrc.VCRC(b), refVCRC(b); got != want {
			t.Fatalf("got %04x want %04x", got, want)
		}
	})
}

func TestErrors(t *testing.T) {
	_, err := icrc.IPv4(make([]byte, 10))
	assert.ErrorIs(t, err, rocekit.ErrTruncated)
	b := make([]byte, 40)
	b[0] = 0x44
	_, err = icrc.IPv4(b)
	assert.ErrorIs(t, err, rocekit.ErrInvalid)
	b[0] = 0x4F // 60-byte header, 80 needed
	_, err = icrc.IPv4(b)
	assert.ErrorIs(t, err, rocekit.ErrTruncated)
	_, err = icrc.IPv6(make([]byte, 59))
	assert.ErrorIs(t, err, rocekit.ErrTruncated)
	_, err = icrc.GRH(make([]byte, 51))
	assert.ErrorIs(t, err, rocekit.ErrTruncated)
	_, err = icrc.LRH(make([]byte, 7))
	assert.ErrorIs(t, err, rocekit.ErrTruncated)
	l := make([]byte, 30)
	l[1] = 1
	_, err = icrc.LRH(l)
	assert.ErrorIs(t, err, rocekit.ErrInvalid)
	l[1] = 2
	_, err = icrc.LRH(l[:19])
	assert.ErrorIs(t, err, rocekit.ErrTruncated)
	l[1] = 3
	_, err = icrc.LRH(l)
	assert.ErrorIs(t, err, rocekit.ErrTruncated)
}

// Each vector kernel against the portable code: every length from the
// shortest packet of each shape to past two 256-byte steps, random bytes,
// every IPv4 header length and every alignment.
func TestVectorKernelMatchesPortable(t *testing.T) {
	ks := icrc.Kernels()
	if len(ks) == 0 {
		t.Skip("this CPU has no AVX-512 or AVX2 carry-less multiply; the portable code is the only path")
	}
	t.Logf("kernels: %v", ks)
	rapid.Check(t, func(t *rapid.T) {
		kind := rapid.SampledFrom([]string{"ipv4", "ipv6", "grh", "lrh2"}).Draw(t, "kind")
		min := map[string]int{"ipv4": 40, "ipv6": 60, "grh": 52, "lrh2": 20}[kind]
		ihl := 5
		if kind == "ipv4" {
			ihl = rapid.IntRange(5, 15).Draw(t, "ihl")
			min = ihl*4 + 20
		}
		n := rapid.IntRange(min, min+1100).Draw(t, "len")
		off := rapid.IntRange(0, 63).Draw(t, "offset") // every alignment
		b := rapid.SliceOfN(rapid.Byte(), n+off, n+off).Draw(t, "b")[off:]
		if kind == "ipv4" {
			b[0] = 0x40 | byte(ihl)
		}
		g, vs := icrc.Paths(kind, b)
		for i, v := range vs {
			if g != v {
				t.Fatalf("%s len %d: portable %08x, %s %08x", kind, n, g, ks[i], v)
			}
		}
	})
}

// Every shape, length and alignment exhaustively for packets of one to
// seven 64-byte chunks, where the first and last chunks meet and the mask
// reaches into the third.
func TestVectorKernelShortPackets(t *testing.T) {
	ks := icrc.Kernels()
	if len(ks) == 0 {
		t.Skip("this CPU has no AVX-512 or AVX2 carry-less multiply; the portable code is the only path")
	}
	buf := make([]byte, 64+450)
	for i := range buf {
		buf[i] = byte(i*131 + 7)
	}
	type shape struct {
		kind     string
		ihl, min int
	}
	shapes := []shape{{"ipv6", 0, 60}, {"grh", 0, 52}, {"lrh2", 0, 20}}
	for ihl := 5; ihl <= 15; ihl++ {
		shapes = append(shapes, shape{"ipv4", ihl, ihl*4 + 20})
	}
	for _, sh := range shapes {
		for off := 0; off < 64; off++ {
			b := buf[off:]
			if sh.kind == "ipv4" {
				b[0] = 0x40 | byte(sh.ihl)
			}
			for n := sh.min; n <= 450; n++ {
				g, vs := icrc.Paths(sh.kind, b[:n])
				for i, v := range vs {
					if g != v {
						t.Fatalf("%s ihl %d offset %d len %d: portable %08x, %s %08x", sh.kind, sh.ihl, off, n, g, ks[i], v)
					}
				}
			}
			buf[off] = byte(off*131 + 7)
		}
	}
}

// The constants' table of powers of x, made by stepping, against x^n mod P
// computed from 1 for each n.
func TestXPowTable(t *testing.T) {
	if !icrc.XPowTableMatches() {
		t.Fatal("xPowTable differs from xPowMod")
	}
}

// reflect33 reverses the low 33 bits of v.
func reflect33(v uint64) uint64 {
	var r uint64
	for i := 0; i < 33; i++ {
		r |= (v >> i & 1) << (32 - i)
	}
	return r
}

// The Barrett constants from their definitions: P = x^32 + the CRC-32
// polynomial, mu = x^64 div P by long division.
func TestBarrettConstants(t *testing.T) {
	const p = 1<<32 | 0x04C11DB7
	// The remainder of x^64 as it is divided, 65 bits in hi (bit 64) and lo.
	hi, lo, mu := uint64(1), uint64(0), uint64(0)
	for k := 32; k >= 0; k-- { // quotient bit x^k: the remainder's x^(32+k)
		var top uint64
		if 32+k == 64 {
			top = hi
		} else {
			top = lo >> (32 + k) & 1
		}
		if top == 1 {
			mu |= 1 << k
			if 32+k == 64 {
				hi = 0
				lo ^= uint64(p&^(1<<32)) << 32
			} else {
				lo ^= p << k
			}
		}
	}
	gotMu, gotP := icrc.BarrettK()
	assert.Equal(t, reflect33(mu), gotMu, "mu")
	assert.Equal(t, reflect33(p), gotP, "P")
}

// Kernel names the kernel in use: the fastest of Kernels, or the portable
// code when there is none.
func TestKernelName(t *testing.T) {
	if ks := icrc.Kernels(); len(ks) > 0 {
		assert.Equal(t, ks[0], icrc.Kernel())
	} else {
		assert.Equal(t, "portable", icrc.Kernel())
	}
}
