package packet

import (
	"fmt"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/grh"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/lrh"
	"github.com/rocekit/rocekit/pcap"
)

// Encap says how a transport packet was carried.
type Encap uint8

// Encapsulations.
const (
	EncapNone  Encap = iota // not an IB transport packet
	RoCEv2IPv4              // Ethernet? / IPv4 / UDP 4791 / BTH
	RoCEv2IPv6              // Ethernet? / IPv6 / UDP 4791 / BTH
	RoCEv1                  // Ethernet / GRH (Ethertype 0x8915) / BTH
	IBLocal                 // LRH (LNH 2) / BTH ... VCRC
	IBGlobal                // LRH (LNH 3) / GRH / BTH ... VCRC
)

func (e Encap) String() string {
	switch e {
	case RoCEv2IPv4:
		return "RoCEv2/IPv4"
	case RoCEv2IPv6:
		return "RoCEv2/IPv6"
	case RoCEv1:
		return "RoCEv1"
	case IBLocal:
		return "IB/LRH"
	case IBGlobal:
		return "IB/LRH/GRH"
	}
	return "none"
}

// EtherTypes rocekit looks at.
const (
	EtherTypeIPv4   = 0x0800
	EtherTypeIPv6   = 0x86DD
	EtherTypeRoCEv1 = 0x8915
	EtherTypeVLAN   = 0x8100
	EtherTypeQinQ   = 0x88A8
	EtherTypeQinQ91 = 0x9100
)

// MaxVLANs is how many stacked 802.1Q tags a frame may carry.
const MaxVLANs = 2

// Frame is a decoded frame: views into the bytes given to a Decode method.
// Reuse one Frame for many frames; its decode methods allocate nothing.
type Frame struct {
	// Ports lists extra UDP destination ports to treat as RoCEv2 besides
	// 4791. It is kept across decodes.
	Ports []uint16

	Encap     Encap
	Eth       Ethernet // nil unless decoded from Ethernet
	VLANs     [MaxVLANs]VLAN
	NVLAN     int
	EtherType uint16 // after the VLAN tags
	IPv4      IPv4
	IPv6      IPv6
	UDP       UDP
	LRH       lrh.LRH
	GRH       grh.GRH
	Transport Packet
	VCRC      []byte // native IB only
	// Trailer holds bytes after the network packet that the frame carried
	// (Ethernet padding, an FCS, or bytes after the VCRC). It is reported,
	// not dropped.
	Trailer []byte
	// Cut is how many bytes at the end of the frame the capture did not
	// keep, as DecodeRecord takes it from the record (its original length
	// less its captured length: a snap length, a header-only capture
	// mode); 0 when the whole frame was captured, and always 0 after the
	// other Decode methods. In a cut frame every header the capture kept
	// whole is decoded, and a header it cut is absent (nil) without error,
	// as tshark shows such a frame ("[Packet size limited during
	// capture]"). Lengths that say more than the frame carried even on the
	// wire are still errors. A cut transport packet has Transport.Cut set
	// and no ICRC to check (Network is nil).
	Cut int

	l3      []byte // network header through ICRC: what the ICRC covers
	calc    icrc.Calc
	cutNext int // DecodeRecord's Cut for the decode it calls (reset moves it into Cut)
}

// reset clears every field but Ports, and sets Cut to cutNext (0 unless
// DecodeRecord is decoding). Assigning the whole struct compiles to a loop
// of stores; clearing it field by field (with a write-barrier check per
// group of pointers) made BenchmarkFrameParse about 1.15x slower.
func (f *Frame) reset() {
	*f = Frame{Ports: f.Ports, Cut: f.cutNext}
}

// DecodeRecord decodes the frame a capture record holds, whatever its link
// type (pcap.Record.Network), keeping Ports. It is the one decoder that
// knows what the capture cut: a record whose captured length is shorter
// than its original length decodes as a cut frame (see Cut). A record whose
// link layer cannot be stripped leaves f empty (no IB transport) and
// returns that error.
func (f *Frame) DecodeRecord(rec *pcap.Record) error {
	if rec.LinkType == pcap.LinkTypeEthernet && len(rec.Data) >= EthernetLen {
		// What rec.Network gives for the common link type, without the
		// round trip through a Payload.
		f.cutNext = max(rec.OrigLen-len(rec.Data), 0)
		return f.DecodeEthernet(rec.Data)
	}
	p, err := rec.Network()
	if err != nil {
		f.reset()
		return err
	}
	f.cutNext = p.Cut
	switch p.Layer {
	case pcap.LayerEthernet:
		return f.DecodeEthernet(p.Data)
	case pcap.LayerIPv4, pcap.LayerIPv6:
		return f.DecodeIP(p.Data)
	case pcap.LayerEtherType:
		return f.DecodeEtherType(p.EtherType, p.Data)
	case pcap.LayerInfiniBand:
		return f.DecodeIB(p.Data)
	}
	f.reset()
	return nil
}

