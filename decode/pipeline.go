package decode

import (
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/internal/nt"
	"github.com/rocekit/rocekit/internal/obs"
	"github.com/rocekit/rocekit/internal/pcapfast"
	"github.com/rocekit/rocekit/internal/prefetch"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// A Decoder runs on a few workers (one per core), each carrying
// one batch of frames at a time through every stage:
//
//	read ahead                      (in parallel: a memory-mapped file's chunk)
//	read                            (one worker at a time, in file order;
//	                                 a mapped file's records only located)
//	decode, ICRC, VCRC, selection   (in parallel)
//	per-QP analysis                 (per tracker shard, in batch order)
//	format                          (in parallel)
//	write                           (in batch order: waits its turn)
//
// Every frame is decoded once, and a batch never changes hands: the worker
// that read it (and brought its bytes into its core's cache) decodes,
// checks, analyses and formats it. A batch of a memory-mapped file is the
// records that start in one readChunk of it: its worker streams the chunk
// from memory before its turn to locate the records (SkimFrom, of
// internal/pcapfast's Methods), so the workers read the file at once and
// the turn finds the record headers in cache; each record is filled in
// (RecordFrom) as it is decoded. Where touching a new mapping costs more
// than copying (CopyIsFaster: virtual machines with shadow page tables),
// the worker copies its chunk into its batch instead, and the records are
// read from the copy. The
// analysis is split into shards by pairs of endpoints (analysis.Shards): a
// batch takes each shard's turn in order, so one worker can analyse shard
// 0 of a batch while another analyses shard 1 of the batch before it.
// Only the walk, each shard's analysis and the writing take turns. A batch
// only ever waits for batches read before it, which are never waiting for
// it: no deadlock. SummaryOnly runs differently (see summarize).
//
// Records of a memory-mapped file are used in place; records of a stream
// (gzip, standard input) are copied into the batch's arena, because the
// reader reuses its buffer.

const batchFrames = 256

// fast is package pcap's Reader machinery for reading a mapped file on
// several workers (internal/pcapfast).
var fast = pcapfast.Get[*pcap.Reader, *pcap.Record]()

// slot is one frame of a batch: its record, the check results and where
// its warnings are. The decoded views are the worker's.
type slot struct {
	Frame
	shard uint8 // the tracker shard that observes the frame
	wFrom int   // this frame's warnings are batch.warnings[wFrom:wTo]
	wTo   int
}

type batch struct {
	seq      uint64
	last     bool   // the last batch of its file
	slots    []slot // slots[:n] are in use
	n        int
	arena    []byte
	warnings []string
	out      []byte
	err      error // the reader's error after the last frame of the batch

	obs []obs.Obs // the frames' observations: obs[i] is slots[i]'s

	// A memory-mapped file's first nskim records are only located in the
	// read turn (SkimFrom): they start at offs[i], have Index first+i, and
	// are read (RecordFrom) in parallel, as they are decoded.
	offs  []int64
	first int
	nskim int
	// copy holds the batch's chunk of the file when the file is read
	// through copies (pipeline.copy).
	copy pcapfast.Copy

	// SummaryOnly: which frames each shard observes, how many shards
	// have yet to observe them, and whether the buffer may be reused.
	idx     [][]int32
	pending atomic.Int32
	free    atomic.Bool
}

func (b *batch) reset() {
	b.n = 0
	b.arena = b.arena[:0]
	b.warnings = b.warnings[:0]
	b.out = b.out[:0]
	b.err = nil
	b.last = false
	b.nskim = 0
	for i := range b.idx {
		b.idx[i] = b.idx[i][:0]
	}
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

// waitDoing is wait, calling meanwhile as long as it is not seq's turn
// and meanwhile reports that it did something.
func (t *turns) waitDoing(seq uint64, meanwhile func() bool) {
	for t.next.Load() != seq && meanwhile() {
	}
	t.wait(seq)
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
	id     int
	b      batch
	frames []packet.Frame // the decoded frames of b

	// SummaryOnly: the worker's batch buffers, the next batch whose frames
	// of shard id it observes, the slot it decodes skimmed frames in, and
	// the observation it makes before storing it in the batch.
	bufs      []*batch
	scratch   slot
	obs       obs.Obs
	trackNext uint64
}

// pipeline holds what persists across files: the tracker, the writer, the
// workers' state and the sequence of batches.
type pipeline struct {
	opts    Options
	conv    convTracker
	workers []*worker
	read    turns   // reading batches from the file
	track   []turns // the analysis, one per tracker shard
	write   turns
	err     error // the reader's error, set in the last turn of the batch that carried it
	done    chan error

	walkState

	// SummaryOnly: the batches decoded and not yet observed by every shard,
	// at seq mod len(pub); end is 1 + the sequence number of the file's
	// last batch once it has been read (0 before).
	pub []published
	end atomic.Uint64

	// The file being read. Batch k of the file (claimed in that order) has
	// sequence number base+k; the fields below claims are used in read
	// turns.
	r        *pcap.Reader
	inPlace  bool
	copy     bool  // inPlace, read through copies (pcapfast.Methods.CopyIsFaster)
	chunk    int64 // inPlace: how much of the file a batch covers
	start    int64 // file offset of the first record, when inPlace
	base     uint64
	claims   atomic.Int64
	readDone bool // r returned its last record or an error
}

// published is a batch decoded with SummaryOnly: seq says which batch b is
// (stored after b).
type published struct {
	seq atomic.Uint64
	b   atomic.Pointer[batch]
}

// summaryBufs is how many batch buffers a worker has with SummaryOnly: it
// can decode ahead while the other shards observe its earlier batches.
const summaryBufs = 4

func newPipeline(o Options) *pipeline {
	nw := o.Workers
	if nw <= 0 {
		nw = min(runtime.GOMAXPROCS(0), 4)
	}
	p := &pipeline{opts: o, conv: newConvTracker(o.PMTU, nw), done: make(chan error, 1)}
	p.read.cond.L = &p.read.mu
	p.track = make([]turns, p.conv.s.Len())
	for i := range p.track {
		p.track[i].cond.L = &p.track[i].mu
	}
	p.write.cond.L = &p.write.mu
	if o.SummaryOnly {
		p.pub = make([]published, nw*summaryBufs)
		for i := range p.pub {
			p.pub[i].seq.Store(^uint64(0))
		}
	}
	for i := 0; i < nw; i++ {
		w := &worker{id: i}
		if o.SummaryOnly {
			w.frames = make([]packet.Frame, 1)
			for range summaryBufs {
				b := &batch{slots: make([]slot, batchFrames), idx: make([][]int32, nw)}
				b.free.Store(true)
				w.bufs = append(w.bufs, b)
			}
		} else {
			w.frames = make([]packet.Frame, batchFrames)
			w.b.slots = make([]slot, batchFrames)
		}
		p.workers = append(p.workers, w)
	}
	return p
}

// file decodes one capture file and returns the error that stopped it (nil
// at a clean end), after every frame before it has been written.
func (p *pipeline) file(name string) error {
	r, err := pcap.Open(name)
	if err != nil {
		return err
	}
	defer r.Close()
	p.r, p.inPlace, p.readDone = r, r.Mapped(), false
	p.copy, p.chunk = fast.CopyIsFaster(r), readChunk
	if p.copy {
		p.chunk = copyChunk
	}
	p.copied = p.copy
	if p.inPlace {
		fast.CallerReadsAhead(r)
		p.start = r.Offset()
	}
	// Batches are numbered on from the previous file's; claims past the
	// end of that file took read turns but no analysis turn.
	if p.opts.SummaryOnly {
		p.base = p.workers[0].trackNext
	} else {
		p.base = p.track[0].next.Load()
	}
	p.read.next.Store(p.base)
	p.claims.Store(0)
	p.end.Store(0)
	var wg sync.WaitGroup
	for _, w := range p.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if p.opts.SummaryOnly {
				p.summarize(w)
				return
			}
			for p.readBatch(w, &w.b) {
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
// worker streams those bytes into its core's cache (pcapfast.Methods.ReadAhead)
// before its turn to walk the records, in parallel with the other workers.
// A file read through copies has batches of copyChunk. internal/pcapfast
// says why these sizes; bench/membw copies the file in the same chunks.
const (
	readChunk = pcapfast.ReadChunk
	copyChunk = pcapfast.CopyChunk
)

// claim is a batch claimed and not yet read: sequence number seq, and
// for a memory-mapped file the chunk [lo, hi) of it.
type claim struct {
	seq    uint64
	lo, hi int64
}

// claim claims the next batch.
func (p *pipeline) claim() claim {
	k := p.claims.Add(1) - 1
	c := claim{seq: p.base + uint64(k)}
	if p.inPlace {
		c.lo = p.start + k*p.chunk
		c.hi = c.lo + p.chunk
	}
	return c
}

// readBatch claims the next batch, brings its chunk in (memory-mapped
// files) and fills b with its records (fill).
func (p *pipeline) readBatch(w *worker, b *batch) bool {
	c := p.claim()
	p.bring(c, b)
	return p.fill(c, b, nil)
}

// copySlack is how far past its chunk a batch's copy reaches: the last
// record that starts in the chunk ends after it, and is read from the
// copy if it ends within copySlack (from the mapping otherwise).
const copySlack = pcapfast.Slack

// bring brings claim c's chunk of a memory-mapped file in: into b's copy
// when the file is read through copies, otherwise into the calling
// core's cache, through the mapping.
func (p *pipeline) bring(c claim, b *batch) {
	if p.copy {
		fast.CopyAt(p.r, &b.copy, c.lo, c.hi+copySlack)
	} else {
		fast.ReadAhead(p.r, c.lo, c.hi)
	}
}

// copyOf returns b's copy when the file is read through copies, else nil.
func (p *pipeline) copyOf(b *batch) *pcapfast.Copy {
	if p.copy {
		return &b.copy
	}
	return nil
}

// fill fills b with the records of batch c, in its turn. A batch of a
// memory-mapped file is the records that start in its readChunk of the
// file; one of a stream is up to batchFrames records, copied out of the
// reader's buffer. It reports false when the file has been read to the
// end (or to an error) by an earlier batch.
func (p *pipeline) fill(c claim, b *batch, meanwhile func() bool) bool {
	if meanwhile != nil {
		p.read.waitDoing(c.seq, meanwhile)
	} else {
		p.read.wait(c.seq)
	}
	defer p.read.done()
	if p.readDone {
		return false
	}
	b.reset()
	r, hi := p.r, c.hi
	if p.inPlace {
		b.offs, b.first = fast.SkimFrom(r, p.copyOf(b), hi, b.offs[:0])
		n := len(b.offs)
		if p.opts.Last > 0 {
			n = max(0, min(n, p.opts.Last-b.first+1))
		}
		for len(b.slots) < n {
			b.slots = append(b.slots, make([]slot, len(b.slots))...)
		}
		b.n, b.nskim = n, n
	}
	for p.inPlace && r.Offset() < hi || !p.inPlace && b.n < batchFrames {
		if b.n == len(b.slots) {
			b.slots = append(b.slots, make([]slot, len(b.slots))...)
		}
		s := &b.slots[b.n]
		if err := r.NextInto(&s.Record); err != nil {
			if err != io.EOF {
				b.err = err
			}
			b.last, p.readDone = true, true
			p.end.Store(c.seq + 1)
			break
		}
		if p.opts.Last > 0 && s.Record.Index > p.opts.Last {
			continue // read on to the end, to report damage
		}
		b.n++
		if !p.inPlace {
			start := len(b.arena)
			b.arena = append(b.arena, s.Record.Data...)
			s.Record.Data = b.arena[start:len(b.arena):len(b.arena)]
		}
	}
	if !p.inPlace {
		fixArena(b)
	}
	b.seq = c.seq
	return true
}

// growObs makes room for an observation of each of b's frames.
func (b *batch) growObs() {
	if len(b.obs) < b.n {
		b.obs = make([]obs.Obs, len(b.slots))
	}
}

// fixArena re-points each copied record at the arena's final backing array
// (appending may have moved it).
func fixArena(b *batch) {
	off := 0
	for i := range b.slots[:b.n] {
		n := len(b.slots[i].Record.Data)
		b.slots[i].Record.Data = b.arena[off : off+n : off+n]
		off += n
	}
}

// decode decodes frame i of b into f, with the ICRC and VCRC checks, and
// sets o, its observation for the tracker, and its shard; s is the frame's
// slot (with SummaryOnly, a skimmed frame's is the worker's scratch slot:
// nothing in it is needed after the frame is observed).
func (p *pipeline) decode(b *batch, i int, s *slot, f *packet.Frame, o *obs.Obs) {
	if i < b.nskim {
		if err := fast.RecordFrom(p.r, p.copyOf(b), b.offs[i], b.first+i, &s.Record); err != nil {
			// The file was overwritten while mapped: the frame is reported
			// with the error, undecoded.
			s.Record = pcap.Record{Index: b.first + i, Offset: b.offs[i]}
			s.ReadErr, s.Err = err, nil
			s.ICRC, s.VCRC = CRC{}, CRC{}
			*f = packet.Frame{Ports: p.opts.Ports}
			observations.Set(o, b.seq<<32|uint64(i), s.Record.Index, s.Record.Time, f, analysis.NotChecked, analysis.NotChecked)
			s.shard = 0
			return
		}
	}
	decodeFrame(&s.Frame, f, p.opts.Ports)
	checkFrame(&s.Frame, f)
	observations.Set(o, b.seq<<32|uint64(i), s.Record.Index, s.Record.Time, f, s.ICRC.check(), s.VCRC.check())
	s.shard = uint8(observations.Of(p.conv.s, o))
}

// process carries w's batch through decoding (with the ICRC and VCRC
// checks), the analysis in turn, formatting (Options.Append), and writing
// in turn.
func (p *pipeline) process(w *worker) {
	b := &w.b
	if len(w.frames) < b.n {
		w.frames = append(w.frames, make([]packet.Frame, b.n-len(w.frames))...)
	}
	frames := w.frames
	b.growObs()
	for i := range b.slots[:b.n] {
		s := &b.slots[i]
		f := &frames[i]
		p.decode(b, i, s, f, &b.obs[i])
	}
	// The analysis: each shard in its turn, the batch's frames of that
	// shard in order. A later batch may take a shard's turn as soon as this
	// one passes it on, while this one goes on to the next shard.
	for sh := range p.track {
		p.track[sh].wait(b.seq)
		for i := range b.slots[:b.n] {
			s := &b.slots[i]
			if int(s.shard) != sh {
				continue
			}
			s.wFrom = len(b.warnings)
			b.warnings = p.conv.observe(sh, &b.obs[i], b.warnings)
			s.wTo = len(b.warnings)
		}
		p.track[sh].done()
	}
	if p.opts.Ordered {
		// Each frame's output depends on the frames before: format in
		// order.
		p.write.wait(b.seq)
		p.render(w.id, b, frames)
	} else {
		p.render(w.id, b, frames)
		p.write.wait(b.seq)
	}
	if p.opts.Out != nil && len(b.out) > 0 {
		p.opts.Out.Write(b.out)
	}
	p.finish(b)
	p.write.done()
}

// With SummaryOnly nothing is written per frame, and each worker observes
// one shard of every batch: worker i decodes the batches it reads, files
// their observations by shard, and observes shard i of every batch in
// order, whichever worker decoded it. So a shard's flow state stays in one
// core's cache; only the observations (two cache lines a frame) cross
// between cores. A batch buffer is reused once every shard has observed
// it. The observations are written with non-temporal stores (internal/nt):
// with plain stores, each line of a reused buffer was first fetched back
// from the core that had read it, which on a VM with distant cores cost
// more than the decoding.

// summarize is one worker's part of a SummaryOnly run of the file (or of a
// Walk, which hands each record to Walk's function instead of decoding it). It
// claims its next batch before decoding the one it has read, and while it
// decodes has the CPU fetch the next one's chunk of a memory-mapped file,
// a little after each frame, spread over the whole batch: the fetch from
// memory overlaps the work instead of preceding it. (Fetching it all in the
// first half of the batch, as before, took 1.04x the time, 1.08x in the
// decoding itself, on a CPU whose cores each keep only a few lines in
// flight: the bursts stalled the decoding.) Once the chunk is fetched, the worker walks it (its read turn)
// as soon as its turn comes, without finishing the batch first, so that
// the other worker, whose next turn follows, rarely waits. A file read
// through copies has its next chunk copied into the next batch buffer
// before the batch is decoded, instead of fetched during it.
func (p *pipeline) summarize(w *worker) {
	b := p.freeBuffer(w)
	c := p.claim()
	p.bring(c, b)
	f := &w.frames[0]
	observeOne := func() bool { return p.observeNext(w) }
	ok := p.fill(c, b, observeOne)
	for ok {
		b.free.Store(false)
		next := p.freeBuffer(w)
		c = p.claim()
		var ahead []byte
		if p.copy {
			p.bring(c, next)
		} else {
			ahead = fast.Ahead(p.r, c.lo, c.hi)
		}
		lines := (len(ahead) + 63) / 64
		step := 0
		if b.n > 0 {
			step = (lines + b.n - 1) / b.n
		}
		b.growObs()
		walked := false
		for i := range b.slots[:b.n] {
			if p.raw != nil {
				p.walk(w, b, i)
			} else {
				s := &b.slots[i]
				if i < b.nskim {
					s = &w.scratch
				}
				p.decode(b, i, s, f, &w.obs)
				nt.Store(&b.obs[i], &w.obs)
				b.idx[s.shard] = append(b.idx[s.shard], int32(i))
			}
			if n := min(step, lines); n > 0 {
				prefetch.LinesL2(unsafe.Pointer(&ahead[0]), n)
				ahead, lines = ahead[min(n*64, len(ahead)):], lines-n
			} else if !walked && i%8 == 7 && p.read.next.Load() == c.seq {
				ok, walked = p.fill(c, next, nil), true
			}
		}
		if p.raw != nil {
			// A Walk: nothing to publish.
			p.finish(b)
			b.free.Store(true)
			if !walked {
				ok = p.fill(c, next, nil)
			}
			b = next
			continue
		}
		nt.Fence() // the observations are in memory before the batch is published
		b.pending.Store(int32(len(p.workers)))
		e := &p.pub[b.seq%uint64(len(p.pub))]
		e.b.Store(b)
		e.seq.Store(b.seq)
		p.observeReady(w)
		if !walked {
			ok = p.fill(c, next, observeOne)
		}
		b = next
	}
	// Observe the rest of the file.
	for p.raw == nil && !p.observeReady(w) {
		waitBriefly(func() bool { return p.ready(w) })
	}
}

// walk hands record i of b to Walk's function, on worker w.
func (p *pipeline) walk(w *worker, b *batch, i int) {
	rec := &b.slots[i].Record
	if i < b.nskim {
		rec = &w.scratch.Record
		// RecordFrom fails only if the file was overwritten while mapped:
		// the walk reports it.
		if err := fast.RecordFrom(p.r, p.copyOf(b), b.offs[i], b.first+i, rec); err != nil {
			p.fail(err)
			return
		}
	}
	p.raw(w.id, rec)
}

// freeBuffer returns one of w's batch buffers that every shard has
// observed, observing w's shard meanwhile.
func (p *pipeline) freeBuffer(w *worker) *batch {
	for {
		for _, b := range w.bufs {
			if b.free.Load() {
				return b
			}
		}
		if !p.observeReady(w) {
			waitBriefly(func() bool {
				for _, b := range w.bufs {
					if b.free.Load() {
						return true
					}
				}
				return p.ready(w)
			})
		}
	}
}

// ready reports whether the next batch w observes has been decoded.
func (p *pipeline) ready(w *worker) bool {
	return p.pub[w.trackNext%uint64(len(p.pub))].seq.Load() == w.trackNext
}

// observeReady observes w's shard of the batches decoded so far, in order.
// It reports whether w has observed the file's last batch.
func (p *pipeline) observeReady(w *worker) bool {
	for p.observeNext(w) {
	}
	e := p.end.Load()
	return e != 0 && w.trackNext >= e
}

// observeNext observes w's shard of the next batch, if it has been decoded
// (and is of the file), and reports whether it did.
func (p *pipeline) observeNext(w *worker) bool {
	if e := p.end.Load(); e != 0 && w.trackNext >= e || !p.ready(w) {
		return false
	}
	b := p.pub[w.trackNext%uint64(len(p.pub))].b.Load()
	p.conv.count(w.id, b.obs, b.idx[w.id])
	w.trackNext++
	if b.pending.Add(-1) == 0 {
		p.finish(b)
		b.free.Store(true)
	}
	return true
}

// waitBriefly spins until ok or for spinFor, then sleeps a little.
func waitBriefly(ok func() bool) {
	if !spinUntil(ok) {
		time.Sleep(20 * time.Microsecond)
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

// render has worker w format the frames of b into b.out (Options.Append).
func (p *pipeline) render(w int, b *batch, frames []packet.Frame) {
	if p.opts.Append == nil {
		return
	}
	out := b.out[:0]
	for i := range b.slots[:b.n] {
		s := &b.slots[i]
		s.Packet = &frames[i]
		s.Warnings = b.warnings[s.wFrom:s.wTo]
		out = p.opts.Append(w, out, &s.Frame)
	}
	b.out = out
}
