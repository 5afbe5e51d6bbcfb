package packet_test

import (
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/reth"
)

// benchFrame is Ethernet/IPv4/UDP/BTH/RETH with a 1 KiB payload: an RC RDMA
// WRITE First.
func benchFrame(tb testing.TB) []byte {
	fr := packet.DefaultFrame(packet.RoCEv2IPv4)
	fr.Transport.BTH.Opcode = opcode.RCRDMAWriteFirst
	fr.Transport.BTH.DestQP = 0x11
	fr.Transport.BTH.PSN = 100
	fr.Transport.RETH = reth.Fields{VA: 0x1000, RKey: 0x42, DMALen: 4096}
	fr.Transport.Payload = make([]byte, 1024)
	b := make([]byte, fr.Len())
	if _, err := fr.Encode(b); err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkFrameParse decodes the whole frame down to the RETH and payload,
// without checking the ICRC.
func BenchmarkFrameParse(b *testing.B) {
	buf := benchFrame(b)
	var f packet.Frame
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		if err := f.DecodeEthernet(buf); err != nil {
			b.Fatal(err)
		}
		if f.Transport.RETH == nil {
			b.Fatal("no RETH")
		}
	}
}

// BenchmarkFrameParseICRC also checks the ICRC.
func BenchmarkFrameParseICRC(b *testing.B) {
	buf := benchFrame(b)
	var f packet.Frame
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		if err := f.DecodeEthernet(buf); err != nil {
			b.Fatal(err)
		}
		if ok, _, _, _ := f.CheckICRC(); !ok {
			b.Fatal("bad ICRC")
		}
	}
}

// BenchmarkGopacketEthIPv4UDP is gopacket's DecodingLayerParser decoding
// only Ethernet, IPv4 and UDP of the same frame: the yardstick for
// BenchmarkFrameParse (BENCHMARKS.md, "Headers, frames and ICRC", reports
// the ratio).
func BenchmarkGopacketEthIPv4UDP(b *testing.B) {
	buf := benchFrame(b)
	var eth layers.Ethernet
	var ip4 layers.IPv4
	var udp layers.UDP
	var payload gopacket.Payload
	p := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &udp, &payload)
	p.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 4)
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		if err := p.DecodeLayers(buf, &decoded); err != nil {
			b.Fatal(err)
		}
		if len(decoded) < 3 {
			b.Fatal("short decode")
		}
	}
}

func BenchmarkFrameBuild(b *testing.B) {
	fr := packet.DefaultFrame(packet.RoCEv2IPv4)
	fr.Transport.BTH.Opcode = opcode.RCRDMAWriteFirst
	fr.Transport.RETH = reth.Fields{VA: 0x1000, RKey: 0x42, DMALen: 4096}
	fr.Transport.Payload = make([]byte, 1024)
	buf := make([]byte, fr.Len())
	b.ReportAllocs()
	b.SetBytes(int64(len(buf)))
	for i := 0; i < b.N; i++ {
		fr.Transport.BTH.PSN = uint32(i) & 0xFFFFFF
		if _, err := fr.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
