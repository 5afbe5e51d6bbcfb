package fuzz

import (
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/deth"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/lrh"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// codecVectors are the worked, verified frames of ib-facts.md §3.4 (Ethernet
// frames without FCS).
var codecVectors = map[string]string{
	"A RoCEv2/IPv4 RC SEND Only":       "020000000002020000000001080045020038123440004011a52bc0a80101c0a80102c00012b7002400000450ffff000000128000000168656c6c6f20526f43452100d870fd70",
	"B RoCEv2/IPv6 RC RDMA WRITE Only": "02000000000202000000000186dd6021234500301140fd000000000000000000000000000001fd000000000000000000000000000002c00112b7003000000a40ffff0000001180abcdef00000000123456780000123400000008010203040506070897f03724",
	"C RoCEv2 CNP ConnectX-4 Lx":       "e41d2dab2bc27cfe90643b32080045c2003c718c4000401191610a0011010a001201000012b7002800008100ffff40000118000000000000000000000000000000000000000082fd002a",
	"D1 RoCEv1 RC RDMA WRITE Only":     "7cfe90753cd87cfe90753cd889156020000000281b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000020a70ffff0000010a80a788bc000055d4c0726000000047b3000000050000000001000000e3d856bb",
	"D2 RoCEv1 RC Acknowledge":         "7cfe90753cd87cfe90753cd889156020000000141b4000000000000000000000ffff0f00000200000000000000000000ffff0f0000021140ffff0000010900a788c00000000525f0c038",
	"E RoCEv2/IPv4 RC Acknowledge":     "020000000001020000000002080045020030000140004011b766c0a80102c0a80101c00012b7001c00001100ffff00000034000000011f0000054260c0b4",
	"F RoCEv2/IPv4 CNP":                "020000000001020000000002080045c2003c000240004011b699c0a80102c0a80101c00012b7002800008100ffff400000120000000000000000000000000000000000000000bcd115ff",
}

// codecCaptureDir is ../shared/captures relative to the repository root.
var codecCaptureDir = filepath.Join("..", "..", "shared", "captures")

// codecSeedSet is every seed input, grouped by what it starts with.
type codecSeedSet struct {
	ethernet  [][]byte // Ethernet frames
	ib        [][]byte // native IB packets, LRH first, VCRC last
	transport [][]byte // BTH through ICRC
	headers   [][]byte // byte strings starting at each header of the above
}

var codecSeeds = sync.OnceValue(func() *codecSeedSet {
	s := &codecSeedSet{}
	for _, h := range codecVectors {
		b, err := hex.DecodeString(h)
		if err != nil {
			panic(err)
		}
		s.ethernet = append(s.ethernet, b)
	}
	s.ib = append(s.ib, codecBuiltIB()...)
	s.ethernet = append(s.ethernet, codecIPv4Options()...)
	eth, ib := codecCaptureFrames()
	s.ethernet = append(s.ethernet, eth...)
	s.ib = append(s.ib, ib...)

	seen := map[*[][]byte]map[string]bool{&s.transport: {}, &s.headers: {}}
	add := func(dst *[][]byte, b []byte) {
		if len(b) > 0 && !seen[dst][string(b)] {
			seen[dst][string(b)] = true
			*dst = append(*dst, b)
		}
	}
	var fr packet.Frame
	split := func(b []byte, err error) {
		if !fr.IsRoCE() || fr.Transport.BTH == nil {
			return
		}
		add(&s.headers, b)
		net := fr.Network()
		if net == nil {
			return
		}
		add(&s.headers, net) // IPv4, IPv6, GRH (RoCEv1) or LRH first
		if fr.Encap == packet.IBGlobal {
			add(&s.headers, net[lrh.Len:]) // GRH first
		}
		t := net[codecBTHOffset(&fr):]
		if err == nil {
			add(&s.transport, t)
		}
		add(&s.headers, t)
		at := bth.Len
		for _, h := range fr.Transport.Opcode().Headers() {
			if at < len(t) {
				add(&s.headers, t[at:])
			}
			at += h.Len()
		}
	}
	for _, b := range s.ethernet {
		split(b, fr.DecodeEthernet(b))
	}
	for _, b := range s.ib {
		split(b, fr.DecodeIB(b))
	}
	return s
})

// codecBuiltIB returns native IB packets built with package packet, local
// and global, so FuzzFrameIB has seeds without the captures (no verified
// native-IB vector exists).
func codecBuiltIB() [][]byte {
	var out [][]byte
	for _, e := range []packet.Encap{packet.IBLocal, packet.IBGlobal} {
		f := packet.DefaultFrame(e)
		f.Transport.BTH.Opcode = opcode.UDSendOnly
		f.Transport.BTH.DestQP = 1
		f.Transport.DETH = deth.Fields{QKey: deth.GSIQKey, SrcQP: 1}
		f.Transport.Payload = []byte("native IB seed")
		f.Transport.SetPad()
		out = append(out, codecBuild(&f))

		f.Transport = packet.Fields{}
		f.Transport.BTH = bth.Fields{Opcode: opcode.RCAcknowledge, PKey: 0xFFFF, DestQP: 0x12, PSN: 7}
		f.Transport.AETH = aeth.Fields{Syndrome: aeth.Unlimited, MSN: 3}
		out = append(out, codecBuild(&f))
	}
	return out
}

// codecIPv4Options returns RoCEv2/IPv4 frames with 40 bytes of IPv4 options
// and payloads over 128 bytes, every length mod 16. Regression seeds: the
// ICRC of such frames made package icrc index out of range.
func codecIPv4Options() [][]byte {
	var out [][]byte
	for n := 120; n < 136; n++ {
		f := packet.DefaultFrame(packet.RoCEv2IPv4)
		f.Transport.BTH.Opcode = opcode.RCSendOnly
		f.Transport.Payload = make([]byte, n)
		f.Transport.SetPad()
		b := codecBuild(&f)
		const ip = packet.EthernetLen
		opts := make([]byte, 40)
		opts[0] = 1 // NOP options
		nb := append(append(append([]byte{}, b[:ip+packet.IPv4Len]...), opts...), b[ip+packet.IPv4Len:]...)
		nb[ip] = 0x4F
		tl := len(nb) - ip
		nb[ip+2], nb[ip+3] = byte(tl>>8), byte(tl)
		out = append(out, nb)
	}
	return out
}

func codecBuild(f *packet.FrameFields) []byte {
	b := make([]byte, f.Len())
	if _, err := f.Encode(b); err != nil {
		panic(err)
	}
	return b
}

// codecCaptureFrames returns every frame of the captures in codecCaptureDir,
// link layer stripped: Ethernet frames and native IB packets (the ERF
// InfiniBand records after their 16-byte header). Missing files give none.
func codecCaptureFrames() (eth, ib [][]byte) {
	files, _ := filepath.Glob(filepath.Join(codecCaptureDir, "*.pcap"))
	for _, name := range files {
		r, err := pcap.Open(name)
		if err != nil {
			continue
		}
		for {
			rec, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					_, _ = os.Stderr.WriteString("fuzz seeds: " + name + ": " + err.Error() + "\n")
				}
				break
			}
			p, err := rec.Network()
			if err != nil {
				continue
			}
			b := append([]byte(nil), p.Data...)
			switch p.Layer {
			case pcap.LayerEthernet:
				eth = append(eth, b)
			case pcap.LayerInfiniBand:
				ib = append(ib, b)
			}
		}
		r.Close()
	}
	return eth, ib
}

