// Package benchwalk reads a capture file the way `rocekit decode --summary`
// does, for benchmarks that time parts of it: one worker per core, each
// claiming the file's chunks in turn, bringing its next chunk in (a copy,
// where pcap.Reader.CopyIsFaster says so, else the mapping read ahead,
// spread over the batch), walking each chunk's records in file order (its
// read turn, pcap.Reader.SkimFrom) and then handing each record to a
// function, in parallel with the other workers. It does nothing else:
// no decoding, analysis or output unless the function does it.
//
// cmd/rocekit's BenchmarkDecodeParts times the parts of decoding with it,
// and bench/floor times it alone, as a whole process, with the ICRC of
// every frame: the least a decoder that reads the file this way and checks
// every ICRC must do.
package benchwalk

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/rocekit/rocekit/internal/prefetch"
	"github.com/rocekit/rocekit/pcap"
)

// The chunk sizes of cmd/rocekit's decode, which takes them from here (its
// pipeline.go says why these): a batch is the records that start in one
// chunk of the file; a copy reaches Slack past its chunk.
const (
	ReadChunk = 256 << 10 // the file read through its mapping
	CopyChunk = 128 << 10 // the file read through copies
	Slack     = 16 << 10
)

// ErrNotMapped is returned for a file that pcap.Open does not map (a
// pcapng or compressed file, standard input): Walk reads mapped files
// only.
var ErrNotMapped = errors.New("benchwalk: the file is not memory-mapped")

// Walk reads the capture file with workers goroutines (GOMAXPROCS when 0)
// and calls frame(w, rec) for each record, on worker w (0 <= w < workers):
// a worker's records in file order, different workers' calls at once. rec
// and its Data are valid until frame returns. It reports whether the file
// was read through copies, and the first error met (a damaged record, or
// one that changed after it was located; nil at a clean end). Every record
// before a damaged one is handed over.
func Walk(file string, workers int, frame func(w int, rec *pcap.Record)) (copied bool, err error) {
	r, err := pcap.Open(file)
	if err != nil {
		return false, err
	}
	defer r.Close()
	if !r.Mapped() {
		return false, ErrNotMapped
	}
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	r.CallerReadsAhead()
	start := r.Offset()
	chunk := int64(ReadChunk)
	copied = r.CopyIsFaster()
	if copied {
		chunk = CopyChunk
	}
	var claims, turn atomic.Int64
	var done atomic.Bool
	var (
		errMu   sync.Mutex
		walkErr error // the first error met
	)
	fail := func(err error) {
		errMu.Lock()
		if walkErr == nil {
			walkErr = err
		}
		errMu.Unlock()
	}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var (
				offs     []int64
				rec      pcap.Record
				cp, next *pcap.Copy
			)
			if copied {
				cp, next = new(pcap.Copy), new(pcap.Copy)
			}
			k := claims.Add(1) - 1
			lo := start + k*chunk
			if copied {
				r.CopyAt(cp, lo, lo+chunk+Slack)
			} else {
				r.ReadAhead(lo, lo+chunk)
			}
			for {
				for turn.Load() != k {
				}
				if done.Load() {
					turn.Add(1)
					return
				}
				var first int
				offs, first = r.SkimFrom(cp, lo+chunk, offs[:0])
				if r.Offset() < lo+chunk {
					// Skim stopped early: at the end of the file, or at a
					// damaged record, which NextInto reports.
					done.Store(true)
					switch err := r.NextInto(&rec); {
					case err == nil:
						fail(fmt.Errorf("benchwalk: Skim stopped at record %d, which NextInto reads", rec.Index))
					case err != io.EOF:
						fail(err)
					}
				}
				turn.Add(1)
				k = claims.Add(1) - 1
				lo = start + k*chunk
				var ahead []byte
				if copied {
					r.CopyAt(next, lo, lo+chunk+Slack)
				} else {
					ahead = r.Ahead(lo, lo+chunk)
				}
				lines := (len(ahead) + 63) / 64
				step := 0
				if len(offs) > 0 {
					step = (lines + len(offs) - 1) / len(offs)
				}
				for i, off := range offs {
					// RecordFrom fails only if the file was overwritten
					// while mapped: the walk reports it.
					if err := r.RecordFrom(cp, off, first+i, &rec); err != nil {
						fail(err)
					} else {
						frame(w, &rec)
					}
					if n := min(step, lines); n > 0 {
						prefetch.LinesL2(unsafe.Pointer(&ahead[0]), n)
						ahead, lines = ahead[min(n*64, len(ahead)):], lines-n
					}
				}
				cp, next = next, cp
			}
		}()
	}
	wg.Wait()
	return copied, walkErr
}