// cutShort reports whether a header (or packet) of need bytes, of which the
// captured frame holds have, was cut by the capture: the bytes missing are
// bytes the capture did not keep, not bytes the frame lacked on the wire.
// Offsets are from the same point; the cut is at the end of the frame.
func (f *Frame) cutShort(need, have int) bool { return f.Cut > 0 && need-have <= f.Cut }

// short is the error for header h, of which the frame holds have of need
// bytes: nil when the capture cut it (a header cut is absent, no error).
func (f *Frame) short(h string, need, have int) error {
	if f.cutShort(need, have) {
		return nil
	}
	return truncated(h, need, have)
}

// IsRoCE reports whether the frame carried an IB transport packet (RoCE or
// native IB), whether or not that packet decoded cleanly.
func (f *Frame) IsRoCE() bool { return f.Encap != EncapNone }

func (f *Frame) rocePort(p uint16) bool {
	if p == RoCEv2Port {
		return true
	}
	for _, x := range f.Ports {
		if x == p {
			return true
		}
	}
	return false
}

// DecodeEthernet decodes an Ethernet II frame (without or with FCS; what
// follows the IP packet or GRH payload is kept in Trailer). Frames that carry
// no IB transport decode without error and with Encap EncapNone.
func (f *Frame) DecodeEthernet(b []byte) error {
	f.reset()
	if len(b) < EthernetLen {
		return f.short("eth", EthernetLen, len(b))
	}
	f.Eth = Ethernet(b[:EthernetLen:EthernetLen])
	et := f.Eth.EtherType()
	off := EthernetLen
	for et == EtherTypeVLAN || et == EtherTypeQinQ || et == EtherTypeQinQ91 {
		if f.NVLAN == MaxVLANs {
			return rocekit.Invalid("vlan", "", "more than %d stacked tags", MaxVLANs)
		}
		if len(b) < off+VLANLen {
			return f.short("vlan", VLANLen, len(b)-off)
		}
		v := VLAN(b[off : off+VLANLen : off+VLANLen])
		f.VLANs[f.NVLAN] = v
		f.NVLAN++
		et = v.EtherType()
		off += VLANLen
	}
	f.EtherType = et
	switch et {
	case EtherTypeIPv4:
		return f.decodeIPv4(b[off:])
	case EtherTypeIPv6:
		return f.decodeIPv6(b[off:])
	case EtherTypeRoCEv1:
		return f.decodeGRHFrame(b[off:])
	}
	return nil
}

// DecodeIP decodes a bare IPv4 or IPv6 packet (raw-IP link types).
func (f *Frame) DecodeIP(b []byte) error {
	f.reset()
	if len(b) == 0 {
		return f.short("ip", 1, 0)
	}
	switch b[0] >> 4 {
	case 4:
		f.EtherType = EtherTypeIPv4
		return f.decodeIPv4(b)
	case 6:
		f.EtherType = EtherTypeIPv6
		return f.decodeIPv6(b)
	}
	return rocekit.Invalid("ip", "Version", "%d, want 4 or 6", b[0]>>4)
}

// DecodeEtherType decodes b as the payload of the given EtherType, as Linux
// cooked captures (SLL, SLL2) deliver it.
func (f *Frame) DecodeEtherType(et uint16, b []byte) error {
	f.reset()
	f.EtherType = et
	switch et {
	case EtherTypeIPv4:
		return f.decodeIPv4(b)
	case EtherTypeIPv6:
		return f.decodeIPv6(b)
	case EtherTypeRoCEv1:
		return f.decodeGRHFrame(b)
	}
	return nil
}

