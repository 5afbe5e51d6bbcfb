package iblayers_test

import (
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/iblayers"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/reth"
	"github.com/stretchr/testify/require"
)

// rethFrame returns a RoCEv2 RC RDMA WRITE Only frame (BTH + RETH) with a
// 1 KiB payload in encapsulation e.
func rethFrame(tb testing.TB, e packet.Encap) []byte {
	ff := packet.DefaultFrame(e)
	ff.Transport.BTH = bth.Fields{Opcode: opcode.RCRDMAWriteOnly, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 0x100}
	ff.Transport.RETH = reth.Fields{VA: 0x7F0000001000, RKey: 0x1234, DMALen: 1024}
	ff.Transport.Payload = make([]byte, 1024)
	for i := range ff.Transport.Payload {
		ff.Transport.Payload[i] = byte(i)
	}
	b := make([]byte, ff.Len())
	n, err := ff.Encode(b)
	require.NoError(tb, err)
	return b[:n]
}

// TestDecodeAllocatesNothing proves DecodeFromBytes allocates nothing: a
// reused DecodingLayerParser decodes RoCEv2 (IPv4 and IPv6), RoCEv1 and
// native IB frames with 0 allocations.
func TestDecodeAllocatesNothing(t *testing.T) {
	d := newDecoder()
	for _, e := range encaps {
		frame := rethFrame(t, e)
		parser := d.eth
		if firstLayer(e) == iblayers.LayerTypeLRH {
			parser = d.ib
		}
		require.NoError(t, parser.DecodeLayers(frame, &d.decoded))
		require.Equal(t, gopacket.LayerTypePayload, d.decoded[len(d.decoded)-1], e.String())
		require.Equal(t, uint64(0x7F0000001000), d.tr.RETH.VA())
		allocs := testing.AllocsPerRun(100, func() {
			if err := parser.DecodeLayers(frame, &d.decoded); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs, "%s: allocations per decode", e)
	}
}

// BenchmarkDecodingLayerParser decodes a 1 KiB RDMA WRITE Only (RETH) frame
// over Ethernet/IPv4/UDP with a reused gopacket.DecodingLayerParser:
// Ethernet, IPv4, UDP, IBTransport, Payload.
func BenchmarkDecodingLayerParser(b *testing.B) {
	frame := rethFrame(b, packet.RoCEv2IPv4)
	var (
		eth     layers.Ethernet
		ip4     layers.IPv4
		ip6     layers.IPv6
		udp     layers.UDP
		tr      iblayers.Transport
		payload gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &ip4, &ip6, &udp, &tr, &payload)
	decoded := make([]gopacket.LayerType, 0, 8)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := parser.DecodeLayers(frame, &decoded); err != nil {
			b.Fatal(err)
		}
	}
	if tr.RETH.DMALen() != 1024 || len(decoded) != 5 {
		b.Fatal("wrong decode")
	}
}

// BenchmarkNewPacket decodes the same frame with gopacket.NewPacket
// (NoCopy, Lazy off): every layer is allocated.
func BenchmarkNewPacket(b *testing.B) {
	frame := rethFrame(b, packet.RoCEv2IPv4)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for i := 0; i < b.N; i++ {
		p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.NoCopy)
		if p.ErrorLayer() != nil {
			b.Fatal(p.ErrorLayer().Error())
		}
	}
}

// BenchmarkSerializeRoCE builds the same frame from layers with
// SerializeRoCE (FixLengths, ComputeChecksums, UDP checksum 0) into a
// reused buffer.
func BenchmarkSerializeRoCE(b *testing.B) {
	frame := rethFrame(b, packet.RoCEv2IPv4)
	ff := packet.DefaultFrame(packet.RoCEv2IPv4)
	ff.Transport.BTH = bth.Fields{Opcode: opcode.RCRDMAWriteOnly, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 0x100}
	ff.Transport.RETH = reth.Fields{VA: 0x7F0000001000, RKey: 0x1234, DMALen: 1024}
	ff.Transport.Payload = frame[len(frame)-4-1024 : len(frame)-4]
	ls := gopacketLayers(&ff)
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for i := 0; i < b.N; i++ {
		if err := iblayers.SerializeRoCE(buf, opts, ls...); err != nil {
			b.Fatal(err)
		}
	}
	if string(buf.Bytes()) != string(frame) {
		b.Fatal("wrong frame")
	}
}
