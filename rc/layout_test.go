package rc

import (
	"runtime"
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

// SlabFootprint is what QPs from a slab take on the heap: measured over
// many QPs, idle and with deep queues (64 sends and 32 receives posted,
// then all flushed into completions), it is within 5% of the heap's
// growth.
func TestSlabFootprint(t *testing.T) {
	const n = 2000
	buf := make([]byte, 64)
	for _, c := range []struct{ sends, recvs int }{{0, 0}, {64, 32}} {
		cfg := DefaultConfig()
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		s := NewSlab(n)
		for i := range n {
			q, err := s.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			for k := range c.sends {
				if err := q.PostSend(WR{ID: uint64(k), Opcode: WRRDMAWrite, Local: buf}); err != nil {
					t.Fatal(err)
				}
			}
			for k := range c.recvs {
				if err := q.PostRecv(RecvWR{ID: uint64(k), Buf: buf}); err != nil {
					t.Fatal(err)
				}
			}
			if c.sends+c.recvs > 0 {
				q.SetError()
				if got := q.PendingCompletions(); got != c.sends+c.recvs {
					t.Fatalf("QP %d: %d completions pending, want %d", i, got, c.sends+c.recvs)
				}
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		runtime.KeepAlive(s)
		got := float64(after.HeapAlloc-before.HeapAlloc) / n
		want := float64(SlabFootprint(cfg, c.sends, c.recvs, 0))
		t.Logf("%d sends, %d receives: %.0f bytes per QP, estimated %.0f", c.sends, c.recvs, got, want)
		if got < 0.95*want || got > 1.05*want {
			t.Errorf("%d sends, %d receives: %.0f bytes per QP on the heap, SlabFootprint %.0f", c.sends, c.recvs, got, want)
		}
	}
}
