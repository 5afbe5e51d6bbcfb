package main

import (
	"encoding/binary"
	"strconv"
	"time"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/internal/jsonw"
	"github.com/rocekit/rocekit/packet"
)

// clockCache remembers the formatted date and time of the last whole
// second seen: captures are in time order, so formatting a timestamp is
// mostly appending nine digits of nanoseconds. Each formatter has its own.
type clockCache struct {
	sec    int64
	prefix []byte // "2006-01-02T15:04:05."
}

// appendRFC3339Nano appends t in UTC as 2006-01-02T15:04:05.000000000Z.
func (c *clockCache) appendRFC3339Nano(b []byte, t time.Time) []byte {
	sec := t.Unix()
	if c.prefix == nil || sec != c.sec {
		c.sec = sec
		c.prefix = t.UTC().AppendFormat(c.prefix[:0], "2006-01-02T15:04:05.")
	}
	b = append(b, c.prefix...)
	ns := t.Nanosecond() // 0..999999999: nine digits, zero-padded
	var d [10]byte
	hi, mid, lo := ns/100000000, ns/10000%10000, ns%10000
	d[0] = byte('0' + hi)
	*(*[4]byte)(d[1:5]) = digits4[mid]
	*(*[4]byte)(d[5:9]) = digits4[lo]
	d[9] = 'Z'
	return append(b, d[:]...)
}

// The frame objects below are written with keys rendered ahead of time
// (`,"psn":`), one append per key: the shape of each header's object is
// fixed, so no per-key bookkeeping is needed.

func u(b []byte, key string, v uint64) []byte {
	return appendUint(append(b, key...), v)
}

func appendUint(b []byte, v uint64) []byte {
	// Up to four digits are appended byte by byte (no copy call).
	switch {
	case v < 10:
		return append(b, byte('0'+v))
	case v < 100:
		d := &digits4[v]
		return append(b, d[2], d[3])
	case v < 1000:
		d := &digits4[v]
		return append(b, d[1], d[2], d[3])
	case v < 10000:
		d := &digits4[v]
		return append(b, d[0], d[1], d[2], d[3])
	case v >= 1e16:
		return strconv.AppendUint(b, v, 10)
	}
	// Four digits at a time from the right, from a table.
	var buf [20]byte
	i := len(buf)
	for v >= 10000 {
		q := v / 10000
		i -= 4
		*(*[4]byte)(buf[i:]) = digits4[v-q*10000]
		v = q
	}
	i -= 4
	*(*[4]byte)(buf[i:]) = digits4[v] // 1 <= v <= 9999: skip its leading zeros
	switch {
	case v < 10:
		i += 3
	case v < 100:
		i += 2
	case v < 1000:
		i++
	}
	return append(b, buf[i:]...)
}

// digits4 holds the four-digit forms 0000..9999.
var digits4 = func() (t [10000][4]byte) {
	for i := range t {
		t[i] = [4]byte{byte('0' + i/1000), byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10)}
	}
	return t
}()

