package rc

import (
	"strconv"
	"testing"
	"unsafe"
)

// TestLayout pins the cache-line layout the QP relies on (see QP): with
// thousands of QPs every line a packet touches is a miss, so the hot fields
// must stay where they share lines.
func TestLayout(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("the layout is laid out for 64-bit platforms")
	}
	var q QP
	const line = 64
	for _, c := range []struct {
		name      string
		off, want uintptr
	}{
		{"QP.memory (end of the common line)", unsafe.Offsetof(q.memory), line - 8},
		{"QP.req", unsafe.Offsetof(q.req), line},
		{"requester.pktsSent in line 0", unsafe.Offsetof(q.pktsSent) / line, 0},
		{"requester.rnrRetry (end of its first line)", unsafe.Offsetof(q.req.rnrRetry), line - 1},
		{"QP.rsp", unsafe.Offsetof(q.rsp), 3 * line},
		{"responder.wdata", unsafe.Offsetof(q.rsp.wdata), line},
		{"responder.jobsInline[0] ACK fields in the second line",
			(unsafe.Offsetof(q.rsp.jobsInline) + unsafe.Offsetof(q.rsp.jobsInline[0].last)) / line, 1},
	} {
		if c.off != c.want {
			t.Errorf("%s: offset %d, want %d", c.name, c.off, c.want)
		}
	}
	// New places QPs on line boundaries (qpAlloc), so the lines are the
	// ones above.
	for range 20 {
		p, err := New(DefaultConfig())
		if err != nil {
			t.Fatal(err)
		}
		if a := uintptr(unsafe.Pointer(p)) % line; a != 0 {
			t.Fatalf("QP at offset %d in its cache line", a)
		}
	}
}

// A slab's QPs start on cache lines too, work like New's, and a full slab
// falls back to New.
func TestSlab(t *testing.T) {
	s := NewSlab(3)
	seen := map[*QP]bool{}
	for i := range 2 * len(s.qs) {
		cfg := DefaultConfig()
		cfg.QPN = uint32(0x100 + i)
		q, err := s.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if a := uintptr(unsafe.Pointer(q)) % 64; a != 0 {
			t.Fatalf("QP %d at offset %d in its cache line", i, a)
		}
		if q.Config().QPN != cfg.QPN || q.State() != StateRTS || q.Config().PKey != 0xFFFF {
			t.Fatalf("QP %d: config %+v, state %v", i, q.Config(), q.State())
		}
		if seen[q] {
			t.Fatalf("QP %d handed out twice", i)
		}
		seen[q] = true
	}
	bad := DefaultConfig()
	bad.MTU = 100
	if _, err := NewSlab(1).New(bad); err == nil {
		t.Fatal("a bad config was accepted")
	}
}
