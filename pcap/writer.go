package pcap

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// Writer writes a classic pcap file (nanosecond magic a1b23c4d) or a pcapng
// file (one section; interfaces with if_tsresol 9, i.e. nanoseconds), both
// little-endian, through a bufio.Writer: call Flush at the end.
//
// The bytes are written here rather than through gopacket's pcapgo, whose
// layers.LinkType is a uint8 in v1.1.19 (so it cannot write LINKTYPE_LINUX_SLL2,
// 276) and whose pcap Writer replaces a zero timestamp with time.Now.
// WritePacket and WriteRecord do not allocate unless they fail.
type Writer struct {
	w      *bufio.Writer
	format Format
	links  []LinkType // link type of each interface; one for classic pcap
	hdr    [32]byte
}

// errWriter is the prefix of every Writer error.
var errWriter = errors.New("pcap: write")

// Timestamp ranges the formats can hold: classic pcap has 32-bit unsigned
// seconds; pcapng (here) unsigned 64-bit nanoseconds.
const (
	maxPcapSec   = 1<<32 - 1
	maxPcapngSec = (1<<64-1)/1_000_000_000 - 1
)

// NewWriter writes the file header of format f (the section header and one
// interface of link type lt for pcapng) and returns a Writer for packets of
// link type lt. lt must be a known link type.
func NewWriter(w io.Writer, f Format, lt LinkType) (*Writer, error) {
	if !lt.Known() {
		return nil, fmt.Errorf("%w: link type %d is not supported", errWriter, uint16(lt))
	}
	wr := &Writer{w: bufio.NewWriterSize(w, 64<<10), format: f}
	le := binary.LittleEndian
	switch f {
	case FormatPcap:
		h := wr.hdr[:24]
		le.PutUint32(h[0:4], magicNano)
		le.PutUint16(h[4:6], 2)
		le.PutUint16(h[6:8], 4)
		le.PutUint32(h[8:12], 0)  // thiszone
		le.PutUint32(h[12:16], 0) // sigfigs
		le.PutUint32(h[16:20], MaxRecordLen)
		le.PutUint32(h[20:24], uint32(lt))
		if _, err := wr.w.Write(h); err != nil {
			return nil, err
		}
		wr.links = append(wr.links, lt)
	case FormatPcapng:
		h := wr.hdr[:28]
		le.PutUint32(h[0:4], blockSHB)
		le.PutUint32(h[4:8], 28)
		le.PutUint32(h[8:12], 0x1A2B3C4D)
		le.PutUint16(h[12:14], 1)
		le.PutUint16(h[14:16], 0)
		le.PutUint64(h[16:24], ^uint64(0)) // section length not given
		le.PutUint32(h[24:28], 28)
		if _, err := wr.w.Write(h); err != nil {
			return nil, err
		}
		if _, err := wr.AddInterface(lt); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("%w: unknown format %d", errWriter, uint8(f))
	}
	return wr, nil
}

// AddInterface adds a pcapng interface of link type lt and returns its ID
// (0 is the one NewWriter added). Classic pcap files have one interface only.
func (w *Writer) AddInterface(lt LinkType) (int, error) {
	if w.format != FormatPcapng {
		return 0, fmt.Errorf("%w: a %v file has a single link type", errWriter, w.format)
	}
	if !lt.Known() {
		return 0, fmt.Errorf("%w: link type %d is not supported", errWriter, uint16(lt))
	}
	le := binary.LittleEndian
	h := w.hdr[:32]
	le.PutUint32(h[0:4], blockIDB)
	le.PutUint32(h[4:8], 32)
	le.PutUint16(h[8:10], uint16(lt))
	le.PutUint16(h[10:12], 0)
	le.PutUint32(h[12:16], MaxRecordLen)
	le.PutUint16(h[16:18], optTSResol)
	le.PutUint16(h[18:20], 1)
	copy(h[20:24], []byte{9, 0, 0, 0}) // 10^-9, padded
	le.PutUint32(h[24:28], optEndOfOpt)
	le.PutUint32(h[28:32], 32)
	if _, err := w.w.Write(h); err != nil {
		return 0, err
	}
	w.links = append(w.links, lt)
	return len(w.links) - 1, nil
}

// WritePacket writes data, captured whole at ts, on interface 0. A zero ts
// is written as the Unix epoch.
func (w *Writer) WritePacket(ts time.Time, data []byte) error {
	return w.write(0, ts, data, len(data))
}

// WriteRecord writes rec.Data with rec.Time and rec.OrigLen on interface
// rec.Interface, whose link type must be rec.LinkType. A zero Time is
// written as the Unix epoch.
func (w *Writer) WriteRecord(rec *Record) error {
	if rec.Interface < 0 || rec.Interface >= len(w.links) {
		return fmt.Errorf("%w: interface %d, the file has %d", errWriter, rec.Interface, len(w.links))
	}
	if lt := w.links[rec.Interface]; lt != rec.LinkType {
		return fmt.Errorf("%w: record of link type %v on interface %d of link type %v", errWriter, rec.LinkType, rec.Interface, lt)
	}
	return w.write(rec.Interface, rec.Time, rec.Data, rec.OrigLen)
}

func (w *Writer) write(ifc int, ts time.Time, data []byte, orig int) error {
	if len(data) > MaxRecordLen {
		return fmt.Errorf("%w: %d bytes, limit %d", errWriter, len(data), MaxRecordLen)
	}
	if orig < len(data) || int64(orig) > 1<<32-1 {
		return fmt.Errorf("%w: original length %d with %d bytes captured", errWriter, orig, len(data))
	}
	sec, nsec := int64(0), int64(0)
	if !ts.IsZero() {
		sec, nsec = ts.Unix(), int64(ts.Nanosecond())
	}
	le := binary.LittleEndian
	var h []byte
	switch w.format {
	case FormatPcap:
		if sec < 0 || sec > maxPcapSec {
			return fmt.Errorf("%w: time %v does not fit a pcap record", errWriter, ts)
		}
		h = w.hdr[:16]
		le.PutUint32(h[0:4], uint32(sec))
		le.PutUint32(h[4:8], uint32(nsec))
		le.PutUint32(h[8:12], uint32(len(data)))
		le.PutUint32(h[12:16], uint32(orig))
	default:
		if sec < 0 || sec > maxPcapngSec {
			return fmt.Errorf("%w: time %v does not fit a pcapng record", errWriter, ts)
		}
		units := uint64(sec)*1_000_000_000 + uint64(nsec)
		blen := 32 + pad4(uint32(len(data)))
		h = w.hdr[:28]
		le.PutUint32(h[0:4], blockEPB)
		le.PutUint32(h[4:8], blen)
		le.PutUint32(h[8:12], uint32(ifc))
		le.PutUint32(h[12:16], uint32(units>>32))
		le.PutUint32(h[16:20], uint32(units))
		le.PutUint32(h[20:24], uint32(len(data)))
		le.PutUint32(h[24:28], uint32(orig))
	}
	if _, err := w.w.Write(h); err != nil {
		return err
	}
	if _, err := w.w.Write(data); err != nil {
		return err
	}
	if w.format == FormatPcapng {
		blen := 32 + pad4(uint32(len(data)))
		t := w.hdr[24:32]
		clear(t[:4])
		le.PutUint32(t[4:8], blen)
		if _, err := w.w.Write(t[4-(blen-32-uint32(len(data))):]); err != nil {
			return err
		}
	}
	return nil
}

// Flush writes any buffered data to the underlying io.Writer.
func (w *Writer) Flush() error { return w.w.Flush() }
