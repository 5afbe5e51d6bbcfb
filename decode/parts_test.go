package decode

import (
	"os"
	"runtime"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/internal/obs"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// How much of a SummaryOnly decode each part costs. partsRun walks a
// file the way a SummaryOnly Decoder does (Walk: one worker per core, a
// chunk a batch, each copied or read ahead before its turn, records
// located in turn and read in parallel) and does, for each frame, only
// the parts up to upTo: nothing more (partSkim), the ICRC alone
// (partICRC), decoding with the ICRC check (partDecode), and making the
// observation (partObs). The tracker and the batch hand-over are what
// BenchmarkDecodeParts' "pipeline" (a SummaryOnly Decoder itself) adds.
const (
	partSkim = iota
	partICRC
	partDecode
	partObs
)

var partsSink atomic.Uint32

// partsWorker is one worker's state in partsRun, padded so that workers
// write no cache line in common.
type partsWorker struct {
	s Frame
	f packet.Frame
	o obs.Obs
	n uint64
	x uint32
	_ [64]byte
}

func partsRun(file string, upTo int) {
	ws := make([]partsWorker, runtime.GOMAXPROCS(0))
	_, err := Walk(file, len(ws), func(w int, rec *pcap.Record) {
		pw := &ws[w]
		switch {
		case upTo == partICRC && len(rec.Data) > 18:
			v, _ := icrc.IPv4(rec.Data[14 : len(rec.Data)-4])
			pw.x += v
		case upTo >= partDecode:
			pw.s.DecodeRecord(rec, &pw.f)
			if upTo >= partObs {
				pw.n++
				observations.Set(&pw.o, pw.n, rec.Index, rec.Time, &pw.f, pw.s.ICRC.check(), pw.s.VCRC.check())
			}
		}
	})
	if err != nil {
		panic(err)
	}
	for i := range ws {
		partsSink.Add(ws[i].x)
	}
}

// BenchmarkDecodeParts runs each part of a SummaryOnly decode on the file
// bench/decode.sh makes, and a SummaryOnly Decoder itself, in turn (so
// they share the machine's speed of the moment), and reports each one's
// median time, and whether the file was read through copies (copied 1)
// or the mapping (0):
//
//	go test -run '^$' -bench DecodeParts -benchtime 12x ./decode
func BenchmarkDecodeParts(b *testing.B) {
	const file = "../bench/out/mixed.pcap"
	if _, err := os.Stat(file); err != nil {
		b.Skip("no bench/out/mixed.pcap: run bench/decode.sh first")
	}
	names := []string{"skim", "icrc", "decode", "obs", "pipeline"}
	ts := make([][]float64, len(names))
	for i := 0; i < b.N; i++ {
		for j := range names {
			m := (i + j) % len(names)
			t := time.Now()
			if m < len(names)-1 {
				partsRun(file, m)
			} else {
				if err := New(Options{SummaryOnly: true}).File(file); err != nil {
					b.Fatal(err)
				}
			}
			ts[m] = append(ts[m], float64(time.Since(t))/1e6)
		}
	}
	for m, n := range names {
		sort.Float64s(ts[m])
		b.ReportMetric(ts[m][len(ts[m])/2], n+"-ms")
	}
	if copied, err := Walk(file, 1, func(int, *pcap.Record) {}); err == nil {
		b.ReportMetric(map[bool]float64{false: 0, true: 1}[copied], "copied")
	}
}

// BenchmarkObserveFile is the tracker alone over the observations of the
// benchmark file's frames of one shard (of two), made beforehand and read
// in order from memory: what one worker's tracker costs without the rest of
// the pipeline.
func BenchmarkObserveFile(b *testing.B) {
	const file = "../bench/out/mixed.pcap"
	r, err := pcap.Open(file)
	if err != nil {
		b.Skip("no bench/out/mixed.pcap: run bench/decode.sh first")
	}
	var observed []obs.Obs
	var s Frame
	var f packet.Frame
	var rec pcap.Record
	shards := analysis.NewShards(2, analysis.Options{})
	for i := 0; r.NextInto(&rec) == nil; i++ {
		s.DecodeRecord(&rec, &f)
		var o obs.Obs
		observations.Set(&o, uint64(i), rec.Index, rec.Time, &f, s.ICRC.check(), s.VCRC.check())
		if observations.Of(shards, &o) == 0 {
			observed = append(observed, o)
		}
	}
	r.Close()
	b.ResetTimer()
	var ws []analysis.Warning
	for i := 0; i < b.N; i++ {
		sh := analysis.NewShards(2, analysis.Options{})
		for j := range observed {
			ws = observations.Observe(sh, 0, &observed[j], ws[:0])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(observed)), "ns/frame")
	b.ReportMetric(float64(len(observed)), "frames")
}