func bl(b []byte, key string, v bool) []byte {
	b = append(b, key...)
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// appendIPv4 appends a dotted-quad address.
func appendIPv4(b []byte, a []byte) []byte {
	b = appendUint(b, uint64(a[0]))
	b = append(b, '.')
	b = appendUint(b, uint64(a[1]))
	b = append(b, '.')
	b = appendUint(b, uint64(a[2]))
	b = append(b, '.')
	return appendUint(b, uint64(a[3]))
}

func qs(b []byte, key, v string) []byte {
	b = append(b, key...)
	return appendJSONString(b, v)
}

// appendJSON writes one frame as a JSON object on one line. Keys follow
// Wireshark's infiniband.* field names.
func appendJSON(b []byte, fi *frameInfo) []byte {
	f := fi.f
	b = append(b, '{')
	if fi.file != "" {
		b = qs(b, `"file":`, fi.file)
		b = append(b, ',')
	}
	b = u(b, `"frame":`, uint64(fi.Record.Index))
	if !fi.Record.Time.IsZero() {
		b = append(b, `,"time":"`...)
		b = fi.clock.appendRFC3339Nano(b, fi.Record.Time)
		b = append(b, '"')
	}
	b = u(b, `,"len":`, uint64(fi.Record.OrigLen))
	if fi.Record.CapLen != fi.Record.OrigLen || f.Cut > 0 {
		b = appendCapLen(b, fi)
	}
	t := &f.Transport
	if fi.jc != nil && f.Eth != nil && f.NVLAN == 0 && len(f.IPv4) == packet.IPv4Len && f.UDP != nil {
		b = fi.jc.appendEthIPv4UDP(b, f)
	} else {
		b = appendLowerJSON(b, f)
	}
	if t.BTH != nil && fi.jc != nil {
		b = fi.jc.appendBTH(b, t.BTH)
		b = appendExtJSON(b, t)
	} else {
		b = appendTransportJSON(b, t)
	}
	if fi.ICRC.Checked {
		b = u(b, `,"icrc":{"value":`, uint64(icrcWire(fi.ICRC.Got)))
		if fi.ICRC.OK {
			b = append(b, `,"valid":true}`...)
		} else {
			b = u(b, `,"valid":false,"expected":`, uint64(icrcWire(fi.ICRC.Want)))
			b = append(b, '}')
		}
	} else if f.Cut > 0 && f.IsRoCE() {
		b = append(b, `,"icrc":{"checked":false,"reason":"`+cutReason+`"}`...)
	}
	if fi.VCRC.Checked {
		b = u(b, `,"vcrc":{"value":`, uint64(vcrcWire(fi.VCRC.Got)))
		b = bl(b, `,"valid":`, fi.VCRC.OK)
		if !fi.VCRC.OK {
			b = u(b, `,"expected":`, uint64(vcrcWire(fi.VCRC.Want)))
		}
		b = append(b, '}')
	}
	if len(fi.Warnings) == 0 && fi.Err == nil && fi.ReadErr == nil {
		return append(b, `,"warnings":[]}`+"\n"...)
	}
	b = append(b, `,"warnings":[`...)
	for i, w := range fi.Warnings {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, w)
	}
	b = append(b, ']')
	if fi.Err != nil {
		b = qs(b, `,"error":`, fi.Err.Error())
	} else if fi.ReadErr != nil {
		b = qs(b, `,"error":`, fi.ReadErr.Error())
	}
	return append(b, '}', '\n')
}

// appendCapLen appends "caplen" when the record's captured length differs
// from its length on the wire, and "cut":true when the capture cut the
// frame (its headers decoded as far as they were kept, its ICRC not
// checked).
func appendCapLen(b []byte, fi *frameInfo) []byte {
	if fi.Record.CapLen != fi.Record.OrigLen {
		b = u(b, `,"caplen":`, uint64(fi.Record.CapLen))
	}
	if fi.f.Cut > 0 {
		b = append(b, `,"cut":true`...)
	}
	return b
}

