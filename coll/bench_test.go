package coll

import (
	"testing"
)

// fifoNet delivers chunks in the order they are sent, with no time, from
// buffers allocated once: a driver that does not allocate, to show that the
// Collectives do not either.
type fifoNet struct {
	ranks []*Collective
	q     []fifoMsg
	arena []byte
	used  int
	sends []Send
}

type fifoMsg struct {
	from, to int
	chunk    ChunkID
	data     []byte
}

func newFifoNet(tb testing.TB, cfg Config) *fifoNet {
	n := &fifoNet{}
	var bytes int64
	var chunks int
	for r := range cfg.Ranks {
		c := cfg
		c.Rank = r
		col, err := New(c)
		if err != nil {
			tb.Fatal(err)
		}
		Fill(col.Input(), cfg.DType, 9, r)
		n.ranks = append(n.ranks, col)
		bytes += col.Stats().SendBytes
		chunks += col.Stats().Sends
	}
	n.arena = make([]byte, bytes)
	n.q = make([]fifoMsg, 0, chunks)
	n.sends = make([]Send, 0, chunks)
	return n
}

func (n *fifoNet) drain(r int) {
	c := n.ranks[r]
	n.sends = c.AppendSends(n.sends[:0])
	for _, s := range n.sends {
		d := n.arena[n.used : n.used+s.Len]
		n.used += copy(d, c.Payload(s))
		n.q = append(n.q, fifoMsg{r, s.To, s.Chunk, d})
	}
}

func (n *fifoNet) run(tb testing.TB) {
	n.q = n.q[:0]
	n.used = 0
	for r, c := range n.ranks {
		c.Start(0)
		n.drain(r)
	}
	for i := 0; i < len(n.q); i++ {
		m := n.q[i]
		if err := n.ranks[m.to].OnRecv(1, m.from, m.chunk, m.data); err != nil {
			tb.Fatal(err)
		}
		n.drain(m.to)
	}
	for r, c := range n.ranks {
		if !c.Done() {
			tb.Fatalf("rank %d not done", r)
		}
	}
}

// Running a collective again (Start, OnRecv, AppendSends, reductions)
// allocates nothing, for every algorithm, and gives the same result.
func TestNoAllocs(t *testing.T) {
	for _, ca := range combos {
		cfg := Config{Ranks: 8, Op: ca.op, Algo: ca.algo, Count: 4096, DType: BFloat16, Root: 3, ChunkSize: 1024, Channels: 2}
		n := newFifoNet(t, cfg)
		n.run(t)
		first := string(n.ranks[5].Output())
		if a := testing.AllocsPerRun(5, func() { n.run(t) }); a != 0 {
			t.Errorf("%s/%s: %.1f allocations per run", ca.op, ca.algo, a)
		}
		if string(n.ranks[5].Output()) != first {
			t.Errorf("%s/%s: a second run gave another output", ca.op, ca.algo)
		}
	}
}

func benchCollective(b *testing.B, cfg Config) {
	n := newFifoNet(b, cfg)
	b.SetBytes(Bytes(cfg.Op, cfg.Count, cfg.DType.Size(), cfg.Ranks) * int64(cfg.Ranks))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		n.run(b)
	}
}

// All 8 ranks of a 1 MiB float32 sum all-reduce in 64 KiB chunks, driven
// by a FIFO; bytes per second count every rank's buffer.
func BenchmarkAllReduceRing8(b *testing.B) {
	benchCollective(b, Config{Ranks: 8, Op: AllReduce, Algo: Ring, Count: 1 << 18, ChunkSize: 64 << 10})
}

func BenchmarkAllReduceTree8(b *testing.B) {
	benchCollective(b, Config{Ranks: 8, Op: AllReduce, Algo: Tree, Count: 1 << 18, ChunkSize: 64 << 10})
}

func BenchmarkAllToAll8(b *testing.B) {
	benchCollective(b, Config{Ranks: 8, Op: AllToAll, Algo: Direct, Count: 1 << 15, ChunkSize: 64 << 10})
}

// The reduction alone, 64 KiB per operation, of each element type.
func BenchmarkReduceSum(b *testing.B) {
	for _, dt := range []DType{Float32, Int32, BFloat16} {
		b.Run(dt.String(), func(b *testing.B) {
			dst, src := make([]byte, 64<<10), make([]byte, 64<<10)
			Fill(dst, dt, 1, 0)
			Fill(src, dt, 1, 1)
			b.SetBytes(int64(len(dst)))
			b.ReportAllocs()
			for b.Loop() {
				reduce(dst, src, dt, Sum)
			}
		})
	}
}
