package pcap

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// capturesDir is ../shared/captures relative to the repository root.
var capturesDir = filepath.Join("..", "..", "shared", "captures")

// captureFiles returns the .pcap files in capturesDir, or skips the test.
func captureFiles(t testing.TB) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(capturesDir, "*.pcap"))
	if len(files) == 0 {
		t.Skip("../shared/captures not present: no third-party captures to read")
	}
	return files
}

// tshark returns the path of tshark, or skips the test; with
// ROCEKIT_REQUIRE_ORACLES=1 (set by .ci/run) a missing tshark fails it.
func tshark(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("ROCEKIT_REQUIRE_ORACLES") == "1" {
			t.Fatal("tshark not on PATH and ROCEKIT_REQUIRE_ORACLES=1")
		}
		t.Skip("tshark not on PATH")
	}
	return p
}

// runTshark runs tshark with args and returns its standard output.
func runTshark(t *testing.T, args ...string) string {
	t.Helper()
	out, stderr, err := tryTshark(t, args...)
	require.NoError(t, err, "tshark %v: %s", args, stderr)
	return out
}

// tryTshark runs tshark with args and returns its standard output and error.
func tryTshark(t *testing.T, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(tshark(t), args...)
	var errBuf bytes.Buffer
	cmd.Stderr = &errBuf
	out, err := cmd.Output()
	return string(out), errBuf.String(), err
}

// helper marks the caller as a test helper when t can (a *rapid.T cannot).
func helper(t require.TestingT) {
	if h, ok := t.(interface{ Helper() }); ok {
		h.Helper()
	}
}

// rec is a record as the tests build and compare it (an owned copy).
type rec struct {
	Time    time.Time
	OrigLen int
	Link    LinkType
	Ifc     int
	Data    []byte
}

// own copies r; empty Data becomes nil.
func own(r *Record) rec {
	return rec{Time: r.Time, OrigLen: r.OrigLen, Link: r.LinkType, Ifc: r.Interface, Data: append([]byte(nil), r.Data...)}
}

// readAll reads every record of file; err is the error that ended the
// reading (nil at a clean io.EOF).
func readAll(t require.TestingT, file []byte) (recs []rec, full []Record, err error) {
	helper(t)
	r, err := NewReader(bytes.NewReader(file))
	if err != nil {
		return nil, nil, err
	}
	for {
		x, err := r.Next()
		if err == io.EOF {
			return recs, full, nil
		}
		if err != nil {
			return recs, full, err
		}
		recs = append(recs, own(x))
		c := *x
		c.Data = bytes.Clone(x.Data)
		full = append(full, c)
	}
}

// mustReadAll is readAll that fails the test on any error.
func mustReadAll(t require.TestingT, file []byte) []rec {
	helper(t)
	recs, _, err := readAll(t, file)
	require.NoError(t, err)
	return recs
}

func gz(t require.TestingT, b []byte) []byte {
	helper(t)
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	_, err := w.Write(b)
	require.NoError(t, err)
	require.NoError(t, w.Close())
	return out.Bytes()
}

// asFileError checks that err is a *FileError with the given cause, record
// number and offset, and returns it.
func asFileError(t *testing.T, err error, cause error, record int, offset int64) *FileError {
	t.Helper()
	require.Error(t, err)
	var fe *FileError
	require.True(t, errors.As(err, &fe), "%T %v is not a *FileError", err, err)
	require.ErrorIs(t, err, cause, "%v", err)
	require.Equal(t, record, fe.Record, "%v", err)
	require.Equal(t, offset, fe.Offset, "%v", err)
	return fe
}

// byteOrder is binary.LittleEndian or binary.BigEndian.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// pcapFile builds a classic pcap file by hand.
type pcapFile struct {
	order   byteOrder
	nano    bool
	snaplen uint32
	link    uint32
	buf     bytes.Buffer
}

func newPcapFile(order byteOrder, nano bool, snaplen uint32, link LinkType) *pcapFile {
	f := &pcapFile{order: order, nano: nano, snaplen: snaplen, link: uint32(link)}
	magic := uint32(magicMicro)
	if nano {
		magic = magicNano
	}
	f.u32(magic)
	f.u16(2)
	f.u16(4)
	f.u32(0)
	f.u32(0)
	f.u32(snaplen)
	f.u32(f.link)
	return f
}

func (f *pcapFile) u16(v uint16) { f.buf.Write(f.order.AppendUint16(nil, v)) }
func (f *pcapFile) u32(v uint32) { f.buf.Write(f.order.AppendUint32(nil, v)) }

