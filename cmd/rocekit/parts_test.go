package main

import (
	"io"
	"os"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/internal/prefetch"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// How much of decode --summary each part costs. partsRun walks a
// memory-mapped file the way the --summary pipeline does (a 256 KiB chunk
// a batch, records located by Skim in turn, read with RecordAt, the next
// chunk prefetched while the batch is processed, one worker per core; or,
// where pcap.Reader.CopyIsFaster says so, a 128 KiB chunk a batch, each
// copied before its turn, records read from the copy) and
// does, for each frame, only the parts up to upTo: nothing more (partSkim),
// the ICRC alone (partICRC), decoding with the ICRC check (partDecode), and
// making the observation (partObs). The tracker and the batch hand-over
// are what BenchmarkDecodeParts' "pipeline" (rocekit decode itself) adds.
const (
	partSkim = iota
	partICRC
	partDecode
	partObs
)

var partsSink atomic.Uint32

func partsRun(file string, upTo int) {
	r, err := pcap.Open(file)
	if err != nil {
		panic(err)
	}
	defer r.Close()
	r.CallerReadsAhead()
	start := r.Offset()
	chunk, copied := int64(readChunk), r.CopyIsFaster()
	if copied {
		chunk = copyChunk
	}
	var claims, turn atomic.Int64
	var done atomic.Bool
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var (
				offs []int64
				s    slot
				f    packet.Frame
				o    analysis.Obs
				x    uint32
				cp   *pcap.Copy
				next *pcap.Copy
			)
			if copied {
				cp, next = new(pcap.Copy), new(pcap.Copy)
			}
			k := claims.Add(1) - 1
			lo := start + k*chunk
			if copied {
				r.CopyAt(cp, lo, lo+chunk+copySlack)
			} else {
				r.ReadAhead(lo, lo+chunk)
			}
			for {
				for turn.Load() != k {
				}
				if done.Load() {
					turn.Add(1)
					break
				}
				var first int
				offs, first = r.SkimFrom(cp, lo+chunk, offs[:0])
				if r.Offset() < lo+chunk { // damage or the end
					done.Store(true)
				}
				turn.Add(1)
				k = claims.Add(1) - 1
				lo = start + k*chunk
				var ahead []byte
				if copied {
					r.CopyAt(next, lo, lo+chunk+copySlack)
				} else {
					ahead = r.Ahead(lo, lo+chunk)
				}
				lines := (len(ahead) + 63) / 64
				step := 0
				if len(offs) > 0 {
					step = (lines + len(offs) - 1) / len(offs)
				}
				for i, off := range offs {
					if err := r.RecordFrom(cp, off, first+i, &s.rec); err != nil {
						panic(err)
					}
					switch {
					case upTo == partICRC && len(s.rec.Data) > 18:
						v, _ := icrc.IPv4(s.rec.Data[14 : len(s.rec.Data)-4])
						x += v
					case upTo >= partDecode:
						decodeFrame(&s, &f, nil)
						checkFrame(&s, &f)
						if upTo >= partObs {
							o.Set(uint64(k)<<32|uint64(i), s.rec.Index, s.rec.Time, &f, check(s.icrc), check(s.vcrc))
						}
					}
					if n := min(step, lines); n > 0 {
						prefetch.LinesL2(unsafe.Pointer(&ahead[0]), n)
						ahead, lines = ahead[min(n*64, len(ahead)):], lines-n
					}
				}
				cp, next = next, cp
			}
			partsSink.Add(x)
		}()
	}
	wg.Wait()
}

// BenchmarkDecodeParts runs each part of decode --summary on the file
// bench/decode.sh makes, and rocekit decode --summary itself, in turn (so
// they share the machine's speed of the moment), and reports each one's
// median time, and whether the file was read through copies (copied 1)
// or the mapping (0):
//
//	go test -run '^$' -bench DecodeParts -benchtime 12x ./cmd/rocekit
func BenchmarkDecodeParts(b *testing.B) {
	const file = "../../bench/out/mixed.pcap"
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
				runDecode([]string{"--summary", file}, io.Discard, io.Discard)
			}
			ts[m] = append(ts[m], float64(time.Since(t))/1e6)
		}
	}
	for m, n := range names {
		sort.Float64s(ts[m])
		b.ReportMetric(ts[m][len(ts[m])/2], n+"-ms")
	}
	if r, err := pcap.Open(file); err == nil {
		copied := 0.0
		if r.CopyIsFaster() {
			copied = 1
		}
		b.ReportMetric(copied, "copied")
		r.Close()
	}
}

// BenchmarkObserveFile is the tracker alone over the observations of the
// benchmark file's frames of one shard (of two), made beforehand and read
// in order from memory: what one worker's tracker costs without the rest of
// the pipeline.
func BenchmarkObserveFile(b *testing.B) {
	const file = "../../bench/out/mixed.pcap"
	r, err := pcap.Open(file)
	if err != nil {
		b.Skip("no bench/out/mixed.pcap: run bench/decode.sh first")
	}
	var obs []analysis.Obs
	var s slot
	var f packet.Frame
	shards := analysis.NewShards(2, analysis.Options{})
	for i := 0; r.NextInto(&s.rec) == nil; i++ {
		decodeFrame(&s, &f, nil)
		checkFrame(&s, &f)
		var o analysis.Obs
		o.Set(uint64(i), s.rec.Index, s.rec.Time, &f, check(s.icrc), check(s.vcrc))
		if shards.OfObs(&o) == 0 {
			obs = append(obs, o)
		}
	}
	r.Close()
	b.ResetTimer()
	var ws []analysis.Warning
	for i := 0; i < b.N; i++ {
		sh := analysis.NewShards(2, analysis.Options{})
		for j := range obs {
			ws = sh.ObserveObs(0, &obs[j], ws[:0])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(obs)), "ns/frame")
	b.ReportMetric(float64(len(obs)), "frames")
}
