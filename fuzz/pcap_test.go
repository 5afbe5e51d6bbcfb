package fuzz

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocekit/rocekit/internal/pcapfast"
	"github.com/rocekit/rocekit/pcap"
)

// pcapSeeds are the first 4 KiB of every capture in ../shared/captures (when
// present) and small hand-made pcap and pcapng files.
var pcapSeeds = func() [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "captures", "*.pcap"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			seeds = append(seeds, b[:min(len(b), 4096)])
		}
	}
	return append(seeds, pcapHandMadeSeeds()...)
}()

// pcapByteOrder is binary.LittleEndian or binary.BigEndian.
type pcapByteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

func pcapHandMadeSeeds() [][]byte {
	le, be := binary.LittleEndian, binary.BigEndian
	var seeds [][]byte

	// Classic pcap, little-endian microseconds, Ethernet: two records.
	pc := le.AppendUint32(nil, 0xA1B2C3D4)
	pc = le.AppendUint16(pc, 2)
	pc = le.AppendUint16(pc, 4)
	pc = append(pc, make([]byte, 8)...)
	pc = le.AppendUint32(pc, 65535)
	pc = le.AppendUint32(pc, 1)
	for i, n := range []int{60, 14} {
		pc = le.AppendUint32(pc, uint32(1700000000+i))
		pc = le.AppendUint32(pc, 999999)
		pc = le.AppendUint32(pc, uint32(n))
		pc = le.AppendUint32(pc, uint32(n+4))
		pc = append(pc, bytes.Repeat([]byte{byte(i + 1)}, n)...)
	}
	seeds = append(seeds, pc)

	// Classic pcap, big-endian nanoseconds, ERF: one InfiniBand record.
	erf := le.AppendUint64(nil, 0x482B41EF7FEBEA60)
	erf = append(erf, 21, 0x04)
	erf = be.AppendUint16(erf, 16+8+6)
	erf = be.AppendUint16(erf, 0)
	erf = be.AppendUint16(erf, 8)
	erf = append(erf, 0xF0, 0x02, 0xFF, 0xFF, 0x00, 0x02, 0xFF, 0xFF)
	pb := be.AppendUint32(nil, 0xA1B23C4D)
	pb = be.AppendUint16(pb, 2)
	pb = be.AppendUint16(pb, 4)
	pb = append(pb, make([]byte, 8)...)
	pb = be.AppendUint32(pb, 65535)
	pb = be.AppendUint32(pb, 197)
	pb = be.AppendUint32(pb, 1210794479)
	pb = be.AppendUint32(pb, 499693535)
	pb = be.AppendUint32(pb, uint32(len(erf)))
	pb = be.AppendUint32(pb, uint32(len(erf)))
	seeds = append(seeds, append(pb, erf...))

	// pcapng by the Writer: Ethernet and InfiniBand interfaces.
	var ng bytes.Buffer
	w, _ := pcap.NewWriter(&ng, pcap.FormatPcapng, pcap.LinkTypeEthernet)
	ifc, _ := w.AddInterface(pcap.LinkTypeInfiniBand)
	_ = w.WritePacket(time.Unix(1700000000, 1), bytes.Repeat([]byte{0xEE}, 64))
	_ = w.WriteRecord(&pcap.Record{Time: time.Unix(1700000000, 2), OrigLen: 40, LinkType: pcap.LinkTypeInfiniBand, Interface: ifc, Data: []byte{0xF0, 0x02, 0, 1, 0, 3, 0, 2, 0x64, 0, 0xFF, 0xFF}})
	_ = w.Flush()
	seeds = append(seeds, ng.Bytes())

	// Big-endian pcapng by hand: SHB, IDB (SLL2, if_tsresol 2^-20), SPB,
	// obsolete PB, an unknown block, then a second little-endian section.
	block := func(b []byte, o pcapByteOrder, typ uint32, body []byte) []byte {
		for len(body)%4 != 0 {
			body = append(body, 0)
		}
		b = o.AppendUint32(b, typ)
		b = o.AppendUint32(b, uint32(12+len(body)))
		b = append(b, body...)
		return o.AppendUint32(b, uint32(12+len(body)))
	}
	shb := func(b []byte, o pcapByteOrder) []byte {
		body := o.AppendUint32(nil, 0x1A2B3C4D)
		body = o.AppendUint16(body, 1)
		body = o.AppendUint16(body, 0)
		body = o.AppendUint64(body, ^uint64(0))
		return block(b, o, 0x0A0D0D0A, body)
	}
	idb := func(b []byte, o pcapByteOrder, lt uint16, tsresol byte) []byte {
		body := o.AppendUint16(nil, lt)
		body = o.AppendUint16(body, 0)
		body = o.AppendUint32(body, 0)
		body = o.AppendUint16(body, 9)
		body = o.AppendUint16(body, 1)
		body = append(body, tsresol, 0, 0, 0)
		body = o.AppendUint32(body, 0)
		return block(b, o, 1, body)
	}
	h := shb(nil, be)
	h = idb(h, be, 276, 0x80|20)
	h = block(h, be, 3, append(be.AppendUint32(nil, 24), bytes.Repeat([]byte{0x86}, 24)...))
	pbBody := be.AppendUint16(nil, 0)
	pbBody = be.AppendUint16(pbBody, 0)
	pbBody = be.AppendUint32(pbBody, 1)
	pbBody = be.AppendUint32(pbBody, 2)
	pbBody = be.AppendUint32(pbBody, 20)
	pbBody = be.AppendUint32(pbBody, 20)
	h = block(h, be, 2, append(pbBody, make([]byte, 20)...))
	h = block(h, be, 0x0BAD, []byte("skip me"))
	h = shb(h, le)
	h = idb(h, le, 101, 9)
	epb := le.AppendUint32(nil, 0)
	epb = le.AppendUint32(epb, 0)
	epb = le.AppendUint32(epb, 5)
	epb = le.AppendUint32(epb, 20)
	epb = le.AppendUint32(epb, 20)
	epb = append(epb, 0x45)
	h = block(h, le, 6, append(epb, make([]byte, 19)...))
	seeds = append(seeds, h)

	// gzip of the first classic pcap.
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	_, _ = zw.Write(pc)
	_ = zw.Close()
	return append(seeds, z.Bytes())
}

