package pcap

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/internal/pcapfast"
)

// damaged reads file, checks that exactly good records came back before an
// error of the given cause, record number and offset, and returns it.
func damaged(t *testing.T, file []byte, good int, cause error, record int, offset int64) *FileError {
	t.Helper()
	recs, _, err := readAll(t, file)
	require.Len(t, recs, good, "records returned before the damage (error %v)", err)
	return asFileError(t, err, cause, record, offset)
}

// twoGood is a classic pcap with two good records (60 and 40 bytes): the
// third record starts at offset 24+16+60+16+40 = 156.
func twoGood(snaplen uint32) *pcapFile {
	return newPcapFile(binary.LittleEndian, false, snaplen, LinkTypeEthernet).
		record(10, 1, 60, frame(60, 1)).
		record(11, 2, 40, frame(40, 2))
}

func TestDamagePcapFileHeader(t *testing.T) {
	good := newPcapFile(binary.BigEndian, true, 65535, LinkTypeEthernet).bytes()

	t.Run("bad magic", func(t *testing.T) {
		fe := damaged(t, []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"), 0, ErrBadMagic, 0, 0)
		assert.Equal(t, "file header at offset 0: bad magic: 47 45 54 20 is neither pcap, pcapng nor gzip", fe.Error())
		assert.ErrorIs(t, fe, rocekit.ErrInvalid)
	})
	t.Run("modified pcap magic is not accepted", func(t *testing.T) {
		damaged(t, append([]byte{0x34, 0xCD, 0xB2, 0xA1}, good[4:]...), 0, ErrBadMagic, 0, 0)
	})
	t.Run("empty file", func(t *testing.T) {
		fe := damaged(t, nil, 0, ErrTruncatedHeader, 0, 0)
		assert.Equal(t, "file header at offset 0: file header cut short: 4 bytes needed, 0 present", fe.Error())
	})
	t.Run("truncated file header", func(t *testing.T) {
		fe := damaged(t, good[:10], 0, ErrTruncatedHeader, 0, 0)
		assert.Equal(t, "file header at offset 0: file header cut short: 24 bytes needed, 10 present", fe.Error())
		assert.ErrorIs(t, fe, rocekit.ErrTruncated)
	})
	t.Run("unsupported version", func(t *testing.T) {
		b := bytes.Clone(good)
		b[5] = 1 // 2.4 -> 1.4 (big-endian)
		b[4] = 0
		fe := damaged(t, b, 0, ErrUnsupportedVersion, 0, 0)
		assert.Contains(t, fe.Error(), "pcap version 1.4")
	})
	t.Run("unknown link type", func(t *testing.T) {
		b := newPcapFile(binary.LittleEndian, false, 65535, 105).record(1, 1, 10, frame(10, 0)).bytes()
		fe := damaged(t, b, 0, ErrUnknownLinkType, 0, 0)
		assert.Equal(t, "file header at offset 0: unknown link type: 105", fe.Error())
	})
	t.Run("reserved link-type bits", func(t *testing.T) {
		b := bytes.Clone(good)
		b[21] = 0x01 // bit 16
		damaged(t, b, 0, ErrUnknownLinkType, 0, 0)
	})
	t.Run("bad gzip header", func(t *testing.T) {
		_, err := NewReader(bytes.NewReader([]byte{0x1F, 0x8B, 0x99, 0, 0, 0, 0, 0, 0, 0xFF, 1, 2}))
		asFileError(t, err, gzip.ErrHeader, 0, 0)
		damaged(t, []byte{0x1F, 0x8B, 0x08, 0}, 0, ErrTruncatedHeader, 0, 0)
	})
}

func TestDamagePcapRecords(t *testing.T) {
	t.Run("record header cut short", func(t *testing.T) {
		b := append(twoGood(65535).bytes(), 1, 2, 3, 4, 5, 6, 7)
		fe := damaged(t, b, 2, ErrTruncatedRecord, 3, 156)
		assert.Equal(t, "record 3 at offset 156: record cut short: record header: 16 bytes needed, 7 present", fe.Error())
	})
	t.Run("record cut short", func(t *testing.T) {
		f := twoGood(65535).record(12, 3, 120, frame(120, 3))
		b := f.bytes()[:156+16+37]
		fe := damaged(t, b, 2, ErrTruncatedRecord, 3, 156)
		assert.Equal(t, "record 3 at offset 156: record cut short: header says 120 bytes, 37 present", fe.Error())
		assert.ErrorIs(t, fe, rocekit.ErrTruncated)
	})
	t.Run("longer than the snap length", func(t *testing.T) {
		b := twoGood(100).record(12, 3, 101, frame(101, 3)).bytes()
		fe := damaged(t, b, 2, ErrRecordTooLong, 3, 156)
		assert.Equal(t, "record 3 at offset 156: record too long: header says 101 bytes, snap length 100", fe.Error())
		assert.ErrorIs(t, fe, rocekit.ErrLength)
	})
	t.Run("absurd length", func(t *testing.T) {
		b := twoGood(0xFFFFFFFF).bytes()
		b = binary.LittleEndian.AppendUint32(b, 12)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, 0x7FFFFFF0)
		b = binary.LittleEndian.AppendUint32(b, 0x7FFFFFF0)
		fe := damaged(t, b, 2, ErrRecordTooLong, 3, 156)
		assert.Equal(t, fmt.Sprintf("record 3 at offset 156: record too long: header says %d bytes, limit 262144", 0x7FFFFFF0), fe.Error())
	})
	t.Run("256 KiB is the limit whatever the snap length", func(t *testing.T) {
		ok := twoGood(0).record(1, 1, MaxRecordLen, frame(MaxRecordLen, 0)).bytes()
		_, _, err := readAll(t, ok)
		require.NoError(t, err)
		b := twoGood(0).record(1, 1, MaxRecordLen+1, frame(MaxRecordLen+1, 0)).bytes()
		damaged(t, b, 2, ErrRecordTooLong, 3, 156)
	})
	t.Run("error is sticky", func(t *testing.T) {
		b := append(twoGood(65535).bytes(), 1, 2, 3)
		r, err := NewReader(bytes.NewReader(b))
		require.NoError(t, err)
		for range 2 {
			_, err := r.Next()
			require.NoError(t, err)
		}
		_, err1 := r.Next()
		_, err2 := r.Next()
		require.Error(t, err1)
		assert.Same(t, err1, err2)
	})
	t.Run("gzip stream cut short", func(t *testing.T) {
		z := gz(t, twoGood(65535).record(12, 3, 120, frame(120, 3)).bytes())
		recs, _, err := readAll(t, z[:len(z)-30])
		assert.Less(t, len(recs), 3)
		var fe *FileError
		require.ErrorAs(t, err, &fe)
		assert.ErrorIs(t, err, ErrTruncatedRecord)
		assert.Equal(t, len(recs)+1, fe.Record)
	})
	t.Run("gzip checksum", func(t *testing.T) {
		z := gz(t, twoGood(65535).bytes())
		z[len(z)-8] ^= 0xFF // CRC-32 of the member
		recs, _, err := readAll(t, z)
		assert.Len(t, recs, 2)
		asFileError(t, err, gzip.ErrChecksum, 3, 156)
	})
}

