package sim

import "math/bits"

// Handler is the target of an event. Handle runs when the event's time comes;
// Engine.Now() is then ev.At. A handler may schedule further events, at the
// current time or later, and may call Stop.
type Handler interface {
	Handle(ev Event)
}

// HandlerFunc adapts a function to Handler. Converting a func value to the
// Handler interface does not allocate, but creating a closure may: build
// closures once, not per event.
type HandlerFunc func(ev Event)

// Handle calls f(ev).
func (f HandlerFunc) Handle(ev Event) { f(ev) }

// Event is what a Handler receives: the time it was scheduled for and the
// two arguments given to Schedule. Kind and A mean whatever the handler
// wants them to mean; the engine only carries them. An event that concerns
// an object reaches it through its Handler (a method of a pointer to it,
// or a HandlerFunc closing over it, built once) or through A, an index or a
// generation number.
type Event struct {
	At   Time
	Kind uint32
	A    uint64

	// frame is the frame a Network event concerns (a Port's transmission
	// or arrival), or nil. A typed pointer rather than an any, which would
	// not allocate either, but would make a queued event 56 bytes instead
	// of 48 and, measured with cachegrind on BenchmarkEventQueue, cost
	// about 5% more instructions per event before any type assertion.
	frame *Frame
}

// The queue is a radix heap (Ahuja, Mehlhorn, Orlin & Tarjan 1990) with
// 4-bit digits, the priority queue for keys that never go below the last one
// removed — which is exactly a simulator's clock. Relative to last, the time
// of the last refill, an event goes to the ready bucket if its time is last,
// and otherwise to bucket (L, d), where L is the highest 4-bit digit in which
// its time differs from last and d is its value of that digit. Every event
// in (L, d) is earlier than every event in (L, d+1) and in any level above
// L, so the first non-empty bucket holds the earliest events. When the ready
// bucket runs dry, that bucket is split by its minimum (kept per bucket, so
// no scan) into the levels below; a level-0 bucket (which holds a single
// time) or a bucket holding a single event simply becomes the ready bucket.
// An event is copied at most 15 times, and in practice a few: about 3 per
// event on BenchmarkLinkFrames.
//
// Events move only toward the ready bucket and are appended in order, so
// events with equal times, which always share a bucket, keep the order they
// were scheduled in: FIFO tie-breaking needs no sequence number.
//
// In front of the radix heap the Engine keeps a small ring (smallCap
// events) sorted by time, FIFO among equal times, which holds the earliest
// pending events: every event in the ring is earlier than every event in
// the heap. An event earlier than all of the heap's goes into the ring,
// placed by comparing times from the latest back; any other goes to the
// heap. When the ring is full, its latest events (all those of its latest
// time, in order) move to the heap first; they are not before last, which
// only moves in a refill, when the ring is empty and the event refilled is
// about to run. Events are taken from the ring; when it is empty, the
// heap's first non-empty bucket moves into it whole, sorted, if it fits
// (it holds the heap's earliest events; last is left where it is), and is
// otherwise refilled. So the handful of events a connection or two keep
// pending (BenchmarkStream keeps 5 to 7) never touch the heap, and with many
// pending an event moves once from a small bucket into the ring instead of
// being split down to a bucket of its own.
//
// A bucket is a FIFO chain of fixed-size chunks of events stored by value,
// taken from and returned to one free list. Memory therefore follows the
// number of pending events (plus at most one partly filled chunk per bucket)
// instead of each bucket's own high-water mark, and once the free list holds
// enough chunks for the peak, nothing is allocated.
const (
	digitBits = 4
	radix     = 1 << digitBits
	levels    = 64 / digitBits // times are below 2^63: the top level is never full
	nbuckets  = levels*radix + 1
	chunkSize = 32 // events per chunk: 1.5 KiB

	smallCap = 16 // events the ring holds (a power of 2)
)

type entry struct {
	at   Time
	h    Handler
	f    *Frame
	a    uint64
	kind uint32
}

type chunk struct {
	next *chunk
	n    int // events written
	ev   [chunkSize]entry
}

type bucket struct {
	head, tail *chunk
	r          int  // next event to read in head
	min        Time // earliest time in the bucket, when non-empty
}

