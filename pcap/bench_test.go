package pcap

import (
	"bytes"
	"io"
	"testing"
	"time"
)

const benchFrames, benchFrameLen = 10_000, 1024

// benchFile returns an in-memory file of benchFrames frames of 1 KiB and the
// offset of its first record.
func benchFile(b *testing.B, f Format) (file []byte, first int) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, f, LinkTypeEthernet)
	if err != nil {
		b.Fatal(err)
	}
	data := frame(benchFrameLen, 7)
	for i := range benchFrames {
		if err := w.WritePacket(time.Unix(1_700_000_000, int64(i)*1000), data); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	first = 24
	if f == FormatPcapng {
		first = 28 + 32
	}
	return buf.Bytes(), first
}

// cycle serves file once, then its records from offset first over and over,
// so that one Reader can return any number of frames.
type cycle struct {
	file  []byte
	first int
	pos   int
}

func (c *cycle) Read(p []byte) (int, error) {
	if c.pos == len(c.file) {
		c.pos = c.first
	}
	n := copy(p, c.file[c.pos:])
	c.pos += n
	return n, nil
}

// benchRead measures Next per frame: b.N frames, each 1 KiB.
func benchRead(b *testing.B, f Format) {
	file, first := benchFile(b, f)
	r, err := NewReader(&cycle{file: file, first: first})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.SetBytes(int64(len(file)-first) / benchFrames)
	b.ResetTimer()
	for range b.N {
		rec, err := r.Next()
		if err != nil {
			b.Fatal(err)
		}
		if rec.CapLen != benchFrameLen {
			b.Fatal(rec.CapLen)
		}
	}
}

func BenchmarkReadPcap(b *testing.B)   { benchRead(b, FormatPcap) }
func BenchmarkReadPcapng(b *testing.B) { benchRead(b, FormatPcapng) }

// BenchmarkReadPcapGzip reads the 10,000-frame pcap gzip-compressed, start to
// end, reporting the time per frame.
func BenchmarkReadPcapGzip(b *testing.B) {
	file, _ := benchFile(b, FormatPcap)
	z := gz(b, file)
	b.ReportAllocs()
	b.SetBytes(benchFrameLen + 16)
	b.ResetTimer()
	var r *Reader
	for i := range b.N {
		if i%benchFrames == 0 {
			b.StopTimer()
			var err error
			if r, err = NewReader(bytes.NewReader(z)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		if _, err := r.Next(); err != nil {
			b.Fatal(err)
		}
	}
}

func benchWrite(b *testing.B, f Format) {
	w, err := NewWriter(io.Discard, f, LinkTypeEthernet)
	if err != nil {
		b.Fatal(err)
	}
	data, ts := frame(benchFrameLen, 7), time.Unix(1_700_000_000, 0)
	b.ReportAllocs()
	b.SetBytes(benchFrameLen)
	b.ResetTimer()
	for i := range b.N {
		if err := w.WritePacket(ts.Add(time.Duration(i)), data); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkWritePcap(b *testing.B)   { benchWrite(b, FormatPcap) }
func BenchmarkWritePcapng(b *testing.B) { benchWrite(b, FormatPcapng) }