// ngTwoGood is a pcapng with one Ethernet interface and two good EPBs; the
// next block starts at offset next.
func ngTwoGood(order byteOrder) (ng *ngFile, next int64) {
	ng = newNgFile(order).idb(LinkTypeEthernet, 1000, 9, 0).
		epb(0, 1, 60, frame(60, 1)).
		epb(0, 2, 40, frame(40, 2))
	return ng, int64(ng.buf.Len())
}

func TestDamagePcapng(t *testing.T) {
	le := binary.LittleEndian
	t.Run("bad byte-order magic", func(t *testing.T) {
		b, _ := ngTwoGood(le)
		file := b.bytes()
		file[8] = 0x11
		fe := damaged(t, file, 0, ErrBadMagic, 0, 0)
		assert.Equal(t, "file header at offset 0: bad magic: section header block: byte-order magic 11 3c 2b 1a", fe.Error())
	})
	t.Run("section header cut short", func(t *testing.T) {
		b, _ := ngTwoGood(le)
		damaged(t, b.bytes()[:10], 0, ErrTruncatedHeader, 0, 0)
		fe := damaged(t, b.bytes()[:30], 0, ErrTruncatedHeader, 0, 0)
		assert.Contains(t, fe.Error(), "block length says 48 bytes, 30 present")
	})
	t.Run("unsupported version in a later section", func(t *testing.T) {
		b, next := ngTwoGood(binary.BigEndian)
		b.shb(le)
		file := b.bytes()
		file[next+12] = 2 // major version 2 (little-endian)
		fe := damaged(t, file, 2, ErrUnsupportedVersion, 3, next)
		assert.Contains(t, fe.Error(), "pcapng version 2.0")
	})
	for _, c := range []struct {
		name   string
		blen   uint32
		detail string
	}{
		{"block length below 12", 8, "block type 0x00000006: total length 8"},
		{"block length not a multiple of 4", 34, "block type 0x00000006: total length 34"},
		{"EPB shorter than its fixed fields", 28, "enhanced packet block: total length 28, minimum 32"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, next := ngTwoGood(binary.BigEndian)
			b.epb(0, 3, 20, frame(20, 3))
			file := b.bytes()
			binary.BigEndian.PutUint32(file[next+4:], c.blen)
			fe := damaged(t, file, 2, ErrBadBlock, 3, next)
			assert.Equal(t, fmt.Sprintf("record 3 at offset %d: malformed block: %s", next, c.detail), fe.Error())
		})
	}
	t.Run("trailing length differs", func(t *testing.T) {
		b, next := ngTwoGood(le)
		b.block(0x0BAD, make([]byte, 8))
		file := b.bytes()
		binary.LittleEndian.PutUint32(file[len(file)-4:], 24)
		fe := damaged(t, file, 2, ErrBadBlock, 3, next)
		assert.Contains(t, fe.Error(), "block type 0x00000BAD: trailing total length 24, leading 20")
	})
	t.Run("captured length beyond the block", func(t *testing.T) {
		b, next := ngTwoGood(le)
		b.epb(0, 3, 20, frame(20, 3))
		file := b.bytes()
		binary.LittleEndian.PutUint32(file[next+20:], 100) // caplen 100 in a block of 20 bytes of data + options
		fe := damaged(t, file, 2, ErrBadBlock, 3, next)
		assert.Contains(t, fe.Error(), "captured length 100 does not fit total length 68")
	})
	t.Run("packet on an undescribed interface", func(t *testing.T) {
		b, next := ngTwoGood(le)
		b.epb(1, 3, 20, frame(20, 3))
		fe := damaged(t, b.bytes(), 2, ErrBadBlock, 3, next)
		assert.Contains(t, fe.Error(), "interface 1, the section describes 1")
	})
	t.Run("packet before any interface", func(t *testing.T) {
		b := newNgFile(le).spb(10, frame(10, 0))
		damaged(t, b.bytes(), 0, ErrBadBlock, 1, 48)
	})
	t.Run("EPB cut short", func(t *testing.T) {
		b, next := ngTwoGood(le)
		b.epb(0, 3, 120, frame(120, 3))
		file := b.bytes()[:next+28+37]
		fe := damaged(t, file, 2, ErrTruncatedRecord, 3, next)
		assert.Equal(t, fmt.Sprintf("record 3 at offset %d: record cut short: block length says 168 bytes, 65 present", next), fe.Error())
	})
	t.Run("block header cut short", func(t *testing.T) {
		b, next := ngTwoGood(le)
		fe := damaged(t, append(b.bytes(), 6, 0, 0), 2, ErrTruncatedRecord, 3, next)
		assert.Contains(t, fe.Error(), "block header: 8 bytes needed, 3 present")
	})
	t.Run("skipped block cut short", func(t *testing.T) {
		b, next := ngTwoGood(le)
		b.block(0x0BAD, make([]byte, 400))
		damaged(t, b.bytes()[:next+100], 2, ErrTruncatedRecord, 3, next)
	})
	t.Run("longer than the interface snap length", func(t *testing.T) {
		b, next := ngTwoGood(le)
		b.epb(0, 3, 1001, frame(1001, 3))
		fe := damaged(t, b.bytes(), 2, ErrRecordTooLong, 3, next)
		assert.Contains(t, fe.Error(), "header says 1001 bytes, snap length 1000")
	})
	t.Run("absurd SPB length", func(t *testing.T) {
		b := newNgFile(le).idb(LinkTypeEthernet, 0, -1, 0)
		next := int64(b.buf.Len())
		b.spb(MaxRecordLen+1, frame(16, 0))
		damaged(t, b.bytes(), 0, ErrRecordTooLong, 1, next)
	})
	t.Run("SPB captured length beyond the block", func(t *testing.T) {
		b := newNgFile(le).idb(LinkTypeEthernet, 0, -1, 0)
		next := int64(b.buf.Len())
		b.spb(100, frame(16, 0))
		damaged(t, b.bytes(), 0, ErrBadBlock, 1, next)
	})
	t.Run("unknown link type", func(t *testing.T) {
		b, _ := ngTwoGood(le)
		b.idb(105, 0, -1, 0) // interface 1: IEEE 802.11, unknown here
		b.epb(0, 3, 20, frame(20, 3))
		next := int64(b.buf.Len())
		b.epb(1, 4, 20, frame(20, 4))
		fe := damaged(t, b.bytes(), 3, ErrUnknownLinkType, 4, next)
		assert.Contains(t, fe.Error(), "interface 1 has link type 105")
	})
	t.Run("option overruns its block", func(t *testing.T) {
		b := newNgFile(le)
		next := int64(b.buf.Len())
		body := b.u16(nil, uint16(LinkTypeEthernet))
		body = b.u16(body, 0)
		body = b.u32(body, 0)
		body = b.u16(body, optTSResol)
		body = b.u16(body, 40) // 40 bytes of value, 4 present
		body = append(body, 9, 0, 0, 0)
		b.block(blockIDB, body)
		fe := damaged(t, b.bytes(), 0, ErrBadBlock, 1, next)
		assert.Contains(t, fe.Error(), "option 9 of 40 bytes overruns the block")
	})
	t.Run("impossible if_tsresol", func(t *testing.T) {
		b := newNgFile(le)
		next := int64(b.buf.Len())
		b.idb(LinkTypeEthernet, 0, 20, 0)
		damaged(t, b.bytes(), 0, ErrBadBlock, 1, next)
		b = newNgFile(le).idb(LinkTypeEthernet, 0, 0x80|64, 0)
		damaged(t, b.bytes(), 0, ErrBadBlock, 1, next)
	})
}