// Engine is a discrete-event simulator: a clock and a queue of pending
// events, processed in order of time and, among events for the same time,
// in the order they were scheduled (FIFO). Given the same sequence of
// Schedule calls it executes the same events in the same order, always.
//
// Events are stored by value in chunks that are recycled: once the engine
// has held its peak number of pending events, Schedule and Step allocate
// nothing.
//
// The zero Engine is ready to use, at time 0. An Engine is not safe for
// concurrent use; a simulation runs in one goroutine.
type Engine struct {
	now     Time
	last    Time   // bucket keys are relative to this; last <= every pending time
	ready   bucket // events at time last, in FIFO order
	b       [levels][radix]bucket
	lmask   uint16         // bit L set: level L has a non-empty bucket
	dmask   [levels]uint16 // bit d of dmask[L] set: bucket (L, d) is non-empty
	free    *chunk
	chunks  int // chunks allocated
	n       int // pending events
	events  uint64
	stopped bool

	// The ring: small[sh], small[sh+1], ... (indices mod smallCap), rn
	// events, earliest first, all earlier than every event in the radix
	// heap, which holds the other n-rn.
	rn    uint
	sh    uint
	small [smallCap]entry
}

// NewEngine returns an engine at time 0 that never allocates while at most
// hint events are pending: it takes all the memory for them up front (about
// 48 bytes per event plus 400 KiB). With hint <= 0 it is the zero Engine,
// which allocates as it grows and then reuses what it has.
func NewEngine(hint int) *Engine {
	e := &Engine{}
	if hint > 0 {
		// Every bucket holds full chunks and at most one partial one; the
		// ready bucket may also have consumed events in its head chunk,
		// and refill holds one source chunk while filling its targets.
		for i := 0; i < (hint+chunkSize-1)/chunkSize+nbuckets+2; i++ {
			e.release(&chunk{})
			e.chunks++
		}
	}
	return e
}

// Now returns the current simulated time: the time of the event being (or
// last) processed, or the until of the last Run that ran out of events.
func (e *Engine) Now() Time { return e.now }

// Events returns the number of events processed so far.
func (e *Engine) Events() uint64 { return e.events }

// Pending returns the number of events scheduled and not yet processed.
func (e *Engine) Pending() int { return e.n }

// Next returns the time of the earliest pending event, and false if there is
// none.
func (e *Engine) Next() (Time, bool) {
	if e.rn > 0 {
		return e.small[e.sh%smallCap].at, true
	}
	return e.heapMin()
}

// heapMin returns the time of the radix heap's earliest event, and false if
// the heap is empty.
func (e *Engine) heapMin() (Time, bool) {
	if e.ready.head != nil {
		return e.last, true
	}
	if e.lmask == 0 {
		return 0, false
	}
	l := bits.TrailingZeros16(e.lmask)
	return e.b[l][bits.TrailingZeros16(e.dmask[l])].min, true
}

// Schedule arranges for h.Handle(Event{at, kind, a}) to run at time at.
// Events for the same time run in the order they were scheduled. Schedule
// panics if at is before Now() or h is nil. It allocates only when more
// events are pending than ever before.
func (e *Engine) Schedule(at Time, h Handler, kind uint32, a uint64) {
	e.schedule(at, h, kind, a, nil)
}

// schedule is Schedule for an event that carries a Network frame.
func (e *Engine) schedule(at Time, h Handler, kind uint32, a uint64, f *Frame) {
	if at < e.now {
		panic("sim: Schedule: time " + at.String() + " is before now " + e.now.String())
	}
	if h == nil {
		panic("sim: Schedule: nil handler")
	}
	e.n++
	x := entry{at: at, h: h, f: f, a: a, kind: kind}
	if m, ok := e.heapMin(); !ok || at < m {
		if e.rn == smallCap {
			e.evictLatest()
			m, ok = e.heapMin()
		}
		if !ok || at < m {
			e.insertSmall(x)
			return
		}
	}
	e.push(x)
}

// push appends x to the radix heap's bucket for its time (x.at >= e.last).
func (e *Engine) push(x entry) {
	t := e.tail(x.at)
	t.ev[t.n] = x
	t.n++
}

// insertSmall puts x into the ring after every event not later than it.
func (e *Engine) insertSmall(x entry) {
	i, sh := e.rn, e.sh
	for i > 0 {
		prev := &e.small[(sh+i-1)%smallCap]
		if prev.at <= x.at {
			break
		}
		e.small[(sh+i)%smallCap] = *prev
		i--
	}
	e.small[(sh+i)%smallCap] = x
	e.rn++
}

