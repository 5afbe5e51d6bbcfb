package iblayers_test

import (
	"fmt"
	"net"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/iblayers"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/reth"
)

// Decoding a RoCEv2 frame with gopacket.NewPacket: importing iblayers is
// enough for UDP port 4791 to decode as the IB transport layer.
func Example_newPacket() {
	// An RC RDMA WRITE Only over Ethernet/IPv4/UDP, built by package packet.
	ff := packet.DefaultFrame(packet.RoCEv2IPv4)
	ff.Transport.BTH = bth.Fields{Opcode: opcode.RCRDMAWriteOnly, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 100}
	ff.Transport.RETH = reth.Fields{VA: 0x7F0000001000, RKey: 0x1234, DMALen: 6}
	ff.Transport.Payload = []byte("hello!")
	ff.Transport.SetPad()
	frame := make([]byte, ff.Len())
	if _, err := ff.Encode(frame); err != nil {
		panic(err)
	}

	p := gopacket.NewPacket(frame, layers.LayerTypeEthernet, gopacket.Default)
	for _, l := range p.Layers() {
		fmt.Println(l.LayerType())
	}
	t := p.Layer(iblayers.LayerTypeBTH).(*iblayers.Transport)
	fmt.Printf("opcode %s, dest QP 0x%06x, PSN %d\n", t.BTH.Opcode(), t.BTH.DestQP(), t.BTH.PSN())
	fmt.Printf("RETH VA 0x%x, R_Key 0x%x, length %d\n", t.RETH.VA(), t.RETH.RKey(), t.RETH.DMALen())
	fmt.Printf("payload %q, pad %d, ICRC %x\n", p.ApplicationLayer().Payload(), len(t.Pad), []byte(t.ICRC))
	ok, _, _, err := iblayers.CheckICRC(p.Data(), layers.LayerTypeEthernet)
	fmt.Println("ICRC ok:", ok, err)
	// Output:
	// Ethernet
	// IPv4
	// UDP
	// IBTransport
	// Payload
	// opcode RC_RDMA_WRITE_ONLY, dest QP 0x000012, PSN 100
	// RETH VA 0x7f0000001000, R_Key 0x1234, length 6
	// payload "hello!", pad 2, ICRC ce00934b
	// ICRC ok: true <nil>
}

// Building a RoCEv2 frame from gopacket layers: SerializeRoCE serialises them
// and then writes the ICRC over the finished frame. This is vector A of
// ib-facts.md §3.4, whose ICRC is d8 70 fd 70.
func ExampleSerializeRoCE() {
	var tf iblayers.TransportFields
	tf.BTH = bth.Fields{Opcode: opcode.RCSendOnly, MigReq: true, PKey: 0xFFFF, DestQP: 0x12, AckReq: true, PSN: 1}
	tf.Payload = []byte("hello RoCE!")
	ip := &layers.IPv4{Version: 4, TOS: 0x02, Id: 0x1234, Flags: layers.IPv4DontFragment, TTL: 64,
		Protocol: layers.IPProtocolUDP, SrcIP: net.IP{192, 168, 1, 1}, DstIP: net.IP{192, 168, 1, 2}}
	ls := []gopacket.SerializableLayer{
		&layers.Ethernet{SrcMAC: net.HardwareAddr{2, 0, 0, 0, 0, 1}, DstMAC: net.HardwareAddr{2, 0, 0, 0, 0, 2},
			EthernetType: layers.EthernetTypeIPv4},
		ip,
		iblayers.ZeroUDPChecksum(&layers.UDP{SrcPort: 0xC000, DstPort: iblayers.UDPPortRoCEv2}),
		&tf,
	}
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := iblayers.SerializeRoCE(buf, opts, ls...); err != nil {
		panic(err)
	}
	frame := buf.Bytes()
	fmt.Printf("%d bytes, IPv4 length %d, pad count %d, ICRC %x\n", len(frame), ip.Length, tf.BTH.PadCnt, frame[len(frame)-4:])
	ok, _, _, _ := iblayers.CheckICRC(frame, layers.LayerTypeEthernet)
	fmt.Println("ICRC ok:", ok)
	// Output:
	// 70 bytes, IPv4 length 56, pad count 1, ICRC d870fd70
	// ICRC ok: true
}
