package iblayers

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/packet"
)

// SerializeRoCE serialises ls into b as gopacket.SerializeLayers does (b is
// cleared first), then writes the ICRC over the finished frame, and for a
// native IB packet the VCRC after it (see FixICRC). ls[0] decides how the
// frame is read: layers.Ethernet, layers.IPv4, layers.IPv6, a GRH layer
// (RoCEv1 without Ethernet) or an LRH layer (native IB).
//
// opts.FixLengths fixes every length field. opts.ComputeChecksums computes
// the IPv4 header checksum and the UDP checksum of each *layers.UDP in ls:
// SerializeRoCE first connects it to the nearest IPv4 or IPv6 layer before it
// (SetNetworkLayerForChecksum), and recomputes its checksum after writing the
// ICRC, which the UDP checksum covers. Wrap the UDP layer in ZeroUDPChecksum
// to send checksum 0, as RoCEv2 senders do. Without opts.ComputeChecksums the
// UDP checksum is left as the UDP layer wrote it.
func SerializeRoCE(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions, ls ...gopacket.SerializableLayer) error {
	if len(ls) == 0 {
		return errors.New("iblayers: SerializeRoCE needs at least one layer")
	}
	udp := udpKeep
	if opts.ComputeChecksums {
		var nl gopacket.NetworkLayer
		for _, l := range ls {
			switch v := l.(type) {
			case *layers.IPv4:
				nl = v
			case *layers.IPv6:
				nl = v
			case *layers.UDP:
				if nl != nil {
					if err := v.SetNetworkLayerForChecksum(nl); err != nil {
						return err
					}
				}
				udp = udpCompute
			}
		}
	}
	if err := gopacket.SerializeLayers(b, opts, ls...); err != nil {
		return err
	}
	return fixICRC(b.Bytes(), ls[0].LayerType(), udp)
}

// FixICRC computes the ICRC of the IB transport packet in frame and writes it
// into the frame's last four ICRC bytes; for a native IB packet it then
// computes and writes the VCRC. If the frame is RoCEv2 and its UDP checksum
// is not zero, the checksum is recomputed, since it covers the ICRC (a zero
// UDP checksum means none and stays zero).
//
// firstLayer says what frame starts with: layers.LayerTypeEthernet (802.1Q
// and QinQ tags allowed), layers.LayerTypeIPv4 or layers.LayerTypeIPv6
// (RoCEv2), LayerTypeGRH (RoCEv1 without Ethernet) or LayerTypeLRH (native
// IB). The frame is located with packet.Frame, so the lengths in the network
// and UDP headers must be right (serialise with opts.FixLengths); bytes after
// the packet (Ethernet padding) are left alone. The transport packet itself
// need not be valid: only the network header and its length matter. FixICRC
// fails if frame carries no IB transport packet (UDP ports other than 4791
// included).
func FixICRC(frame []byte, firstLayer gopacket.LayerType) error {
	return fixICRC(frame, firstLayer, udpIfSet)
}

// CheckICRC computes the ICRC of the IB transport packet in frame (read as
// for FixICRC) and compares it with the one it carries: want is what the
// frame should carry, got what it carries. For a decoded gopacket.Packet:
// CheckICRC(pkt.Data(), pkt.Layers()[0].LayerType()).
func CheckICRC(frame []byte, firstLayer gopacket.LayerType) (ok bool, want, got uint32, err error) {
	s := getScratch()
	defer putScratch(s)
	l3, err := s.locate(frame, firstLayer)
	if err != nil {
		return false, 0, 0, err
	}
	want, err = s.compute(l3)
	if err != nil {
		return false, 0, 0, err
	}
	got = icrc.Get(l3[len(l3)-icrc.Len:])
	return want == got, want, got, nil
}

// ZeroUDPChecksum wraps u so that it serialises with checksum 0, the value
// RoCEv2 senders use (ib-facts.md §4), even when opts.ComputeChecksums is set
// to compute the IPv4 header checksum. u.Checksum is set to 0.
func ZeroUDPChecksum(u *layers.UDP) gopacket.SerializableLayer { return zeroChecksumUDP{u} }

type zeroChecksumUDP struct{ u *layers.UDP }

func (z zeroChecksumUDP) LayerType() gopacket.LayerType { return layers.LayerTypeUDP }

func (z zeroChecksumUDP) SerializeTo(b gopacket.SerializeBuffer, opts gopacket.SerializeOptions) error {
	opts.ComputeChecksums = false
	z.u.Checksum = 0
	return z.u.SerializeTo(b, opts)
}

