package gen

import (
	"fmt"
	"strings"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// DUT describes the device under test: an RC responder with one or more
// QPs and the memory regions they reach. It is everything a bench must set
// up in the device before replaying the input stream, and it configures the
// golden model (one rc.QP per entry of QPs, sharing one rc.Memory).
type DUT struct {
	// Encap is how frames are carried: RoCEv2 over IPv4 (the default) or
	// IPv6, RoCEv1, or native InfiniBand with or without a GRH.
	Encap packet.Encap
	// Self is the DUT's own addressing: input frames are sent to it and
	// output frames come from it.
	Self Addr
	// Gbps is the rate of the link into and out of the DUT: it times the
	// input frames of a packet list and every output frame.
	Gbps float64
	// Latency is the processing time the model allows between the end of
	// an input frame and the first output it causes (0 by default).
	Latency sim.Time
	QPs     []QP
	MRs     []MR
}

// Addr is one end's addressing. IPv6 doubles as the GID of RoCEv1 and
// native IB global frames.
type Addr struct {
	MAC  [6]byte
	IPv4 [4]byte
	IPv6 [16]byte
	LID  uint16
}

// QP is one of the DUT's RC QPs: the attributes ibv_modify_qp sets on the
// way to RTR/RTS (ib-facts.md §5.10) and the receive queue the bench keeps
// posted.
type QP struct {
	QPN     uint32 // the DUT's QP number: BTH.DestQP of the input frames
	DestQPN uint32 // the peer (requester) QP number: BTH.DestQP of the outputs
	RQPSN   uint32 // first PSN the DUT expects (rq_psn)
	SQPSN   uint32 // first PSN the DUT's own requester would send (sq_psn); it sends none
	MTU     int    // path MTU in bytes (256..4096)
	PKey    uint16 // 0 means 0xFFFF
	// IRD is max_dest_rd_atomic: responder resources for READ/atomic (§5.4).
	IRD int
	// MinRNRTimer is the 5-bit timer code of the DUT's RNR NAKs (§5.7).
	MinRNRTimer uint8
	// Access is the QP's remote access flags (qp_access_flags).
	Access rc.Access
	// RecvWQEs receive WQEs of RecvBytes bytes each are posted before the
	// first input frame; with RecvRepost each one is posted again as soon
	// as it completes, so the queue never runs dry.
	RecvWQEs   int
	RecvBytes  int
	RecvRepost bool
	// Peer is the requester's addressing.
	Peer Addr
}

// MR is a memory region of the DUT.
type MR struct {
	Addr   uint64
	RKey   uint32
	Length int
	Access rc.Access
	// Init is the initial content: MemZero or MemPattern.
	Init MemInit
}

// MemInit is how a memory region starts out.
type MemInit uint8

// Memory initialisations.
const (
	// MemPattern: the byte at offset i of the region (i counted from Addr)
	// is (i + (i>>8) + (i>>16) + (i>>24)) & 0xFF, so READ responses carry
	// data that differs at every 256-byte step.
	MemPattern MemInit = iota
	// MemZero: all bytes zero.
	MemZero
)

func (m MemInit) String() string {
	if m == MemZero {
		return "zero"
	}
	return "pattern"
}

// ParseMemInit parses "pattern" or "zero".
func ParseMemInit(s string) (MemInit, error) {
	switch strings.ToLower(s) {
	case "pattern", "":
		return MemPattern, nil
	case "zero":
		return MemZero, nil
	}
	return 0, fmt.Errorf("memory init %q: want pattern or zero", s)
}

// PatternByte is the byte at offset i of a MemPattern region.
func PatternByte(i int) byte { return byte(i + i>>8 + i>>16 + i>>24) }

// Encapsulation names for the command line and JSON.
var encapNames = []struct {
	name string
	e    packet.Encap
}{
	{"rocev2", packet.RoCEv2IPv4}, {"rocev2-ipv6", packet.RoCEv2IPv6}, {"rocev1", packet.RoCEv1},
	{"ib", packet.IBLocal}, {"ib-global", packet.IBGlobal},
}

// ParseEncap parses rocev2 (RoCEv2 over IPv4), rocev2-ipv6, rocev1, ib
// (native InfiniBand, LRH only) or ib-global (LRH and GRH).
func ParseEncap(s string) (packet.Encap, error) {
	for _, x := range encapNames {
		if strings.EqualFold(s, x.name) {
			return x.e, nil
		}
	}
	return 0, fmt.Errorf("encapsulation %q: want rocev2, rocev2-ipv6, rocev1, ib or ib-global", s)
}

// EncapName is the name ParseEncap reads for e.
func EncapName(e packet.Encap) string {
	for _, x := range encapNames {
		if x.e == e {
			return x.name
		}
	}
	return "none"
}

// LinkType is the pcap link type of frames of encap e.
func LinkType(e packet.Encap) pcap.LinkType {
	if isIB(e) {
		return pcap.LinkTypeInfiniBand
	}
	return pcap.LinkTypeEthernet
}

func isIB(e packet.Encap) bool { return e == packet.IBLocal || e == packet.IBGlobal }

// DefaultDUT is the DUT a packet list gets when it does not describe one:
// RoCEv2/IPv4, addresses as packet.DefaultFrame (the DUT is
// 02:00:00:00:00:02, 192.168.1.2, fd00::2, LID 2; its peer ...:01, .1,
// fd00::1, LID 1), 100 Gb/s, one QP 0x12 <- 0x11 with PSNs 0, MTU 1024,
// P_Key 0xFFFF, IRD 16, min_rnr_timer 12, every access right, 16 receive
// WQEs of 4096 bytes re-posted as they complete, and one memory region of
// 1 MiB at 0x10000000 with R_Key 0x100 and every right, filled with the
// pattern.
func DefaultDUT() DUT {
	f := packet.DefaultFrame(packet.RoCEv2IPv4)
	self := Addr{MAC: f.Eth.Dst, IPv4: f.IPv4.Dst, IPv6: f.IPv6.Dst, LID: f.LRH.DLID}
	peer := Addr{MAC: f.Eth.Src, IPv4: f.IPv4.Src, IPv6: f.IPv6.Src, LID: f.LRH.SLID}
	return DUT{
		Encap: packet.RoCEv2IPv4, Self: self, Gbps: 100,
		QPs: []QP{{
			QPN: 0x12, DestQPN: 0x11, MTU: 1024, PKey: 0xFFFF, IRD: 16, MinRNRTimer: 12, Access: rc.AccessAll,
			RecvWQEs: 16, RecvBytes: 4096, RecvRepost: true, Peer: peer,
		}},
		MRs: []MR{{Addr: 0x10000000, RKey: 0x100, Length: 1 << 20, Access: rc.AccessAll}},
	}
}

// Check reports the first thing wrong with the description.
func (d *DUT) Check() error {
	if d.Encap < packet.RoCEv2IPv4 || d.Encap > packet.IBGlobal {
		return fmt.Errorf("dut: unknown encapsulation %d", d.Encap)
	}
	if !(d.Gbps > 0) || d.Gbps > 1e6 {
		return fmt.Errorf("dut: link rate %g Gb/s: want > 0", d.Gbps)
	}
	if d.Latency < 0 {
		return fmt.Errorf("dut: negative latency")
	}
	if len(d.QPs) == 0 {
		return fmt.Errorf("dut: no QP")
	}
	seen := map[uint32]bool{}
	for i := range d.QPs {
		q := &d.QPs[i]
		if seen[q.QPN] {
			return fmt.Errorf("dut: QP 0x%x listed twice", q.QPN)
		}
		seen[q.QPN] = true
		if _, err := rc.New(q.rcConfig(nil)); err != nil {
			return fmt.Errorf("dut: QP 0x%x: %v", q.QPN, err)
		}
		if q.RecvWQEs < 0 || q.RecvBytes < 0 || int64(q.RecvWQEs)*int64(q.RecvBytes) > 1<<32 {
			return fmt.Errorf("dut: QP 0x%x: %d receive WQEs of %d bytes", q.QPN, q.RecvWQEs, q.RecvBytes)
		}
	}
	keys := map[uint32]bool{}
	var total int64
	for _, m := range d.MRs {
		if keys[m.RKey] {
			return fmt.Errorf("dut: R_Key 0x%x registered twice", m.RKey)
		}
		keys[m.RKey] = true
		if m.Length < 0 || m.Addr+uint64(m.Length) < m.Addr {
			return fmt.Errorf("dut: memory region 0x%x: bad length %d", m.RKey, m.Length)
		}
		total += int64(m.Length)
	}
	if total > 8<<30 {
		return fmt.Errorf("dut: memory regions total %d bytes, more than 8 GiB", total)
	}
	return nil
}

// pkey is the QP's P_Key: PKey, or the default P_Key 0xFFFF if PKey is 0.
func (q *QP) pkey() uint16 {
	if q.PKey == 0 {
		return 0xFFFF
	}
	return q.PKey
}

// rcConfig is the golden model's configuration for q.
func (q *QP) rcConfig(mem *rc.Memory) rc.Config {
	c := rc.DefaultConfig()
	c.QPN, c.DestQPN, c.RQPSN, c.SQPSN = q.QPN, q.DestQPN, q.RQPSN, q.SQPSN
	c.MTU, c.PKey, c.MaxDestRdAtomic, c.MinRNRTimer, c.Access = q.MTU, q.PKey, q.IRD, q.MinRNRTimer, q.Access
	c.Memory = mem
	return c
}

// inTemplate is the lower layers of a frame from q's peer to the DUT, as
// the simulator's NICs build them (packet.DefaultFrame with the two ends'
// addresses and the UDP source port of the QP pair).
func (d *DUT) inTemplate(q *QP) packet.FrameFields {
	return frameTemplate(d.Encap, q.Peer, d.Self, q.DestQPN, q.QPN)
}

// outTemplate is the lower layers of a frame from the DUT to q's peer.
func (d *DUT) outTemplate(q *QP) packet.FrameFields {
	return frameTemplate(d.Encap, d.Self, q.Peer, q.QPN, q.DestQPN)
}

func frameTemplate(e packet.Encap, src, dst Addr, sqpn, dqpn uint32) packet.FrameFields {
	f := packet.DefaultFrame(e)
	f.Eth.Src, f.Eth.Dst = src.MAC, dst.MAC
	f.IPv4.Src, f.IPv4.Dst = src.IPv4, dst.IPv4
	f.IPv6.Src, f.IPv6.Dst = src.IPv6, dst.IPv6
	f.GRH.SGID, f.GRH.DGID = src.IPv6, dst.IPv6
	f.LRH.SLID, f.LRH.DLID = src.LID, dst.LID
	f.UDP.SrcPort = packet.UDPSourcePort(0, sqpn, dqpn)
	return f
}

// txTime is the time to serialise n bytes at the DUT's link rate.
func (d *DUT) txTime(n int) sim.Time {
	return sim.TxTime(n, int64(d.Gbps*1e9+0.5))
}

// qpIndex returns the index of the QP with number qpn, or -1.
func (d *DUT) qpIndex(qpn uint32) int {
	for i := range d.QPs {
		if d.QPs[i].QPN == qpn {
			return i
		}
	}
	return -1
}

// mrFor returns the region with R_Key rkey, or nil.
func (d *DUT) mrFor(rkey uint32) *MR {
	for i := range d.MRs {
		if d.MRs[i].RKey == rkey {
			return &d.MRs[i]
		}
	}
	return nil
}
