package fuzz

import (
	"testing"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// FuzzFrameCut: Frame.DecodeRecord on the first snap bytes of any frame
// whose record says it was longer (a snap length). It never panics, a cut
// transport packet has no ICRC to check, and a frame that decodes whole
// without error decodes cut without error too, with the same BTH, the
// extension headers the capture kept and its payload length on the wire.
func FuzzFrameCut(f *testing.F) {
	for _, b := range codecSeeds().ethernet {
		for _, snap := range []uint16{14, 54, 64, 100} {
			f.Add(b, snap, false)
		}
	}
	for _, b := range codecSeeds().ib {
		for _, snap := range []uint16{8, 20, 40, 64} {
			f.Add(b, snap, true)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, snap uint16, ib bool) {
		lt := pcap.LinkTypeEthernet
		if ib {
			lt = pcap.LinkTypeInfiniBand
		}
		n := min(int(snap), len(b))
		rec := pcap.Record{LinkType: lt, Data: b[:n], CapLen: n, OrigLen: len(b)}
		var cut, whole packet.Frame
		err := cut.DecodeRecord(&rec)
		_, _, _, _ = cut.CheckICRC()
		_, _, _, _ = cut.CheckVCRC()
		_ = cut.Transport.Fields()
		if err != nil {
			_ = err.Error()
		}
		p := &cut.Transport
		if p.Cut > 0 && cut.Network() != nil {
			t.Fatalf("a cut transport packet (%d bytes cut) has network bytes to check", p.Cut)
		}
		if p.Cut > 0 && p.Framed() && p.PayloadLen() < len(p.Payload) {
			t.Fatalf("payload length %d, %d bytes kept", p.PayloadLen(), len(p.Payload))
		}
		wrec := pcap.Record{LinkType: lt, Data: b, CapLen: len(b), OrigLen: len(b)}
		werr := whole.DecodeRecord(&wrec)
		if werr != nil || (!ib && n < packet.EthernetLen) {
			return
		}
		if err != nil {
			t.Fatalf("decodes whole, but cut to %d of %d bytes: %v", n, len(b), err)
		}
		if cut.Encap != whole.Encap && cut.Encap != packet.EncapNone {
			t.Fatalf("encapsulation %s cut, %s whole", cut.Encap, whole.Encap)
		}
		w := &whole.Transport
		if p.BTH == nil || w.BTH == nil {
			return
		}
		if string(p.BTH) != string(w.BTH) {
			t.Fatalf("BTH %x cut, %x whole", []byte(p.BTH), []byte(w.BTH))
		}
		if (p.RETH != nil && string(p.RETH) != string(w.RETH)) || (p.AETH != nil && string(p.AETH) != string(w.AETH)) {
			t.Fatalf("extension headers differ")
		}
		if p.Framed() != w.Framed() || p.Framed() && p.PayloadLen() != w.PayloadLen() {
			t.Fatalf("payload length %d (framed %v) cut, %d (framed %v) whole", p.PayloadLen(), p.Framed(), w.PayloadLen(), w.Framed())
		}
	})
}