// appendLowerJSON appends the objects of the headers below the transport
// packet.
func appendLowerJSON(b []byte, f *packet.Frame) []byte {
	if f.Eth != nil {
		b = append(b, `,"eth":{"dst":"`...)
		b = appendMAC(b, f.Eth[0:6])
		b = append(b, `","src":"`...)
		b = appendMAC(b, f.Eth[6:12])
		b = u(b, `","type":`, uint64(f.EtherType))
		b = append(b, '}')
	}
	if f.NVLAN > 0 {
		b = append(b, `,"vlan":[`...)
		for i := 0; i < f.NVLAN; i++ {
			if i > 0 {
				b = append(b, ',')
			}
			v := f.VLANs[i]
			b = u(b, `{"pcp":`, uint64(v.PCP()))
			b = bl(b, `,"dei":`, v.DEI())
			b = u(b, `,"vid":`, uint64(v.VID()))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	if h := f.IPv4; h != nil {
		b = append(b, `,"ipv4":{"src":"`...)
		b = appendIPv4(b, h[12:16])
		b = append(b, `","dst":"`...)
		b = appendIPv4(b, h[16:20])
		b = u(b, `","dsfield_dscp":`, uint64(h.DSCP()))
		b = u(b, `,"dsfield_ecn":`, uint64(h.ECN()))
		b = u(b, `,"len":`, uint64(h.TotalLength()))
		b = u(b, `,"id":`, uint64(h.ID()))
		b = bl(b, `,"flags_df":`, h.DF())
		b = u(b, `,"ttl":`, uint64(h.TTL()))
		b = u(b, `,"proto":`, uint64(h.Protocol()))
		b = u(b, `,"checksum":`, uint64(h.Checksum()))
		b = append(b, '}')
	}
	if h := f.IPv6; h != nil {
		b = append(b, `,"ipv6":{"src":"`...)
		b = h.Src().AppendTo(b)
		b = append(b, `","dst":"`...)
		b = h.Dst().AppendTo(b)
		b = u(b, `","tclass":`, uint64(h.TrafficClass()))
		b = u(b, `,"flow":`, uint64(h.FlowLabel()))
		b = u(b, `,"plen":`, uint64(h.PayloadLength()))
		b = u(b, `,"nxt":`, uint64(h.NextHeader()))
		b = u(b, `,"hlim":`, uint64(h.HopLimit()))
		b = append(b, '}')
	}
	if h := f.UDP; h != nil {
		b = u(b, `,"udp":{"srcport":`, uint64(h.SrcPort()))
		b = u(b, `,"dstport":`, uint64(h.DstPort()))
		b = u(b, `,"length":`, uint64(h.Length()))
		b = u(b, `,"checksum":`, uint64(h.Checksum()))
		b = append(b, '}')
	}
	if h := f.LRH; h != nil {
		b = u(b, `,"lrh":{"vl":`, uint64(h.VL()))
		b = u(b, `,"lver":`, uint64(h.LVer()))
		b = u(b, `,"sl":`, uint64(h.SL()))
		b = u(b, `,"lnh":`, uint64(h.LNH()))
		b = u(b, `,"dlid":`, uint64(h.DLID()))
		b = u(b, `,"pktlen":`, uint64(h.PktLen()))
		b = u(b, `,"slid":`, uint64(h.SLID()))
		b = append(b, '}')
	}
	if h := f.GRH; h != nil {
		b = u(b, `,"grh":{"ipver":`, uint64(h.IPVer()))
		b = u(b, `,"tclass":`, uint64(h.TClass()))
		b = u(b, `,"flowlabel":`, uint64(h.FlowLabel()))
		b = u(b, `,"paylen":`, uint64(h.PayLen()))
		b = u(b, `,"nxthdr":`, uint64(h.NxtHdr()))
		b = u(b, `,"hoplmt":`, uint64(h.HopLmt()))
		b = append(b, `,"sgid":"`...)
		b = h.SGIDAddr().AppendTo(b)
		b = append(b, `","dgid":"`...)
		b = h.DGIDAddr().AppendTo(b)
		b = append(b, `"}`...)
	}
	return b
}

func appendTransportJSON(b []byte, t *packet.Packet) []byte {
	if t.BTH == nil {
		return b
	}
	return appendExtJSON(appendBTHJSON(b, t.BTH), t)
}

// appendBTHJSON appends the "bth" object.
func appendBTHJSON(b []byte, h bth.BTH) []byte {
	b = appendBTHHead(b, h)
	b = appendUint(b, uint64(h.PSN()))
	return append(b, '}')
}

// appendBTHHead appends the "bth" object up to the PSN's value: what BTH
// bytes 0-8 decide.
func appendBTHHead(b []byte, h bth.BTH) []byte {
	b = u(b, `,"bth":{"opcode":`, uint64(h.Opcode()))
	b = qs(b, `,"opcode_name":`, h.Opcode().String())
	b = bl(b, `,"se":`, h.SE())
	b = bl(b, `,"m":`, h.MigReq())
	b = u(b, `,"padcnt":`, uint64(h.PadCnt()))
	b = u(b, `,"tver":`, uint64(h.TVer()))
	b = u(b, `,"p_key":`, uint64(h.PKey()))
	b = bl(b, `,"fecn":`, h.FECN())
	b = bl(b, `,"becn":`, h.BECN())
	b = u(b, `,"resv6":`, uint64(h.Resv6()))
	b = u(b, `,"destqp":`, uint64(h.DestQP()))
	b = bl(b, `,"a":`, h.AckReq())
	b = u(b, `,"resv7":`, uint64(h.Resv7()))
	return append(b, `,"psn":`...)
}

// aethKindJSON holds `,"kind":"..."` for each of the four AETH kinds.
var aethKindJSON = func() (t [4]string) {
	for k := range t {
		t[k] = string(qs(nil, `,"kind":`, aeth.Kind(k).String()))
	}
	return t
}()

// appendExtJSON appends the objects of the headers after the BTH, and the
// payload length.
func appendExtJSON(b []byte, t *packet.Packet) []byte {
	if x := t.RDETH; x != nil {
		b = u(b, `,"rdeth":{"eecnxt":`, uint64(x.EEContext()))
		b = append(b, '}')
	}
	if x := t.DETH; x != nil {
		b = u(b, `,"deth":{"q_key":`, uint64(x.QKey()))
		b = u(b, `,"srcqp":`, uint64(x.SrcQP()))
		b = append(b, '}')
	}
	if x := t.XRCETH; x != nil {
		b = u(b, `,"xrceth":{"xrcsrq":`, uint64(x.XRCSRQ()))
		b = append(b, '}')
	}
	if x := t.RETH; x != nil {
		b = u(b, `,"reth":{"va":`, x.VA())
		b = u(b, `,"r_key":`, uint64(x.RKey()))
		b = u(b, `,"dmalen":`, uint64(x.DMALen()))
		b = append(b, '}')
	}
	if x := t.AtomicETH; x != nil {
		b = u(b, `,"atomiceth":{"va":`, x.VA())
		b = u(b, `,"r_key":`, uint64(x.RKey()))
		b = u(b, `,"swapdt":`, x.SwapAdd())
		b = u(b, `,"cmpdt":`, x.Compare())
		b = append(b, '}')
	}
	if x := t.AETH; x != nil {
		s := x.Syndrome()
		b = u(b, `,"aeth":{"syndrome":`, uint64(s))
		b = append(b, aethKindJSON[s.Kind()&3]...)
		b = u(b, `,"msn":`, uint64(x.MSN()))
		switch s.Kind() {
		case aeth.ACK:
			b = u(b, `,"credit":`, uint64(s.CreditCode()))
		case aeth.RNRNAK:
			b = u(b, `,"rnr_timer":`, uint64(s.RNRTimer()))
		case aeth.NAK:
			b = u(b, `,"nak_code":`, uint64(s.NAKCode()))
			b = qs(b, `,"nak":`, s.NAKCode().String())
		}
		b = append(b, '}')
	}
	if x := t.AtomicAckETH; x != nil {
		b = u(b, `,"atomicacketh":{"origremdt":`, x.OrigRemDt())
		b = append(b, '}')
	}
	if x := t.ImmDt; x != nil {
		b = u(b, `,"immdt":`, uint64(x.Imm()))
	}
	if x := t.IETH; x != nil {
		b = u(b, `,"ieth":`, uint64(x.RKey()))
	}
	if x := t.FETH; x != nil {
		b = u(b, `,"feth":{"sel":`, uint64(x.SEL()))
		b = u(b, `,"plt":`, uint64(x.PLT()))
		b = append(b, '}')
	}
	if t.Framed() {
		b = u(b, `,"payload_len":`, uint64(t.PayloadLen()))
	}
	return b
}

// appendJSONString appends s as a JSON string.
func appendJSONString(b []byte, s string) []byte { return jsonw.AppendString(b, s) }

// jsonCache renders, once per formatter, the parts of a frame's JSON that
// repeat from packet to packet of a flow: the Ethernet, IPv4 and UDP
// objects but for the lengths, the IP ID and the IP checksum, and the BTH
// object but for the PSN. Entries are keyed by every header byte they
// depend on, so the output is the same as rendering each frame whole.
type jsonCache struct {
	lower [256]lowerEntry
	bth   [1024]bthEntry
}

// lowerKey holds the bytes of Ethernet (14), IPv4 without options (bytes
// 0-1, 6-9 and 12-19) and UDP (bytes 0-3 and 6-7) that appendLowerJSON
// shows, except the IPv4 total length, ID and checksum and the UDP length.
type lowerKey [34]byte

type lowerEntry struct {
	key  lowerKey
	set  bool
	text []byte // the JSON, without the four varying numbers
	cut  [3]int // where the IPv4 length, checksum and UDP length go
}

type bthEntry struct {
	key  uint64 // BTH bytes 0-7
	key8 byte   // BTH byte 8
	set  bool
	text []byte // appendBTHHead's output
}

// appendEthIPv4UDP appends what appendLowerJSON does for a frame of
// Ethernet without VLAN tags, IPv4 without options, and UDP.
func (c *jsonCache) appendEthIPv4UDP(b []byte, f *packet.Frame) []byte {
	ip, udp := f.IPv4, f.UDP
	var k lowerKey
	copy(k[0:14], f.Eth)
	k[14], k[15] = ip[0], ip[1]
	copy(k[16:20], ip[6:10])
	copy(k[20:28], ip[12:20])
	copy(k[28:32], udp[0:4])
	copy(k[32:34], udp[6:8])
	x := binary.LittleEndian.Uint64(k[0:]) ^ binary.LittleEndian.Uint64(k[8:])*31 ^
		binary.LittleEndian.Uint64(k[16:])*961 ^ binary.LittleEndian.Uint64(k[24:])*29791 ^
		uint64(binary.LittleEndian.Uint16(k[32:]))
	e := &c.lower[(x*0x9E3779B97F4A7C15)>>56]
	if !e.set || e.key != k {
		e.fill(k, f)
	}
	t := e.text
	b = append(b, t[:e.cut[0]]...)
	b = appendUint(b, uint64(ip.TotalLength()))
	b = append(b, `,"id":`...)
	b = appendUint(b, uint64(ip.ID()))
	b = append(b, t[e.cut[0]:e.cut[1]]...)
	b = appendUint(b, uint64(ip.Checksum()))
	b = append(b, t[e.cut[1]:e.cut[2]]...)
	b = appendUint(b, uint64(udp.Length()))
	return append(b, t[e.cut[2]:]...)
}

func (e *lowerEntry) fill(k lowerKey, f *packet.Frame) {
	h, udp := f.IPv4, f.UDP
	t := e.text[:0]
	t = append(t, `,"eth":{"dst":"`...)
	t = appendMAC(t, f.Eth[0:6])
	t = append(t, `","src":"`...)
	t = appendMAC(t, f.Eth[6:12])
	t = u(t, `","type":`, uint64(f.EtherType))
	t = append(t, '}')
	t = append(t, `,"ipv4":{"src":"`...)
	t = appendIPv4(t, h[12:16])
	t = append(t, `","dst":"`...)
	t = appendIPv4(t, h[16:20])
	t = u(t, `","dsfield_dscp":`, uint64(h.DSCP()))
	t = u(t, `,"dsfield_ecn":`, uint64(h.ECN()))
	t = append(t, `,"len":`...)
	e.cut[0] = len(t)
	t = bl(t, `,"flags_df":`, h.DF())
	t = u(t, `,"ttl":`, uint64(h.TTL()))
	t = u(t, `,"proto":`, uint64(h.Protocol()))
	t = append(t, `,"checksum":`...)
	e.cut[1] = len(t)
	t = append(t, '}')
	t = u(t, `,"udp":{"srcport":`, uint64(udp.SrcPort()))
	t = u(t, `,"dstport":`, uint64(udp.DstPort()))
	t = append(t, `,"length":`...)
	e.cut[2] = len(t)
	t = u(t, `,"checksum":`, uint64(udp.Checksum()))
	t = append(t, '}')
	e.text, e.key, e.set = t, k, true
}

// appendBTH appends what appendBTHJSON does.
func (c *jsonCache) appendBTH(b []byte, h bth.BTH) []byte {
	k, k8 := binary.LittleEndian.Uint64(h[0:8]), h[8]
	e := &c.bth[((k^uint64(k8)<<56)*0x9E3779B97F4A7C15)>>54]
	if !e.set || e.key != k || e.key8 != k8 {
		e.text = appendBTHHead(e.text[:0], h)
		e.key, e.key8, e.set = k, k8, true
	}
	b = append(b, e.text...)
	b = appendUint(b, uint64(h.PSN()))
	return append(b, '}')
}
