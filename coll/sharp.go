package coll

import (
	"fmt"

	"github.com/rocekit/rocekit/sim"
)

// SHARP (fabric-facts §8): an all-reduce whose reduction happens in the
// switches. Aggregation nodes (in switches) form a tree over the ranks;
// each rank sends its vector up once, chunk by chunk, to its aggregation
// node; a node reduces the chunk from every child and sends the result up
// to its parent, and the root sends the reduced chunk back down, each node
// passing it on to its children. A rank therefore sends n bytes and
// receives n bytes, against 2(p-1)/p n each way for a ring, in about twice
// the tree's depth of steps.
//
// The participants are numbered: ranks 0 .. Ranks-1, then the aggregation
// nodes. SharpLeaf is a rank, SharpNode an aggregation node; both are
// driven like a Collective (Start, AppendSends, Payload, OnRecv, Done) by
// the same driver, and carry data as chunks of at most ChunkSize bytes,
// chunk k with Seq k on every link.

// SharpConfig is one participant's part of a SHARP all-reduce.
type SharpConfig struct {
	Count     int // elements of every rank's vector
	DType     DType
	RedOp     RedOp
	ChunkSize int // bytes; 0: DefaultChunkSize
	// Parent is the participant a leaf sends to, or a node's parent (-1
	// for the root); Children are a node's children.
	Parent   int
	Children []int
}

func (c *SharpConfig) chunks() (n, size int) {
	if c.ChunkSize <= 0 {
		c.ChunkSize = DefaultChunkSize
	}
	es := c.DType.Size()
	size = max(c.ChunkSize/es*es, es)
	total := c.Count * es
	return (total + size - 1) / size, size
}

func (c *SharpConfig) validate(leaf bool) error {
	switch {
	case c.Count < 1:
		return fmt.Errorf("coll: SharpConfig.Count %d: want at least 1", c.Count)
	case c.DType >= numDTypes:
		return fmt.Errorf("coll: SharpConfig.DType %d", c.DType)
	case c.RedOp >= numRedOps:
		return fmt.Errorf("coll: SharpConfig.RedOp %d", c.RedOp)
	case leaf && c.Parent < 0:
		return fmt.Errorf("coll: a SHARP leaf needs a parent")
	case !leaf && len(c.Children) == 0:
		return fmt.Errorf("coll: a SHARP node needs children")
	}
	return nil
}

// SharpLeaf is a rank of a SHARP all-reduce.
type SharpLeaf struct {
	cfg         SharpConfig
	in, out     []byte
	chunk, n    int
	got         int
	sent        bool
	start, last sim.Time
}

// NewSharpLeaf returns a rank sending to cfg.Parent.
func NewSharpLeaf(cfg SharpConfig) (*SharpLeaf, error) {
	if err := cfg.validate(true); err != nil {
		return nil, err
	}
	n, size := cfg.chunks()
	b := cfg.Count * cfg.DType.Size()
	return &SharpLeaf{cfg: cfg, in: make([]byte, b), out: make([]byte, b), chunk: size, n: n}, nil
}

// Input is the rank's vector: fill it before Start.
func (l *SharpLeaf) Input() []byte { return l.in }

// Output is the reduced vector once Done.
func (l *SharpLeaf) Output() []byte { return l.out }

// Start begins the all-reduce: every chunk of the input goes up.
func (l *SharpLeaf) Start(now sim.Time) { l.got, l.sent, l.start, l.last = 0, false, now, now }

// AppendSends appends the chunks to send: all of them, once, after Start.
func (l *SharpLeaf) AppendSends(dst []Send) []Send {
	if l.sent {
		return dst
	}
	l.sent = true
	for k := 0; k < l.n; k++ {
		off := k * l.chunk
		dst = append(dst, Send{To: l.cfg.Parent, Chunk: ChunkID{Seq: int32(k)}, Offset: off, Len: min(l.chunk, len(l.in)-off), FromInput: true})
	}
	return dst
}

// Payload returns the bytes of s.
func (l *SharpLeaf) Payload(s Send) []byte { return l.in[s.Offset : s.Offset+s.Len] }

// OnRecv takes reduced chunk k from the parent.
func (l *SharpLeaf) OnRecv(now sim.Time, from int, c ChunkID, data []byte) error {
	k := int(c.Seq)
	if from != l.cfg.Parent || k < 0 || k >= l.n {
		return fmt.Errorf("coll: SHARP leaf: chunk %d from %d", k, from)
	}
	off := k * l.chunk
	if len(data) != min(l.chunk, len(l.out)-off) {
		return fmt.Errorf("coll: SHARP leaf: chunk %d of %d bytes", k, len(data))
	}
	copy(l.out[off:], data)
	l.got++
	l.last = now
	return nil
}

