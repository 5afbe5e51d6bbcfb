package ring

import "testing"

// A ring against a slice model: FIFO order through growth and wrap-around,
// At, Front, Back, Drop, Truncate and Reset, and cleared slots.
func TestRingModel(t *testing.T) {
	var r Ring[*int]
	var model []*int
	vals := make([]int, 1000)
	check := func(step int) {
		t.Helper()
		if r.Len() != len(model) {
			t.Fatalf("step %d: Len %d, want %d", step, r.Len(), len(model))
		}
		for i, v := range model {
			if *r.At(i) != v {
				t.Fatalf("step %d: At(%d) = %p, want %p", step, i, *r.At(i), v)
			}
		}
		if len(model) > 0 && (*r.Front() != model[0] || *r.Back() != model[len(model)-1]) {
			t.Fatalf("step %d: Front/Back wrong", step)
		}
		if c := r.Cap(); c&(c-1) != 0 || c < r.Len() {
			t.Fatalf("step %d: Cap %d for Len %d", step, c, r.Len())
		}
		live := 0
		for _, p := range r.buf {
			if p != nil {
				live++
			}
		}
		if live != len(model) {
			t.Fatalf("step %d: %d non-nil slots, %d elements", step, live, len(model))
		}
	}
	x := uint32(1)
	for step := range 5000 {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		switch op := x % 16; {
		case op < 8:
			v := &vals[step%len(vals)]
			if op < 4 {
				r.Push(v)
			} else {
				*r.PushSlot() = v
			}
			model = append(model, v)
		case op < 13 && len(model) > 0:
			if got := r.Pop(); got != model[0] {
				t.Fatalf("step %d: Pop %p, want %p", step, got, model[0])
			}
			model = model[1:]
		case op == 13 && len(model) > 0:
			r.Drop()
			model = model[1:]
		case op == 14:
			n := len(model) / 2
			r.Truncate(n)
			model = model[:n]
		case op == 15 && step%7 == 0:
			r.Reset()
			model = nil
		}
		check(step)
	}
}

// The zero ring first makes room for FirstCap elements and then doubles;
// Init supplies other first storage, and an emptied ring restarts at slot 0.
func TestRingGrowth(t *testing.T) {
	var r Ring[int64]
	r.Push(1)
	if r.Cap() != FirstCap {
		t.Fatalf("first Cap %d, want %d", r.Cap(), FirstCap)
	}
	for i := 2; i <= FirstCap+1; i++ {
		r.Push(int64(i))
	}
	if r.Cap() != 2*FirstCap || r.Len() != FirstCap+1 {
		t.Fatalf("Cap %d Len %d, want %d and %d", r.Cap(), r.Len(), 2*FirstCap, FirstCap+1)
	}
	var s Ring[int64]
	var inline [4]int64
	s.Init(inline[:])
	for i := range 4 {
		s.Push(int64(i))
	}
	if s.Cap() != 4 || &inline[3] != s.At(3) {
		t.Fatal("Init storage not used")
	}
	s.Push(4)
	if s.Cap() != 8 || s.Pop() != 0 {
		t.Fatal("growth from Init storage")
	}
	for s.Len() > 0 {
		s.Pop()
	}
	s.Push(9)
	if s.head != 0 || *s.At(0) != 9 {
		t.Fatalf("an emptied ring restarts at slot 0: head %d", s.head)
	}
}

// Push and Pop allocate nothing once the ring has grown.
func TestRingAllocs(t *testing.T) {
	var r Ring[int64]
	for i := range 64 {
		r.Push(int64(i))
	}
	r.Reset()
	if a := testing.AllocsPerRun(100, func() {
		for i := range 64 {
			r.Push(int64(i))
		}
		for r.Len() > 0 {
			r.Pop()
		}
	}); a != 0 {
		t.Fatalf("%v allocs", a)
	}
}