// TestTruncatedAtEveryByte cuts a pcap and a pcapng file at every length:
// the records before the cut always come back, and the reader ends with
// io.EOF exactly when the cut falls between records (pcapng: blocks).
func TestTruncatedAtEveryByte(t *testing.T) {
	pc := twoGood(0).record(12, 3, 33, frame(33, 3))
	ng, _ := ngTwoGood(binary.BigEndian)
	ng.spb(33, frame(33, 3))
	ng.block(0x0BAD, make([]byte, 12))
	for _, c := range []struct {
		name string
		file []byte
	}{{"pcap", pc.bytes()}, {"pcapng", ng.bytes()}} {
		t.Run(c.name, func(t *testing.T) {
			_, all, err := readAll(t, c.file)
			require.NoError(t, err)
			// The cut lengths at which nothing is damaged: the end of the file
			// header, every record's start, and the end of the file; for
			// pcapng also the end of the IDB (first record's start) and of
			// the SPB (the skipped block's start).
			ends := map[int]bool{len(c.file): true, 24: c.name == "pcap", 48: c.name == "pcapng"}
			for _, r := range all {
				ends[int(r.Offset)] = true
			}
			if c.name == "pcapng" {
				ends[len(c.file)-24] = true
			}
			for n := 0; n <= len(c.file); n++ {
				_, got, err := readAll(t, c.file[:n])
				for i := range got {
					require.Equal(t, all[i], got[i], "cut at %d", n)
				}
				if ends[n] {
					require.NoError(t, err, "cut at %d", n)
					continue
				}
				require.Error(t, err, "cut at %d", n)
				var fe *FileError
				require.True(t, errors.As(err, &fe), "cut at %d: %v", n, err)
				require.ErrorIs(t, err, rocekit.ErrTruncated, "cut at %d: %v", n, err)
			}
		})
	}
}