type pcapRecord struct {
	time    time.Time
	origLen int
	link    pcap.LinkType
	data    []byte
}

// Timestamp ranges the Writer accepts.
const (
	pcapMaxSec   = 1<<32 - 1
	pcapngMaxSec = 18446744072
)

func FuzzPcapReader(f *testing.F) {
	for _, s := range pcapSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		recs, links := pcapReadChecked(t, in)
		if len(recs) == 0 {
			return
		}
		// Re-write the records as pcapng (one interface per link type) and,
		// when they share one link type, as classic pcap; read them again.
		pcapRewrite(t, pcap.FormatPcapng, recs, links, pcapngMaxSec)
		if len(links) == 1 {
			pcapRewrite(t, pcap.FormatPcap, recs, links, pcapMaxSec)
		}
	})
}

// pcapReadChecked reads every record of in until an error, checking the
// Reader's promises, and returns owned copies of the records and the link
// types in order of first appearance.
func pcapReadChecked(t *testing.T, in []byte) ([]pcapRecord, []pcap.LinkType) {
	r, err := pcap.NewReader(bytes.NewReader(in))
	if err != nil {
		var fe *pcap.FileError
		if !errors.As(err, &fe) || fe.Record != 0 {
			t.Fatalf("NewReader: %T %v", err, err)
		}
		return nil, nil
	}
	var recs []pcapRecord
	var links []pcap.LinkType
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			var fe *pcap.FileError
			if !errors.As(err, &fe) || fe.Record != len(recs)+1 {
				t.Fatalf("after %d records: %T %v", len(recs), err, err)
			}
			_ = fe.Error()
			break
		}
		if rec.Index != len(recs)+1 || rec.CapLen != len(rec.Data) || rec.CapLen > pcap.MaxRecordLen || !rec.LinkType.Known() {
			t.Fatalf("record %d: %+v", len(recs)+1, *rec)
		}
		if p, err := rec.Network(); err == nil && len(p.Data) > len(rec.Data) {
			t.Fatalf("record %d: payload of %d bytes from a record of %d", rec.Index, len(p.Data), len(rec.Data))
		}
		found := false
		for _, lt := range links {
			found = found || lt == rec.LinkType
		}
		if !found {
			links = append(links, rec.LinkType)
		}
		recs = append(recs, pcapRecord{rec.Time, rec.OrigLen, rec.LinkType, bytes.Clone(rec.Data)})
	}
	return recs, links
}

