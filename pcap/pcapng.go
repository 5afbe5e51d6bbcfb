package pcap

import (
	"encoding/binary"
	"io"
	"math/bits"
)

// pcapng block types.
const (
	blockIDB = 0x00000001 // Interface Description Block
	blockPB  = 0x00000002 // Packet Block (obsolete)
	blockSPB = 0x00000003 // Simple Packet Block
	blockEPB = 0x00000006 // Enhanced Packet Block
)

// pcapng option codes read here.
const (
	optEndOfOpt  = 0
	optTSResol   = 9
	optTSOffset  = 14
	blockSaysFmt = "block length says %d bytes, %d present"
)

// ngIface is what a section's Interface Description Block says.
type ngIface struct {
	link   LinkType
	snap   uint32
	units  uint64 // timestamp units per second (if_tsresol), 10^6 by default
	offset int64  // seconds added to every timestamp (if_tsoffset)
}

// time converts a timestamp in the interface's units to Unix seconds and
// nanoseconds, truncating below the nanosecond.
func (i *ngIface) time(ts uint64) (sec, nsec int64) {
	s, rem := ts/i.units, ts%i.units
	ns := rem
	if i.units != 1_000_000_000 {
		hi, lo := bits.Mul64(rem, 1_000_000_000)
		ns, _ = bits.Div64(hi, lo, i.units) // hi < units since rem < units
	}
	return int64(s) + i.offset, int64(ns)
}

func pad4(n uint32) uint32 { return (n + 3) &^ 3 }

// readSHB reads a Section Header Block starting at off, of which the first
// have bytes (4 or 8) are already in r.hdr.
func (r *Reader) readSHB(off int64, have int) error {
	if n, err := r.read(r.hdr[have:12]); err != nil {
		return r.readErr(off, err, "section header block: %d bytes needed, %d present", 12, int64(have+n))
	}
	var order binary.ByteOrder
	switch bom := r.hdr[8:12]; {
	case bom[0] == 0x1A && bom[1] == 0x2B && bom[2] == 0x3C && bom[3] == 0x4D:
		order = binary.BigEndian
	case bom[0] == 0x4D && bom[1] == 0x3C && bom[2] == 0x2B && bom[3] == 0x1A:
		order = binary.LittleEndian
	default:
		return r.fail(off, ErrBadMagic, "section header block: byte-order magic % x", bom)
	}
	blen := order.Uint32(r.hdr[4:8])
	if blen < 28 || blen%4 != 0 {
		return r.fail(off, ErrBadBlock, "section header block: total length %d", blen)
	}
	if n, err := r.read(r.hdr[12:24]); err != nil {
		return r.readErr(off, err, blockSaysFmt, int64(blen), int64(12+n))
	}
	if major, minor := order.Uint16(r.hdr[12:14]), order.Uint16(r.hdr[14:16]); major != 1 {
		return r.fail(off, ErrUnsupportedVersion, "section header block: pcapng version %d.%d, want 1.x", major, minor)
	}
	r.order = order
	if err := r.finishBlock(off, blockSHB, blen, 24); err != nil {
		return err
	}
	r.sections++
	r.ifaces = r.ifaces[:0]
	return nil
}

// finishBlock skips what is left of a block of total length blen after its
// first used bytes, and checks the trailing copy of the total length.
func (r *Reader) finishBlock(off int64, btype, blen uint32, used int64) error {
	rest := int64(blen) - 4 - used
	if k, err := r.skip(rest); err != nil {
		return r.readErr(off, err, blockSaysFmt, int64(blen), used+k)
	}
	if n, err := r.read(r.hdr[28:32]); err != nil {
		return r.readErr(off, err, blockSaysFmt, int64(blen), used+rest+int64(n))
	}
	if t := r.order.Uint32(r.hdr[28:32]); t != blen {
		return r.fail(off, ErrBadBlock, "block type 0x%08X: trailing total length %d, leading %d", btype, t, blen)
	}
	return nil
}

func (r *Reader) nextPcapng() error {
	for {
		off := r.off
		n, err := r.read(r.hdr[:8])
		if err != nil {
			if err == io.EOF {
				return err
			}
			return r.readErr(off, err, "block header: %d bytes needed, %d present", 8, int64(n))
		}
		btype := r.order.Uint32(r.hdr[0:4])
		if btype == blockSHB {
			if err := r.readSHB(off, 8); err != nil {
				return err
			}
			continue
		}
		blen := r.order.Uint32(r.hdr[4:8])
		if blen < 12 || blen%4 != 0 {
			return r.fail(off, ErrBadBlock, "block type 0x%08X: total length %d", btype, blen)
		}
		switch btype {
		case blockEPB, blockPB:
			return r.readPacketBlock(off, btype, blen)
		case blockSPB:
			return r.readSPB(off, blen)
		case blockIDB:
			if err := r.readIDB(off, blen); err != nil {
				return err
			}
		default:
			if err := r.finishBlock(off, btype, blen, 8); err != nil {
				return err
			}
		}
	}
}

// iface returns the section's interface ifc, checking that it exists and
// that its link type is known.
func (r *Reader) iface(off int64, what string, ifc uint32) (*ngIface, error) {
	if uint64(ifc) >= uint64(len(r.ifaces)) {
		return nil, r.fail(off, ErrBadBlock, "%s: interface %d, the section describes %d", what, ifc, len(r.ifaces))
	}
	i := &r.ifaces[ifc]
	if !i.link.Known() {
		return nil, r.fail(off, ErrUnknownLinkType, "%s: interface %d has link type %d", what, ifc, uint16(i.link))
	}
	return i, nil
}

