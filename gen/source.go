package gen

import (
	"fmt"
	"strconv"

	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/lrh"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// Source is the requester side's traffic before any fault: the frames the
// DUT receives, in arrival order, with their times, and the DUT they are
// for. FromScenario and ParsePackets make one; a caller may also build one.
type Source struct {
	// Name says where the frames came from, for the manifest.
	Name   string
	DUT    DUT
	Frames []SourceFrame
}

// SourceFrame is one frame of a Source.
type SourceFrame struct {
	// Time is when the frame's first bit reaches the DUT.
	Time sim.Time
	// Data is the whole frame: Ethernet (RoCE) or LRH (native IB) first.
	Data []byte
	// Purpose says what the frame is for ("RC_SEND_ONLY of WR 3"); when
	// empty it is derived from the stream.
	Purpose string
}

// info is what the analysis of a source frame found.
type info struct {
	qp   int32 // index in DUT.QPs, or -1
	ok   bool  // decoded as an IB transport packet
	op   opcode.Opcode
	psn  uint32
	wr   int64 // work request (message) number within the QP, or -1
	retx bool  // a retransmission: its PSN was sent before
}

// decode decodes data as a frame of encap e.
func decode(fr *packet.Frame, e packet.Encap, data []byte) error {
	if isIB(e) {
		return fr.DecodeIB(data)
	}
	return fr.DecodeEthernet(data)
}

// layout is where the parts of a decoded frame are.
type layout struct {
	l3   int // network header (IPv4, IPv6, GRH or LRH): where the ICRC coverage starts
	bth  int
	icrc int
	vcrc int // -1 without a VCRC
}

// frameLayout returns the layout of the frame fr decoded (it must carry an
// IB transport packet whose network part decoded: fr.Network() != nil).
func frameLayout(fr *packet.Frame) (layout, bool) {
	net := fr.Network()
	if net == nil || fr.Transport.BTH == nil {
		return layout{}, false
	}
	var l layout
	l.vcrc = -1
	switch fr.Encap {
	case packet.RoCEv2IPv4:
		l.l3 = packet.EthernetLen + packet.VLANLen*fr.NVLAN
		l.bth = l.l3 + fr.IPv4.HeaderLen() + packet.UDPLen
	case packet.RoCEv2IPv6:
		l.l3 = packet.EthernetLen + packet.VLANLen*fr.NVLAN
		l.bth = l.l3 + packet.IPv6Len + packet.UDPLen
	case packet.RoCEv1:
		l.l3 = packet.EthernetLen + packet.VLANLen*fr.NVLAN
		l.bth = l.l3 + grh.Len
	case packet.IBLocal:
		l.bth = lrh.Len
	case packet.IBGlobal:
		l.bth = lrh.Len + grh.Len
	default:
		return layout{}, false
	}
	l.icrc = l.l3 + len(net) - icrc.Len
	if isIB(fr.Encap) {
		l.vcrc = l.icrc + icrc.Len
	}
	return l, l.icrc >= l.bth
}

// putCRCs recomputes the ICRC (when icrcToo) and the VCRC of a native IB
// frame in place. It works for any opcode, reserved ones included: the
// coverage ends where the network header's length says.
func putCRCs(c *icrc.Calc, fr *packet.Frame, data []byte, icrcToo bool) error {
	l, ok := frameLayout(fr)
	if !ok {
		return fmt.Errorf("frame carries no complete IB transport packet")
	}
	if icrcToo {
		v, err := computeICRC(c, fr.Encap, data[l.l3:l.icrc])
		if err != nil {
			return err
		}
		icrc.Put(data[l.icrc:], v)
	}
	if l.vcrc >= 0 {
		icrc.PutVCRC(data[l.vcrc:], icrc.VCRC(data[l.l3:l.vcrc]))
	}
	return nil
}

func computeICRC(c *icrc.Calc, e packet.Encap, b []byte) (uint32, error) {
	switch e {
	case packet.RoCEv2IPv4:
		return c.IPv4(b)
	case packet.RoCEv2IPv6:
		return c.IPv6(b)
	case packet.RoCEv1:
		return c.GRH(b)
	}
	return c.LRH(b) // native IB, local or global: the LNH says which

}

// analyse decodes every source frame once: which DUT QP it is for, its
// opcode and PSN, and which work request it belongs to (a new request
// starts at a First or Only packet whose PSN is new; a PSN seen before is
// a retransmission of the request that used it).
func analyse(src *Source) []info {
	type wrRange struct {
		first, last uint32
		wr          int64
	}
	type qpState struct {
		started bool
		next    uint32 // the PSN after the newest one sent
		wrs     int64
		cur     int64
		ranges  []wrRange
	}
	st := make([]qpState, len(src.DUT.QPs))
	out := make([]info, len(src.Frames))
	var fr packet.Frame
	for i := range src.Frames {
		in := &out[i]
		in.qp, in.wr = -1, -1
		err := decode(&fr, src.DUT.Encap, src.Frames[i].Data)
		if fr.Transport.BTH == nil {
			continue
		}
		in.ok = err == nil
		in.op = fr.Transport.BTH.Opcode()
		in.psn = fr.Transport.BTH.PSN()
		q := src.DUT.qpIndex(fr.Transport.BTH.DestQP())
		if q < 0 {
			continue
		}
		in.qp = int32(q)
		if !in.ok || !in.op.IsRequest() || in.op.Transport() != opcode.RC {
			continue
		}
		s := &st[q]
		p := in.psn
		if s.started && rc.DiffPSN(p, s.next) < 0 {
			in.retx = true
			for k := len(s.ranges) - 1; k >= 0; k-- {
				r := s.ranges[k]
				if rc.DiffPSN(p, r.first) >= 0 && rc.DiffPSN(p, r.last) <= 0 {
					in.wr = r.wr
					break
				}
			}
			continue
		}
		n := uint32(1)
		if in.op.Family() == opcode.FamilyRead && fr.Transport.RETH != nil {
			n = max(n, rc.Packets(fr.Transport.RETH.DMALen(), src.DUT.QPs[q].MTU))
		}
		pos := in.op.Position()
		if pos == opcode.First || pos == opcode.Only || !s.started {
			s.cur = s.wrs
			s.wrs++
			s.ranges = append(s.ranges, wrRange{first: p, last: p, wr: s.cur})
		}
		last := rc.AddPSN(p, n-1)
		s.ranges[len(s.ranges)-1].last = last
		in.wr = s.cur
		s.started = true
		s.next = rc.AddPSN(last, 1)
	}
	return out
}

// purpose is the derived purpose text of source frame i.
func (in *info) purpose(i int) string { return string(in.appendPurpose(nil, i)) }

// appendPurpose appends the derived purpose text of source frame i (JSON
// safe: opcode names and numbers only).
func (in *info) appendPurpose(b []byte, i int) []byte {
	if !in.ok {
		if in.op != 0 || in.psn != 0 {
			b = append(b, in.op.String()...)
			b = append(b, " PSN "...)
			b = strconv.AppendUint(b, uint64(in.psn), 10)
			b = append(b, " (source frame "...)
		} else {
			b = append(b, "source frame "...)
		}
		b = strconv.AppendInt(b, int64(i), 10)
		if in.op != 0 || in.psn != 0 {
			b = append(b, ')')
		}
		return b
	}
	if in.wr < 0 {
		b = append(b, in.op.String()...)
		b = append(b, " PSN "...)
		return strconv.AppendUint(b, uint64(in.psn), 10)
	}
	if in.retx {
		b = append(b, "retransmission: "...)
	}
	b = append(b, in.op.String()...)
	b = append(b, " of WR "...)
	return strconv.AppendInt(b, in.wr, 10)
}