func pcapRewrite(t *testing.T, f pcap.Format, recs []pcapRecord, links []pcap.LinkType, maxSec int64) {
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, f, links[0])
	if err != nil {
		t.Fatal(err)
	}
	ifcOf := map[pcap.LinkType]int{links[0]: 0}
	for _, lt := range links[1:] {
		if ifcOf[lt], err = w.AddInterface(lt); err != nil {
			t.Fatal(err)
		}
	}
	want := make([]time.Time, len(recs))
	for i, r := range recs {
		ts := r.time
		if ts.IsZero() || ts.Unix() < 0 || ts.Unix() > maxSec {
			ts = time.Time{} // written as the epoch
		}
		want[i] = ts
		if ts.IsZero() {
			want[i] = time.Unix(0, 0)
		}
		if r.link == pcap.LinkTypeERF && len(r.data) >= 8 {
			want[i] = r.time // the ERF header's own timestamp wins again
		}
		rec := pcap.Record{Time: ts, OrigLen: max(r.origLen, len(r.data)), LinkType: r.link, Interface: ifcOf[r.link], Data: r.data}
		if err := w.WriteRecord(&rec); err != nil {
			t.Fatalf("%v: re-writing record %d: %v", f, i+1, err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	again, _ := pcapReadChecked(t, buf.Bytes())
	if len(again) != len(recs) {
		t.Fatalf("%v: %d records re-written, %d read back", f, len(recs), len(again))
	}
	for i, r := range again {
		if !bytes.Equal(r.data, recs[i].data) || r.link != recs[i].link || !r.time.Equal(want[i]) {
			t.Fatalf("%v: record %d read back as %+v, wrote %+v at %v", f, i+1, r, recs[i], want[i])
		}
	}
}

// FuzzPcapMapped reads the bytes as a file, memory-mapped when they are a
// classic pcap file, several ways: NextInto; the Reader's SkimFrom (in
// steps the input's first byte sets) with RecordFrom (internal/pcapfast),
// as package decode walks a mapped file, with NextInto wherever a skim
// stops short; and the same through a Copy of each step's bytes, reaching
// past the step by as
// many bytes as the input's second byte says. All must give the same
// records and the same error as reading the bytes as a stream; none may
// panic.
func FuzzPcapMapped(f *testing.F) {
	for _, s := range pcapSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		sr, err := pcap.NewReader(bytes.NewReader(in))
		want, wantErr := pcapReadAll(sr, err)
		path := filepath.Join(t.TempDir(), "f.pcap")
		if err := os.WriteFile(path, in, 0o644); err != nil {
			t.Fatal(err)
		}
		mr, err := pcap.Open(path)
		got, gotErr := pcapReadAll(mr, err)
		pcapSame(t, "mapped", want, wantErr, got, gotErr)
		step := int64(1)
		if len(in) > 0 {
			step += int64(in[0]) * 13
		}
		past := int64(-1) // no copy
		for _, how := range []string{"skimmed", "skimmed from copies"} {
			got, err := pcapSkimAll(t, path, int64(len(in)), step, past)
			pcapSame(t, how, want, wantErr, got, err)
			past = 0
			if len(in) > 1 {
				past = int64(in[1]) * 3
			}
		}
	})
}

// pcapSkimAll reads the file at path (size bytes) as FuzzPcapMapped does:
// SkimFrom step bytes at a time and RecordFrom, then NextInto where a skim stops
// short; when past is not negative, through a Copy of each step's bytes
// and past bytes more, made again only when the last one does not cover
// the step (a copy per step made minimising inputs slow).
func pcapSkimAll(t *testing.T, path string, size, step, past int64) ([]pcap.Record, error) {
	r, err := pcap.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	fast := pcapfast.Get[*pcap.Reader, *pcap.Record]()
	fast.CallerReadsAhead(r)
	var c *pcapfast.Copy
	if past >= 0 {
		c = new(pcapfast.Copy)
	}
	var recs []pcap.Record
	var offs []int64
	for {
		to := r.Offset() + step
		if c != nil && (c.Off > r.Offset() || c.Off+int64(len(c.Data)) < min(to, size)) {
			fast.CopyAt(r, c, r.Offset(), to+past+4*step)
		}
		var first int
		offs, first = fast.SkimFrom(r, c, to, offs[:0])
		for i, off := range offs {
			var rec pcap.Record
			if err := fast.RecordFrom(r, c, off, first+i, &rec); err != nil {
				t.Fatalf("RecordFrom(%d) of a skimmed record: %v", off, err)
			}
			rec.Data = bytes.Clone(rec.Data)
			recs = append(recs, rec)
		}
		if r.Offset() >= to {
			continue
		}
		var end bool
		if recs, end, err = pcapNext(r, recs); end {
			return recs, err
		}
	}
}

// pcapNext appends r's next record to recs (its Data copied), or reports
// the end: true with the error that ended the file (nil at its end).
func pcapNext(r *pcap.Reader, recs []pcap.Record) ([]pcap.Record, bool, error) {
	var rec pcap.Record
	if err := r.NextInto(&rec); err != nil {
		if err == io.EOF {
			err = nil
		}
		return recs, true, err
	}
	rec.Data = bytes.Clone(rec.Data)
	return append(recs, rec), false, nil
}

// pcapReadAll reads every record of r, and returns them with the error
// that ended them (nil at the end of the file); err is the error that
// opening r gave, returned as it is.
func pcapReadAll(r *pcap.Reader, err error) ([]pcap.Record, error) {
	if err != nil {
		return nil, err
	}
	defer r.Close()
	var recs []pcap.Record
	for {
		var end bool
		if recs, end, err = pcapNext(r, recs); end {
			return recs, err
		}
	}
}

func pcapSame(t *testing.T, how string, want []pcap.Record, wantErr error, got []pcap.Record, gotErr error) {
	t.Helper()
	if (wantErr == nil) != (gotErr == nil) || wantErr != nil && wantErr.Error() != gotErr.Error() {
		t.Fatalf("%s: error %v, read as a stream %v", how, gotErr, wantErr)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d records, read as a stream %d", how, len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Index != w.Index || g.Offset != w.Offset || !g.Time.Equal(w.Time) || g.CapLen != w.CapLen ||
			g.OrigLen != w.OrigLen || g.LinkType != w.LinkType || g.Interface != w.Interface || !bytes.Equal(g.Data, w.Data) {
			t.Fatalf("%s: record %d is %+v, read as a stream %+v", how, i+1, g, w)
		}
	}
}
