package gen

import (
	"sync"

	"github.com/rocekit/rocekit/rc"
)

// asyncSink hands frames to another sink on its own goroutine, in batches,
// so that formatting and writing the files overlaps with the model. The
// frames reach the inner sink in the order given, exactly as they would
// synchronously.
type asyncSink struct {
	inner Sink
	cur   *frameBatch
	full  chan *frameBatch
	free  chan *frameBatch
	done  chan struct{}

	mu  sync.Mutex
	err error
}

type frameBatch struct {
	frames []Frame
	offs   []int // data offset of each frame; its completions follow in comps
	data   []byte
	comps  []rc.Completion
}

const (
	batchFrames = 2048
	batchBytes  = 1 << 20
)

func newAsyncSink(inner Sink) *asyncSink {
	a := &asyncSink{inner: inner, full: make(chan *frameBatch, 4), free: make(chan *frameBatch, 4), done: make(chan struct{})}
	for range 4 {
		a.free <- &frameBatch{}
	}
	a.cur = <-a.free
	go a.consume()
	return a
}

func (a *asyncSink) failed() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// Frame copies f (its data and completions) into the current batch.
func (a *asyncSink) Frame(f *Frame) error {
	b := a.cur
	b.frames = append(b.frames, *f)
	c := &b.frames[len(b.frames)-1]
	if f.stable {
		b.offs = append(b.offs, -1) // a source frame: no copy needed
	} else {
		b.offs = append(b.offs, len(b.data))
		b.data = append(b.data, f.Data...) // c.Data keeps the length; consume repoints it
	}
	if len(f.Completions) > 0 {
		k := len(b.comps)
		b.comps = append(b.comps, f.Completions...)
		c.Completions = b.comps[k:len(b.comps):len(b.comps)]
	}
	if len(b.frames) >= batchFrames || len(b.data) >= batchBytes {
		return a.send()
	}
	return nil
}

func (a *asyncSink) send() error {
	if err := a.failed(); err != nil {
		return err
	}
	a.full <- a.cur
	a.cur = <-a.free
	return nil
}

func (a *asyncSink) consume() {
	defer close(a.done)
	for b := range a.full {
		if a.failed() == nil {
			for i := range b.frames {
				f := &b.frames[i]
				if o := b.offs[i]; o >= 0 {
					f.Data = b.data[o : o+len(f.Data) : o+len(f.Data)]
				}
				if err := a.inner.Frame(f); err != nil {
					a.mu.Lock()
					a.err = err
					a.mu.Unlock()
					break
				}
			}
		}
		// Completions slices point into comps: clear before reuse.
		b.frames, b.offs, b.data, b.comps = b.frames[:0], b.offs[:0], b.data[:0], b.comps[:0]
		a.free <- b
	}
}

// close sends what is left, waits for the consumer and returns the first
// error of the inner sink.
func (a *asyncSink) close() error {
	if len(a.cur.frames) > 0 && a.failed() == nil {
		a.full <- a.cur
		a.cur = nil
	}
	close(a.full)
	<-a.done
	return a.failed()
}
