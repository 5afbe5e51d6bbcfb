package iblayers

import (
	"encoding/binary"
	"fmt"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/packet"
)

// Layer types, registered with gopacket in init. The numbers are fixed (4791,
// the RoCEv2 port, and the two after it), outside gopacket's reserved 0-1999.
const (
	// LayerTypeBTH is the IB transport layer: BTH, the extension headers the
	// opcode implies, and (as fields) pad and ICRC. Its name is "IBTransport".
	LayerTypeBTH gopacket.LayerType = 4791
	// LayerTypeGRH is the Global Route Header: RoCEv1 after Ethertype 0x8915,
	// or native IB after an LRH with LNH 3.
	LayerTypeGRH gopacket.LayerType = 4792
	// LayerTypeLRH is the Local Route Header of native InfiniBand.
	LayerTypeLRH gopacket.LayerType = 4793
)

// EndpointLID is the endpoint type of the LRH link flow: a 16-bit LID.
const EndpointLID gopacket.EndpointType = 4791

// Numbers this package wires into gopacket/layers.
const (
	// UDPPortRoCEv2 is the RoCEv2 UDP destination port.
	UDPPortRoCEv2 layers.UDPPort = packet.RoCEv2Port
	// EthernetTypeRoCEv1 is the RoCEv1 Ethertype: a GRH follows.
	EthernetTypeRoCEv1 layers.EthernetType = packet.EtherTypeRoCEv1
	// LinkTypeInfiniBand is LINKTYPE_INFINIBAND (247): packets start with
	// the LRH and end with the VCRC.
	LinkTypeInfiniBand layers.LinkType = 247
)

// grhNext maps a GRH NxtHdr to the layer that follows.
var grhNext [256]gopacket.LayerType

func init() {
	gopacket.RegisterLayerType(int(LayerTypeBTH), gopacket.LayerTypeMetadata{Name: "IBTransport", Decoder: gopacket.DecodeFunc(decodeTransport)})
	gopacket.RegisterLayerType(int(LayerTypeGRH), gopacket.LayerTypeMetadata{Name: "GRH", Decoder: gopacket.DecodeFunc(decodeGRH)})
	gopacket.RegisterLayerType(int(LayerTypeLRH), gopacket.LayerTypeMetadata{Name: "LRH", Decoder: gopacket.DecodeFunc(decodeLRH)})
	gopacket.RegisterEndpointType(int(EndpointLID), gopacket.EndpointTypeMetadata{Name: "LID", Formatter: func(b []byte) string {
		return fmt.Sprintf("0x%04x", binary.BigEndian.Uint16(b))
	}})

	layers.RegisterUDPPortLayerType(UDPPortRoCEv2, LayerTypeBTH)
	layers.EthernetTypeMetadata[EthernetTypeRoCEv1] = layers.EnumMetadata{DecodeWith: LayerTypeGRH, Name: "RoCEv1", LayerType: LayerTypeGRH}
	layers.LinkTypeMetadata[LinkTypeInfiniBand] = layers.EnumMetadata{DecodeWith: LayerTypeLRH, Name: "InfiniBand", LayerType: LayerTypeLRH}
	grhNext[grh.NxtHdrIBA] = LayerTypeBTH
}

// truncatedTo calls df.SetTruncated when err reports truncation, and
// returns err.
func truncatedTo(df gopacket.DecodeFeedback, err error) error {
	if isTruncated(err) {
		df.SetTruncated()
	}
	return err
}
