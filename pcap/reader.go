package pcap

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"time"

	"github.com/rocekit/rocekit/internal/pcapfast"
)

// MaxRecordLen is the largest captured length the reader accepts, whatever
// the snap length says (256 KiB, libpcap's and Wireshark's usual maximum).
const MaxRecordLen = 256 << 10

// Format is a capture file format.
type Format uint8

const (
	FormatPcap   Format = iota + 1 // classic libpcap format
	FormatPcapng                   // pcapng
)

func (f Format) String() string {
	switch f {
	case FormatPcap:
		return "pcap"
	case FormatPcapng:
		return "pcapng"
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// Magic numbers, as read little-endian from the first four bytes.
const (
	magicMicro   = 0xA1B2C3D4
	magicNano    = 0xA1B23C4D
	magicMicroBE = 0xD4C3B2A1
	magicNanoBE  = 0x4D3CB2A1
	blockSHB     = 0x0A0D0D0A
)

// Record is one packet record. The Reader reuses it: its fields, and the
// bytes Data points to, are valid until the next call to Next.
type Record struct {
	Index  int   // 1-based frame number, counted across pcapng sections
	Offset int64 // byte offset of the record header (pcapng: block) in the decompressed file
	// Time is the capture time, to the nanosecond. For ERF records it is the
	// ERF header's own timestamp (as Wireshark shows it), which is finer than
	// the pcap record header's. The zero Time means the record has none
	// (pcapng Simple Packet Block).
	Time      time.Time
	CapLen    int      // bytes captured, len(Data)
	OrigLen   int      // bytes on the wire, as the record header says
	LinkType  LinkType // link type of the record's interface
	Interface int      // pcapng interface ID within its section; 0 for classic pcap
	Data      []byte
}

// Network strips the record's link layer: Network(r.LinkType, r.Data), with
// Payload.Cut at least OrigLen - len(Data), the bytes the capture cut off.
func (r *Record) Network() (Payload, error) {
	p, err := Network(r.LinkType, r.Data)
	if c := r.OrigLen - len(r.Data); c > p.Cut && err == nil {
		p.Cut = c
	}
	return p, err
}

// bufSize is the read buffer: records that fit it are handed out as views
// into it, without a copy.
const bufSize = 1 << 20

// Reader reads records from a capture file as a stream, in constant memory:
// one buffer grown to the largest record, one Record reused.
type Reader struct {
	src    source
	mem    *memSource   // src, when it is a memory-mapped classic pcap file
	unmap  func() error // releases a memory-mapped file; nil otherwise
	gz     *gzip.Reader
	file   *os.File // closed by Close; nil for standard input and NewReader
	format Format
	order  binary.ByteOrder
	off    int64 // bytes consumed from the decompressed stream
	n      int   // records returned
	err    error // sticky error
	hdr    [32]byte
	buf    []byte
	rec    Record  // what Next returns
	dst    *Record // the Record NextInto is filling

	// classic pcap
	le      bool // order is little-endian
	nano    bool
	snaplen uint32
	link    LinkType

	// pcapng
	sections int
	ifaces   []ngIface
}

// Open opens the capture file at path ("-" for standard input) and reads its
// file header. The caller must Close the Reader.
func Open(path string) (*Reader, error) {
	if path == "-" {
		return NewReader(os.Stdin)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	if data, unmap, ok := mapFile(f); ok {
		r, err := newReader(&memSource{b: data})
		if err != nil {
			unmap()
			f.Close()
			return nil, err
		}
		r.file, r.unmap = f, unmap
		if m, ok := r.src.(*memSource); ok && r.format == FormatPcap {
			r.mem = m
		}
		return r, nil
	}
	r, err := NewReader(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// source is what the Reader reads from: a bufio.Reader over a stream, or a
// memSource over a memory-mapped file.
type source interface {
	io.Reader
	Peek(n int) ([]byte, error)
	Discard(n int) (int, error)
	Size() int
}

// memSource reads from a byte slice (a memory-mapped file): Peek hands out
// views of any length, so no record is copied.
type memSource struct {
	b        []byte
	pos      int
	released int // data[:released] has been handed back to the kernel
	touched  int // data[:touched] has been read ahead (see advance)
	mapped   int // data[:mapped] has been asked to be mapped (populateAhead)
	sink     byte

	// caller is set when the Reader's user reads ahead itself (readAhead),
	// from any goroutine; advance then only releases pages behind.
	caller bool
	// populated is how much of data readAhead has had mapped: the caller
	// that raises it maps the pages it added. It has a cache line of its
	// own: other cores read it while the walking core writes pos.
	_         [64]byte
	populated atomic.Int64
	_         [56]byte
}

// readAhead is how far ahead of the read position advance touches the
// mapping, and touchChunk how much it touches at a time. Reading one byte of
// every cache line ahead lets the loads overlap; reading the records one
// after the other (each header says where the next one is) would wait for
// memory at every record.
const (
	readAhead  = 256 << 10
	touchChunk = 16 << 10
	// populateChunk is how much of the mapping populate maps at a time
	// ahead of the reader (one fault per 64 KiB, pcap/populate.go), instead
	// of the decoder taking those faults.
	populateChunk = 1 << 20
)

// releaseLag is how far behind the read position pages are released: views
// of recent records are normally still in use (by a pipeline of batches);
// older ones stay valid, only slower to touch again.
const releaseLag = 8 << 20

func (m *memSource) Read(p []byte) (int, error) {
	if m.pos >= len(m.b) {
		return 0, io.EOF
	}
	n := copy(p, m.b[m.pos:])
	m.pos += n
	return n, nil
}

func (m *memSource) Peek(n int) ([]byte, error) {
	if rest := len(m.b) - m.pos; n > rest {
		return m.b[m.pos:], io.EOF
	}
	return m.b[m.pos : m.pos+n : m.pos+n], nil
}

func (m *memSource) Discard(n int) (int, error) {
	if rest := len(m.b) - m.pos; n > rest {
		m.pos = len(m.b)
		return rest, io.EOF
	}
	m.advance(n)
	return n, nil
}

// advance moves the read position n bytes on (n bytes must remain),
// releasing pages far enough behind.
func (m *memSource) advance(n int) {
	m.pos += n
	if !m.caller && m.pos+readAhead > m.touched && m.touched < len(m.b) {
		m.touch()
	}
	if m.pos-m.released >= 2*releaseLag {
		m.released = m.pos - releaseLag
		releaseBehind(m.b, m.released)
	}
}

// touch reads one byte of every cache line of the next chunk not yet
// touched.
func (m *memSource) touch() {
	if m.touched < m.pos {
		m.touched = m.pos
	}
	if m.touched+populateChunk > m.mapped && m.mapped < len(m.b) {
		m.mapped = max(m.mapped, m.touched)
		e := min(m.mapped+populateChunk, len(m.b))
		populate(m.b, m.mapped, e)
		m.mapped = e
	}
	end := min(m.touched+touchChunk, len(m.b))
	m.sink |= touchLines(m.b[m.touched:end])
	m.touched = end
}

// touchLines reads one byte of every 64-byte cache line of b (in whole
// groups of four lines), so that the loads overlap.
func touchLines(b []byte) byte {
	var x byte
	for i := 0; i+256 <= len(b); i += 256 {
		x |= b[i] | b[i+64] | b[i+128] | b[i+192]
	}
	return x
}

// readAheadSink keeps the loads of readAhead from being optimised away.
var readAheadSink atomic.Uint32

// callerReadsAhead tells a Mapped Reader that its user reads the file
// ahead of NextInto and skimFrom itself, with readAhead or ahead: they stop
// touching and mapping the bytes ahead of them. Call it before the first
// NextInto or skimFrom.
func (r *Reader) callerReadsAhead() {
	if r.mem != nil {
		r.mem.caller = true
	}
}

// readAhead brings the bytes of a Mapped Reader's file at offsets
// [from, to) into the cache of the calling core, having the pages mapped
// (populateChunk at a time, ahead of to) if they are not yet. Workers that
// each read ahead the part of the file they will decode stream it from
// memory in parallel; only walking the records (NextInto, skimFrom) takes
// turns. It may be called from any goroutine, concurrently with NextInto,
// skimFrom and itself; offsets outside the file are ignored. It does
// nothing for other Readers.
func (r *Reader) readAhead(from, to int64) {
	if b := r.ahead(from, to); b != nil {
		readAheadSink.Add(uint32(touchLines(b)))
	}
}

// ahead maps the pages of a Mapped Reader's file up to to (populateChunk
// at a time, ahead of to), as readAhead does, and returns its bytes
// [from, to), clipped to the file, without reading them: for a caller
// that fetches them into its cache a little at a time (internal/prefetch),
// overlapping the fetch with its work (fetching them all at once before
// the work took 1.04x the time in decode). It returns nil if there are
// none or r is not Mapped. The bytes stay valid until Close.
func (r *Reader) ahead(from, to int64) []byte {
	m := r.mem
	if m == nil {
		return nil
	}
	size := int64(len(m.b))
	from, to = max(from, 0), min(to, size)
	if from >= to {
		return nil
	}
	want := min((to+populateChunk)&^(populateChunk-1), size)
	for {
		cur := m.populated.Load()
		if cur >= want {
			break
		}
		if m.populated.CompareAndSwap(cur, want) {
			populate(m.b, int(cur), int(want))
			break
		}
	}
	return m.b[from:to]
}

// Offset returns the file offset (in the decompressed stream) of the next
// record NextInto reads.
func (r *Reader) Offset() int64 { return r.off }

func (m *memSource) Size() int { return len(m.b) }

// NewReader reads the file header from src (pcap, pcapng, or either
// gzip-compressed, recognised by their magic numbers) and returns a Reader
// positioned at the first record.
func NewReader(src io.Reader) (*Reader, error) {
	return newReader(bufio.NewReaderSize(src, bufSize))
}

func newReader(src source) (*Reader, error) {
	r := &Reader{src: src}
	if m, _ := r.src.Peek(2); len(m) == 2 && m[0] == 0x1F && m[1] == 0x8B {
		gz, err := gzip.NewReader(r.src)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil, &FileError{Err: ErrTruncatedHeader, Detail: "gzip header"}
			}
			return nil, &FileError{Err: err, Detail: "gzip header"}
		}
		r.gz = gz
		r.src = bufio.NewReaderSize(gz, bufSize)
	}
	n, err := io.ReadFull(r.src, r.hdr[:4])
	r.off += int64(n)
	if err != nil {
		return nil, r.headerReadErr(n, 4, err)
	}
	switch binary.LittleEndian.Uint32(r.hdr[:4]) {
	case magicMicro:
		err = r.readPcapHeader(binary.LittleEndian, false)
	case magicNano:
		err = r.readPcapHeader(binary.LittleEndian, true)
	case magicMicroBE:
		err = r.readPcapHeader(binary.BigEndian, false)
	case magicNanoBE:
		err = r.readPcapHeader(binary.BigEndian, true)
	case blockSHB:
		r.format = FormatPcapng
		err = r.readSHB(0, 4)
	default:
		err = &FileError{Err: ErrBadMagic, Detail: fmt.Sprintf("% x is neither pcap, pcapng nor gzip", r.hdr[:4])}
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// headerReadErr turns a short read of the file header into a FileError.
func (r *Reader) headerReadErr(have, need int, err error) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		return &FileError{Err: ErrTruncatedHeader, Detail: fmt.Sprintf("%d bytes needed, %d present", need, have)}
	}
	return &FileError{Err: err}
}

func (r *Reader) readPcapHeader(order binary.ByteOrder, nano bool) error {
	n, err := io.ReadFull(r.src, r.hdr[4:24])
	r.off += int64(n)
	if err != nil {
		return r.headerReadErr(4+n, 24, err)
	}
	r.format, r.order, r.nano = FormatPcap, order, nano
	r.le = order == binary.ByteOrder(binary.LittleEndian)
	h := r.hdr[:24]
	if major, minor := order.Uint16(h[4:6]), order.Uint16(h[6:8]); major != 2 {
		return &FileError{Err: ErrUnsupportedVersion, Detail: fmt.Sprintf("pcap version %d.%d, want 2.x", major, minor)}
	}
	r.snaplen = order.Uint32(h[16:20])
	// The low 16 bits are the link type; the top bits may carry FCS
	// information, which is ignored.
	lt := order.Uint32(h[20:24])
	r.link = LinkType(lt)
	if lt&0x03FF0000 != 0 || !r.link.Known() {
		return &FileError{Err: ErrUnknownLinkType, Detail: fmt.Sprintf("%d", lt&0x03FFFFFF)}
	}
	return nil
}

// Mapped reports whether every Record.Data stays valid until Close, not only
// until the next call to Next: true for a memory-mapped classic pcap file,
// whose records are handed out in place.
func (r *Reader) Mapped() bool { return r.unmap != nil && r.format == FormatPcap }

// Format returns the file's format.
func (r *Reader) Format() Format { return r.format }

// Close releases the decompressor and closes the file Open opened. It does
// not close standard input or a reader given to NewReader.
func (r *Reader) Close() error {
	var err error
	if r.gz != nil {
		err = r.gz.Close()
	}
	if r.unmap != nil {
		if e := r.unmap(); err == nil {
			err = e
		}
		r.unmap = nil
	}
	if r.file != nil {
		if e := r.file.Close(); err == nil {
			err = e
		}
		r.file = nil
	}
	if r.err == nil {
		r.err = errors.New("pcap: reader closed")
	}
	return err
}

// Next returns the next record, io.EOF at a clean end of file, or a
// *FileError when the file is damaged; after an error it returns the same
// error again. The Record and its Data are reused by the next call.
func (r *Reader) Next() (*Record, error) {
	if err := r.NextInto(&r.rec); err != nil {
		return nil, err
	}
	return &r.rec, nil
}

// NextInto is Next filling the caller's Record (every field), so a reader
// that keeps records need not copy them; rec is left alone on an error.
// Data is valid as Next's is: until the next call, or until Close for a
// Mapped Reader.
func (r *Reader) NextInto(rec *Record) error {
	if r.err != nil {
		return r.err
	}
	r.dst = rec
	var err error
	if r.format == FormatPcap {
		err = r.nextPcap()
	} else {
		err = r.nextPcapng()
	}
	if err != nil {
		r.err = err
		return err
	}
	r.n++
	rec.Index = r.n
	return nil
}

// skimFrom steps over the records of a Mapped classic pcap file that start
// before file offset to, as NextInto would read them, appending each
// one's offset to offs; recordFrom reads a record at such an offset later,
// from any goroutine. Walking a file is then little more than reading each
// record's length, and the work of filling in Records can be spread over
// cores. It reads the record headers that c covers from c (nil: none), and
// the others from the mapping. It stops early at a record that is damaged
// or reaches past the end of the file (NextInto reads on from there, and
// reports it) and at the end of the file. It returns offs, and the Index
// the first record it appended has (those after it follow on). Other
// Readers skim nothing.
func (r *Reader) skimFrom(c *pcapfast.Copy, to int64, offs []int64) ([]int64, int) {
	first := r.n + 1
	m := r.mem
	if m == nil || r.err != nil || r.format != FormatPcap {
		return offs, first
	}
	b, pos, n := m.b, m.pos, r.n // the mapping starts at file offset 0: r.off == m.pos
	lim := min(int64(len(b)), to)
	for int64(pos) < lim && pos+16 <= len(b) {
		h, ok := c.At(int64(pos), 16)
		if !ok {
			h = b[pos : pos+16]
		}
		var caplen uint32
		if r.le {
			caplen = binary.LittleEndian.Uint32(h[8:12])
		} else {
			caplen = binary.BigEndian.Uint32(h[8:12])
		}
		size := 16 + int(caplen)
		if caplen > MaxRecordLen || (r.snaplen != 0 && caplen > r.snaplen) || size > len(b)-pos {
			break
		}
		offs = append(offs, int64(pos))
		pos += size
		n++
	}
	r.off += int64(pos - m.pos)
	r.n = n
	m.advance(pos - m.pos)
	return offs, first
}

// recordFrom fills rec with the record of a Mapped classic pcap file that
// starts at file offset off (one skimFrom stepped over), giving it Index
// index, as NextInto would have. It reads the record from c if c holds
// all of it (rec.Data then points into c), and from the mapping otherwise.
// It may be called from any goroutine, concurrently with skimFrom,
// NextInto and itself. It fails only if the bytes at off are no longer the
// record skimFrom found there (the file was overwritten while mapped): rec
// is then left as it was.
func (r *Reader) recordFrom(c *pcapfast.Copy, off int64, index int, rec *Record) error {
	m := r.mem
	if m == nil || off < 0 || off > int64(len(m.b)) {
		return &FileError{Record: index, Offset: off, Err: ErrTruncatedRecord, Detail: "no record at this offset"}
	}
	b, ok := c.At(off, 16)
	var (
		sec, nsec int64
		n         int
		orig      uint32
	)
	if ok {
		sec, nsec, n, orig, ok = r.mappedHeader(b) // false if c ends inside the record
	}
	if !ok {
		b = m.b[off:] // the mapping starts at file offset 0
		if sec, nsec, n, orig, ok = r.mappedHeader(b); !ok {
			return &FileError{Record: index, Offset: off, Err: ErrTruncatedRecord, Detail: "the record changed after it was located"}
		}
	}
	fillRecord(rec, off, true, sec, nsec, b[16:n:n], orig, r.link, 0)
	rec.Index = index
	return nil
}

// grow returns r.buf resized to n bytes, reallocating only when n exceeds
// every earlier size.
func (r *Reader) grow(n int) []byte {
	if cap(r.buf) < n {
		r.buf = make([]byte, n, max(n, 2*cap(r.buf)))
	}
	return r.buf[:n]
}

// fail builds the error for damage in the record (or block) starting at off.
func (r *Reader) fail(off int64, cause error, format string, args ...any) error {
	return &FileError{Record: r.recordNumber(), Offset: off, Err: cause, Detail: fmt.Sprintf(format, args...)}
}

// recordNumber is the number damage is reported against: the next record's,
// or 0 inside the file header (the first pcapng section header).
func (r *Reader) recordNumber() int {
	if r.inHeader() {
		return 0
	}
	return r.n + 1
}

func (r *Reader) inHeader() bool { return r.format == FormatPcapng && r.sections == 0 }

// readErr builds the error for a read that stopped short inside the record
// or block at off: format gets the bytes announced and the bytes present.
func (r *Reader) readErr(off int64, err error, format string, want, have int64) error {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		trunc := ErrTruncatedRecord
		if r.inHeader() {
			trunc = ErrTruncatedHeader
		}
		return r.fail(off, trunc, format, want, have)
	}
	return &FileError{Record: r.recordNumber(), Offset: off, Err: err}
}

// read fills b from the stream.
func (r *Reader) read(b []byte) (int, error) {
	n, err := io.ReadFull(r.src, b)
	r.off += int64(n)
	return n, err
}

// skip discards n bytes of the stream.
func (r *Reader) skip(n int64) (int64, error) {
	var done int64
	for done < n {
		chunk := min(n-done, 1<<30)
		m, err := r.src.Discard(int(chunk))
		done += int64(m)
		r.off += int64(m)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return done, err
		}
	}
	return done, nil
}

// nextMapped reads a classic pcap record of a memory-mapped file in place:
// the common case of nextPcap without the source's interface. It reports
// false, having consumed nothing, for anything unusual (the end of the
// file, a damaged record), which nextPcap then handles.
func (r *Reader) nextMapped() bool {
	m := r.mem
	b := m.b[m.pos:]
	sec, nsec, n, orig, ok := r.mappedHeader(b)
	if !ok {
		return false
	}
	off := r.off
	m.advance(n)
	r.off += int64(n)
	r.setRecord(off, true, sec, nsec, b[16:n:n], orig, r.link, 0)
	return true
}

// mappedHeader reads the record header at the start of b, a view of a
// memory-mapped classic pcap file: the time, the record's size with its
// header, and the original length. ok is false unless b holds the whole
// record and its length is acceptable.
func (r *Reader) mappedHeader(b []byte) (sec, nsec int64, n int, orig uint32, ok bool) {
	if len(b) < 16 {
		return 0, 0, 0, 0, false
	}
	var s, frac, caplen uint32
	if r.le {
		s, frac = binary.LittleEndian.Uint32(b[0:4]), binary.LittleEndian.Uint32(b[4:8])
		caplen, orig = binary.LittleEndian.Uint32(b[8:12]), binary.LittleEndian.Uint32(b[12:16])
	} else {
		s, frac = binary.BigEndian.Uint32(b[0:4]), binary.BigEndian.Uint32(b[4:8])
		caplen, orig = binary.BigEndian.Uint32(b[8:12]), binary.BigEndian.Uint32(b[12:16])
	}
	n = 16 + int(caplen)
	if caplen > MaxRecordLen || (r.snaplen != 0 && caplen > r.snaplen) || n > len(b) {
		return 0, 0, 0, 0, false
	}
	nsec = int64(frac)
	if !r.nano {
		nsec *= 1000
	}
	return int64(s), nsec, n, orig, true
}

func (r *Reader) nextPcap() error {
	if r.mem != nil && r.nextMapped() {
		return nil
	}
	off := r.off
	// Fast path: the record header and data are already buffered (or fit the
	// buffer): hand out a view into the bufio buffer, valid until the next
	// call, instead of copying the frame out of it.
	if h, err := r.src.Peek(16); err == nil {
		o := r.order
		caplen := o.Uint32(h[8:12])
		if n := 16 + int(caplen); caplen <= MaxRecordLen && n <= r.src.Size() {
			if b, err := r.src.Peek(n); err == nil {
				sec, frac, orig := o.Uint32(b[0:4]), o.Uint32(b[4:8]), o.Uint32(b[12:16])
				if err := r.checkLen(off, caplen, r.snaplen); err != nil {
					return err
				}
				r.src.Discard(n)
				r.off += int64(n)
				nsec := int64(frac)
				if !r.nano {
					nsec *= 1000
				}
				r.setRecord(off, true, int64(sec), nsec, b[16:n:n], orig, r.link, 0)
				return nil
			}
		}
	}
	n, err := r.read(r.hdr[:16])
	if err != nil {
		if err == io.EOF {
			return io.EOF
		}
		return r.readErr(off, err, "record header: %d bytes needed, %d present", 16, int64(n))
	}
	o := r.order
	sec, frac := o.Uint32(r.hdr[0:4]), o.Uint32(r.hdr[4:8])
	caplen, orig := o.Uint32(r.hdr[8:12]), o.Uint32(r.hdr[12:16])
	if err := r.checkLen(off, caplen, r.snaplen); err != nil {
		return err
	}
	data := r.grow(int(caplen))
	if n, err := r.read(data); err != nil {
		return r.readErr(off, err, "header says %d bytes, %d present", int64(caplen), int64(n))
	}
	nsec := int64(frac)
	if !r.nano {
		nsec *= 1000
	}
	r.setRecord(off, true, int64(sec), nsec, data, orig, r.link, 0)
	return nil
}

// checkLen rejects a captured length above the snap length (when one is
// set) or MaxRecordLen.
func (r *Reader) checkLen(off int64, caplen, snaplen uint32) error {
	if caplen > MaxRecordLen {
		return r.fail(off, ErrRecordTooLong, "header says %d bytes, limit %d", caplen, MaxRecordLen)
	}
	if snaplen != 0 && caplen > snaplen {
		return r.fail(off, ErrRecordTooLong, "header says %d bytes, snap length %d", caplen, snaplen)
	}
	return nil
}

// setRecord fills the Record being read (r.dst), field by field (the
// caller reads it soon: one wide copy of fields just written one by one
// would stall). For ERF records the ERF timestamp replaces the one given;
// hasTime false leaves Time zero. Index is set by NextInto.
func (r *Reader) setRecord(off int64, hasTime bool, sec, nsec int64, data []byte, orig uint32, lt LinkType, ifc int) {
	fillRecord(r.dst, off, hasTime, sec, nsec, data, orig, lt, ifc)
}

// fillRecord is setRecord into rec.
func fillRecord(rec *Record, off int64, hasTime bool, sec, nsec int64, data []byte, orig uint32, lt LinkType, ifc int) {
	if lt == LinkTypeERF {
		if s, ns, ok := erfTime(data); ok {
			hasTime, sec, nsec = true, s, ns
		}
	}
	rec.Offset = off
	if hasTime {
		rec.Time = time.Unix(sec, nsec).UTC()
	} else {
		rec.Time = time.Time{}
	}
	rec.CapLen = len(data)
	rec.OrigLen = int(orig)
	rec.LinkType = lt
	rec.Interface = ifc
	rec.Data = data
}
