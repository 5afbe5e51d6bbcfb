// Package ring is the FIFO queue of the simulator's and the checker's hot
// paths: a ring buffer that reuses its storage, so that once it has grown to
// the largest depth it reaches, pushing and popping allocate nothing.
package ring

// Ring is a FIFO of Ts in a power-of-two array. The zero Ring is empty and
// first allocates room for FirstCap elements; Init gives it other first
// storage instead (rc keeps the first few elements of its queues inside the
// QP, in lines a packet touches anyway). A full ring doubles its storage.
// Popped and dropped slots are cleared, so the ring keeps no references to
// what left it, and an emptied ring starts again at slot 0, so a queue that
// is mostly empty or one deep uses one slot.
//
// The head and the length are uint32s, which keeps a Ring 32 bytes on 64-bit
// platforms: the layout of rc.QP and of roce's connections (their layout
// tests) counts on it. A ring never holds 2^32 elements: that many would
// not fit in memory.
type Ring[T any] struct {
	buf  []T // len(buf) is 0 or a power of two
	head uint32
	n    uint32
}

// FirstCap is the number of elements the zero Ring first allocates room for.
const FirstCap = 8

// Init gives an empty ring the storage buf, whose length must be a power of
// two.
func (r *Ring[T]) Init(buf []T) { r.buf, r.head, r.n = buf, 0, 0 }

// Len returns the number of elements in the ring.
func (r *Ring[T]) Len() int { return int(r.n) }

// Cap returns the number of elements the ring holds before it grows.
func (r *Ring[T]) Cap() int { return len(r.buf) }

// At returns a pointer to the i-th element from the front, 0 <= i < Len().
func (r *Ring[T]) At(i int) *T { return &r.buf[(r.head+uint32(i))&uint32(len(r.buf)-1)] }

// Front returns a pointer to the first element; the ring must not be empty.
func (r *Ring[T]) Front() *T { return &r.buf[r.head] }

// Back returns a pointer to the last element; the ring must not be empty.
func (r *Ring[T]) Back() *T { return r.At(int(r.n) - 1) }

// PushSlot appends a zero element and returns a pointer to it, valid until
// the next push (which may move the storage).
func (r *Ring[T]) PushSlot() *T {
	if int(r.n) == len(r.buf) {
		r.grow()
	}
	p := &r.buf[(r.head+r.n)&uint32(len(r.buf)-1)]
	r.n++
	return p
}

// Push appends v.
func (r *Ring[T]) Push(v T) { *r.PushSlot() = v }

// Pop removes the first element and returns it; the ring must not be empty.
func (r *Ring[T]) Pop() T {
	p := &r.buf[r.head]
	v := *p
	var zero T
	*p = zero // drop references; PushSlot relies on it
	r.n--
	r.head = (r.head + 1) & uint32(len(r.buf)-1)
	if r.n == 0 {
		r.head = 0
	}
	return v
}

// Drop removes the first element without returning it; the ring must not
// be empty.
func (r *Ring[T]) Drop() {
	var zero T
	r.buf[r.head] = zero
	r.n--
	r.head = (r.head + 1) & uint32(len(r.buf)-1)
	if r.n == 0 {
		r.head = 0
	}
}

// Truncate keeps the first n elements (n <= Len()), clearing the others.
func (r *Ring[T]) Truncate(n int) {
	var zero T
	for int(r.n) > n {
		r.n--
		r.buf[(r.head+r.n)&uint32(len(r.buf)-1)] = zero
	}
	if r.n == 0 {
		r.head = 0
	}
}

// Reset empties the ring, clearing its elements; it keeps its storage.
func (r *Ring[T]) Reset() { r.Truncate(0) }

func (r *Ring[T]) grow() {
	n := 2 * len(r.buf)
	if n == 0 {
		n = FirstCap
	}
	b := make([]T, n)
	var zero T
	for i := 0; i < int(r.n); i++ {
		p := r.At(i)
		b[i], *p = *p, zero // the old storage keeps no references
	}
	r.buf, r.head = b, 0
}