func (f *Frame) decodeIPv4(b []byte) error {
	if len(b) < IPv4Len {
		return f.short("ipv4", IPv4Len, len(b))
	}
	h := IPv4(b)
	if v := h.Version(); v != 4 {
		return rocekit.Invalid("ipv4", "Version", "%d, want 4", v)
	}
	hl := h.HeaderLen()
	if hl < IPv4Len {
		return rocekit.Invalid("ipv4", "IHL", "%d (%d bytes), less than 5", h.IHL(), hl)
	}
	if len(b) < hl {
		return f.short("ipv4", hl, len(b))
	}
	f.IPv4 = IPv4(b[:hl:hl])
	tl := int(h.TotalLength())
	if tl < hl {
		return rocekit.BadLength("ipv4", "TotalLength", hl, tl, "%d, less than the %d-byte header", tl, hl)
	}
	if tl > len(b) {
		udp := h.Protocol() == 17 && !h.MF() && h.FragOffset() == 0
		if f.cutShort(tl, len(b)) {
			return f.decodeUDPCut(b[hl:], tl-hl, udp, RoCEv2IPv4)
		}
		return f.ipv4Truncated(b, hl, tl, udp)
	}
	f.Trailer = b[tl:]
	if h.Protocol() != 17 || h.MF() || h.FragOffset() != 0 {
		return nil
	}
	return f.decodeUDP(b[:tl], hl, RoCEv2IPv4)
}

func (f *Frame) decodeIPv6(b []byte) error {
	if len(b) < IPv6Len {
		return f.short("ipv6", IPv6Len, len(b))
	}
	h := IPv6(b[:IPv6Len:IPv6Len])
	if v := h.Version(); v != 6 {
		return rocekit.Invalid("ipv6", "Version", "%d, want 6", v)
	}
	f.IPv6 = h
	tl := IPv6Len + int(h.PayloadLength())
	if tl > len(b) {
		udp := h.NextHeader() == 17
		if f.cutShort(tl, len(b)) {
			return f.decodeUDPCut(b[IPv6Len:], tl-IPv6Len, udp, RoCEv2IPv6)
		}
		return f.ipv6Truncated(b, tl, udp)
	}
	f.Trailer = b[tl:]
	if h.NextHeader() != 17 {
		return nil
	}
	return f.decodeUDP(b[:tl], IPv6Len, RoCEv2IPv6)
}

func (f *Frame) decodeUDP(ip []byte, hl int, encap Encap) error {
	seg := ip[hl:]
	if len(seg) < UDPLen {
		return truncated("udp", UDPLen, len(seg))
	}
	u := UDP(seg[:UDPLen:UDPLen])
	f.UDP = u
	if !f.rocePort(u.DstPort()) {
		return nil
	}
	f.Encap = encap
	if ul := int(u.Length()); ul != len(seg) {
		return rocekit.BadLength("udp", "Length", len(seg), ul, "%d, but the IP packet carries %d bytes of UDP", ul, len(seg))
	}
	f.l3 = ip
	return f.Transport.decodeClean(seg[UDPLen:])
}

// ipv4Truncated is the error for an IPv4 packet of tl bytes, with header
// length hl, of which the frame holds less with no capture cut to explain
// it (a damaged record). The UDP and transport headers it holds are decoded
// all the same (decodeCut).
func (f *Frame) ipv4Truncated(b []byte, hl, tl int, udp bool) error {
	if udp {
		f.decodeCut(b[hl:], RoCEv2IPv4)
	}
	return &rocekit.HeaderError{Header: "ipv4", Field: "TotalLength", Err: rocekit.ErrTruncated, Need: tl, Have: len(b),
		Detail: fmt.Sprintf("total length %d, frame holds %d bytes of IP packet", tl, len(b))}
}

// ipv6Truncated is ipv4Truncated for IPv6.
func (f *Frame) ipv6Truncated(b []byte, tl int, udp bool) error {
	if udp {
		f.decodeCut(b[IPv6Len:], RoCEv2IPv6)
	}
	return &rocekit.HeaderError{Header: "ipv6", Field: "PayloadLength", Err: rocekit.ErrTruncated, Need: tl, Have: len(b),
		Detail: fmt.Sprintf("payload length %d, frame holds %d bytes after the IPv6 header", tl-IPv6Len, len(b)-IPv6Len)}
}

