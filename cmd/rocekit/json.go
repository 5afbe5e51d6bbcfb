package main

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/packet"
)

// jsonObj appends a JSON object key by key, tracking commas.
type jsonObj struct {
	b     []byte
	first bool
}

func (o *jsonObj) open()  { o.b = append(o.b, '{'); o.first = true }
func (o *jsonObj) close() { o.b = append(o.b, '}'); o.first = false }
func (o *jsonObj) key(k string) {
	b := o.b
	if !o.first {
		b = append(b, ',')
	}
	o.first = false
	b = append(b, '"')
	b = append(b, k...)
	o.b = append(b, '"', ':')
}

// secondCache remembers the formatted date and time of the last whole
// second seen: captures are in time order, so formatting a timestamp is
// mostly appending nine digits of nanoseconds.
var secondCache struct {
	sec    int64
	prefix []byte // "2006-01-02T15:04:05."
}

// appendRFC3339Nano appends t in UTC as 2006-01-02T15:04:05.000000000Z.
func appendRFC3339Nano(b []byte, t time.Time) []byte {
	sec := t.Unix()
	if secondCache.prefix == nil || sec != secondCache.sec {
		secondCache.sec = sec
		secondCache.prefix = t.UTC().AppendFormat(secondCache.prefix[:0], "2006-01-02T15:04:05.")
	}
	b = append(b, secondCache.prefix...)
	ns := t.Nanosecond()
	var d [9]byte
	for i := 8; i >= 0; i-- {
		d[i] = byte('0' + ns%10)
		ns /= 10
	}
	b = append(b, d[:]...)
	return append(b, 'Z')
}
func (o *jsonObj) uint(k string, v uint64) { o.key(k); o.b = strconv.AppendUint(o.b, v, 10) }
func (o *jsonObj) int(k string, v int64)   { o.key(k); o.b = strconv.AppendInt(o.b, v, 10) }
func (o *jsonObj) bool(k string, v bool)   { o.key(k); o.b = strconv.AppendBool(o.b, v) }
func (o *jsonObj) str(k, v string)         { o.key(k); o.b = appendJSONString(o.b, v) }
func (o *jsonObj) obj(k string)            { o.key(k); o.open() }

