package coll

import (
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/rocekit/rocekit/sim"
)

// piece is a child's chunk arriving at an aggregation node.
type piece struct {
	at    sim.Time
	from  int
	chunk int
}

// sent is a send the node made, and when.
type sent struct {
	at sim.Time
	s  Send
}

// drive runs node n through the arrivals, in time order, as a driver
// would: before each arrival it wakes the node at every NextWake that
// comes first, and it takes the ready sends after every call. Each child's
// piece of chunk k holds the elements 1000*child + element index.
func drive(t *testing.T, n *SharpNode, arrivals []piece, out []sent) []sent {
	t.Helper()
	n.Start(0)
	var buf [8]Send
	take := func(at sim.Time) {
		for _, s := range n.AppendSends(buf[:0]) {
			out = append(out, sent{at, s})
		}
	}
	wake := func(until sim.Time) {
		for {
			w, ok := n.NextWake()
			if !ok || w > until {
				return
			}
			n.Advance(w)
			take(w)
		}
	}
	var data [64]byte
	for _, a := range arrivals {
		wake(a.at)
		off, l := n.span(a.chunk)
		for i := 0; i < l/4; i++ {
			le.PutUint32(data[4*i:], uint32(1000*a.from+off/4+i))
		}
		if err := n.OnRecv(a.at, a.from, ChunkID{Seq: int32(a.chunk)}, data[:l]); err != nil {
			t.Fatal(err)
		}
		take(a.at)
	}
	wake(sim.MaxTime)
	return out
}

