package fuzz

import (
	"hash/crc32"
	"testing"

	"github.com/rocekit/rocekit/icrc"
)

// icrcReference is the ICRC as ib-facts.md §3 defines it, written as plainly
// as possible: copy the packet, set every masked field to ones, and run the
// library CRC over eight 0xFF bytes (the LRH stand-in) and the copy. It
// shares nothing with package icrc, whose vector kernel and portable code
// both mask in registers.
func icrcReference(kind byte, b []byte) (uint32, bool) {
	m := append([]byte(nil), b...)
	set := func(i int, v byte) bool {
		if i >= len(m) {
			return false
		}
		m[i] |= v
		return true
	}
	grh := func(o int) bool { // traffic class, flow label, hop limit
		return set(o, 0x0F) && set(o+1, 0xFF) && set(o+2, 0xFF) && set(o+3, 0xFF) && set(o+7, 0xFF)
	}
	prefix := []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}
	switch kind % 4 {
	case 0: // RoCEv2 over IPv4
		if len(m) < 20 || m[0]&0x0F < 5 {
			return 0, false
		}
		hl := int(m[0]&0x0F) * 4
		if !(set(1, 0xFF) && set(8, 0xFF) && set(10, 0xFF) && set(11, 0xFF) &&
			set(hl+6, 0xFF) && set(hl+7, 0xFF) && set(hl+8+4, 0xFF) && len(m) >= hl+20) {
			return 0, false
		}
	case 1: // RoCEv2 over IPv6
		if !(grh(0) && set(46, 0xFF) && set(47, 0xFF) && set(52, 0xFF) && len(m) >= 60) {
			return 0, false
		}
	case 2: // RoCEv1: GRH then BTH
		if !(grh(0) && set(44, 0xFF) && len(m) >= 52) {
			return 0, false
		}
	case 3: // native IB, LRH and BTH (LNH 2)
		if len(m) < 20 {
			return 0, false
		}
		set(0, 0xF0) // VL; the caller sets LNH 2

		set(12, 0xFF)
		prefix = nil
	}
	return crc32.Update(crc32.ChecksumIEEE(prefix), crc32.IEEETable, m), true
}

// FuzzICRC checks package icrc against the plain reference on arbitrary
// packets of every shape, lengths and alignments included (the vector
// kernel's loads depend on where the packet starts in memory).
func FuzzICRC(f *testing.F) {
	f.Add(byte(0), byte(0), make([]byte, 46))
	f.Add(byte(1), byte(3), make([]byte, 300))
	f.Add(byte(2), byte(63), make([]byte, 1100))
	f.Add(byte(3), byte(17), make([]byte, 20))
	f.Fuzz(func(t *testing.T, kind, off byte, data []byte) {
		buf := make([]byte, int(off%64)+len(data))
		b := buf[off%64:]
		copy(b, data)
		if kind%4 == 3 && len(b) >= 2 {
			b[1] = b[1]&^3 | 2
		}
		want, ok := icrcReference(kind, b)
		var got uint32
		var err error
		switch kind % 4 {
		case 0:
			got, err = icrc.IPv4(b)
		case 1:
			got, err = icrc.IPv6(b)
		case 2:
			got, err = icrc.GRH(b)
		case 3:
			got, err = icrc.LRH(b)
		}
		if !ok {
			if err == nil {
				t.Fatalf("kind %d, %d bytes: no error for a packet too short for its headers", kind%4, len(b))
			}
			return
		}
		if err != nil {
			t.Fatalf("kind %d, %d bytes: %v", kind%4, len(b), err)
		}
		if got != want {
			t.Fatalf("kind %d, %d bytes at offset %d: ICRC %08x, reference %08x", kind%4, len(b), off%64, got, want)
		}
	})
}