// evictLatest moves the ring's latest events, those of its latest time, to
// the radix heap, in order: they are earlier than every event there, so the
// ring's other events stay earlier than all of the heap's.
func (e *Engine) evictLatest() {
	sh := e.sh
	latest := e.small[(sh+e.rn-1)%smallCap].at
	g := e.rn - 1
	for g > 0 && e.small[(sh+g-1)%smallCap].at == latest {
		g--
	}
	for i := g; i < e.rn; i++ {
		x := &e.small[(sh+i)%smallCap]
		e.push(*x)
		x.h, x.f = nil, nil
	}
	e.rn = g
}

// fill moves the radix heap's earliest events into the empty ring: the
// ready bucket, or else the first non-empty bucket, whole and sorted, if it
// fits; a bucket that does not fit is refilled and the heap looked at
// again. A ready bucket that does not fit (more than smallCap events of one
// time) is left to run from where it is.
func (e *Engine) fill() {
	for {
		b := &e.ready
		if b.head == nil {
			l := bits.TrailingZeros16(e.lmask)
			d := bits.TrailingZeros16(e.dmask[l])
			b = &e.b[l][d]
			if b.len() > smallCap {
				e.refill()
				continue
			}
			e.dmask[l] &^= 1 << d
			if e.dmask[l] == 0 {
				e.lmask &^= 1 << l
			}
		} else if b.len() > smallCap {
			return
		}
		for c := b.head; c != nil; {
			for i := b.r; i < c.n; i++ {
				e.insertSmall(c.ev[i])
			}
			next := c.next
			e.release(c)
			c = next
			b.r = 0
		}
		*b = bucket{}
		return
	}
}

// len returns the number of events in b.
func (b *bucket) len() uint {
	if b.head == nil {
		return 0
	}
	k := uint(b.head.n - b.r)
	for c := b.head.next; c != nil; c = c.next {
		k += uint(c.n)
	}
	return k
}

// tail returns the chunk, with room, at the end of the bucket for time at
// (at >= e.last), marking the bucket non-empty and updating its minimum.
func (e *Engine) tail(at Time) *chunk {
	var b *bucket
	if diff := uint64(at ^ e.last); diff == 0 {
		b = &e.ready
	} else {
		l := uint(bits.Len64(diff)-1) / digitBits % levels
		d := uint(uint64(at)>>(l*digitBits)) % radix
		b = &e.b[l][d]
		if e.dmask[l]&(1<<d) == 0 {
			e.dmask[l] |= 1 << d
			e.lmask |= 1 << l
			b.min = at
		} else if at < b.min {
			b.min = at
		}
	}
	if t := b.tail; t != nil && t.n < chunkSize {
		return t
	}
	return e.grow(b)
}

// After is Schedule(Now()+d, h, kind, a).
func (e *Engine) After(d Time, h Handler, kind uint32, a uint64) {
	e.schedule(e.now+d, h, kind, a, nil)
}

// grow appends an empty chunk to b and returns it.
func (e *Engine) grow(b *bucket) *chunk {
	c := e.free
	if c != nil {
		e.free = c.next
		c.next = nil
	} else {
		c = &chunk{}
		e.chunks++
	}
	if b.tail == nil {
		b.head = c
	} else {
		b.tail.next = c
	}
	b.tail = c
	return c
}

// release returns a chunk to the free list, dropping its references.
func (e *Engine) release(c *chunk) {
	for i := range c.ev[:c.n] {
		// Cheaper than clear for the one or two events a chunk often
		// holds: only the pointers matter to the garbage collector.
		c.ev[i].h, c.ev[i].f = nil, nil
	}
	c.n = 0
	c.next = e.free
	e.free = c
}

