package gen

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/internal/jsonerr"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// num is a JSON number or a string holding one in decimal or 0x hex.
type num struct {
	v   uint64
	set bool
}

func (n *num) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(uq)
	}
	v, err := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 0, 64)
	if err != nil {
		return fmt.Errorf("%s: want an unsigned number (decimal, or a string such as \"0x1f\")", b)
	}
	n.v, n.set = v, true
	return nil
}

func (n num) or(d uint64) uint64 {
	if n.set {
		return n.v
	}
	return d
}

// bits returns the value if it fits w bits.
func (n num) bits(name string, w int, d uint64) (uint64, error) {
	v := n.or(d)
	if w < 64 && v>>w != 0 {
		return 0, fmt.Errorf("%s: %d does not fit %d bits", name, v, w)
	}
	return v, nil
}

type boolOpt struct {
	v, set bool
}

func (b *boolOpt) UnmarshalJSON(d []byte) error {
	if string(d) == "null" {
		return nil
	}
	if err := json.Unmarshal(d, &b.v); err != nil {
		return fmt.Errorf("%s: want true or false", d)
	}
	b.set = true
	return nil
}

func (b boolOpt) or(d bool) bool {
	if b.set {
		return b.v
	}
	return d
}

// JSON shapes of the packet list (see the package documentation).

type jAddr struct {
	MAC  string `json:"mac"`
	IPv4 string `json:"ipv4"`
	IPv6 string `json:"ipv6"`
	LID  num    `json:"lid"`
}

type jQP struct {
	QPN         num      `json:"qpn"`
	DestQPN     num      `json:"dest_qpn"`
	RQPSN       num      `json:"rq_psn"`
	SQPSN       num      `json:"sq_psn"`
	MTU         num      `json:"mtu"`
	PKey        num      `json:"pkey"`
	IRD         num      `json:"ird"`
	MinRNRTimer num      `json:"min_rnr_timer"`
	Access      []string `json:"access"`
	RecvWQEs    num      `json:"recv_wqes"`
	RecvBytes   num      `json:"recv_bytes"`
	RecvRepost  boolOpt  `json:"recv_repost"`
	Peer        *jAddr   `json:"peer"`
}

type jMR struct {
	Addr   num      `json:"addr"`
	RKey   num      `json:"rkey"`
	Length num      `json:"length"`
	Access []string `json:"access"`
	Init   string   `json:"init"`
}

type jDUT struct {
	Encap     string   `json:"encap"`
	Self      *jAddr   `json:"self"`
	LinkGbps  *float64 `json:"link_gbps"`
	LatencyNS *float64 `json:"latency_ns"`
	QPs       []jQP    `json:"qps"`
	MRs       *[]jMR   `json:"mrs"`
}

type jBTH struct {
	SE     boolOpt `json:"se"`
	M      boolOpt `json:"m"`
	PadCnt num     `json:"pad_cnt"`
	TVer   num     `json:"tver"`
	PKey   num     `json:"pkey"`
	FECN   boolOpt `json:"fecn"`
	BECN   boolOpt `json:"becn"`
	Resv6  num     `json:"resv6"`
	DestQP num     `json:"dest_qp"`
	AckReq boolOpt `json:"ack_req"`
	Resv7  num     `json:"resv7"`
	PSN    num     `json:"psn"`
}