// decodeUDPCut decodes an IP packet's payload of n bytes on the wire (as
// the IP header says) of which the capture kept seg, len(seg) < n: when it
// is UDP, the UDP header if kept and the transport packet's kept headers
// (Packet.decodeCut). The ICRC cannot be checked: Network stays nil.
func (f *Frame) decodeUDPCut(seg []byte, n int, udp bool, encap Encap) error {
	if !udp {
		return nil
	}
	if len(seg) < UDPLen {
		if n < UDPLen {
			return truncated("udp", UDPLen, n)
		}
		return nil
	}
	u := UDP(seg[:UDPLen:UDPLen])
	f.UDP = u
	if !f.rocePort(u.DstPort()) {
		return nil
	}
	f.Encap = encap
	if ul := int(u.Length()); ul != n {
		return rocekit.BadLength("udp", "Length", n, ul, "%d, but the IP packet carries %d bytes of UDP", ul, n)
	}
	return f.Transport.decodeCut(seg[UDPLen:], n-UDPLen)
}

// decodeCut decodes what a truncated IP packet (one shorter than its
// header says, with no capture cut to explain it: a damaged record) kept of
// its UDP header and transport headers, so the truncated RoCE frame is
// still recognised and its headers shown. The ICRC cannot be checked:
// Network stays nil.
func (f *Frame) decodeCut(seg []byte, encap Encap) {
	if len(seg) < UDPLen {
		return
	}
	u := UDP(seg[:UDPLen:UDPLen])
	f.UDP = u
	if !f.rocePort(u.DstPort()) {
		return
	}
	f.Encap = encap
	_ = f.Transport.DecodeTruncated(seg[UDPLen:])
}

// decodeGRHFrame decodes RoCEv1: a GRH, then the transport packet.
func (f *Frame) decodeGRHFrame(b []byte) error {
	f.Encap = RoCEv1
	end, err := f.decodeGRH(b)
	if err != nil || end > len(b) {
		return f.grhCut(b, end, err)
	}
	f.Trailer = b[end:]
	f.l3 = b[:end]
	return f.Transport.decodeClean(b[grh.Len:end])
}

// grhCut finishes decodeGRHFrame when decodeGRH failed (err) or the
// capture cut the packet, which ends at end: the transport packet's kept
// headers (Packet.decodeCut), none when the GRH itself was cut.
func (f *Frame) grhCut(b []byte, end int, err error) error {
	if err != nil || len(b) < grh.Len {
		return err
	}
	return f.Transport.decodeCut(b[grh.Len:], end-grh.Len)
}

// decodeGRH sets f.GRH and returns where the GRH's payload ends in b. In a
// cut frame (Cut) a GRH or payload the capture cut is no error: the end
// returned is then past len(b).
func (f *Frame) decodeGRH(b []byte) (int, error) {
	if len(b) < grh.Len && f.cutShort(grh.Len, len(b)) {
		return grh.Len, nil
	}
	g, err := grh.New(b)
	if err != nil {
		return 0, err
	}
	f.GRH = g
	if err := g.Validate(); err != nil {
		return 0, err
	}
	end := grh.Len + int(g.PayLen())
	if end > len(b) && !f.cutShort(end, len(b)) {
		return 0, &rocekit.HeaderError{Header: "grh", Field: "PayLen", Err: rocekit.ErrTruncated, Need: end, Have: len(b),
			Detail: fmt.Sprintf("payload length %d, %d bytes follow the GRH", g.PayLen(), len(b)-grh.Len)}
	}
	return end, nil
}

// DecodeIB decodes a native InfiniBand packet that starts with the LRH and
// ends with the VCRC (LINKTYPE_INFINIBAND, ERF InfiniBand records). Packets
// whose LNH says raw or IP carry no IBA transport: Encap stays EncapNone.
func (f *Frame) DecodeIB(b []byte) error {
	f.reset()
	if len(b) < lrh.Len && f.cutShort(lrh.Len, len(b)) {
		return nil
	}
	l, err := lrh.New(b)
	if err != nil {
		return err
	}
	f.LRH = l
	lnh := l.LNH()
	if lnh != lrh.LNHIBALocal && lnh != lrh.LNHIBAGlobal {
		return nil
	}
	f.Encap = IBLocal
	if lnh == lrh.LNHIBAGlobal {
		f.Encap = IBGlobal
	}
	n := l.PacketBytes()
	if n < lrh.Len {
		return rocekit.BadLength("lrh", "PktLen", lrh.Len, n, "%d words (%d bytes), shorter than the LRH", l.PktLen(), n)
	}
	if n+icrc.VCRCLen > len(b) {
		if !f.cutShort(n+icrc.VCRCLen, len(b)) {
			return &rocekit.HeaderError{Header: "lrh", Field: "PktLen", Err: rocekit.ErrTruncated, Need: n + icrc.VCRCLen, Have: len(b),
				Detail: fmt.Sprintf("packet length %d words plus the VCRC", l.PktLen())}
		}
		if n > len(b) {
			return f.decodeIBCut(l, b, n)
		}
		// Only the VCRC was cut: the packet is whole, its ICRC checkable.
	} else {
		f.VCRC = b[n : n+icrc.VCRCLen]
		f.Trailer = b[n+icrc.VCRCLen:]
	}
	f.l3 = b[:n]
	t := b[lrh.Len:n]
	if lnh == lrh.LNHIBAGlobal {
		end, err := f.decodeGRH(t)
		if err != nil {
			return err
		}
		if end != len(t) {
			return rocekit.BadLength("grh", "PayLen", len(t)-grh.Len, end-grh.Len,
				"%d, but the LRH packet length leaves %d bytes after the GRH", end-grh.Len, len(t)-grh.Len)
		}
		t = t[grh.Len:]
	}
	if err := f.Transport.decodeClean(t); err != nil {
		return err
	}
	return l.Validate()
}

