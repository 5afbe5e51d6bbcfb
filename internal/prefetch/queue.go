package prefetch

import "unsafe"

// Queue spreads prefetches out in time. Each line asked for holds one of
// the core's few fill buffers until it arrives from memory (one to two
// dozen on recent x86 cores), and a prefetch that finds none free waits:
// asking for 64 lines at once stalls the core for several memory latencies.
// A Queue takes ranges of lines (Add) and issues them a few at a time
// (Drain), in the order added, from the points of a program where it has
// other work to overlap them with.
//
// A range's pointer stays inside the memory it was given for, so a queued
// range keeps its object alive like any pointer.
type Queue struct {
	r    [queueLen]span
	head int // the oldest range
	n    int // ranges queued
}

type span struct {
	p     unsafe.Pointer
	lines int
}

// queueLen is how many ranges a Queue holds; adding one more issues the
// oldest at once. The simulator's 10,000-QP incast ran at the same speed
// with 16 or 32 and slower with 8 (the Queue overflowed: whole ranges
// again) or 64 (lines asked for too late).
const queueLen = 32

// Add queues the n lines starting at the line that holds p. When the Queue
// is full its oldest range is issued whole first. A nil p or n < 1 adds
// nothing.
func (q *Queue) Add(p unsafe.Pointer, n int) { q.add(p, n, Lines) }

// Drain issues up to k of the queued lines, oldest first.
func (q *Queue) Drain(k int) { q.drain(k, Lines) }

// Pending reports whether lines are queued.
func (q *Queue) Pending() bool { return q.n > 0 }

func (q *Queue) add(p unsafe.Pointer, n int, issue func(unsafe.Pointer, int)) {
	if p == nil || n < 1 {
		return
	}
	if q.n == queueLen {
		s := &q.r[q.head]
		issue(s.p, s.lines)
		q.pop()
	}
	q.r[(q.head+q.n)%queueLen] = span{p, n}
	q.n++
}

func (q *Queue) drain(k int, issue func(unsafe.Pointer, int)) {
	for k > 0 && q.n > 0 {
		s := &q.r[q.head]
		m := min(k, s.lines)
		issue(s.p, m)
		k -= m
		if m == s.lines {
			q.pop()
			continue
		}
		// The range covers its object's bytes from s.p on, at least
		// 64*(lines-1)+1 of them: s.p stays inside the object.
		s.p, s.lines = unsafe.Add(s.p, 64*m), s.lines-m
	}
}

// pop drops the oldest range.
func (q *Queue) pop() {
	q.r[q.head] = span{}
	q.head = (q.head + 1) % queueLen
	q.n--
}