// A memory-mapped file (read in place) gives the same records and the same
// error as the same bytes read as a stream: whole, cut at every length, and
// with each kind of damaged record, in both byte orders.
func TestMappedSameAsStream(t *testing.T) {
	requireMapping(t)
	be := newPcapFile(binary.BigEndian, true, 65535, LinkTypeEthernet).
		record(1, 2, 60, frame(60, 1)).record(3, 4, 40, frame(40, 2)).record(5, 6, 33, frame(33, 3))
	files := map[string][]byte{
		"little-endian":  twoGood(0).record(12, 3, 33, frame(33, 3)).bytes(),
		"big-endian":     be.bytes(),
		"snap length":    twoGood(100).record(12, 3, 101, frame(101, 3)).bytes(),
		"over 256 KiB":   twoGood(0).record(1, 1, MaxRecordLen+1, frame(MaxRecordLen+1, 0)).bytes(),
		"orig below cap": twoGood(0).record(1, 1, 10, frame(20, 0)).bytes(),
	}
	dir := t.TempDir()
	for name, file := range files {
		for n := 24; n <= len(file); n++ {
			if n > 300 && n < len(file)-300 && n%4099 != 0 {
				continue // the big file: every length near its ends, a sample between
			}
			cut := file[:n]
			wantRecs, wantAll, wantErr := readAll(t, cut)
			path := filepath.Join(dir, "f.pcap")
			require.NoError(t, os.WriteFile(path, cut, 0o644))
			r, err := Open(path)
			require.NoError(t, err)
			require.True(t, r.Mapped(), name)
			var got []Record
			for {
				x, err := r.Next()
				if err != nil {
					if err == io.EOF {
						err = nil
					}
					if wantErr == nil {
						require.NoError(t, err, "%s cut at %d", name, n)
					} else {
						require.EqualError(t, err, wantErr.Error(), "%s cut at %d", name, n)
					}
					break
				}
				c := *x
				c.Data = bytes.Clone(x.Data)
				got = append(got, c)
			}
			r.Close()
			require.Len(t, got, len(wantRecs), "%s cut at %d", name, n)
			for i := range got {
				require.Equal(t, wantAll[i], got[i], "%s cut at %d record %d", name, n, i+1)
			}
			// Skimming, in steps of several sizes, then recordFrom for each
			// offset, gives the same records; NextInto after the last skim
			// gives the same error. So does the same through copies of
			// each step's bytes that start before the skim's position or
			// at it, and end short of its last record, in its header, or
			// past it.
			for _, step := range []int64{1, 17, 60, 1 << 20} {
				for _, w := range []*copyWindow{nil, {0, 0}, {5, 9}, {0, 16 + 3}, {0, 1 << 20}} {
					if w != nil && step == 1 {
						continue
					}
					got, err := readSkimming(t, path, step, w)
					at := fmt.Sprintf("%s cut at %d, skims of %d, copy %v", name, n, step, w)
					if wantErr == nil {
						require.NoError(t, err, at)
					} else {
						require.EqualError(t, err, wantErr.Error(), at)
					}
					require.Len(t, got, len(wantRecs), at)
					for i := range got {
						require.Equal(t, wantAll[i], got[i], "%s, record %d", at, i+1)
					}
				}
			}
		}
	}
}