// refill moves the earliest pending events into the empty ready bucket.
// There must be a pending event outside it.
func (e *Engine) refill() {
	l := bits.TrailingZeros16(e.lmask)
	d := bits.TrailingZeros16(e.dmask[l])
	src := &e.b[l][d]
	e.last = src.min
	e.dmask[l] &^= 1 << d
	if e.dmask[l] == 0 {
		e.lmask &^= 1 << l
	}
	if l == 0 || (src.head == src.tail && src.head.n == 1) {
		// One time only (a level-0 bucket holds a single time), or a
		// single event: the bucket becomes the ready bucket as it is.
		e.ready = *src
		*src = bucket{}
		return
	}
	c := src.head
	*src = bucket{}
	last := e.last
	for c != nil {
		for i := range c.ev[:c.n] {
			// e.tail(x.at), by hand: this loop is the engine's hot spot.
			x := &c.ev[i]
			at := x.at
			b := &e.ready
			if diff := uint64(at ^ last); diff != 0 {
				l := uint(bits.Len64(diff)-1) / digitBits % levels
				d := uint(uint64(at)>>(l*digitBits)) % radix
				b = &e.b[l][d]
				if e.dmask[l]&(1<<d) == 0 {
					e.dmask[l] |= 1 << d
					e.lmask |= 1 << l
					b.min = at
				} else if at < b.min {
					b.min = at
				}
			}
			t := b.tail
			if t == nil || t.n == chunkSize {
				t = e.grow(b)
			}
			t.ev[t.n] = *x
			t.n++
		}
		next := c.next
		e.release(c)
		c = next
	}
}

// Step processes the earliest pending event and reports whether there was
// one. It ignores Stop.
func (e *Engine) Step() bool {
	if e.rn == 0 {
		if e.n == 0 {
			return false
		}
		e.fill()
		if e.rn == 0 {
			e.run()
			return true
		}
	}
	e.runSmall()
	return true
}

// StepUntil processes the earliest pending event if its time is at most
// until, and reports whether it did: Next and Step in one call, for loops
// that drive the engine themselves. It ignores Stop.
func (e *Engine) StepUntil(until Time) bool {
	if e.rn == 0 {
		// The heap is refilled only if the event runs: a refill moves last
		// to its time, and a later Schedule may still come before it.
		if m, ok := e.heapMin(); !ok || m > until {
			return false
		}
		e.fill()
		if e.rn == 0 {
			e.run()
			return true
		}
	} else if e.small[e.sh%smallCap].at > until {
		return false
	}
	e.runSmall()
	return true
}

// popReady takes the first event out of the non-empty ready bucket,
// dropping the bucket's references to it.
func (e *Engine) popReady() entry {
	b := &e.ready
	c := b.head
	x := c.ev[b.r]
	c.ev[b.r].h, c.ev[b.r].f = nil, nil
	b.r++
	if b.r == c.n {
		// Head chunk consumed (a chunk other than the tail is full): if it
		// was the tail the bucket is now empty, and an event scheduled for
		// its time starts a fresh chunk.
		b.head = c.next
		if b.head == nil {
			b.tail = nil
		}
		b.r = 0
		c.n = 0 // already cleared entry by entry
		c.next = e.free
		e.free = c
	}
	return x
}

// run processes the first event of the non-empty ready bucket.
func (e *Engine) run() {
	x := e.popReady()
	e.n--
	e.now = x.at
	e.events++
	x.h.Handle(Event{At: x.at, Kind: x.kind, A: x.a, frame: x.f})
}

// runSmall processes the first event of the ring.
func (e *Engine) runSmall() {
	x := &e.small[e.sh%smallCap]
	ev := Event{At: x.at, Kind: x.kind, A: x.a, frame: x.f}
	h := x.h
	x.h, x.f = nil, nil // drop references to the processed event
	e.sh = (e.sh + 1) % smallCap
	e.rn--
	e.n--
	e.now = ev.At
	e.events++
	h.Handle(ev)
}

// Run processes events in order until the next one is later than until, no
// event is left, or a handler calls Stop. Events at exactly until are
// processed. Unless stopped, Run then advances the clock to until (if until is
// MaxTime the clock stays at the last event's time), so a following Schedule
// relative to Now() starts from until.
func (e *Engine) Run(until Time) {
	e.stopped = false
	for !e.stopped {
		t, ok := e.Next()
		if !ok || t > until {
			break
		}
		e.Step()
	}
	if !e.stopped && until != MaxTime && e.now < until {
		e.now = until
	}
}

// Stop makes the current Run return after the event being processed. Pending
// events stay queued; a later Run resumes with them.
func (e *Engine) Stop() { e.stopped = true }

// Stopped reports whether Stop was called during the last Run.
func (e *Engine) Stopped() bool { return e.stopped }
