package prefetch

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// A Queue issues every line it was given exactly once, oldest range first
// and in order within a range, whatever the mix of adds and drains; no
// drain issues more than it was allowed; a full Queue issues its oldest
// range whole to make room.
func TestQueueIssuesEveryLineInOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		buf := make([]byte, 64*64)
		base := uintptr(unsafe.Pointer(&buf[0]))
		var q Queue
		var want, got []uintptr // line addresses
		record := func(p unsafe.Pointer, n int) {
			for i := range n {
				got = append(got, uintptr(p)+uintptr(64*i))
			}
		}
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for range steps {
			if rapid.Bool().Draw(t, "add") {
				first := rapid.IntRange(0, 63).Draw(t, "first")
				n := rapid.IntRange(-1, 64-first).Draw(t, "n")
				full := q.n == queueLen
				before := len(got)
				q.add(unsafe.Pointer(&buf[first*64]), n, record)
				if n >= 1 {
					for i := range n {
						want = append(want, base+uintptr(64*(first+i)))
					}
				}
				if !full || n < 1 {
					require.Equal(t, before, len(got), "an add to a Queue with room issued lines")
				}
			} else {
				k := rapid.IntRange(0, 20).Draw(t, "k")
				before := len(got)
				q.drain(k, record)
				require.LessOrEqual(t, len(got)-before, k, "drain issued more than k lines")
			}
		}
		for q.Pending() {
			q.drain(1, record)
		}
		require.Equal(t, want, got)
	})
}

func TestQueueNilAndEmpty(t *testing.T) {
	var q Queue
	q.Add(nil, 5)
	b := make([]byte, 64)
	q.Add(unsafe.Pointer(&b[0]), 0)
	require.False(t, q.Pending())
	q.Drain(10) // nothing queued: nothing happens
	q.Add(unsafe.Pointer(&b[0]), 1)
	require.True(t, q.Pending())
	q.Drain(10)
	require.False(t, q.Pending())
}
