package fuzz

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// captureSeeds are whole shared captures (not only their first 4 KiB), so
// the mutations start from real RC conversations with CM handshakes.
func captureSeeds() [][]byte {
	var seeds [][]byte
	files, _ := filepath.Glob(filepath.Join("..", "..", "shared", "captures", "*.pcap"))
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil && len(b) <= 16<<10 {
			seeds = append(seeds, b)
		}
	}
	return append(seeds, pcapSeeds...)
}

// FuzzCapture runs whole capture files through what rocekit decode and
// rocekit check do with them: every record decoded, ICRC/VCRC checked, the
// per-QP tracker and its summary, and the conformance checker. None of it
// may panic, whatever the bytes.
func FuzzCapture(f *testing.F) {
	for _, s := range captureSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r, err := pcap.NewReader(bytes.NewReader(in))
		if err != nil {
			return
		}
		tr := analysis.New(analysis.Options{})
		var fr packet.Frame
		var w []analysis.Warning
		n := 0
		for {
			rec, err := r.Next()
			if err != nil {
				break
			}
			n++
			_ = fr.DecodeRecord(rec)
			ok := true
			if fr.Network() != nil && fr.Transport.ICRC != nil {
				ok, _, _, _ = fr.CheckICRC()
			}
			if fr.VCRC != nil {
				_, _, _, _ = fr.CheckVCRC()
			}
			w = tr.Observe(rec.Index, rec.Time, &fr, ok, w[:0])
		}
		s := tr.Summary()
		_ = s.AppendJSON(nil)
		_ = s.WriteText(&bytes.Buffer{})
		r2, err := pcap.NewReader(bytes.NewReader(in))
		if err != nil {
			t.Fatalf("reader failed on second open: %v", err)
		}
		findings, sum, _ := conform.CheckReader(r2, conform.Options{})
		for _, x := range findings {
			_ = x.AppendJSON(nil)
		}
		_ = sum.AppendJSON(nil)
		_ = n
	})
}