func sharpTestNode(t *testing.T, streams int, reduceBps float64, count int) *SharpNode {
	t.Helper()
	n, err := NewSharpNode(SharpConfig{Count: count, DType: Int32, RedOp: Sum, ChunkSize: 16, Parent: 3, Children: []int{0, 1},
		Streams: streams, ReduceBps: reduceBps})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

const us = sim.Microsecond

// TestSharpUnitsSkew: an aggregation node with two children, child 1's
// pieces 3 us behind child 0's, each 16-byte piece reduced in 1 us (16e6
// bytes per second). Hand-computed:
//
//	one unit:  chunk 0 opens at 0 (child 0's piece, 0-1 us); child 0's
//	           chunk 1 at 0.5 us waits; child 1's chunk 0 at 3 us is reduced
//	           3-4 us: chunk 0 leaves at 4 us. Chunk 1 opens then, its two
//	           pieces reduced 4-5 and 5-6 us: it leaves at 6 us.
//	two units: chunk 1 opens at 0.5 us beside chunk 0: 0.5-1.5 us, then
//	           child 1's at 3.5-4.5 us: chunks leave at 4 and 4.5 us.
//	free reduction, one unit: each chunk leaves when child 1's piece comes,
//	           3 and 3.5 us, as with a unit per chunk.
//
// The results are the sums of the two children's pieces.
func TestSharpUnitsSkew(t *testing.T) {
	arrivals := []piece{{0, 0, 0}, {us / 2, 0, 1}, {3 * us, 1, 0}, {3*us + us/2, 1, 1}}
	for _, c := range []struct {
		streams int
		bps     float64
		want    [2]sim.Time
	}{
		{1, 16e6, [2]sim.Time{4 * us, 6 * us}},
		{2, 16e6, [2]sim.Time{4 * us, 4*us + us/2}},
		{1, 0, [2]sim.Time{3 * us, 3*us + us/2}},
		{8, 0, [2]sim.Time{3 * us, 3*us + us/2}},
	} {
		n := sharpTestNode(t, c.streams, c.bps, 8) // two chunks of 4 elements
		out := drive(t, n, arrivals, nil)
		if len(out) != 2 {
			t.Fatalf("streams %d, %g B/s: %d sends, want 2: %v", c.streams, c.bps, len(out), out)
		}
		for k, o := range out {
			if o.s.To != 3 || int(o.s.Chunk.Seq) != k || o.at != c.want[k] {
				t.Errorf("streams %d, %g B/s: send %d is chunk %d to %d at %v; want chunk %d to 3 at %v",
					c.streams, c.bps, k, o.s.Chunk.Seq, o.s.To, o.at, k, c.want[k])
			}
			p := n.Payload(o.s)
			for i := 0; i < 4; i++ {
				if got, want := le.Uint32(p[4*i:]), uint32(1000+2*(4*k+i)); got != want { // 0 + 1000, plus the index twice
					t.Errorf("streams %d: chunk %d element %d: %d, want %d", c.streams, k, i, got, want)
				}
			}
		}
	}
}

// TestSharpUnitsResultDown: the root's results and a parent's go down to
// every child, and the node is done when each child has every chunk.
func TestSharpUnitsResultDown(t *testing.T) {
	n := sharpTestNode(t, 1, 16e6, 8)
	drive(t, n, []piece{{0, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 1, 1}}, nil)
	if n.Done() {
		t.Fatal("done before the results came down")
	}
	res := i32s(7, 8, 9, 10)
	for k := 0; k < 2; k++ {
		if err := n.OnRecv(10*us, 3, ChunkID{Seq: int32(k)}, res); err != nil {
			t.Fatal(err)
		}
		s := n.AppendSends(nil)
		if len(s) != 2 || s[0].To != 0 || s[1].To != 1 || string(n.Payload(s[0])) != string(res) {
			t.Fatalf("chunk %d from the parent: sends %v", k, s)
		}
	}
	if !n.Done() {
		t.Fatal("not done with every result sent down")
	}
}

// TestSharpUnitsOrder: over random scripts of arrivals (each child's
// pieces in chunk order, the children skewed by up to 20 us, a piece
// reduced in 1 us), a node with one unit sends chunk k+1's result at least
// two reductions (2 us) after chunk k's, since chunk k+1 opens only when
// chunk k is done; more units never send a result later; and with free
// reduction one unit sends every result when and as a unit per chunk does.
func TestSharpUnitsOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	const chunks = 12
	for trial := 0; trial < 200; trial++ {
		var arrivals []piece
		for child := 0; child < 2; child++ {
			at := sim.Time(rng.Intn(20)) * us
			for k := 0; k < chunks; k++ {
				at += sim.Time(rng.Intn(3000)) * sim.Nanosecond
				arrivals = append(arrivals, piece{at, child, k})
			}
		}
		sortPieces(arrivals)
		times := func(streams int, bps float64) []sim.Time {
			out := drive(t, sharpTestNode(t, streams, bps, 4*chunks), arrivals, nil)
			if len(out) != chunks {
				t.Fatalf("trial %d, streams %d: %d sends, want %d", trial, streams, len(out), chunks)
			}
			ts := make([]sim.Time, chunks)
			for k, o := range out {
				if int(o.s.Chunk.Seq) != k {
					t.Fatalf("trial %d, streams %d: send %d is chunk %d", trial, streams, k, o.s.Chunk.Seq)
				}
				ts[k] = o.at
			}
			return ts
		}
		one, two, many := times(1, 16e6), times(2, 16e6), times(chunks, 16e6)
		for k := 1; k < chunks; k++ {
			if one[k] < one[k-1]+2*us {
				t.Fatalf("trial %d: one unit: chunk %d at %v, chunk %d at %v: less than two reductions apart", trial, k-1, one[k-1], k, one[k])
			}
		}
		for k := range one {
			if two[k] > one[k] || many[k] > two[k] {
				t.Fatalf("trial %d chunk %d: 1, 2, %d units send at %v, %v, %v: more units later", trial, k, chunks, one[k], two[k], many[k])
			}
		}
		free1, freeAll := times(1, 0), times(chunks, 0)
		for k := range free1 {
			if free1[k] != freeAll[k] {
				t.Fatalf("trial %d chunk %d: free reduction, one unit at %v, a unit per chunk at %v", trial, k, free1[k], freeAll[k])
			}
			last := sim.Time(0)
			for _, a := range arrivals {
				if a.chunk == k {
					last = max(last, a.at)
				}
			}
			if free1[k] != last {
				t.Fatalf("trial %d chunk %d: free reduction sends at %v, not at its last piece's arrival %v", trial, k, free1[k], last)
			}
		}
	}
}

func sortPieces(p []piece) {
	for i := 1; i < len(p); i++ {
		for j := i; j > 0 && p[j].at < p[j-1].at; j-- {
			p[j], p[j-1] = p[j-1], p[j]
		}
	}
}