// copyWindow is where readSkimming's copies start, before the position of
// each skim, and how far they reach past its end.
type copyWindow struct{ before, past int64 }

// readSkimming reads the capture at path with skimFrom, step bytes of the file
// at a time, and recordFrom; when a skim stops short, NextInto reads the
// record there (or reports the damage, or the end). With a copyWindow it
// uses skimFrom and recordFrom instead, on a Copy of each step's bytes
// (widened by the window), reused from step to step.
func readSkimming(t *testing.T, path string, step int64, w *copyWindow) ([]Record, error) {
	r, err := Open(path)
	require.NoError(t, err)
	defer r.Close()
	r.callerReadsAhead()
	var got []Record
	var offs []int64
	var c *pcapfast.Copy
	if w != nil {
		c = new(pcapfast.Copy)
	}
	for {
		to := r.Offset() + step
		if w != nil {
			r.copyAt(c, r.Offset()-w.before, to+w.past)
		}
		var first int
		offs, first = r.skimFrom(c, to, offs[:0])
		for i, off := range offs {
			var rec Record
			require.NoError(t, r.recordFrom(c, off, first+i, &rec))
			rec.Data = bytes.Clone(rec.Data)
			got = append(got, rec)
		}
		if r.Offset() >= to {
			continue
		}
		var rec Record
		if err := r.NextInto(&rec); err != nil {
			if err == io.EOF {
				err = nil
			}
			return got, err
		}
		rec.Data = bytes.Clone(rec.Data)
		got = append(got, rec)
	}
}

