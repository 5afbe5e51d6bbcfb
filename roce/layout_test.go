package roce

import (
	"strconv"
	"testing"
	"unsafe"
)

// TestConnLayout pins the cache-line layout of a conn (see conn): with
// thousands of connections every line a packet touches is a miss.
func TestConnLayout(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the layout is laid out for 64-bit platforms")
	}
	var c conn
	const line = 64
	for _, x := range []struct {
		name      string
		got, want uintptr
	}{
		{"qpEnd size", unsafe.Sizeof(c.req), line},
		{"conn.rsp", unsafe.Offsetof(c.rsp), line},
		{"conn.mr", unsafe.Offsetof(c.mr), 2 * line},
		{"conn.mem end", unsafe.Offsetof(c.mem) + unsafe.Sizeof(c.mem), 3 * line},
		{"conn.postInl", unsafe.Offsetof(c.postInl), 3 * line},
		{"conn.posted", unsafe.Offsetof(c.posted), 4 * line},
		{"generator fixed op and size in the counters' line",
			(unsafe.Offsetof(c.gen) + unsafe.Offsetof(c.gen.list)) / line, 4},
		{"conn size in whole lines", unsafe.Sizeof(c) % line, 0},
	} {
		if x.got != x.want {
			t.Errorf("%s: %d, want %d", x.name, x.got, x.want)
		}
	}
	for _, n := range []int{1, 2, 3, 100, 10_000} {
		a := newConns(n)
		if len(a) != n {
			t.Fatalf("newConns(%d): %d conns", n, len(a))
		}
		if off := uintptr(unsafe.Pointer(&a[0])) % line; off != 0 {
			t.Errorf("newConns(%d) at offset %d in its cache line", n, off)
		}
	}
}
