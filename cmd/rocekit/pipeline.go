package main

import (
	"bufio"
	"io"

	"github.com/rocekit/rocekit/pcap"
)

// The decode command runs as a pipeline of four goroutines joined by
// channels of batches, so the two cores share the work while frames stay in
// order:
//
//	read -> check (decode, ICRC, VCRC) -> track (per-QP analysis, warnings)
//	     -> format (selection, text or JSON, write)
//
// Each stage is one goroutine, so batches pass every stage in file order.
// Records of a memory-mapped file are used in place; records of a stream
// (gzip, standard input) are copied into the batch's arena, because the
// reader reuses its buffer. Each stage that needs the decoded headers
// decodes the frame again: it costs tens of nanoseconds and keeps the views
// private to one goroutine.

const batchFrames = 256

type batchFrame struct {
	rec      pcap.Record
	icrc     crcResult
	vcrc     crcResult
	wFrom    int // this frame's warnings are batch.warnings[wFrom:wTo]
	wTo      int
	selected bool
}

type batch struct {
	file     string
	frames   []batchFrame
	arena    []byte
	warnings []string
	out      []byte
	err      error // the reader's error after the last frame of the batch
}

func (b *batch) reset(file string) {
	b.file = file
	b.frames = b.frames[:0]
	b.arena = b.arena[:0]
	b.warnings = b.warnings[:0]
	b.out = b.out[:0]
	b.err = nil
}

// pipeline holds what persists across files: the tracker and the writer.
type pipeline struct {
	cfg  *decodeConfig
	out  *bufio.Writer
	conv convTracker
	free chan *batch
}

func newPipeline(cfg *decodeConfig, out *bufio.Writer) *pipeline {
	p := &pipeline{cfg: cfg, out: out, conv: newConvTracker(cfg.pmtu), free: make(chan *batch, 8)}
	for i := 0; i < cap(p.free); i++ {
		p.free <- &batch{frames: make([]batchFrame, 0, batchFrames)}
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
	label := ""
	if many {
		label = name
	}
	checked := make(chan *batch, 2)
	tracked := make(chan *batch, 2)
	done := make(chan error)
	go p.check(checked, tracked)
	go p.track(tracked, done)
	inPlace := r.Mapped()
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
		bf := batchFrame{rec: *rec}
		if !inPlace {
			start := len(b.arena)
			b.arena = append(b.arena, rec.Data...)
			bf.rec.Data = b.arena[start:len(b.arena):len(b.arena)]
		}
		b.frames = append(b.frames, bf)
		if len(b.frames) == batchFrames {
			if !inPlace {
				fixArena(b)
			}
			checked <- b
			b = <-p.free
			b.reset(label)
		}
	}
	if !inPlace {
		fixArena(b)
	}
	checked <- b
	close(checked)
	return <-done
}

// fixArena re-points each copied record at the arena's final backing array
// (appending may have moved it).
func fixArena(b *batch) {
	off := 0
	for i := range b.frames {
		n := len(b.frames[i].rec.Data)
		b.frames[i].rec.Data = b.arena[off : off+n : off+n]
		off += n
	}
}

// check decodes every frame and verifies its ICRC and VCRC.
func (p *pipeline) check(in <-chan *batch, out chan<- *batch) {
	var fi frameInfo
	fi.f.Ports = p.cfg.ports
	for b := range in {
		for i := range b.frames {
			bf := &b.frames[i]
			fi.rec = &bf.rec
			decodeFrame(&fi, p.cfg.ports)
			checkFrame(&fi)
			bf.icrc, bf.vcrc = fi.icrc, fi.vcrc
		}
		out <- b
	}
	close(out)
}

// track runs the per-QP analysis in frame order, then formats and writes
// the selected frames.
func (p *pipeline) track(in <-chan *batch, done chan<- error) {
	var fi frameInfo
	fi.f.Ports = p.cfg.ports
	formatted := make(chan *batch, 2)
	wrote := make(chan error)
	go p.format(formatted, wrote)
	for b := range in {
		for i := range b.frames {
			bf := &b.frames[i]
			fi.rec, fi.file = &bf.rec, b.file
			decodeFrame(&fi, p.cfg.ports)
			fi.icrc, fi.vcrc = bf.icrc, bf.vcrc
			bf.wFrom = len(b.warnings)
			b.warnings = p.conv.observe(&fi, b.warnings)
			bf.wTo = len(b.warnings)
			bf.selected = !p.cfg.summary && p.cfg.selected(&fi)
		}
		formatted <- b
	}
	close(formatted)
	done <- <-wrote
}

// format writes the selected frames of each batch in order and recycles the
// batch. It reports the reader's error, if a batch carried one.
func (p *pipeline) format(in <-chan *batch, wrote chan<- error) {
	var fi frameInfo
	fi.f.Ports = p.cfg.ports
	var err error
	for b := range in {
		out := b.out[:0]
		for i := range b.frames {
			bf := &b.frames[i]
			if !bf.selected {
				continue
			}
			fi.rec, fi.file = &bf.rec, b.file
			decodeFrame(&fi, p.cfg.ports)
			fi.icrc, fi.vcrc = bf.icrc, bf.vcrc
			fi.warnings = b.warnings[bf.wFrom:bf.wTo]
			out = p.cfg.render(out, &fi)
		}
		p.out.Write(out)
		b.out = out
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
