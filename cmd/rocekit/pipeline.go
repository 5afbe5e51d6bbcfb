package main

import (
	"bufio"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// The decode command runs on a few workers (one per core), each carrying
// one batch of frames at a time through every stage:
//
//	read ahead                      (in parallel: a memory-mapped file's chunk)
//	read                            (one worker at a time, in file order)
//	decode, ICRC, VCRC, selection   (in parallel)
//	per-QP analysis                 (per tracker shard, in batch order)
//	format                          (in parallel)
//	write                           (in batch order: waits its turn)
//
// Every frame is decoded once, and a batch never changes hands: the worker
// that read it (and brought its bytes into its core's cache) decodes,
// checks, analyses and formats it. A batch of a memory-mapped file is the
// records that start in one readChunk of it: its worker streams the chunk
// from memory before its turn to walk the records, so the workers read the
// file at once and the turn finds the records in cache. The analysis is
// split into shards by pairs of endpoints (analysis.Shards): a batch takes
// each shard's turn in order, so one worker can analyse shard 0 of a batch
// while another analyses shard 1 of the batch before it. Only the walk,
// each shard's analysis and the writing take turns. A batch only ever
// waits for batches read before it, which are never waiting for it: no
// deadlock. --summary stops after the analysis.
//
// Records of a memory-mapped file are used in place; records of a stream
// (gzip, standard input) are copied into the batch's arena, because the
// reader reuses its buffer.

const batchFrames = 256

// slot is one frame of a batch: its record, the check results and where
// its warnings are. The decoded views are the worker's.
type slot struct {
	rec      pcap.Record
	linkErr  error // link layer could not be stripped
	err      error // frame decode error
	icrc     crcResult
	vcrc     crcResult
	shard    uint8 // the tracker shard that observes the frame
	wFrom    int   // this frame's warnings are batch.warnings[wFrom:wTo]
	wTo      int
	selected bool
}

type batch struct {
	seq      uint64
	last     bool // the last batch of its file
	file     string
	slots    []slot // slots[:n] are in use
	n        int
	arena    []byte
	warnings []string
	out      []byte
	err      error // the reader's error after the last frame of the batch
}

func (b *batch) reset(file string) {
	b.file = file
	b.n = 0
	b.arena = b.arena[:0]
	b.warnings = b.warnings[:0]
	b.out = b.out[:0]
	b.err = nil
	b.last = false
}

// turns lets batches through one at a time, in sequence order.
//
// A worker that must wait spins for a while before it sleeps: a turn
// usually comes within tens of microseconds, and putting a thread to sleep
// and waking it costs about that much again (more in a virtual machine),
// which showed as a two-core run no faster than a one-core one. Waits
// longer than spinFor (a writer blocked on a slow pipe) sleep.
type turns struct {
	next     atomic.Uint64
	mu       sync.Mutex
	cond     sync.Cond
	sleepers int // under mu
}

// spinFor is how long a wait spins before it sleeps.
const spinFor = 200 * time.Microsecond

// spinUntil spins until ok reports true or spinFor has passed, and reports
// whether ok did.
func spinUntil(ok func() bool) bool {
	var start time.Time
	for i := 0; ; i++ {
		if ok() {
			return true
		}
		if i%64 == 63 {
			if start.IsZero() {
				start = time.Now()
			} else if time.Since(start) > spinFor {
				return false
			}
			runtime.Gosched()
		}
	}
}

// wait blocks until it is seq's turn.
func (t *turns) wait(seq uint64) {
	if spinUntil(func() bool { return t.next.Load() == seq }) {
		return
	}
	t.mu.Lock()
	t.sleepers++
	for t.next.Load() != seq {
		t.cond.Wait()
	}
	t.sleepers--
	t.mu.Unlock()
}

// done passes the turn on.
func (t *turns) done() {
	t.next.Add(1)
	t.mu.Lock()
	if t.sleepers > 0 {
		t.cond.Broadcast()
	}
	t.mu.Unlock()
}

// worker is what one worker keeps from batch to batch and file to file.
type worker struct {
	b      batch
	frames []packet.Frame // the decoded frames of b
	fi     frameInfo
}

// pipeline holds what persists across files: the tracker, the writer, the
// workers' state and the sequence of batches.
type pipeline struct {
	cfg     *decodeConfig
	out     *bufio.Writer
	conv    convTracker
	workers []*worker
	read    turns   // reading batches from the file
	track   []turns // the analysis, one per tracker shard
	write   turns
	err     error // the reader's error, set in the last turn of the batch that carried it
	done    chan error

	// The file being read. Batch k of the file (claimed in that order) has
	// sequence number base+k; the fields below claims are used in read
	// turns.
	r        *pcap.Reader
	inPlace  bool
	start    int64 // file offset of the first record, when inPlace
	base     uint64
	claims   atomic.Int64
	label    string
	readDone bool // r returned its last record or an error
}

func newPipeline(cfg *decodeConfig, out *bufio.Writer) *pipeline {
	nw := min(runtime.GOMAXPROCS(0), 4)
	p := &pipeline{cfg: cfg, out: out, conv: newConvTracker(cfg.pmtu, nw), done: make(chan error, 1)}
	p.read.cond.L = &p.read.mu
	p.track = make([]turns, p.conv.s.Len())
	for i := range p.track {
		p.track[i].cond.L = &p.track[i].mu
	}
	p.write.cond.L = &p.write.mu
	for i := 0; i < nw; i++ {
		w := &worker{frames: make([]packet.Frame, batchFrames)}
		w.b.slots = make([]slot, batchFrames)
		if cfg.format == "json" {
			w.fi.jc = new(jsonCache)
		}
		p.workers = append(p.workers, w)
	}
	return p
}

// file decodes one capture file and returns the error that stopped it (nil
// at a clean end), after every frame before it has been written.
func (p *pipeline) file(name string, many bool) error {
	r, err := pcap.Open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	p.r, p.inPlace, p.readDone, p.label = r, r.Mapped(), false, ""
	if many {
		p.label = name
	}
	if p.inPlace {
		r.CallerReadsAhead()
		p.start = r.Offset()
	}
	// Batches are numbered on from the previous file's; claims past the
	// end of that file took read turns but no analysis turn.
	p.base = p.track[0].next.Load()
	p.read.next.Store(p.base)
	p.claims.Store(0)
	var wg sync.WaitGroup
	for _, w := range p.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p.readBatch(w) {
				p.process(w)
			}
		}()
	}
	err = <-p.done
	wg.Wait()
	p.r = nil
	return err
}

