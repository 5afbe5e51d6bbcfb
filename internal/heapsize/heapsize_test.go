package heapsize

import (
	"math"
	"runtime"
	"strconv"
	"testing"
)

// Alloc is what the heap grows by, per object, exactly: allocations with
// and without pointers, at and around size-class edges, the malloc header
// threshold and the small-object limit.
func TestAllocMatchesHeap(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the malloc header threshold is that of 64-bit platforms")
	}
	const k = 256
	bs, ps := make([][]byte, k), make([][]*byte, k)
	for _, n := range []int64{16, 24, 104, 512, 520, 1152, 1160, 4000, 32760, 32768, 40000} {
		for _, pointers := range []bool{false, true} {
			// The least of three tries: the first may see the runtime's
			// own allocations.
			got := int64(1 << 62)
			for range 3 {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				for i := range k {
					if pointers {
						ps[i] = make([]*byte, n/8)
					} else {
						bs[i] = make([]byte, n)
					}
				}
				runtime.ReadMemStats(&after)
				got = min(got, int64(after.HeapAlloc-before.HeapAlloc)/k)
				clear(bs)
				clear(ps)
			}
			if want := Alloc(n, pointers); got != want {
				t.Errorf("%d bytes, pointers %v: the heap grew by %d per object, Alloc says %d", n, pointers, got, want)
			}
		}
	}
	if Alloc(0, true) != 0 || Alloc(-5, false) != 0 {
		t.Error("nothing allocated takes nothing")
	}
	if got := Alloc(math.MaxInt64, false); got < math.MaxInt64-page {
		t.Errorf("Alloc(MaxInt64) = %d: overflowed", got)
	}
}