func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			b = append(b, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 {
			b = append(b, `\ufffd`...)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return append(b, '"')
}

// appendJSON writes one frame as a JSON object on one line. Keys follow
// Wireshark's infiniband.* field names.
func appendJSON(b []byte, fi *frameInfo) []byte {
	o := jsonObj{b: b}
	f := &fi.f
	o.open()
	if fi.file != "" {
		o.str("file", fi.file)
	}
	o.int("frame", int64(fi.rec.Index))
	if !fi.rec.Time.IsZero() {
		o.key("time")
		o.b = append(o.b, '"')
		o.b = appendRFC3339Nano(o.b, fi.rec.Time)
		o.b = append(o.b, '"')
	}
	o.int("len", int64(fi.rec.OrigLen))
	if fi.rec.CapLen != fi.rec.OrigLen {
		o.int("caplen", int64(fi.rec.CapLen))
	}
	if f.Eth != nil {
		o.obj("eth")
		o.key("dst")
		o.b = append(o.b, '"')
		o.b = appendMAC(o.b, f.Eth[0:6])
		o.b = append(o.b, '"')
		o.key("src")
		o.b = append(o.b, '"')
		o.b = appendMAC(o.b, f.Eth[6:12])
		o.b = append(o.b, '"')
		o.uint("type", uint64(f.EtherType))
		o.close()
	}
	if f.NVLAN > 0 {
		o.key("vlan")
		o.b = append(o.b, '[')
		for i := 0; i < f.NVLAN; i++ {
			if i > 0 {
				o.b = append(o.b, ',')
			}
			v := f.VLANs[i]
			o.open()
			o.uint("pcp", uint64(v.PCP()))
			o.bool("dei", v.DEI())
			o.uint("vid", uint64(v.VID()))
			o.close()
		}
		o.b = append(o.b, ']')
	}
	if h := f.IPv4; h != nil {
		o.obj("ipv4")
		o.key("src")
		o.b = append(o.b, '"')
		o.b = h.Src().AppendTo(o.b)
		o.b = append(o.b, '"')
		o.key("dst")
		o.b = append(o.b, '"')
		o.b = h.Dst().AppendTo(o.b)
		o.b = append(o.b, '"')
		o.uint("dsfield_dscp", uint64(h.DSCP()))
		o.uint("dsfield_ecn", uint64(h.ECN()))
		o.uint("len", uint64(h.TotalLength()))
		o.uint("id", uint64(h.ID()))
		o.bool("flags_df", h.DF())
		o.uint("ttl", uint64(h.TTL()))
		o.uint("proto", uint64(h.Protocol()))
		o.uint("checksum", uint64(h.Checksum()))
		o.close()
	}
	if h := f.IPv6; h != nil {
		o.obj("ipv6")
		o.key("src")
		o.b = append(o.b, '"')
		o.b = h.Src().AppendTo(o.b)
		o.b = append(o.b, '"')
		o.key("dst")
		o.b = append(o.b, '"')
		o.b = h.Dst().AppendTo(o.b)
		o.b = append(o.b, '"')
		o.uint("tclass", uint64(h.TrafficClass()))
		o.uint("flow", uint64(h.FlowLabel()))
		o.uint("plen", uint64(h.PayloadLength()))
		o.uint("nxt", uint64(h.NextHeader()))
		o.uint("hlim", uint64(h.HopLimit()))
		o.close()
	}
	if h := f.UDP; h != nil {
		o.obj("udp")
		o.uint("srcport", uint64(h.SrcPort()))
		o.uint("dstport", uint64(h.DstPort()))
		o.uint("length", uint64(h.Length()))
		o.uint("checksum", uint64(h.Checksum()))
		o.close()
	}
	if h := f.LRH; h != nil {
		o.obj("lrh")
		o.uint("vl", uint64(h.VL()))
		o.uint("lver", uint64(h.LVer()))
		o.uint("sl", uint64(h.SL()))
		o.uint("lnh", uint64(h.LNH()))
		o.uint("dlid", uint64(h.DLID()))
		o.uint("pktlen", uint64(h.PktLen()))
		o.uint("slid", uint64(h.SLID()))
		o.close()
	}
	if h := f.GRH; h != nil {
		o.obj("grh")
		o.uint("ipver", uint64(h.IPVer()))
		o.uint("tclass", uint64(h.TClass()))
		o.uint("flowlabel", uint64(h.FlowLabel()))
		o.uint("paylen", uint64(h.PayLen()))
		o.uint("nxthdr", uint64(h.NxtHdr()))
		o.uint("hoplmt", uint64(h.HopLmt()))
		o.key("sgid")
		o.b = append(o.b, '"')
		o.b = h.SGIDAddr().AppendTo(o.b)
		o.b = append(o.b, '"')
		o.key("dgid")
		o.b = append(o.b, '"')
		o.b = h.DGIDAddr().AppendTo(o.b)
		o.b = append(o.b, '"')
		o.close()
	}
	appendTransportJSON(&o, &f.Transport)
	if fi.icrc.checked {
		o.obj("icrc")
		o.uint("value", uint64(icrcWire(fi.icrc.got)))
		o.bool("valid", fi.icrc.ok)
		if !fi.icrc.ok {
			o.uint("expected", uint64(icrcWire(fi.icrc.want)))
		}
		o.close()
	}
	if fi.vcrc.checked {
		o.obj("vcrc")
		o.uint("value", uint64(vcrcWire(fi.vcrc.got)))
		o.bool("valid", fi.vcrc.ok)
		if !fi.vcrc.ok {
			o.uint("expected", uint64(vcrcWire(fi.vcrc.want)))
		}
		o.close()
	}
	o.key("warnings")
	o.b = append(o.b, '[')
	for i, w := range fi.warnings {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		o.b = appendJSONString(o.b, w)
	}
	o.b = append(o.b, ']')
	if fi.err != nil {
		o.str("error", fi.err.Error())
	} else if fi.linkErr != nil {
		o.str("error", fi.linkErr.Error())
	}
	o.close()
	return append(o.b, '\n')
}

func appendTransportJSON(o *jsonObj, t *packet.Packet) {
	if t.BTH == nil {
		return
	}
	h := t.BTH
	o.obj("bth")
	o.uint("opcode", uint64(h.Opcode()))
	o.str("opcode_name", h.Opcode().String())
	o.bool("se", h.SE())
	o.bool("m", h.MigReq())
	o.uint("padcnt", uint64(h.PadCnt()))
	o.uint("tver", uint64(h.TVer()))
	o.uint("p_key", uint64(h.PKey()))
	o.bool("fecn", h.FECN())
	o.bool("becn", h.BECN())
	o.uint("resv6", uint64(h.Resv6()))
	o.uint("destqp", uint64(h.DestQP()))
	o.bool("a", h.AckReq())
	o.uint("resv7", uint64(h.Resv7()))
	o.uint("psn", uint64(h.PSN()))
	o.close()
	if x := t.RDETH; x != nil {
		o.obj("rdeth")
		o.uint("eecnxt", uint64(x.EEContext()))
		o.close()
	}
	if x := t.DETH; x != nil {
		o.obj("deth")
		o.uint("q_key", uint64(x.QKey()))
		o.uint("srcqp", uint64(x.SrcQP()))
		o.close()
	}
	if x := t.XRCETH; x != nil {
		o.obj("xrceth")
		o.uint("xrcsrq", uint64(x.XRCSRQ()))
		o.close()
	}
	if x := t.RETH; x != nil {
		o.obj("reth")
		o.uint("va", x.VA())
		o.uint("r_key", uint64(x.RKey()))
		o.uint("dmalen", uint64(x.DMALen()))
		o.close()
	}
	if x := t.AtomicETH; x != nil {
		o.obj("atomiceth")
		o.uint("va", x.VA())
		o.uint("r_key", uint64(x.RKey()))
		o.uint("swapdt", x.SwapAdd())
		o.uint("cmpdt", x.Compare())
		o.close()
	}
	if x := t.AETH; x != nil {
		s := x.Syndrome()
		o.obj("aeth")
		o.uint("syndrome", uint64(s))
		o.str("kind", s.Kind().String())
		o.uint("msn", uint64(x.MSN()))
		switch s.Kind() {
		case aeth.ACK:
			o.uint("credit", uint64(s.CreditCode()))
		case aeth.RNRNAK:
			o.uint("rnr_timer", uint64(s.RNRTimer()))
		case aeth.NAK:
			o.uint("nak_code", uint64(s.NAKCode()))
			o.str("nak", s.NAKCode().String())
		}
		o.close()
	}
	if x := t.AtomicAckETH; x != nil {
		o.obj("atomicacketh")
		o.uint("origremdt", x.OrigRemDt())
		o.close()
	}
	if x := t.ImmDt; x != nil {
		o.uint("immdt", uint64(x.Imm()))
	}
	if x := t.IETH; x != nil {
		o.uint("ieth", uint64(x.RKey()))
	}
	if x := t.FETH; x != nil {
		o.obj("feth")
		o.uint("sel", uint64(x.SEL()))
		o.uint("plt", uint64(x.PLT()))
		o.close()
	}
	if t.ICRC != nil {
		o.int("payload_len", int64(len(t.Payload)))
	}
}