// readChunk is how much of a memory-mapped file one batch covers: its
// worker streams those bytes into its core's cache (pcap.Reader.ReadAhead)
// before its turn to walk the records, in parallel with the other workers.
const readChunk = 256 << 10

// readBatch claims the next batch and fills w's batch with its records, in
// its turn. A batch of a memory-mapped file is the records that start in
// its readChunk of the file, read ahead before the turn; one of a stream is
// up to batchFrames records, copied out of the reader's buffer. It reports
// false when the file has been read to the end (or to an error) by an
// earlier batch.
func (p *pipeline) readBatch(w *worker) bool {
	k := p.claims.Add(1) - 1
	var hi int64
	if p.inPlace {
		lo := p.start + k*readChunk
		hi = lo + readChunk
		p.r.ReadAhead(lo, hi)
	}
	seq := p.base + uint64(k)
	p.read.wait(seq)
	defer p.read.done()
	if p.readDone {
		return false
	}
	b := &w.b
	b.reset(p.label)
	r := p.r
	for p.inPlace && r.Offset() < hi || !p.inPlace && b.n < batchFrames {
		if b.n == len(b.slots) {
			w.grow()
		}
		s := &b.slots[b.n]
		if err := r.NextInto(&s.rec); err != nil {
			if err != io.EOF {
				b.err = err
			}
			b.last, p.readDone = true, true
			break
		}
		if p.cfg.last > 0 && s.rec.Index > p.cfg.last {
			continue // read on to the end, to report damage
		}
		b.n++
		if !p.inPlace {
			start := len(b.arena)
			b.arena = append(b.arena, s.rec.Data...)
			s.rec.Data = b.arena[start:len(b.arena):len(b.arena)]
		}
	}
	if !p.inPlace {
		fixArena(b)
	}
	b.seq = seq
	return true
}

// grow makes room for more frames in w's batch (a readChunk of small
// records holds more than batchFrames).
func (w *worker) grow() {
	n := 2 * len(w.b.slots)
	w.b.slots = append(w.b.slots, make([]slot, n-len(w.b.slots))...)
	w.frames = append(w.frames, make([]packet.Frame, n-len(w.frames))...)
}

// fixArena re-points each copied record at the arena's final backing array
// (appending may have moved it).
func fixArena(b *batch) {
	off := 0
	for i := range b.slots[:b.n] {
		n := len(b.slots[i].rec.Data)
		b.slots[i].rec.Data = b.arena[off : off+n : off+n]
		off += n
	}
}

// process carries w's batch through decoding (with the ICRC and VCRC checks
// and the selection), the analysis in turn, formatting, and writing in turn.
func (p *pipeline) process(w *worker) {
	b, frames, fi := &w.b, w.frames, &w.fi
	for i := range b.slots[:b.n] {
		s := &b.slots[i]
		f := &frames[i]
		decodeFrame(s, f, p.cfg.ports)
		checkFrame(s, f)
		s.shard = uint8(p.conv.shard(f))
		s.selected = !p.cfg.summary && p.cfg.selected(s, f)
	}
	// The analysis: each shard in its turn, the batch's frames of that
	// shard in order. A later batch may take a shard's turn as soon as this
	// one passes it on, while this one goes on to the next shard.
	last := len(p.track) - 1
	for sh := range p.track {
		p.track[sh].wait(b.seq)
		for i := range b.slots[:b.n] {
			s := &b.slots[i]
			if int(s.shard) != sh {
				continue
			}
			fi.slot, fi.f = s, &frames[i]
			s.wFrom = len(b.warnings)
			b.warnings = p.conv.observe(sh, b.seq<<32|uint64(i), fi, b.warnings)
			s.wTo = len(b.warnings)
		}
		if sh == last && p.cfg.summary {
			// Nothing to write: the batch ends in its last analysis turn.
			p.finish(b)
		}
		p.track[sh].done()
	}
	if p.cfg.summary {
		return
	}
	p.render(fi, b, frames)
	p.write.wait(b.seq)
	p.out.Write(b.out)
	p.finish(b)
	p.write.done()
}

// finish records the reader's error a batch carried and, after the last
// batch of a file, reports the file's error. It runs in the batch's turn.
func (p *pipeline) finish(b *batch) {
	if b.err != nil {
		p.err = b.err
	}
	if b.last {
		p.done <- p.err
		p.err = nil
	}
}

// render formats the selected frames of b into b.out.
func (p *pipeline) render(fi *frameInfo, b *batch, frames []packet.Frame) {
	out := b.out[:0]
	fi.file = b.file
	for i := range b.slots[:b.n] {
		s := &b.slots[i]
		if !s.selected {
			continue
		}
		fi.slot, fi.f = s, &frames[i]
		fi.warnings = b.warnings[s.wFrom:s.wTo]
		out = p.cfg.render(out, fi)
	}
	b.out = out
}

func (p *pipeline) writeSummary() {
	p.out.Write(p.conv.appendSummary(nil, p.cfg.format == "json"))
}