// readPacketBlock reads an Enhanced Packet Block or an obsolete Packet Block;
// both have 20 bytes of fixed fields after the block header.
func (r *Reader) readPacketBlock(off int64, btype, blen uint32) error {
	what := "enhanced packet block"
	if btype == blockPB {
		what = "packet block"
	}
	if blen < 32 {
		return r.fail(off, ErrBadBlock, "%s: total length %d, minimum 32", what, blen)
	}
	if n, err := r.read(r.hdr[8:28]); err != nil {
		return r.readErr(off, err, blockSaysFmt, int64(blen), int64(8+n))
	}
	o := r.order
	var ifc uint32
	if btype == blockPB {
		ifc = uint32(o.Uint16(r.hdr[8:10]))
	} else {
		ifc = o.Uint32(r.hdr[8:12])
	}
	ts := uint64(o.Uint32(r.hdr[12:16]))<<32 | uint64(o.Uint32(r.hdr[16:20]))
	caplen, orig := o.Uint32(r.hdr[20:24]), o.Uint32(r.hdr[24:28])
	i, err := r.iface(off, what, ifc)
	if err != nil {
		return err
	}
	if err := r.checkLen(off, caplen, i.snap); err != nil {
		return err
	}
	if pad4(caplen) > blen-32 {
		return r.fail(off, ErrBadBlock, "%s: captured length %d does not fit total length %d", what, caplen, blen)
	}
	data := r.grow(int(caplen))
	if n, err := r.read(data); err != nil {
		return r.readErr(off, err, blockSaysFmt, int64(blen), int64(28+n))
	}
	if err := r.finishBlock(off, btype, blen, 28+int64(caplen)); err != nil {
		return err
	}
	sec, nsec := i.time(ts)
	r.setRecord(off, true, sec, nsec, data, orig, i.link, int(ifc))
	return nil
}

// readSPB reads a Simple Packet Block: interface 0, no timestamp, captured
// length min(original length, snap length).
func (r *Reader) readSPB(off int64, blen uint32) error {
	if blen < 16 {
		return r.fail(off, ErrBadBlock, "simple packet block: total length %d, minimum 16", blen)
	}
	if n, err := r.read(r.hdr[8:12]); err != nil {
		return r.readErr(off, err, blockSaysFmt, int64(blen), int64(8+n))
	}
	orig := r.order.Uint32(r.hdr[8:12])
	i, err := r.iface(off, "simple packet block", 0)
	if err != nil {
		return err
	}
	caplen := orig
	if i.snap != 0 && caplen > i.snap {
		caplen = i.snap
	}
	if err := r.checkLen(off, caplen, 0); err != nil {
		return err
	}
	if caplen > blen-16 {
		return r.fail(off, ErrBadBlock, "simple packet block: captured length %d does not fit total length %d", caplen, blen)
	}
	data := r.grow(int(caplen))
	if n, err := r.read(data); err != nil {
		return r.readErr(off, err, blockSaysFmt, int64(blen), int64(12+n))
	}
	if err := r.finishBlock(off, blockSPB, blen, 12+int64(caplen)); err != nil {
		return err
	}
	r.setRecord(off, false, 0, 0, data, orig, i.link, 0)
	return nil
}

// readIDB reads an Interface Description Block and its if_tsresol and
// if_tsoffset options.
func (r *Reader) readIDB(off int64, blen uint32) error {
	const what = "interface description block"
	if blen < 20 {
		return r.fail(off, ErrBadBlock, "%s: total length %d, minimum 20", what, blen)
	}
	if blen-12 > MaxRecordLen {
		return r.fail(off, ErrBadBlock, "%s: total length %d, limit %d", what, blen, MaxRecordLen+12)
	}
	body := r.grow(int(blen - 12))
	if n, err := r.read(body); err != nil {
		return r.readErr(off, err, blockSaysFmt, int64(blen), int64(8+n))
	}
	o := r.order
	i := ngIface{link: LinkType(o.Uint16(body[0:2])), snap: o.Uint32(body[4:8]), units: 1_000_000}
	opts := body[8:]
	for len(opts) >= 4 {
		code, olen := o.Uint16(opts[0:2]), int(o.Uint16(opts[2:4]))
		if code == optEndOfOpt {
			break
		}
		if 4+olen > len(opts) {
			return r.fail(off, ErrBadBlock, "%s: option %d of %d bytes overruns the block", what, code, olen)
		}
		val := opts[4 : 4+olen]
		switch {
		case code == optTSResol && olen >= 1:
			v := val[0]
			if v&0x80 == 0 {
				if v > 19 {
					return r.fail(off, ErrBadBlock, "%s: if_tsresol 10^-%d does not fit 64 bits", what, v)
				}
				i.units = 1
				for range v {
					i.units *= 10
				}
			} else {
				if v&0x7F > 63 {
					return r.fail(off, ErrBadBlock, "%s: if_tsresol 2^-%d does not fit 64 bits", what, v&0x7F)
				}
				i.units = 1 << (v & 0x7F)
			}
		case code == optTSOffset && olen >= 8:
			i.offset = int64(o.Uint64(val[0:8]))
		}
		opts = opts[min(4+int(pad4(uint32(olen))), len(opts)):]
	}
	if err := r.finishBlock(off, blockIDB, blen, int64(blen)-4); err != nil {
		return err
	}
	r.ifaces = append(r.ifaces, i)
	return nil
}