type jPacket struct {
	Opcode  json.RawMessage `json:"opcode"`
	QP      num             `json:"qp"`
	TimeNS  *float64        `json:"time_ns"`
	Purpose string          `json:"purpose"`
	Repeat  num             `json:"repeat"`
	BTH     jBTH            `json:"bth"`
	RDETH   *struct {
		Resv8     num `json:"resv8"`
		EEContext num `json:"ee_context"`
	} `json:"rdeth"`
	DETH *struct {
		QKey  num `json:"qkey"`
		Resv8 num `json:"resv8"`
		SrcQP num `json:"src_qp"`
	} `json:"deth"`
	XRCETH *struct {
		Resv8  num `json:"resv8"`
		XRCSRQ num `json:"xrcsrq"`
	} `json:"xrceth"`
	RETH *struct {
		VA     num `json:"va"`
		RKey   num `json:"rkey"`
		DMALen num `json:"dma_len"`
	} `json:"reth"`
	AtomicETH *struct {
		VA      num `json:"va"`
		RKey    num `json:"rkey"`
		SwapAdd num `json:"swap_add"`
		Compare num `json:"compare"`
	} `json:"atomic_eth"`
	AETH *struct {
		Syndrome num `json:"syndrome"`
		MSN      num `json:"msn"`
	} `json:"aeth"`
	AtomicAckETH *struct {
		Orig num `json:"orig_rem_dt"`
	} `json:"atomic_ack_eth"`
	ImmDt *struct {
		Imm num `json:"imm"`
	} `json:"immdt"`
	IETH *struct {
		RKey num `json:"rkey"`
	} `json:"ieth"`
	FETH *struct {
		Resv num `json:"resv"`
		SEL  num `json:"sel"`
		PLT  num `json:"plt"`
	} `json:"feth"`
	Payload  json.RawMessage `json:"payload"`
	PadBytes string          `json:"pad_bytes"`
	ICRC     json.RawMessage `json:"icrc"`
	VCRC     json.RawMessage `json:"vcrc"`
	Eth      *struct {
		Dst   string `json:"dst"`
		Src   string `json:"src"`
		VLANs []struct {
			PCP num     `json:"pcp"`
			DEI boolOpt `json:"dei"`
			VID num     `json:"vid"`
		} `json:"vlans"`
	} `json:"eth"`
	IPv4 *struct {
		TOS num     `json:"tos"`
		ID  num     `json:"id"`
		DF  boolOpt `json:"df"`
		TTL num     `json:"ttl"`
		Src string  `json:"src"`
		Dst string  `json:"dst"`
	} `json:"ipv4"`
	IPv6 *struct {
		TrafficClass num    `json:"traffic_class"`
		FlowLabel    num    `json:"flow_label"`
		HopLimit     num    `json:"hop_limit"`
		Src          string `json:"src"`
		Dst          string `json:"dst"`
	} `json:"ipv6"`
	UDP *struct {
		SrcPort  num     `json:"sport"`
		DstPort  num     `json:"dport"`
		Checksum boolOpt `json:"checksum"`
	} `json:"udp"`
	LRH *struct {
		VL    num `json:"vl"`
		LVer  num `json:"lver"`
		SL    num `json:"sl"`
		Resv2 num `json:"resv2"`
		LNH   num `json:"lnh"`
		DLID  num `json:"dlid"`
		Resv5 num `json:"resv5"`
		SLID  num `json:"slid"`
	} `json:"lrh"`
	GRH *struct {
		IPVer     num    `json:"ipver"`
		TClass    num    `json:"tclass"`
		FlowLabel num    `json:"flow_label"`
		NxtHdr    num    `json:"nxt_hdr"`
		HopLmt    num    `json:"hop_lmt"`
		SGID      string `json:"sgid"`
		DGID      string `json:"dgid"`
	} `json:"grh"`
}

type jList struct {
	DUT     *jDUT     `json:"dut"`
	Packets []jPacket `json:"packets"`
}