// What to do with a RoCEv2 UDP checksum after the ICRC is written.
type udpMode uint8

const (
	udpKeep    udpMode = iota // leave it
	udpIfSet                  // recompute unless zero
	udpCompute                // recompute
)

func fixICRC(frame []byte, first gopacket.LayerType, mode udpMode) error {
	s := getScratch()
	defer putScratch(s)
	l3, err := s.locate(frame, first)
	if err != nil {
		return err
	}
	crc, err := s.compute(l3)
	if err != nil {
		return err
	}
	icrc.Put(l3[len(l3)-icrc.Len:], crc)
	f := &s.frame
	if f.VCRC != nil {
		icrc.PutVCRC(f.VCRC, icrc.VCRC(l3))
	}
	if f.UDP != nil && (mode == udpCompute || mode == udpIfSet && f.UDP.Checksum() != 0) {
		putUDPChecksum(f, l3)
	}
	return nil
}

// scratch is the reusable state of FixICRC and CheckICRC.
type scratch struct {
	frame packet.Frame
	calc  icrc.Calc
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

func getScratch() *scratch { return scratchPool.Get().(*scratch) }

// putScratch drops the views into the caller's frame before pooling.
func putScratch(s *scratch) {
	s.frame = packet.Frame{}
	scratchPool.Put(s)
}

// locate decodes frame from its first layer and returns the bytes the ICRC
// covers, network header through ICRC. A transport packet that does not
// decode is no obstacle once the network packet is located.
func (s *scratch) locate(frame []byte, first gopacket.LayerType) ([]byte, error) {
	f := &s.frame
	var err error
	switch first {
	case layers.LayerTypeEthernet:
		err = f.DecodeEthernet(frame)
	case layers.LayerTypeIPv4, layers.LayerTypeIPv6:
		err = f.DecodeIP(frame)
	case LayerTypeGRH:
		err = f.DecodeEtherType(packet.EtherTypeRoCEv1, frame)
	case LayerTypeLRH:
		err = f.DecodeIB(frame)
	default:
		return nil, fmt.Errorf("iblayers: cannot locate an IB transport packet in a frame starting with %v", first)
	}
	l3 := f.Network()
	if l3 == nil {
		if err != nil {
			return nil, err
		}
		return nil, rocekit.Invalid("frame", "", "no IB transport packet in the frame (encapsulation %s)", f.Encap)
	}
	if len(l3) < icrc.Len {
		return nil, rocekit.Truncated("icrc", icrc.Len, len(l3))
	}
	return l3, nil
}

// compute returns the ICRC of l3 (network header through ICRC).
func (s *scratch) compute(l3 []byte) (uint32, error) {
	b := l3[:len(l3)-icrc.Len]
	switch s.frame.Encap {
	case packet.RoCEv2IPv4:
		return s.calc.IPv4(b)
	case packet.RoCEv2IPv6:
		return s.calc.IPv6(b)
	case packet.RoCEv1:
		return s.calc.GRH(b)
	default:
		return s.calc.LRH(b)
	}
}

// putUDPChecksum writes the UDP checksum of the RoCEv2 packet l3 (IPv4 or
// IPv6 header through ICRC); a computed 0 is sent as 0xFFFF (RFC 768).
func putUDPChecksum(f *packet.Frame, l3 []byte) {
	var src, dst, seg []byte
	if f.IPv4 != nil {
		hl := f.IPv4.HeaderLen()
		src, dst, seg = l3[12:16], l3[16:20], l3[hl:]
	} else {
		src, dst, seg = l3[8:24], l3[24:40], l3[packet.IPv6Len:]
	}
	seg[6], seg[7] = 0, 0
	s := sum16(src) + sum16(dst) + 17 + uint32(len(seg)) + sum16(seg)
	for s>>16 != 0 {
		s = s&0xFFFF + s>>16
	}
	c := ^uint16(s)
	if c == 0 {
		c = 0xFFFF
	}
	binary.BigEndian.PutUint16(seg[6:], c)
}

// sum16 is the ones'-complement sum (unfolded) of b as big-endian 16-bit
// words, an odd last byte padded with zero.
func sum16(b []byte) uint32 {
	var s uint32
	for len(b) >= 2 {
		s += uint32(binary.BigEndian.Uint16(b))
		b = b[2:]
	}
	if len(b) == 1 {
		s += uint32(b[0]) << 8
	}
	return s
}