// TestSharpUnitsRate: with one unit at 1e9 bytes per second, a 16-byte
// piece takes 16 ns and the last chunk's 8-byte piece 8 ns; three chunks
// from two children arriving together leave at 32, 64 and 80 ns.
func TestSharpUnitsRate(t *testing.T) {
	n := sharpTestNode(t, 1, 1e9, 10) // chunks of 16, 16 and 8 bytes
	var arr []piece
	for k := 0; k < 3; k++ {
		arr = append(arr, piece{0, 0, k}, piece{0, 1, k})
	}
	out := drive(t, n, arr, nil)
	want := []sim.Time{32 * sim.Nanosecond, 64 * sim.Nanosecond, 80 * sim.Nanosecond}
	if len(out) != 3 {
		t.Fatalf("%d sends, want 3", len(out))
	}
	for k, o := range out {
		if o.at != want[k] || o.s.Len != []int{16, 16, 8}[k] {
			t.Errorf("chunk %d: %d bytes at %v, want %d at %v", k, o.s.Len, o.at, []int{16, 16, 8}[k], want[k])
		}
	}
}

// TestSharpUnitsConfigErrors: a bad Streams or ReduceBps is refused with
// the field named.
func TestSharpUnitsConfigErrors(t *testing.T) {
	for _, c := range []struct {
		streams int
		bps     float64
		want    string
	}{
		{-1, 0, "SharpConfig.Streams -1"},
		{0, -1, "SharpConfig.ReduceBps -1"},
		{0, math.NaN(), "SharpConfig.ReduceBps NaN"},
		{0, math.Inf(1), "SharpConfig.ReduceBps +Inf"},
	} {
		_, err := NewSharpNode(SharpConfig{Count: 8, DType: Int32, Parent: -1, Children: []int{0, 1}, Streams: c.streams, ReduceBps: c.bps})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("streams %d, %v B/s: error %v, want one naming %q", c.streams, c.bps, err, c.want)
		}
	}
	_, err := NewSharpNode(SharpConfig{Count: 8, DType: Int32, Parent: -1, Children: []int{0, 0}})
	if err == nil || !strings.Contains(err.Error(), "SharpConfig.Children[1]") {
		t.Errorf("a child twice: error %v", err)
	}
}

// TestSharpUnitsNoAlloc: a node with its units busy and pieces waiting
// allocates nothing when run again.
func TestSharpUnitsNoAlloc(t *testing.T) {
	n := sharpTestNode(t, 2, 16e6, 64)
	var arr []piece
	for k := 0; k < 16; k++ {
		arr = append(arr, piece{sim.Time(k) * us / 4, 0, k}, piece{5*us + sim.Time(k)*us/4, 1, k})
	}
	sortPieces(arr)
	out := make([]sent, 0, 64)
	drive(t, n, arr, out)
	if a := testing.AllocsPerRun(10, func() { drive(t, n, arr, out[:0]) }); a != 0 {
		t.Fatalf("%v allocations per run", a)
	}
}

// BenchmarkSharpNodeUnits: an aggregation node of 8 children and 2 units
// at 12.5 GB/s reducing 64 chunks of 4 KiB of float32, child c's pieces
// c x 0.3 us late, driven through every wake; bytes/s are the input
// reduced.
func BenchmarkSharpNodeUnits(b *testing.B) {
	const chunks, children, size = 64, 8, 4096
	kids := make([]int, children)
	for i := range kids {
		kids[i] = i
	}
	n, err := NewSharpNode(SharpConfig{Count: chunks * size / 4, DType: Float32, RedOp: Sum, ChunkSize: size, Parent: children + 1,
		Children: kids, ReduceBps: 12.5e9})
	if err != nil {
		b.Fatal(err)
	}
	var arr []piece
	for c := 0; c < children; c++ {
		for k := 0; k < chunks; k++ {
			arr = append(arr, piece{sim.Time(k)*330*sim.Nanosecond + sim.Time(c)*300*sim.Nanosecond, c, k})
		}
	}
	sortPieces(arr)
	data := make([]byte, size)
	sends := make([]Send, 0, 16)
	b.SetBytes(chunks * children * size)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n.Start(0)
		for _, a := range arr {
			for w, ok := n.NextWake(); ok && w <= a.at; w, ok = n.NextWake() {
				n.Advance(w)
				sends = n.AppendSends(sends[:0])
			}
			if err := n.OnRecv(a.at, a.from, ChunkID{Seq: int32(a.chunk)}, data); err != nil {
				b.Fatal(err)
			}
			sends = n.AppendSends(sends[:0])
		}
		for w, ok := n.NextWake(); ok; w, ok = n.NextWake() {
			n.Advance(w)
			sends = n.AppendSends(sends[:0])
		}
		if len(sends) == 0 || int(sends[len(sends)-1].Chunk.Seq) != chunks-1 {
			b.Fatalf("the last chunk's result did not leave last: %v", sends)
		}
	}
}