// record appends a record header and data; the fraction is in the file's units.
func (f *pcapFile) record(sec, frac uint32, orig uint32, data []byte) *pcapFile {
	f.u32(sec)
	f.u32(frac)
	f.u32(uint32(len(data)))
	f.u32(orig)
	f.buf.Write(data)
	return f
}

func (f *pcapFile) bytes() []byte { return bytes.Clone(f.buf.Bytes()) }

// ngFile builds a pcapng file by hand, block by block.
type ngFile struct {
	order byteOrder
	buf   bytes.Buffer
}

func newNgFile(order byteOrder) *ngFile { return (&ngFile{}).shb(order) }

func (f *ngFile) u16(b []byte, v uint16) []byte { return f.order.AppendUint16(b, v) }
func (f *ngFile) u32(b []byte, v uint32) []byte { return f.order.AppendUint32(b, v) }

// block appends a block of type typ with body (padded to 4 bytes).
func (f *ngFile) block(typ uint32, body []byte) *ngFile {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	n := uint32(12 + len(body))
	b := f.u32(nil, typ)
	b = f.u32(b, n)
	b = append(b, body...)
	b = f.u32(b, n)
	f.buf.Write(b)
	return f
}

// shb starts a new section in byte order order.
func (f *ngFile) shb(order byteOrder) *ngFile {
	f.order = order
	body := f.u32(nil, 0x1A2B3C4D)
	body = f.u16(body, 1)
	body = f.u16(body, 0)
	body = f.order.AppendUint64(body, ^uint64(0))
	// an option, to be skipped: shb_userappl "rocekit test"
	body = f.option(body, 4, []byte("rocekit test"))
	body = f.u32(body, 0)
	return f.block(blockSHB, body)
}

func (f *ngFile) option(b []byte, code uint16, val []byte) []byte {
	b = f.u16(b, code)
	b = f.u16(b, uint16(len(val)))
	b = append(b, val...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// idb appends an interface; tsresol < 0 leaves the option out.
func (f *ngFile) idb(link LinkType, snap uint32, tsresol int, tsoffset int64) *ngFile {
	body := f.u16(nil, uint16(link))
	body = f.u16(body, 0)
	body = f.u32(body, snap)
	body = f.option(body, 2, []byte("eth0")) // if_name, skipped
	if tsresol >= 0 {
		body = f.option(body, optTSResol, []byte{byte(tsresol)})
	}
	if tsoffset != 0 {
		body = f.option(body, optTSOffset, f.order.AppendUint64(nil, uint64(tsoffset)))
	}
	body = f.u32(body, 0)
	return f.block(blockIDB, body)
}

func (f *ngFile) epb(ifc uint32, ts uint64, orig uint32, data []byte) *ngFile {
	body := f.u32(nil, ifc)
	body = f.u32(body, uint32(ts>>32))
	body = f.u32(body, uint32(ts))
	body = f.u32(body, uint32(len(data)))
	body = f.u32(body, orig)
	body = append(body, data...)
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	body = f.option(body, 1, []byte("comment")) // opt_comment, skipped
	body = f.u32(body, 0)
	return f.block(blockEPB, body)
}

func (f *ngFile) pb(ifc uint16, ts uint64, orig uint32, data []byte) *ngFile {
	body := f.u16(nil, ifc)
	body = f.u16(body, 0) // drops
	body = f.u32(body, uint32(ts>>32))
	body = f.u32(body, uint32(ts))
	body = f.u32(body, uint32(len(data)))
	body = f.u32(body, orig)
	body = append(body, data...)
	return f.block(blockPB, body)
}

func (f *ngFile) spb(orig uint32, data []byte) *ngFile {
	return f.block(blockSPB, append(f.u32(nil, orig), data...))
}

func (f *ngFile) bytes() []byte { return bytes.Clone(f.buf.Bytes()) }

// frame returns n bytes of recognisable content (nil for n = 0).
func frame(n int, seed byte) []byte {
	if n == 0 {
		return nil
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i)
	}
	return b
}

// mapsFiles reports whether Open memory-maps capture files here (Linux
// only; elsewhere they are read as streams).
var mapsFiles = runtime.GOOS == "linux"

// requireMapping skips a test of the memory-mapped reader where files are
// not mapped.
func requireMapping(t *testing.T) {
	t.Helper()
	if !mapsFiles {
		t.Skip("capture files are memory-mapped on Linux only")
	}
}

// openMapped writes file to a new temporary file and opens it, memory-mapped
// (the caller has called requireMapping); the Reader is closed when the test
// ends.
func openMapped(t *testing.T, file []byte) (*Reader, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.pcap")
	require.NoError(t, os.WriteFile(path, file, 0o644))
	r, err := Open(path)
	require.NoError(t, err)
	t.Cleanup(func() { r.Close() })
	require.True(t, r.Mapped())
	return r, path
}
