package rc

// ring is a FIFO that reuses its storage: once it has grown to the largest
// depth a QP reaches, pushing and popping allocate nothing.
type ring[T any] struct {
	buf  []T // len(buf) is a power of two (or 0)
	head int
	n    int
}

func (r *ring[T]) len() int { return r.n }

// at returns a pointer to the i-th element from the head.
func (r *ring[T]) at(i int) *T { return &r.buf[(r.head+i)&(len(r.buf)-1)] }

func (r *ring[T]) push(v T) {
	if r.n == len(r.buf) {
		r.grow()
	}
	r.buf[(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

// pushSlot appends a zero element and returns a pointer to it.
func (r *ring[T]) pushSlot() *T {
	var zero T
	r.push(zero)
	return r.at(r.n - 1)
}

func (r *ring[T]) pop() T {
	var zero T
	p := &r.buf[r.head]
	v := *p
	*p = zero // drop references (buffers, MRs)
	r.head = (r.head + 1) & (len(r.buf) - 1)
	r.n--
	return v
}

func (r *ring[T]) tail() *T { return r.at(r.n - 1) }

// initRing is the capacity a QP's rings start with (allocated in New, so
// that a QP's first work requests and responses allocate nothing): small,
// so that a QP touches few cache lines when thousands share a cache.
const initRing = 4

// reserve gives an empty ring room for n elements (rounded up to a power of
// two).
func (r *ring[T]) reserve(n int) {
	c := 1
	for c < n {
		c *= 2
	}
	if c > len(r.buf) && r.n == 0 {
		r.buf, r.head = make([]T, c), 0
	}
}

func (r *ring[T]) grow() {
	n := 2 * len(r.buf)
	if n == 0 {
		n = initRing
	}
	b := make([]T, n)
	for i := 0; i < r.n; i++ {
		b[i] = *r.at(i)
	}
	r.buf, r.head = b, 0
}

func (r *ring[T]) clear() {
	for r.n > 0 {
		r.pop()
	}
}