// codecBTHOffset returns where the BTH starts in fr.Network().
func codecBTHOffset(fr *packet.Frame) int {
	switch fr.Encap {
	case packet.RoCEv2IPv4:
		return fr.IPv4.HeaderLen() + packet.UDPLen
	case packet.RoCEv2IPv6:
		return packet.IPv6Len + packet.UDPLen
	case packet.RoCEv1:
		return grh.Len
	case packet.IBGlobal:
		return lrh.Len + grh.Len
	}
	return lrh.Len
}

// TestCodecSeeds checks the seed corpora: every §3.4 vector decodes with a
// valid ICRC, and the captures, when present, add their frames.
func TestCodecSeeds(t *testing.T) {
	var fr packet.Frame
	for name, h := range codecVectors {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := fr.DecodeEthernet(b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ok, want, got, err := fr.CheckICRC(); err != nil || !ok {
			t.Fatalf("%s: ICRC want %08x got %08x (%v)", name, want, got, err)
		}
	}
	s := codecSeeds()
	t.Logf("seeds: %d Ethernet frames, %d native IB packets, %d transport packets, %d header strings",
		len(s.ethernet), len(s.ib), len(s.transport), len(s.headers))
	if _, err := os.Stat(codecCaptureDir); err == nil {
		if len(s.ethernet) <= len(codecVectors) || len(s.ib) <= 4 {
			t.Fatalf("%s exists but gave no frames", codecCaptureDir)
		}
	}
}
