package main

import (
	"fmt"
	"strconv"

	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/packet"
)

// appendVerbose writes every field of every header, one header per line,
// like tshark -V. It uses each header's own String, so a field is named the
// same way everywhere.
func appendVerbose(b []byte, fi *frameInfo) []byte {
	f := fi.f
	b = append(b, "Frame "...)
	if fi.file != "" {
		b = append(b, fi.file...)
		b = append(b, ':')
	}
	b = strconv.AppendInt(b, int64(fi.Record.Index), 10)
	b = fmt.Appendf(b, ": %d bytes on wire, %d captured, %s, link %s, offset %d\n",
		fi.Record.OrigLen, fi.Record.CapLen, fi.Record.Time.UTC().Format("2006-01-02T15:04:05.000000000Z"), fi.Record.LinkType, fi.Record.Offset)
	line := func(s string) { b = append(b, "    "...); b = append(b, s...); b = append(b, '\n') }
	if f.Eth != nil {
		line(fmt.Sprintf("Ethernet dst=%s src=%s type=0x%04x", mac(f.Eth[0:6]), mac(f.Eth[6:12]), f.Eth.EtherType()))
	}
	for i := 0; i < f.NVLAN; i++ {
		v := f.VLANs[i]
		line(fmt.Sprintf("802.1Q pcp=%d dei=%v vid=%d type=0x%04x", v.PCP(), v.DEI(), v.VID(), v.EtherType()))
	}
	if h := f.IPv4; h != nil {
		line(fmt.Sprintf("IPv4 src=%s dst=%s ihl=%d dscp=%d ecn=%d len=%d id=0x%04x df=%v mf=%v frag=%d ttl=%d proto=%d checksum=0x%04x",
			h.Src(), h.Dst(), h.IHL(), h.DSCP(), h.ECN(), h.TotalLength(), h.ID(), h.DF(), h.MF(), h.FragOffset(), h.TTL(), h.Protocol(), h.Checksum()))
	}
	if h := f.IPv6; h != nil {
		line(fmt.Sprintf("IPv6 src=%s dst=%s tclass=0x%02x flow=0x%05x plen=%d nxt=%d hlim=%d",
			h.Src(), h.Dst(), h.TrafficClass(), h.FlowLabel(), h.PayloadLength(), h.NextHeader(), h.HopLimit()))
	}
	if h := f.UDP; h != nil {
		line(fmt.Sprintf("UDP srcport=%d dstport=%d length=%d checksum=0x%04x", h.SrcPort(), h.DstPort(), h.Length(), h.Checksum()))
	}
	if f.LRH != nil {
		line(f.LRH.String())
	}
	if f.GRH != nil {
		line(f.GRH.String())
	}
	t := &f.Transport
	for _, s := range transportStrings(t) {
		line(s)
	}
	for _, h := range cutHeaders(t) {
		line(h + " [cut by the capture]")
	}
	switch {
	case t.ICRC != nil:
		line(fmt.Sprintf("Payload %d bytes, pad %d bytes", len(t.Payload), len(t.Pad)))
	case t.Framed():
		line(fmt.Sprintf("Payload %d bytes (%d captured), pad %d bytes", t.PayloadLen(), len(t.Payload), t.PadLen()))
	}
	if f.Cut > 0 {
		line(string(appendCut(nil, fi)[1:]))
		if !fi.ICRC.Checked && f.IsRoCE() {
			line("ICRC " + icrcNotCut)
		}
	}
	if fi.ICRC.Checked {
		if fi.ICRC.OK {
			line(fmt.Sprintf("ICRC 0x%08x [correct]", icrcWire(fi.ICRC.Got)))
		} else {
			line(fmt.Sprintf("ICRC 0x%08x [INCORRECT, should be 0x%08x]", icrcWire(fi.ICRC.Got), icrcWire(fi.ICRC.Want)))
		}
	}
	if fi.VCRC.Checked {
		if fi.VCRC.OK {
			line(fmt.Sprintf("VCRC 0x%04x [correct]", vcrcWire(fi.VCRC.Got)))
		} else {
			line(fmt.Sprintf("VCRC 0x%04x [INCORRECT, should be 0x%04x]", vcrcWire(fi.VCRC.Got), vcrcWire(fi.VCRC.Want)))
		}
	}
	if len(f.Trailer) > 0 {
		line(fmt.Sprintf("Trailer %d bytes: %x", len(f.Trailer), []byte(f.Trailer)))
	}
	for _, w := range fi.Warnings {
		line("Warning: " + w)
	}
	if fi.Err != nil {
		line("Error: " + fi.Err.Error())
	}
	if fi.ReadErr != nil {
		line("Error: " + fi.ReadErr.Error())
	}
	return append(b, '\n')
}

func mac(b []byte) string { return string(appendMAC(nil, b)) }

// cutHeaders names the extension headers a packet's opcode carries that the
// capture cut (so the packet has them nil), in wire order.
func cutHeaders(t *packet.Packet) []string {
	if t.Cut == 0 || !t.Framed() {
		return nil
	}
	op := t.BTH.Opcode()
	kept := bth.Len + op.HeaderLen() + t.PayloadLen() + t.PadLen() + icrc.Len - t.Cut
	var r []string
	at := bth.Len
	for _, h := range op.Headers() {
		if at+h.Len() > kept {
			r = append(r, h.String())
		}
		at += h.Len()
	}
	return r
}

// transportStrings lists the String of every header present, in wire order.
func transportStrings(t *packet.Packet) []string {
	var r []string
	add := func(ok bool, s fmt.Stringer) {
		if ok {
			r = append(r, s.String())
		}
	}
	add(t.BTH != nil, t.BTH)
	add(t.RDETH != nil, t.RDETH)
	add(t.DETH != nil, t.DETH)
	add(t.XRCETH != nil, t.XRCETH)
	add(t.RETH != nil, t.RETH)
	add(t.FETH != nil, t.FETH)
	add(t.AtomicETH != nil, t.AtomicETH)
	add(t.AETH != nil, t.AETH)
	add(t.AtomicAckETH != nil, t.AtomicAckETH)
	add(t.ImmDt != nil, t.ImmDt)
	add(t.IETH != nil, t.IETH)
	add(t.CNP != nil, t.CNP)
	return r
}
