package main

import (
	"bufio"
	"io"
	"runtime"
	"sync"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// The decode command runs as a pipeline over batches of frames, so the
// cores share the work while frames stay in order. The reader fills batches
// in file order; a pool of workers takes them one at a time and carries
// each through every stage:
//
//	decode, ICRC, VCRC, selection   (any order, in parallel)
//	per-QP analysis                 (in batch order: waits its turn)
//	format                          (any order, in parallel)
//	write                           (in batch order: waits its turn)
//
// Every frame is decoded once, and a batch stays with the worker (and the
// core's cache) that decoded it; only the tracker and the writer take
// turns. --summary stops after the analysis. Workers take batches in order,
// so the oldest batch in flight never waits: no deadlock.
//
// Records of a memory-mapped file are used in place; records of a stream
// (gzip, standard input) are copied into the batch's arena, because the
// reader reuses its buffer.

const (
	batchFrames = 256
	numBatches  = 4
)

// slot is one frame of a batch: its record, the check results and where
// its warnings are. The decoded views are the worker's (see work).
type slot struct {
	rec      pcap.Record
	linkErr  error // link layer could not be stripped
	err      error // frame decode error
	icrc     crcResult
	vcrc     crcResult
	wFrom    int // this frame's warnings are batch.warnings[wFrom:wTo]
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
type turns struct {
	mu   sync.Mutex
	cond sync.Cond
	next uint64
}

// wait blocks until it is seq's turn.
func (t *turns) wait(seq uint64) {
	t.mu.Lock()
	for t.next != seq {
		t.cond.Wait()
	}
	t.mu.Unlock()
}

// done passes the turn on.
func (t *turns) done() {
	t.mu.Lock()
	t.next++
	t.mu.Unlock()
	t.cond.Broadcast()
}

// pipeline holds what persists across files: the tracker, the writer, the
// batches and the workers.
type pipeline struct {
	cfg   *decodeConfig
	out   *bufio.Writer
	conv  convTracker
	free  chan *batch
	jobs  chan *batch
	seq   uint64 // of the next batch the reader fills
	track turns
	write turns
	err   error      // the reader's error, set in the last turn of the batch that carried it
	done  chan error // the last batch of a file is written: its file's error
}

func newPipeline(cfg *decodeConfig, out *bufio.Writer) *pipeline {
	p := &pipeline{cfg: cfg, out: out, conv: newConvTracker(cfg.pmtu),
		free: make(chan *batch, numBatches), jobs: make(chan *batch, numBatches), done: make(chan error, 1)}
	p.track.cond.L = &p.track.mu
	p.write.cond.L = &p.write.mu
	for i := 0; i < numBatches; i++ {
		p.free <- &batch{slots: make([]slot, batchFrames)}
	}
	for i := 0; i < min(runtime.GOMAXPROCS(0), 4); i++ {
		go p.work()
	}
	return p
}

// close stops the workers.
func (p *pipeline) close() { close(p.jobs) }

// file decodes one capture file and returns the error that stopped it (nil
// at a clean end), after every frame before it has been written.
func (p *pipeline) file(name string, many bool) error {
	r, err := pcap.Open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	label := ""
	if many {
		label = name
	}
	inPlace := r.Mapped()
	send := func(b *batch) {
		if !inPlace {
			fixArena(b)
		}
		b.seq = p.seq
		p.seq++
		p.jobs <- b
	}
	b := <-p.free
	b.reset(label)
	for {
		s := &b.slots[b.n]
		if err := r.NextInto(&s.rec); err != nil {
			if err != io.EOF {
				b.err = err
			}
			break
		}
		if p.cfg.last > 0 && s.rec.Index > p.cfg.last {
			continue // read on to the end, to report damage
		}
		b.n++
		if !inPlace {
			start := len(b.arena)
			b.arena = append(b.arena, s.rec.Data...)
			s.rec.Data = b.arena[start:len(b.arena):len(b.arena)]
		}
		if b.n == batchFrames {
			send(b)
			b = <-p.free
			b.reset(label)
		}
	}
	b.last = true
	send(b)
	return <-p.done
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

// work carries batches through every stage: decoding (with the ICRC and
// VCRC checks and the selection), the analysis in turn, formatting, and
// writing in turn.
//
// The decoded frames of the batch at hand are the worker's own, not the
// batch's: they stay in the worker's cache from one stage to the next.
func (p *pipeline) work() {
	var fi frameInfo
	frames := make([]packet.Frame, batchFrames)
	if p.cfg.format == "json" {
		fi.jc = new(jsonCache)
	}
	for b := range p.jobs {
		for i := range b.slots[:b.n] {
			s := &b.slots[i]
			f := &frames[i]
			decodeFrame(s, f, p.cfg.ports)
			checkFrame(s, f)
			s.selected = !p.cfg.summary && p.cfg.selected(s, f)
		}
		p.track.wait(b.seq)
		for i := range b.slots[:b.n] {
			s := &b.slots[i]
			fi.slot, fi.f = s, &frames[i]
			s.wFrom = len(b.warnings)
			b.warnings = p.conv.observe(&fi, b.warnings)
			s.wTo = len(b.warnings)
		}
		if p.cfg.summary {
			// Nothing to write: the batch ends in its analysis turn.
			p.finish(b)
			p.track.done()
			p.free <- b
			continue
		}
		p.track.done()
		p.render(&fi, b, frames)
		p.write.wait(b.seq)
		p.out.Write(b.out)
		p.finish(b)
		p.write.done()
		p.free <- b
	}
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
