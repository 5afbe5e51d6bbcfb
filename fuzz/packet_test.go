package fuzz

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/packet"
)

// codecPacketRoundTrip checks that a decoded transport packet's Fields encode
// back to the bytes it was decoded from (b runs from the BTH through the
// ICRC; the ICRC is not re-encoded).
func codecPacketRoundTrip(t *testing.T, p *packet.Packet, b []byte) {
	t.Helper()
	f := p.Fields()
	if n := f.Len(); n != len(b)-icrc.Len {
		t.Fatalf("Fields().Len() = %d, decoded %d bytes before the ICRC", n, len(b)-icrc.Len)
	}
	out := make([]byte, f.Len())
	n, err := f.Encode(out)
	if err != nil {
		t.Fatalf("Encode of decoded fields: %v", err)
	}
	if !bytes.Equal(out[:n], b[:len(b)-icrc.Len]) {
		t.Fatalf("Encode(Fields(b)) = %x\nwant                 %x", out[:n], b[:len(b)-icrc.Len])
	}
	if !bytes.Equal(p.ICRC, b[len(b)-icrc.Len:]) {
		t.Fatalf("ICRC %x, want the last 4 bytes %x", p.ICRC, b[len(b)-icrc.Len:])
	}
}

// FuzzPacket: the transport parser on any bytes (BTH through ICRC). It never
// panics; what it accepts re-encodes bit for bit, and decoding the same bytes
// twice gives the same result.
func FuzzPacket(f *testing.F) {
	f.Add([]byte{})
	for _, b := range codecSeeds().transport {
		f.Add(b)
	}
	for _, b := range codecSeeds().headers {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p packet.Packet
		err := p.Decode(b)
		_ = p.Fields()
		_ = fmt.Sprint(p.Opcode())
		if err != nil {
			_ = err.Error()
			return
		}
		codecPacketRoundTrip(t, &p, b)
		var q packet.Packet
		if err := q.Decode(b); err != nil {
			t.Fatalf("second decode: %v", err)
		}
		f1, f2 := p.Fields(), q.Fields()
		if f1.Len() != f2.Len() || f1.BTH != f2.BTH {
			t.Fatalf("two decodes differ: %v / %v", f1.BTH, f2.BTH)
		}
	})
}

// codecFrame checks a frame decode: the ICRC and VCRC checks never panic,
// whether the decode succeeded or not, and a transport packet that decoded
// re-encodes bit for bit from the bytes at the end of the network packet.
func codecFrame(t *testing.T, fr *packet.Frame, err error) {
	t.Helper()
	_, _, _, _ = fr.CheckICRC()
	_, _, _, _ = fr.CheckVCRC()
	_, _ = fr.ComputeICRC()
	_ = fr.Transport.Fields()
	if err != nil {
		_ = err.Error()
		return
	}
	if !fr.IsRoCE() {
		return
	}
	net := fr.Network()
	if net == nil || fr.Transport.BTH == nil {
		t.Fatalf("%s frame decoded without error but has no network bytes or BTH", fr.Encap)
	}
	if _, _, _, err := fr.CheckICRC(); err != nil {
		t.Fatalf("CheckICRC of a decoded frame: %v", err)
	}
	if fr.Encap == packet.IBLocal || fr.Encap == packet.IBGlobal {
		if _, _, _, err := fr.CheckVCRC(); err != nil {
			t.Fatalf("CheckVCRC of a decoded native IB frame: %v", err)
		}
	}
	tb := net[codecBTHOffset(fr):]
	if &tb[0] != &fr.Transport.BTH[0] {
		t.Fatalf("BTH is not at offset %d of the network bytes", codecBTHOffset(fr))
	}
	codecPacketRoundTrip(t, &fr.Transport, tb)
}

// FuzzFrameEthernet: Frame.DecodeEthernet on any bytes.
func FuzzFrameEthernet(f *testing.F) {
	f.Add([]byte{})
	for _, b := range codecSeeds().ethernet {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr packet.Frame
		codecFrame(t, &fr, fr.DecodeEthernet(b))
	})
}

// FuzzFrameIB: Frame.DecodeIB on any bytes.
func FuzzFrameIB(f *testing.F) {
	f.Add([]byte{})
	for _, b := range codecSeeds().ib {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var fr packet.Frame
		codecFrame(t, &fr, fr.DecodeIB(b))
	})
}