// errNoICRC is ComputeICRC's error for a frame without a bounded transport
// packet: one value, so that asking costs no allocation.
var errNoICRC = rocekit.Invalid("icrc", "", "frame carries no complete IB transport packet")

// decodeIBCut decodes a native IB packet of n bytes (LRH through ICRC, as
// the LRH says) that the capture cut inside: the GRH if kept, and the
// transport packet's kept headers (Packet.decodeCut).
func (f *Frame) decodeIBCut(l lrh.LRH, b []byte, n int) error {
	t, tn := b[lrh.Len:], n-lrh.Len
	if l.LNH() == lrh.LNHIBAGlobal {
		if len(t) < grh.Len {
			if tn < grh.Len {
				return truncated("grh", grh.Len, tn)
			}
			return nil
		}
		g, err := grh.New(t)
		if err != nil {
			return err
		}
		f.GRH = g
		if err := g.Validate(); err != nil {
			return err
		}
		if end := grh.Len + int(g.PayLen()); end != tn {
			return rocekit.BadLength("grh", "PayLen", tn-grh.Len, end-grh.Len,
				"%d, but the LRH packet length leaves %d bytes after the GRH", end-grh.Len, tn-grh.Len)
		}
		t, tn = t[grh.Len:], tn-grh.Len
	}
	if err := f.Transport.decodeCut(t, tn); err != nil {
		return err
	}
	return l.Validate()
}

// ComputeICRC returns the ICRC the frame's transport packet should carry,
// computed over the decoded bytes (allocation-free). It needs only the
// encapsulation to be intact: once the Ethernet, IP and UDP lengths (or the
// LRH and GRH ones) bound the transport packet, its last four bytes are the
// ICRC, whatever its opcode and whether or not its headers decoded. A frame
// cut by the capture has none to check.
func (f *Frame) ComputeICRC() (uint32, error) {
	if len(f.l3) < icrc.Len {
		return 0, errNoICRC
	}
	b := f.l3[:len(f.l3)-icrc.Len]
	switch f.Encap {
	case RoCEv2IPv4:
		return f.calc.IPv4(b)
	case RoCEv2IPv6:
		return f.calc.IPv6(b)
	case RoCEv1:
		return f.calc.GRH(b)
	default:
		return f.calc.LRH(b)
	}
}

// CheckICRC compares the ICRC carried with the one computed: want is what
// the frame should carry, got what it carries.
func (f *Frame) CheckICRC() (ok bool, want, got uint32, err error) {
	want, err = f.ComputeICRC()
	if err != nil {
		return false, 0, 0, err
	}
	got = icrc.Get(f.l3[len(f.l3)-icrc.Len:])
	return want == got, want, got, nil
}

// CheckVCRC compares the VCRC carried by a native IB packet with the one
// computed over LRH through ICRC.
func (f *Frame) CheckVCRC() (ok bool, want, got uint16, err error) {
	if f.VCRC == nil {
		return false, 0, 0, rocekit.Invalid("vcrc", "", "frame carries no VCRC")
	}
	want = icrc.VCRC(f.l3)
	got = icrc.GetVCRC(f.VCRC)
	return want == got, want, got, nil
}

// Network returns the bytes the ICRC covers, from the network header (IPv4,
// IPv6, GRH or LRH) through the ICRC, or nil: set whenever the lower
// headers bound a transport packet, even one whose headers did not decode
// (CheckICRC checks it all the same); nil when they do not, and in a frame
// the capture cut.
func (f *Frame) Network() []byte { return f.l3 }