// LoadPackets reads a packet list file ("-" is standard input).
func LoadPackets(name string) (*Source, error) {
	var data []byte
	var err error
	if name == "-" {
		data, err = io.ReadAll(os.Stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		return nil, err
	}
	src, err := ParsePackets(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	src.Name = "packets " + name
	return src, nil
}

// ParsePackets builds a Source from a packet list: a JSON array of packets,
// or an object {"dut": {...}, "packets": [...]} (the package documentation
// gives the format). Unknown keys are errors.
func ParsePackets(data []byte) (*Source, error) {
	var l jList
	t := bytes.TrimSpace(data)
	var v any = &l
	if len(t) > 0 && t[0] == '[' {
		v = &l.Packets
	}
	if err := jsonerr.Decode(data, v, packetsTop); err != nil {
		if strings.HasPrefix(err.Error(), packetsTop) {
			return nil, err
		}
		return nil, fmt.Errorf("packet list: %w", err)
	}
	dut := DefaultDUT()
	if l.DUT != nil {
		if err := applyDUT(&dut, l.DUT); err != nil {
			return nil, err
		}
	}
	if err := dut.Check(); err != nil {
		return nil, err
	}
	src := &Source{Name: "packets", DUT: dut}
	b := builder{dut: &src.DUT, next: make([]uint32, len(dut.QPs))}
	for i := range dut.QPs {
		b.next[i] = dut.QPs[i].RQPSN
	}
	for i := range l.Packets {
		if err := b.build(i, &l.Packets[i], &src.Frames); err != nil {
			return nil, fmt.Errorf("packet %d: %w", i, err)
		}
	}
	return src, nil
}

// packetsTop is the error for a file that holds neither form.
const packetsTop = "the packet list must be an array of packets or an object"

func parseAddr(a *Addr, j *jAddr, what string) error {
	if j == nil {
		return nil
	}
	if j.MAC != "" {
		m, err := packet.ParseMAC(j.MAC)
		if err != nil {
			return fmt.Errorf("%s mac %q", what, j.MAC)
		}
		a.MAC = m
	}
	if j.IPv4 != "" {
		ip, err := netip.ParseAddr(j.IPv4)
		if err != nil || !ip.Is4() {
			return fmt.Errorf("%s ipv4 %q", what, j.IPv4)
		}
		a.IPv4 = ip.As4()
	}
	if j.IPv6 != "" {
		ip, err := netip.ParseAddr(j.IPv6)
		if err != nil {
			return fmt.Errorf("%s ipv6 %q", what, j.IPv6)
		}
		a.IPv6 = ip.As16()
	}
	v, err := j.LID.bits(what+" lid", 16, uint64(a.LID))
	a.LID = uint16(v)
	return err
}

func parseAccess(names []string, d rc.Access) (rc.Access, error) {
	if names == nil {
		return d, nil
	}
	var a rc.Access
	for _, n := range names {
		found := false
		for _, x := range accessNames {
			if strings.EqualFold(n, x.name) {
				a |= x.a
				found = true
			}
		}
		if strings.EqualFold(n, "all") {
			a, found = a|rc.AccessAll, true
		}
		if !found {
			return 0, fmt.Errorf("access right %q: want local_write, remote_write, remote_read, remote_atomic, flush_global, flush_persistent or all", n)
		}
	}
	return a, nil
}

func applyDUT(d *DUT, j *jDUT) error {
	var err error
	if j.Encap != "" {
		if d.Encap, err = ParseEncap(j.Encap); err != nil {
			return fmt.Errorf("dut: %w", err)
		}
	}
	if err := parseAddr(&d.Self, j.Self, "dut self"); err != nil {
		return err
	}
	if j.LinkGbps != nil {
		d.Gbps = *j.LinkGbps
	}
	if j.LatencyNS != nil {
		if *j.LatencyNS < 0 {
			return fmt.Errorf("dut: negative latency_ns")
		}
		d.Latency = sim.FromSeconds(*j.LatencyNS * 1e-9)
	}
	if j.QPs != nil {
		def := d.QPs[0]
		d.QPs = nil
		for i, jq := range j.QPs {
			q := def
			fields := []struct {
				n   num
				w   int
				dst func(uint64)
			}{
				{jq.QPN, 24, func(v uint64) { q.QPN = uint32(v) }}, {jq.DestQPN, 24, func(v uint64) { q.DestQPN = uint32(v) }},
				{jq.RQPSN, 24, func(v uint64) { q.RQPSN = uint32(v) }}, {jq.SQPSN, 24, func(v uint64) { q.SQPSN = uint32(v) }},
				{jq.MTU, 16, func(v uint64) { q.MTU = int(v) }}, {jq.PKey, 16, func(v uint64) { q.PKey = uint16(v) }},
				{jq.IRD, 8, func(v uint64) { q.IRD = int(v) }}, {jq.MinRNRTimer, 5, func(v uint64) { q.MinRNRTimer = uint8(v) }},
				{jq.RecvWQEs, 24, func(v uint64) { q.RecvWQEs = int(v) }}, {jq.RecvBytes, 31, func(v uint64) { q.RecvBytes = int(v) }},
			}
			for _, f := range fields {
				if f.n.set {
					v, err := f.n.bits(fmt.Sprintf("dut qps[%d]", i), f.w, 0)
					if err != nil {
						return err
					}
					f.dst(v)
				}
			}
			q.RecvRepost = jq.RecvRepost.or(q.RecvRepost)
			if q.Access, err = parseAccess(jq.Access, q.Access); err != nil {
				return fmt.Errorf("dut qps[%d]: %w", i, err)
			}
			if err := parseAddr(&q.Peer, jq.Peer, fmt.Sprintf("dut qps[%d] peer", i)); err != nil {
				return err
			}
			d.QPs = append(d.QPs, q)
		}
	}
	if j.MRs != nil {
		d.MRs = nil
		for i, jm := range *j.MRs {
			m := MR{Addr: jm.Addr.or(0x10000000), RKey: uint32(jm.RKey.or(0x100)), Length: int(jm.Length.or(1 << 20)), Access: rc.AccessAll}
			if jm.RKey.v > 0xFFFFFFFF || jm.Length.v > 1<<33 {
				return fmt.Errorf("dut mrs[%d]: rkey or length out of range", i)
			}
			if m.Access, err = parseAccess(jm.Access, m.Access); err != nil {
				return fmt.Errorf("dut mrs[%d]: %w", i, err)
			}
			if m.Init, err = ParseMemInit(jm.Init); err != nil {
				return fmt.Errorf("dut mrs[%d]: %w", i, err)
			}
			d.MRs = append(d.MRs, m)
		}
	}
	return nil
}

// builder turns packet entries into frames.
type builder struct {
	dut     *DUT
	next    []uint32 // per QP: the PSN a packet without bth.psn gets
	calc    icrc.Calc
	fr      packet.Frame
	prevEnd sim.Time
	arena   []byte
}

func parseOpcode(raw json.RawMessage) (opcode.Opcode, error) {
	if len(raw) == 0 {
		return 0, fmt.Errorf("opcode missing")
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n num
		if err := n.UnmarshalJSON(raw); err != nil || n.v > 0xFF {
			return 0, fmt.Errorf("opcode %s: want a name (RC_SEND_ONLY) or a number 0-255", raw)
		}
		return opcode.Opcode(n.v), nil
	}
	return opcode.Parse(s)
}

// parsePayload reads "hex" or {"len": N, "pattern": "zero"|"incr"|"random"|"0xAB"}.
func parsePayload(raw json.RawMessage, idx int) ([]byte, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		s = strings.Join(strings.Fields(s), "")
		b, err := hex.DecodeString(strings.TrimPrefix(s, "0x"))
		if err != nil {
			return nil, fmt.Errorf("payload: %v", err)
		}
		return b, nil
	}
	var p struct {
		Len     num    `json:"len"`
		Pattern string `json:"pattern"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("payload: want a hex string or {\"len\": N, \"pattern\": ...}: %v", err)
	}
	if p.Len.v > 1<<20 {
		return nil, fmt.Errorf("payload: %d bytes, at most 1 MiB per packet", p.Len.v)
	}
	b := make([]byte, p.Len.v)
	switch pat := strings.ToLower(p.Pattern); pat {
	case "", "zero":
	case "incr":
		for i := range b {
			b[i] = byte(i)
		}
	case "random":
		x := uint64(idx)*0x9E3779B97F4A7C15 + 0x6a09e667f3bcc908
		for i := range b {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			b[i] = byte(x)
		}
	default:
		v, err := strconv.ParseUint(pat, 0, 8)
		if err != nil {
			return nil, fmt.Errorf("payload pattern %q: want zero, incr, random or a byte value such as 0xab", p.Pattern)
		}
		for i := range b {
			b[i] = byte(v)
		}
	}
	return b, nil
}

// parseCRC reads "auto" (or nothing) or a number.
func parseCRC(raw json.RawMessage, w int) (uint64, bool, error) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == `"auto"` {
		return 0, false, nil
	}
	var n num
	if err := n.UnmarshalJSON(raw); err != nil {
		return 0, false, fmt.Errorf("%s: want \"auto\" or a number", raw)
	}
	v, err := n.bits("crc", w, 0)
	return v, true, err
}

// build turns packet entry idx into frames and appends them to out: one,
// or as many as the entry's repeat asks for.
func (b *builder) build(idx int, p *jPacket, out *[]SourceFrame) error {
	d := b.dut
	op, err := parseOpcode(p.Opcode)
	if err != nil {
		return err
	}
	qi := 0
	if p.QP.set {
		if qi = d.qpIndex(uint32(p.QP.v)); qi < 0 {
			return fmt.Errorf("qp 0x%x is not a DUT QP", p.QP.v)
		}
	}
	q := &d.QPs[qi]
	ff := d.inTemplate(q)
	t := &ff.Transport
	if t.Payload, err = parsePayload(p.Payload, idx); err != nil {
		return err
	}
	var fs fieldSetter
	fs.bth(t, op, &p.BTH, q, b.next[qi])
	if len(fs.errs) > 0 {
		return fs.errs[0]
	}
	var mr MR
	if len(d.MRs) > 0 {
		mr = d.MRs[0]
	}
	fs.extHeaders(t, p, q, mr)
	fs.ethernet(&ff, p)
	fs.ib(&ff, p)
	crc := fs.crcs(p, d.Encap)
	if len(fs.errs) > 0 {
		return fs.errs[0]
	}
	if p.TimeNS != nil && *p.TimeNS < 0 {
		return fmt.Errorf("time_ns %g: negative", *p.TimeNS)
	}
	reps := p.Repeat.or(1)
	if reps < 1 || reps > 1<<26 {
		return fmt.Errorf("repeat %d: want 1 to 2^26", reps)
	}
	return b.emit(p, &ff, op, qi, crc, reps, out)
}

// fieldSetter sets header fields from a packet entry's values, keeping the
// errors (a value too wide for its field, an address that does not parse)
// in order, so that the first can be reported once every field was seen.
type fieldSetter struct {
	errs []error
}

// set stores n, or dflt if the entry leaves it out, through dst if it fits
// w bits.
func (fs *fieldSetter) set(n num, name string, w int, dflt uint64, dst func(uint64)) {
	v, err := n.bits(name, w, dflt)
	if err != nil {
		fs.errs = append(fs.errs, err)
		return
	}
	dst(v)
}

// ip4 parses s, unless empty, into dst as an IPv4 address.
func (fs *fieldSetter) ip4(s string, dst *[4]byte) {
	if s == "" {
		return
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		fs.errs = append(fs.errs, fmt.Errorf("IPv4 address %q", s))
		return
	}
	*dst = a.As4()
}

// ip6 parses s, unless empty, into dst as an IPv6 address (or GID).
func (fs *fieldSetter) ip6(s string, dst *[16]byte) {
	if s == "" {
		return
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		fs.errs = append(fs.errs, fmt.Errorf("IPv6 address %q", s))
		return
	}
	*dst = a.As16()
}

// bth fills the BTH of a packet with opcode op for DUT QP q: the entry's
// values, else the pad count its payload needs, the QP's P_Key (the
// default one if the QP has none) and number, the QP's next PSN psn, and
// AckReq on the last or only packet of a request.
func (fs *fieldSetter) bth(t *packet.Fields, op opcode.Opcode, bt *jBTH, q *QP, psn uint32) {
	t.BTH.Opcode = op
	t.BTH.SE, t.BTH.MigReq = bt.SE.or(false), bt.M.or(false)
	t.BTH.FECN, t.BTH.BECN = bt.FECN.or(false), bt.BECN.or(false)
	pos := op.Position()
	t.BTH.AckReq = bt.AckReq.or(op.Valid() && op.IsRequest() && (pos == opcode.Last || pos == opcode.Only))
	fs.set(bt.PadCnt, "bth.pad_cnt", 2, uint64(packet.PadFor(len(t.Payload))), func(v uint64) { t.BTH.PadCnt = uint8(v) })
	fs.set(bt.TVer, "bth.tver", 4, 0, func(v uint64) { t.BTH.TVer = uint8(v) })
	fs.set(bt.PKey, "bth.pkey", 16, uint64(q.pkey()), func(v uint64) { t.BTH.PKey = uint16(v) })
	fs.set(bt.Resv6, "bth.resv6", 6, 0, func(v uint64) { t.BTH.Resv6 = uint8(v) })
	fs.set(bt.DestQP, "bth.dest_qp", 24, uint64(q.QPN), func(v uint64) { t.BTH.DestQP = uint32(v) })
	fs.set(bt.Resv7, "bth.resv7", 7, 0, func(v uint64) { t.BTH.Resv7 = uint8(v) })
	fs.set(bt.PSN, "bth.psn", 24, uint64(psn), func(v uint64) { t.BTH.PSN = uint32(v) })
}

// extHeaders fills the extended transport headers after the BTH and the
// pad bytes: the entry's values, else zero, except that the DETH's source
// QP is the QP's peer, RETH and AtomicETH name memory region mr, the RETH's
// DMA length is the payload's, and the AETH says ACK with unlimited credit.
// The opcode decides which of them the frame carries.
func (fs *fieldSetter) extHeaders(t *packet.Fields, p *jPacket, q *QP, mr MR) {
	if h := p.RDETH; h != nil {
		fs.set(h.Resv8, "rdeth.resv8", 8, 0, func(v uint64) { t.RDETH.Resv8 = uint8(v) })
		fs.set(h.EEContext, "rdeth.ee_context", 24, 0, func(v uint64) { t.RDETH.EEContext = uint32(v) })
	}
	t.DETH.SrcQP = q.DestQPN
	if h := p.DETH; h != nil {
		fs.set(h.QKey, "deth.qkey", 32, 0, func(v uint64) { t.DETH.QKey = uint32(v) })
		fs.set(h.Resv8, "deth.resv8", 8, 0, func(v uint64) { t.DETH.Resv8 = uint8(v) })
		fs.set(h.SrcQP, "deth.src_qp", 24, uint64(q.DestQPN), func(v uint64) { t.DETH.SrcQP = uint32(v) })
	}
	if h := p.XRCETH; h != nil {
		fs.set(h.Resv8, "xrceth.resv8", 8, 0, func(v uint64) { t.XRCETH.Resv8 = uint8(v) })
		fs.set(h.XRCSRQ, "xrceth.xrcsrq", 24, 0, func(v uint64) { t.XRCETH.XRCSRQ = uint32(v) })
	}
	t.RETH.VA, t.RETH.RKey, t.RETH.DMALen = mr.Addr, mr.RKey, uint32(len(t.Payload))
	if h := p.RETH; h != nil {
		fs.set(h.VA, "reth.va", 64, mr.Addr, func(v uint64) { t.RETH.VA = v })
		fs.set(h.RKey, "reth.rkey", 32, uint64(mr.RKey), func(v uint64) { t.RETH.RKey = uint32(v) })
		fs.set(h.DMALen, "reth.dma_len", 32, uint64(len(t.Payload)), func(v uint64) { t.RETH.DMALen = uint32(v) })
	}
	t.AtomicETH.VA, t.AtomicETH.RKey = mr.Addr, mr.RKey
	if h := p.AtomicETH; h != nil {
		fs.set(h.VA, "atomic_eth.va", 64, mr.Addr, func(v uint64) { t.AtomicETH.VA = v })
		fs.set(h.RKey, "atomic_eth.rkey", 32, uint64(mr.RKey), func(v uint64) { t.AtomicETH.RKey = uint32(v) })
		fs.set(h.SwapAdd, "atomic_eth.swap_add", 64, 0, func(v uint64) { t.AtomicETH.SwapAdd = v })
		fs.set(h.Compare, "atomic_eth.compare", 64, 0, func(v uint64) { t.AtomicETH.Compare = v })
	}
	t.AETH.Syndrome = aeth.ACKSyndrome(aeth.Unlimited)
	if h := p.AETH; h != nil {
		fs.set(h.Syndrome, "aeth.syndrome", 8, uint64(aeth.ACKSyndrome(aeth.Unlimited)), func(v uint64) { t.AETH.Syndrome = aeth.Syndrome(v) })
		fs.set(h.MSN, "aeth.msn", 24, 0, func(v uint64) { t.AETH.MSN = uint32(v) })
	}
	if h := p.AtomicAckETH; h != nil {
		fs.set(h.Orig, "atomic_ack_eth.orig_rem_dt", 64, 0, func(v uint64) { t.AtomicAckETH.OrigRemDt = v })
	}
	if h := p.ImmDt; h != nil {
		fs.set(h.Imm, "immdt.imm", 32, 0, func(v uint64) { t.ImmDt.Imm = uint32(v) })
	}
	if h := p.IETH; h != nil {
		fs.set(h.RKey, "ieth.rkey", 32, 0, func(v uint64) { t.IETH.RKey = uint32(v) })
	}
	if h := p.FETH; h != nil {
		fs.set(h.Resv, "feth.resv", 26, 0, func(v uint64) { t.FETH.Resv = uint32(v) })
		fs.set(h.SEL, "feth.sel", 2, 0, func(v uint64) { t.FETH.SEL = uint8(v) })
		fs.set(h.PLT, "feth.plt", 4, 0, func(v uint64) { t.FETH.PLT = uint8(v) })
	}
	if p.PadBytes != "" {
		pb, err := hex.DecodeString(p.PadBytes)
		if err != nil || len(pb) > 3 {
			fs.errs = append(fs.errs, fmt.Errorf("pad_bytes %q: want up to 3 bytes of hex", p.PadBytes))
		}
		copy(t.PadBytes[:], pb)
	}
}

// ethernet applies the entry's Ethernet (MACs, VLAN tags), IPv4, IPv6 and
// UDP values to the DUT's frame template ff; the encapsulation decides
// which of them the frame carries.
func (fs *fieldSetter) ethernet(ff *packet.FrameFields, p *jPacket) {
	if e := p.Eth; e != nil {
		for _, x := range []struct {
			s   string
			dst *[6]byte
		}{{e.Dst, &ff.Eth.Dst}, {e.Src, &ff.Eth.Src}} {
			if x.s == "" {
				continue
			}
			m, err := packet.ParseMAC(x.s)
			if err != nil {
				fs.errs = append(fs.errs, fmt.Errorf("eth mac %q", x.s))
				continue
			}
			*x.dst = m
		}
		for i, v := range e.VLANs {
			var vl packet.VLANFields
			fs.set(v.PCP, fmt.Sprintf("eth.vlans[%d].pcp", i), 3, 0, func(x uint64) { vl.PCP = uint8(x) })
			fs.set(v.VID, fmt.Sprintf("eth.vlans[%d].vid", i), 12, 0, func(x uint64) { vl.VID = uint16(x) })
			vl.DEI = v.DEI.or(false)
			ff.Eth.VLANs = append(ff.Eth.VLANs, vl)
		}
	}
	if h := p.IPv4; h != nil {
		fs.set(h.TOS, "ipv4.tos", 8, uint64(ff.IPv4.TOS), func(v uint64) { ff.IPv4.TOS = uint8(v) })
		fs.set(h.ID, "ipv4.id", 16, 0, func(v uint64) { ff.IPv4.ID = uint16(v) })
		fs.set(h.TTL, "ipv4.ttl", 8, uint64(ff.IPv4.TTL), func(v uint64) { ff.IPv4.TTL = uint8(v) })
		ff.IPv4.DF = h.DF.or(ff.IPv4.DF)
		fs.ip4(h.Src, &ff.IPv4.Src)
		fs.ip4(h.Dst, &ff.IPv4.Dst)
	}
	if h := p.IPv6; h != nil {
		fs.set(h.TrafficClass, "ipv6.traffic_class", 8, uint64(ff.IPv6.TrafficClass), func(v uint64) { ff.IPv6.TrafficClass = uint8(v) })
		fs.set(h.FlowLabel, "ipv6.flow_label", 20, 0, func(v uint64) { ff.IPv6.FlowLabel = uint32(v) })
		fs.set(h.HopLimit, "ipv6.hop_limit", 8, uint64(ff.IPv6.HopLimit), func(v uint64) { ff.IPv6.HopLimit = uint8(v) })
		fs.ip6(h.Src, &ff.IPv6.Src)
		fs.ip6(h.Dst, &ff.IPv6.Dst)
	}
	if h := p.UDP; h != nil {
		fs.set(h.SrcPort, "udp.sport", 16, uint64(ff.UDP.SrcPort), func(v uint64) { ff.UDP.SrcPort = uint16(v) })
		fs.set(h.DstPort, "udp.dport", 16, uint64(ff.UDP.DstPort), func(v uint64) { ff.UDP.DstPort = uint16(v) })
		ff.UDP.Checksum = h.Checksum.or(false)
	}
}

// ib applies the entry's LRH and GRH values to the DUT's frame template
// ff: native IB frames carry an LRH, RoCEv1 and global IB frames a GRH.
func (fs *fieldSetter) ib(ff *packet.FrameFields, p *jPacket) {
	if h := p.LRH; h != nil {
		l := &ff.LRH
		fs.set(h.VL, "lrh.vl", 4, 0, func(v uint64) { l.VL = uint8(v) })
		fs.set(h.LVer, "lrh.lver", 4, 0, func(v uint64) { l.LVer = uint8(v) })
		fs.set(h.SL, "lrh.sl", 4, 0, func(v uint64) { l.SL = uint8(v) })
		fs.set(h.Resv2, "lrh.resv2", 2, 0, func(v uint64) { l.Resv2 = uint8(v) })
		fs.set(h.LNH, "lrh.lnh", 2, uint64(l.LNH), func(v uint64) { l.LNH = uint8(v) })
		fs.set(h.DLID, "lrh.dlid", 16, uint64(l.DLID), func(v uint64) { l.DLID = uint16(v) })
		fs.set(h.Resv5, "lrh.resv5", 5, 0, func(v uint64) { l.Resv5 = uint8(v) })
		fs.set(h.SLID, "lrh.slid", 16, uint64(l.SLID), func(v uint64) { l.SLID = uint16(v) })
	}
	if h := p.GRH; h != nil {
		g := &ff.GRH
		fs.set(h.IPVer, "grh.ipver", 4, uint64(g.IPVer), func(v uint64) { g.IPVer = uint8(v) })
		fs.set(h.TClass, "grh.tclass", 8, uint64(g.TClass), func(v uint64) { g.TClass = uint8(v) })
		fs.set(h.FlowLabel, "grh.flow_label", 20, 0, func(v uint64) { g.FlowLabel = uint32(v) })
		fs.set(h.NxtHdr, "grh.nxt_hdr", 8, uint64(g.NxtHdr), func(v uint64) { g.NxtHdr = uint8(v) })
		fs.set(h.HopLmt, "grh.hop_lmt", 8, uint64(g.HopLmt), func(v uint64) { g.HopLmt = uint8(v) })
		fs.ip6(h.SGID, &g.SGID)
		fs.ip6(h.DGID, &g.DGID)
	}
}

// crcOverride is the ICRC and VCRC a packet entry writes in place of the
// computed ones.
type crcOverride struct {
	icrc, vcrc       uint64
	icrcSet, vcrcSet bool
}

// crcs reads the entry's icrc and vcrc ("auto", or left out, for the
// computed value); only native IB frames (encap) carry a VCRC.
func (fs *fieldSetter) crcs(p *jPacket, encap packet.Encap) crcOverride {
	var c crcOverride
	var err error
	if c.icrc, c.icrcSet, err = parseCRC(p.ICRC, 32); err != nil {
		fs.errs = append(fs.errs, fmt.Errorf("icrc %w", err))
	}
	if c.vcrc, c.vcrcSet, err = parseCRC(p.VCRC, 16); err != nil {
		fs.errs = append(fs.errs, fmt.Errorf("vcrc %w", err))
	}
	if c.vcrcSet && !isIB(encap) {
		fs.errs = append(fs.errs, fmt.Errorf("vcrc: RoCE frames carry no VCRC"))
	}
	return c
}

// put writes the overriding CRCs into data, an encoded frame (fr is the
// frame to decode it into); a new ICRC also changes the VCRC that covers
// it, unless the VCRC is given too.
func (c crcOverride) put(fr *packet.Frame, encap packet.Encap, data []byte) error {
	if !c.icrcSet && !c.vcrcSet {
		return nil
	}
	decode(fr, encap, data)
	l, ok := frameLayout(fr)
	if !ok {
		return fmt.Errorf("cannot place the ICRC")
	}
	if c.icrcSet {
		icrc.Put(data[l.icrc:], uint32(c.icrc))
		if l.vcrc >= 0 {
			icrc.PutVCRC(data[l.vcrc:], icrc.VCRC(data[l.l3:l.vcrc]))
		}
	}
	if c.vcrcSet {
		icrc.PutVCRC(data[l.vcrc:], uint16(c.vcrc))
	}
	return nil
}

// emit encodes frame ff reps times (with the next PSNs of DUT QP qi,
// unless the entry fixes bth.psn), writes the CRC overrides, and appends
// the frames to out, each sent when the link is free after the previous
// and not before the entry's time_ns.
func (b *builder) emit(p *jPacket, ff *packet.FrameFields, op opcode.Opcode, qi int, crc crcOverride, reps uint64, out *[]SourceFrame) error {
	d := b.dut
	q := &d.QPs[qi]
	t := &ff.Transport
	*out = slices.Grow(*out, int(reps))
	for k := uint64(0); k < reps; k++ {
		if k > 0 && !p.BTH.PSN.set {
			t.BTH.PSN = b.next[qi]
		}
		n := ff.Len()
		data := carve(&b.arena, n, 1<<20)
		if _, err := ff.EncodeWith(data, &b.calc); err != nil {
			return err
		}
		if err := crc.put(&b.fr, d.Encap, data); err != nil {
			return err
		}
		// The next packet's default PSN follows this RC request's: a READ
		// request takes one PSN per response packet (§5.3).
		if op.Valid() && op.IsRequest() && op.Transport() == opcode.RC && t.BTH.DestQP == q.QPN {
			np := uint32(1)
			if op.Family() == opcode.FamilyRead {
				np = max(np, rc.Packets(t.RETH.DMALen, q.MTU))
			}
			b.next[qi] = rc.AddPSN(t.BTH.PSN, np)
		}
		ts := b.prevEnd
		if p.TimeNS != nil && k == 0 {
			ts = max(ts, sim.FromSeconds(*p.TimeNS*1e-9))
		}
		b.prevEnd = ts + d.txTime(n)
		*out = append(*out, SourceFrame{Time: ts, Data: data, Purpose: p.Purpose})
	}
	return nil
}

// carve returns n bytes from the end of *arena, starting a new chunk of
// at least chunk bytes when the arena has no room for them, so that the
// bytes returned never move. Their capacity ends with them.
func carve(arena *[]byte, n, chunk int) []byte {
	if cap(*arena)-len(*arena) < n {
		*arena = make([]byte, 0, max(chunk, n))
	}
	off := len(*arena)
	*arena = (*arena)[:off+n]
	return (*arena)[off : off+n : off+n]
}
