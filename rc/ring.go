package rc

// ring is a FIFO that reuses its storage: once it has grown to the largest
// depth a QP reaches, pushing and popping allocate nothing. Its first
// storage is a small array inside the QP (see QP.sqInline and friends), so
// that a QP whose queues stay shallow keeps them in the cache lines it
// touches anyway; only a deeper queue moves to a heap slice. An emptied
// ring starts again at slot 0, so a queue that is mostly empty or one deep
// uses one slot.
type ring[T any] struct {
	buf  []T // len(buf) is a power of two (or 0)
	head uint32
	n    uint32
}

func (r *ring[T]) len() int { return int(r.n) }

// at returns a pointer to the i-th element from the head.
func (r *ring[T]) at(i int) *T { return &r.buf[(r.head+uint32(i))&uint32(len(r.buf)-1)] }

// pushSlot appends an element and returns a pointer to it. The element is
// zero: popped slots are cleared.
func (r *ring[T]) pushSlot() *T {
	if int(r.n) == len(r.buf) {
		r.grow()
	}
	p := &r.buf[(r.head+r.n)&uint32(len(r.buf)-1)]
	r.n++
	return p
}

func (r *ring[T]) push(v T) { *r.pushSlot() = v }

func (r *ring[T]) pop() T {
	var zero T
	p := &r.buf[r.head]
	v := *p
	*p = zero // drop references (buffers, MRs); pushSlot relies on it
	r.n--
	r.head = (r.head + 1) & uint32(len(r.buf)-1)
	if r.n == 0 {
		r.head = 0
	}
	return v
}

// drop removes the head element without returning it.
func (r *ring[T]) drop() {
	var zero T
	r.buf[r.head] = zero
	r.n--
	r.head = (r.head + 1) & uint32(len(r.buf)-1)
	if r.n == 0 {
		r.head = 0
	}
}

func (r *ring[T]) tail() *T { return r.at(int(r.n) - 1) }

// truncate keeps the first n elements (n <= len), clearing the others.
func (r *ring[T]) truncate(n int) {
	var zero T
	for int(r.n) > n {
		r.n--
		r.buf[(r.head+r.n)&uint32(len(r.buf)-1)] = zero
	}
	if r.n == 0 {
		r.head = 0
	}
}

// initRing is the capacity of the rings' inline storage: small, so that a
// QP touches few cache lines when thousands share a cache.
const initRing = 4

// use gives an empty ring the storage buf (len a power of two).
func (r *ring[T]) use(buf []T) { r.buf, r.head, r.n = buf, 0, 0 }

func (r *ring[T]) grow() {
	n := 2 * len(r.buf)
	if n == 0 {
		n = initRing
	}
	b := make([]T, n)
	var zero T
	for i := 0; i < int(r.n); i++ {
		p := r.at(i)
		b[i], *p = *p, zero // the old storage keeps no references
	}
	r.buf, r.head = b, 0
}

func (r *ring[T]) clear() {
	for r.n > 0 {
		r.drop()
	}
}
