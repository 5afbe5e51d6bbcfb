package main

import (
	"bufio"
	"io"
	"runtime"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// The decode command runs as a pipeline over batches of frames, so the
// cores share the work while frames stay in order:
//
//	read (in order) -> decode, ICRC, VCRC, selection (any worker)
//	     -> per-QP analysis (in order)
//	     -> format (any worker) -> write (in order)
//
// Every frame is decoded once, by a worker, into its slot in the batch; the
// tracker and the formatter use those views. Decoding and formatting are
// independent per batch, so a pool of workers does them in whatever order
// they come; only the tracker, which needs frames in file order, and the
// writer run one batch after the other. --summary stops after the tracker.
//
// Records of a memory-mapped file are used in place; records of a stream
// (gzip, standard input) are copied into the batch's arena, because the
// reader reuses its buffer.

const (
	batchFrames = 512
	numBatches  = 8
)

// slot is one frame of a batch: its record, the decoded views, the check
// results and where its warnings are.
type slot struct {
	rec      pcap.Record
	f        packet.Frame
	linkErr  error // link layer could not be stripped
	err      error // frame decode error
	icrc     crcResult
	vcrc     crcResult
	wFrom    int // this frame's warnings are batch.warnings[wFrom:wTo]
	wTo      int
	selected bool
}

type batch struct {
	file     string
	slots    []slot // slots[:n] are in use
	n        int
	arena    []byte
	warnings []string
	out      []byte
	err      error         // the reader's error after the last frame of the batch
	decoded  chan struct{} // a worker has decoded the batch
	rendered chan struct{} // a worker has formatted the batch
}

func (b *batch) reset(file string) {
	b.file = file
	b.n = 0
	b.arena = b.arena[:0]
	b.warnings = b.warnings[:0]
	b.out = b.out[:0]
	b.err = nil
}

// job is work for the pool: decode a batch, or format it.
type job struct {
	b      *batch
	format bool
}

// pipeline holds what persists across files: the tracker, the writer, the
// batches and the workers.
type pipeline struct {
	cfg  *decodeConfig
	out  *bufio.Writer
	conv convTracker
	free chan *batch
	jobs chan job
}

func newPipeline(cfg *decodeConfig, out *bufio.Writer) *pipeline {
	p := &pipeline{cfg: cfg, out: out, conv: newConvTracker(cfg.pmtu),
		free: make(chan *batch, numBatches), jobs: make(chan job, 2*numBatches)}
	for i := 0; i < numBatches; i++ {
		p.free <- &batch{
			slots:    make([]slot, batchFrames),
			decoded:  make(chan struct{}, 1),
			rendered: make(chan struct{}, 1),
		}
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
	ordered := make(chan *batch, numBatches)
	done := make(chan error)
	go p.track(ordered, done)
	inPlace := r.Mapped()
	send := func(b *batch) {
		if !inPlace {
			fixArena(b)
		}
		p.jobs <- job{b: b}
		ordered <- b
	}
	b := <-p.free
	b.reset(label)
	for {
		rec, err := r.Next()
		if err != nil {
			if err != io.EOF {
				b.err = err
			}
			break
		}
		if p.cfg.last > 0 && rec.Index > p.cfg.last {
			continue // read on to the end, to report damage
		}
		s := &b.slots[b.n]
		b.n++
		s.rec = *rec
		if !inPlace {
			start := len(b.arena)
			b.arena = append(b.arena, rec.Data...)
			s.rec.Data = b.arena[start:len(b.arena):len(b.arena)]
		}
		if b.n == batchFrames {
			send(b)
			b = <-p.free
			b.reset(label)
		}
	}
	send(b)
	close(ordered)
	return <-done
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

// work runs jobs: decoding (with the ICRC and VCRC checks and the
// selection) or formatting a batch.
func (p *pipeline) work() {
	var fi frameInfo
	if p.cfg.format == "json" {
		fi.jc = new(jsonCache)
	}
	for j := range p.jobs {
		b := j.b
		if j.format {
			p.render(&fi, b)
			b.rendered <- struct{}{}
			continue
		}
		for i := range b.slots[:b.n] {
			s := &b.slots[i]
			decodeFrame(s, p.cfg.ports)
			checkFrame(s)
			s.selected = !p.cfg.summary && p.cfg.selected(s)
		}
		b.decoded <- struct{}{}
	}
}

// render formats the selected frames of b into b.out.
func (p *pipeline) render(fi *frameInfo, b *batch) {
	out := b.out[:0]
	fi.file = b.file
	for i := range b.slots[:b.n] {
		s := &b.slots[i]
		if !s.selected {
			continue
		}
		fi.slot = s
		fi.warnings = b.warnings[s.wFrom:s.wTo]
		out = p.cfg.render(out, fi)
	}
	b.out = out
}

// track runs the per-QP analysis in frame order and hands each batch on to
// be formatted and written (or, for --summary, back to the reader). It
// reports the reader's error, if a batch carried one.
func (p *pipeline) track(in <-chan *batch, done chan<- error) {
	var fi frameInfo
	var written chan error
	var toWrite chan *batch
	if !p.cfg.summary {
		written = make(chan error)
		toWrite = make(chan *batch, numBatches)
		go p.write(toWrite, written)
	}
	var err error
	for b := range in {
		<-b.decoded
		for i := range b.slots[:b.n] {
			s := &b.slots[i]
			fi.slot = s
			s.wFrom = len(b.warnings)
			b.warnings = p.conv.observe(&fi, b.warnings)
			s.wTo = len(b.warnings)
		}
		if p.cfg.summary {
			if b.err != nil {
				err = b.err
			}
			p.free <- b
			continue
		}
		p.jobs <- job{b: b, format: true}
		toWrite <- b
	}
	if !p.cfg.summary {
		close(toWrite)
		err = <-written
	}
	done <- err
}

// write writes each batch's output in order and recycles the batch. It
// reports the reader's error, if a batch carried one.
func (p *pipeline) write(in <-chan *batch, wrote chan<- error) {
	var err error
	for b := range in {
		<-b.rendered
		p.out.Write(b.out)
		if b.err != nil {
			err = b.err
		}
		p.free <- b
	}
	wrote <- err
}

func (p *pipeline) writeSummary() {
	p.out.Write(p.conv.appendSummary(nil, p.cfg.format == "json"))
}
