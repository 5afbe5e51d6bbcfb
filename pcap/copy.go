package pcap

import (
	"os"
	"strings"
	"sync"
	"time"

	"github.com/rocekit/rocekit/internal/pcapfast"
)

// copyAt fills c (a pcapfast.Copy: part of a Mapped Reader's file, which
// skimFrom and recordFrom read the records it covers from instead of from
// the mapping) with the file's bytes at offsets [from, to), clipped to the
// file as it was mapped, read with pread into c's buffer (grown to the
// largest range asked for, then reused). A failed or short read leaves c
// holding what was read: whatever c does not cover is read from the
// mapping. It may be called from any goroutine, concurrently with the
// Reader's other methods. It does nothing for a Reader that is not
// Mapped.
func (r *Reader) copyAt(c *pcapfast.Copy, from, to int64) {
	c.Off, c.Data = from, c.Data[:0]
	m := r.mem
	if m == nil || r.file == nil {
		return
	}
	from, to = max(from, 0), min(to, int64(len(m.b)))
	if from >= to {
		return
	}
	b := c.Buffer(int(to - from))
	got, _ := r.file.ReadAt(b, from)
	c.Off, c.Data = from, b[:got]
}

// copyIsFaster reports whether this Reader's file is better read through
// copies (copyAt, skimFrom, recordFrom) than through its mapping. That
// can be so on virtual machines whose hypervisor shadows the guest's page
// tables (PVM, for one): there each page of a new mapping costs a trap to the
// hypervisor the first time it is touched, even after the kernel has mapped
// it, while a copy reads the page cache through mappings that last:
// decode's floor took 37.2-52.6 ms through copies against 46.8-76.3 ms
// through the mapping on machine D (BENCHMARKS.md, "Decode").
// Elsewhere reading the mapping is cheaper than copying: copies took
// 1.07-1.12x the time on machine A (alternated with bench/alternate.py).
//
// The answer is measured once per process, on the first Mapped file of at
// least probeMin bytes (smaller files are read through the mapping without
// asking): the time to map and read a few pages of the file against the
// time to copy as many others and read the copy, the fastest of three
// rounds each. The environment variable ROCEKIT_READ=copy or ROCEKIT_READ=map
// sets it instead. It is false for a Reader that is not Mapped.
func (r *Reader) copyIsFaster() bool {
	if !r.Mapped() {
		return false
	}
	switch strings.ToLower(os.Getenv("ROCEKIT_READ")) {
	case "copy":
		return true
	case "map":
		return false
	}
	if len(r.mem.b) < probeMin {
		return false
	}
	probe.once.Do(func() { probe.copy = copyCheaper(r.file, r.mem.b) })
	return probe.copy
}

var probe struct {
	once sync.Once
	copy bool
}

const (
	// probeMin is the smallest file copyIsFaster measures: below it the
	// way of reading hardly matters.
	probeMin = 8 << 20
	// probeLen is how much of the file each way reads in each round, in
	// probeRounds rounds.
	probeLen    = 128 << 10
	probeRounds = 3
)

// copyCheaper times reading probeLen bytes of the file f (mapped as b)
// both ways, on bytes neither way has read before: through the mapping
// (the kernel maps the pages, as populate has it do, and every cache line
// is read) and by copying (pread into a buffer, every line of which is then
// read). It reports whether the copy was faster, comparing the fastest of
// probeRounds rounds each, so that an interrupt (or a profiler's) in a
// round does not decide. The buffer is written before the first round, as
// the reader's buffers are in use before most of their copies.
func copyCheaper(f *os.File, b []byte) bool {
	buf := make([]byte, probeLen)
	for i := range buf {
		buf[i] = 1
	}
	best := [2]time.Duration{1 << 62, 1 << 62}
	var x byte
	for round := 0; round < probeRounds; round++ {
		// From 1 MiB into the file, clear of what has been read.
		lo := (1 << 20) + round*2*probeLen
		if lo+2*probeLen > len(b) {
			return false
		}
		start := time.Now()
		populate(b, lo, lo+probeLen)
		x |= touchLines(b[lo : lo+probeLen])
		best[0] = min(best[0], time.Since(start))

		start = time.Now()
		if n, err := f.ReadAt(buf, int64(lo+probeLen)); err != nil || n != len(buf) {
			return false
		}
		x |= touchLines(buf)
		best[1] = min(best[1], time.Since(start))
	}
	readAheadSink.Add(uint32(x))
	return best[1] < best[0]
}