// recordFrom reports an offset where no acceptable record starts (as when
// the file was overwritten after skimFrom), naming the record and offset, and
// leaves the Record alone.
func TestRecordAtWrongOffset(t *testing.T) {
	requireMapping(t)
	file := twoGood(0).bytes()
	r, _ := openMapped(t, file)
	offs, first := r.skimFrom(nil, int64(len(file)), nil)
	require.Len(t, offs, 2)
	var rec Record
	require.NoError(t, r.recordFrom(nil, offs[1], first+1, &rec))
	want := rec
	for _, off := range []int64{-1, int64(len(file)), int64(len(file)) + 5, offs[1] + 1, int64(len(file)) - 10} {
		err := r.recordFrom(nil, off, 7, &rec)
		var fe *FileError
		require.True(t, errors.As(err, &fe), "offset %d: %v", off, err)
		require.Equal(t, 7, fe.Record)
		require.Equal(t, off, fe.Offset)
		require.ErrorIs(t, err, ErrTruncatedRecord)
		require.Equal(t, want, rec, "offset %d", off)
	}
}

// A Mapped Reader whose user reads ahead itself (callerReadsAhead), from
// other goroutines and in any order, gives the same records and the same
// error as the stream; Offset is where each next record starts.
func TestReadAheadFromOtherGoroutines(t *testing.T) {
	requireMapping(t)
	f := newPcapFile(binary.LittleEndian, true, 0, LinkTypeEthernet)
	for i := 0; i < 4000; i++ {
		f.record(uint32(i), uint32(i), 0, frame(60+i%1400, byte(i)))
	}
	whole := f.bytes()
	files := map[string][]byte{
		"whole":   whole,
		"cut":     whole[:len(whole)-700],
		"damaged": f.record(1, 1, 10, frame(MaxRecordLen+1, 0)).bytes(),
	}
	dir := t.TempDir()
	for name, file := range files {
		wantRecs, _, wantErr := readAll(t, file)
		path := filepath.Join(dir, name+".pcap")
		require.NoError(t, os.WriteFile(path, file, 0o644))
		r, err := Open(path)
		require.NoError(t, err)
		require.True(t, r.Mapped())
		r.callerReadsAhead()
		var wg sync.WaitGroup
		const chunk = 64 << 10
		for g := 0; g < 3; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for off := int64(len(file)) + chunk - int64(g)*chunk; off > -2*chunk; off -= 3 * chunk {
					r.readAhead(off, off+chunk)
				}
			}()
		}
		var got []rec
		var gotErr error
		for {
			off := r.Offset()
			x, err := r.Next()
			if err != nil {
				if err != io.EOF {
					gotErr = err
				}
				break
			}
			require.Equal(t, off, x.Offset, "%s record %d", name, x.Index)
			got = append(got, own(x))
		}
		wg.Wait()
		r.Close()
		require.Equal(t, wantRecs, got, name)
		if wantErr == nil {
			require.NoError(t, gotErr, name)
		} else {
			require.EqualError(t, gotErr, wantErr.Error(), name)
		}
	}
	// Readers that are not mapped ignore it.
	r, err := NewReader(bytes.NewReader(gz(t, whole)))
	require.NoError(t, err)
	r.callerReadsAhead()
	r.readAhead(0, 1<<20)
	require.Len(t, mustReadAll(t, gz(t, whole)), 4000)
}
