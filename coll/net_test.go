package coll

import (
	"container/heap"
	"fmt"
	"math/rand/v2"

	"github.com/rocekit/rocekit/sim"
)

// scriptNet carries chunks between the Collectives of one collective with a
// fixed latency per chunk and a time per byte: a rank's sends leave one
// after another through its port (Len x perByte each), and a chunk arrives
// latency after its last byte has left, but no sooner than perByte x Len
// after the previous chunk arrived at the same receiver: the receiver's
// port takes one chunk at a time, in the order their last bytes reach it.
type scriptNet struct {
	ranks   []*Collective
	latency sim.Time
	perByte sim.Time
	egress  []sim.Time
	ingress []sim.Time
	q       msgQueue
	seq     int64
	sends   []Send
	// corrupt, when positive, flips a byte of the corrupt-th chunk sent.
	corrupt int
	nsent   int
	// jitter, when positive, adds to each chunk's latency a delay drawn
	// uniformly from [0, jitter) by a PCG seeded with 1, so that chunks
	// overtake one another, even between the same two ranks.
	jitter sim.Time
	rng    *rand.PCG
	// lastSeq is the highest Seq delivered per (from, to); overtaken counts
	// chunks delivered after a later one of the same pair.
	lastSeq   map[[2]int]int32
	overtaken int
}

type msg struct {
	at       sim.Time
	seq      int64
	from, to int
	chunk    ChunkID
	data     []byte
	queued   bool // through the receiver's port
}

type msgQueue []*msg

func (q msgQueue) Len() int { return len(q) }
func (q msgQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q msgQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *msgQueue) Push(x any)   { *q = append(*q, x.(*msg)) }
func (q *msgQueue) Pop() any {
	old := *q
	m := old[len(old)-1]
	*q = old[:len(old)-1]
	return m
}

// newScriptNet makes the Collectives of cfg for every rank, their inputs
// filled by Fill with seed.
func newScriptNet(cfg Config, seed uint64, latency, perByte sim.Time) (*scriptNet, [][]byte, error) {
	n := &scriptNet{latency: latency, perByte: perByte,
		egress: make([]sim.Time, cfg.Ranks), ingress: make([]sim.Time, cfg.Ranks)}
	inputs := make([][]byte, cfg.Ranks)
	for r := range cfg.Ranks {
		c := cfg
		c.Rank = r
		col, err := New(c)
		if err != nil {
			return nil, nil, err
		}
		Fill(col.Input(), cfg.DType, seed, r)
		inputs[r] = col.Input()
		n.ranks = append(n.ranks, col)
	}
	return n, inputs, nil
}

// drain carries out rank r's ready sends at time now.
func (n *scriptNet) drain(r int, now sim.Time) {
	c := n.ranks[r]
	n.sends = c.AppendSends(n.sends[:0])
	for _, s := range n.sends {
		data := append([]byte(nil), c.Payload(s)...)
		n.nsent++
		if n.nsent == n.corrupt {
			data[len(data)-1] ^= 0x40
		}
		l := sim.Time(s.Len) * n.perByte
		start := max(now, n.egress[r])
		n.egress[r] = start + l
		at := start + l + n.latency
		if n.jitter > 0 {
			if n.rng == nil {
				n.rng = rand.NewPCG(1, 2)
			}
			at += sim.Time(n.rng.Uint64() % uint64(n.jitter))
		}
		n.seq++
		heap.Push(&n.q, &msg{at: at, seq: n.seq, from: r, to: s.To, chunk: s.Chunk, data: data})
	}
}

// run starts every rank at time 0 and delivers chunks until none is left;
// it returns the time of the last arrival.
func (n *scriptNet) run() (sim.Time, error) {
	for r, c := range n.ranks {
		c.Start(0)
		n.drain(r, 0)
	}
	var end sim.Time
	for n.q.Len() > 0 {
		m := heap.Pop(&n.q).(*msg)
		if !m.queued {
			m.queued = true
			l := sim.Time(len(m.data)) * n.perByte
			if free := n.ingress[m.to] + l; free > m.at {
				m.at = free
			}
			n.ingress[m.to] = m.at
			n.seq++
			m.seq = n.seq
			heap.Push(&n.q, m)
			continue
		}
		if n.lastSeq == nil {
			n.lastSeq = map[[2]int]int32{}
		}
		k := [2]int{m.from, m.to}
		if last, ok := n.lastSeq[k]; ok && m.chunk.Seq < last {
			n.overtaken++
		} else {
			n.lastSeq[k] = m.chunk.Seq
		}
		if err := n.ranks[m.to].OnRecv(m.at, m.from, m.chunk, m.data); err != nil {
			return 0, err
		}
		end = m.at
		n.drain(m.to, m.at)
	}
	for r, c := range n.ranks {
		if !c.Done() {
			return 0, fmt.Errorf("rank %d not done", r)
		}
	}
	return end, nil
}