// Done reports whether every reduced chunk has arrived.
func (l *SharpLeaf) Done() bool { return l.sent && l.got == l.n }

// Sends is how many chunks the leaf sends: its vector's.
func (l *SharpLeaf) Sends() int { return l.n }

// SendPlan is the parent and the largest chunk.
func (l *SharpLeaf) SendPlan() ([]int, int) { return []int{l.cfg.Parent}, min(l.chunk, len(l.in)) }

// SharpNode is an aggregation node.
type SharpNode struct {
	cfg      SharpConfig
	acc      []byte
	chunk, n int
	count    []int  // children heard from, per chunk
	heard    []bool // per chunk and child (childIdx)
	childIdx map[int]int
	ready    []Send
	head     int
	sent     int
	want     int
}

// NewSharpNode returns an aggregation node over cfg.Children.
func NewSharpNode(cfg SharpConfig) (*SharpNode, error) {
	if err := cfg.validate(false); err != nil {
		return nil, err
	}
	n, size := cfg.chunks()
	s := &SharpNode{cfg: cfg, acc: make([]byte, cfg.Count*cfg.DType.Size()), chunk: size, n: n, count: make([]int, n),
		heard: make([]bool, n*len(cfg.Children)), childIdx: map[int]int{}}
	for i, ch := range cfg.Children {
		s.childIdx[ch] = i
	}
	s.want = n * len(cfg.Children) // sends down
	if cfg.Parent >= 0 {
		s.want += n // and up
	}
	return s, nil
}

// Start resets the node.
func (s *SharpNode) Start(now sim.Time) {
	clear(s.count)
	clear(s.heard)
	s.ready, s.head, s.sent = s.ready[:0], 0, 0
}

func (s *SharpNode) span(k int) (off, n int) {
	off = k * s.chunk
	return off, min(s.chunk, len(s.acc)-off)
}

// OnRecv takes chunk k from a child (reduced into the node's vector; when
// every child's has come it goes up, or at the root back down) or from the
// parent (the result: it goes down to every child).
func (s *SharpNode) OnRecv(now sim.Time, from int, c ChunkID, data []byte) error {
	k := int(c.Seq)
	if k < 0 || k >= s.n {
		return fmt.Errorf("coll: SHARP node: chunk %d from %d", k, from)
	}
	off, n := s.span(k)
	if len(data) != n {
		return fmt.Errorf("coll: SHARP node: chunk %d of %d bytes from %d, want %d", k, len(data), from, n)
	}
	dst := s.acc[off : off+n]
	if from == s.cfg.Parent && s.cfg.Parent >= 0 {
		copy(dst, data)
		s.down(k)
		return nil
	}
	ci, child := s.childIdx[from]
	if !child || s.heard[k*len(s.cfg.Children)+ci] {
		return fmt.Errorf("coll: SHARP node: chunk %d from %d, not a child awaited", k, from)
	}
	s.heard[k*len(s.cfg.Children)+ci] = true
	if s.count[k] == 0 {
		copy(dst, data)
	} else {
		reduce(dst, data, s.cfg.DType, s.cfg.RedOp)
	}
	s.count[k]++
	if s.count[k] == len(s.cfg.Children) {
		if s.cfg.Parent >= 0 {
			s.ready = append(s.ready, Send{To: s.cfg.Parent, Chunk: ChunkID{Seq: int32(k)}, Offset: off, Len: n})
		} else {
			s.down(k)
		}
	}
	return nil
}

func (s *SharpNode) down(k int) {
	off, n := s.span(k)
	for _, ch := range s.cfg.Children {
		s.ready = append(s.ready, Send{To: ch, Chunk: ChunkID{Seq: int32(k)}, Offset: off, Len: n})
	}
}

// AppendSends appends the chunks ready to go.
func (s *SharpNode) AppendSends(dst []Send) []Send {
	dst = append(dst, s.ready[s.head:]...)
	s.sent += len(s.ready) - s.head
	s.ready, s.head = s.ready[:0], 0
	return dst
}

// Payload returns the bytes of s: the node's vector there, which stays
// the same until the chunk's result comes down (a driver copies it at
// once all the same).
func (s *SharpNode) Payload(sd Send) []byte { return s.acc[sd.Offset : sd.Offset+sd.Len] }

// Done reports whether the node has sent everything it will.
func (s *SharpNode) Done() bool { return s.sent == s.want }

// Sends is how many chunks the node sends: each chunk to every child, and
// up to its parent unless it is the root.
func (s *SharpNode) Sends() int { return s.want }

// SendPlan is the node's children and parent, and its largest chunk.
func (s *SharpNode) SendPlan() ([]int, int) {
	to := append([]int(nil), s.cfg.Children...)
	if s.cfg.Parent >= 0 {
		to = append(to, s.cfg.Parent)
	}
	return to, min(s.chunk, len(s.acc))
}
