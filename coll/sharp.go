package coll

import (
	"fmt"
	"math"

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

// An aggregation node reduces with limited resources (fabric-facts §8: a
// switch runs at most 2 streaming aggregations at once). An aggregation is
// one chunk k being reduced at a node, from the arrival of its first
// child's piece until every child's piece is reduced; the node has Streams
// units and opens aggregations on them in chunk order, so at most Streams
// chunks are open at once and chunk k+1 opens only after chunk k. A piece
// for a chunk that is not open waits. A unit reduces its chunk's pieces one
// at a time in the order they arrived, each of n bytes taking n/ReduceBps;
// when the last is reduced the result goes up (down from the root) and the
// unit takes the next chunk. Results from the parent go down at once: the
// replication costs only the link. With ReduceBps 0 reducing takes no time,
// and as long as each child's pieces arrive in chunk order (RC delivers
// them so) the node behaves as if it had a unit per chunk.
//
// The node is still a state machine with the clock passed in: NextWake is
// when a unit next finishes a piece, and Advance(now) runs the node to now;
// OnRecv advances to its now first. A driver calls Advance at every
// NextWake and then AppendSends, as after OnRecv.

// DefaultSharpStreams is the number of aggregations a node has open at
// once when SharpConfig.Streams is 0: a switch's streaming aggregations
// (fabric-facts §8).
const DefaultSharpStreams = 2

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
	// Streams is how many aggregations (chunks) a node reduces at once:
	// its units; 0 means DefaultSharpStreams. ReduceBps is the bytes of
	// input per second one unit reduces, so a node reduces at most
	// Streams x ReduceBps; 0 means reducing takes no time. Leaves ignore
	// both.
	Streams   int
	ReduceBps float64
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
	case c.Streams < 0:
		return fmt.Errorf("coll: SharpConfig.Streams %d: want 0 (the default, %d) or more", c.Streams, DefaultSharpStreams)
	case c.ReduceBps < 0 || math.IsNaN(c.ReduceBps) || math.IsInf(c.ReduceBps, 0):
		return fmt.Errorf("coll: SharpConfig.ReduceBps %v: want a finite rate of 0 (free) or more bytes per second", c.ReduceBps)
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
	count    []int  // children's pieces arrived, per chunk
	reduced  []int  // and reduced
	heard    []bool // per chunk and child (childIdx)
	slot     []int  // per chunk: its unit while open, else -1
	childIdx map[int]int
	units    []sharpUnit
	free     []int // idle units
	busy     int   // units reducing a piece
	open     int   // the next chunk to open
	now      sim.Time
	dur      [2]sim.Time // a piece's reduction: a full chunk's, the last chunk's
	ready    []Send
	head     int
	sent     int
	want     int
}

// sharpUnit is an aggregation unit: the chunk it reduces (-1: none), its
// pieces waiting, and the end of the piece under way.
type sharpUnit struct {
	chunk   int
	pending int
	busy    bool
	until   sim.Time
}

// NewSharpNode returns an aggregation node over cfg.Children.
func NewSharpNode(cfg SharpConfig) (*SharpNode, error) {
	if err := cfg.validate(false); err != nil {
		return nil, err
	}
	n, size := cfg.chunks()
	if cfg.Streams == 0 {
		cfg.Streams = DefaultSharpStreams
	}
	cfg.Children = append([]int(nil), cfg.Children...)
	units := min(cfg.Streams, n)
	s := &SharpNode{cfg: cfg, acc: make([]byte, cfg.Count*cfg.DType.Size()), chunk: size, n: n, count: make([]int, n),
		reduced: make([]int, n), heard: make([]bool, n*len(cfg.Children)), slot: make([]int, n), childIdx: map[int]int{},
		units: make([]sharpUnit, units), free: make([]int, 0, units)}
	for i, ch := range cfg.Children {
		if _, dup := s.childIdx[ch]; dup || ch < 0 || ch == cfg.Parent {
			return nil, fmt.Errorf("coll: SharpConfig.Children[%d] %d: a child twice, negative or the parent", i, ch)
		}
		s.childIdx[ch] = i
	}
	if r := cfg.ReduceBps; r > 0 {
		_, last := s.span(n - 1)
		s.dur = [2]sim.Time{sim.FromSeconds(float64(size) / r), sim.FromSeconds(float64(last) / r)}
	}
	s.want = n * len(cfg.Children) // sends down
	if cfg.Parent >= 0 {
		s.want += n // and up
	}
	s.ready = make([]Send, 0, (len(cfg.Children)+1)*(units+1))
	s.Start(0)
	return s, nil
}

// Start resets the node.
func (s *SharpNode) Start(now sim.Time) {
	clear(s.count)
	clear(s.reduced)
	clear(s.heard)
	for k := range s.slot {
		s.slot[k] = -1
	}
	s.free = s.free[:0]
	for u := len(s.units) - 1; u >= 0; u-- {
		s.units[u] = sharpUnit{chunk: -1}
		s.free = append(s.free, u)
	}
	s.busy, s.open, s.now = 0, 0, now
	s.ready, s.head, s.sent = s.ready[:0], 0, 0
}

func (s *SharpNode) span(k int) (off, n int) {
	off = k * s.chunk
	return off, min(s.chunk, len(s.acc)-off)
}

// OnRecv takes chunk k from a child (reduced into the node's vector; when
// every child's has come and been reduced it goes up, or at the root back
// down) or from the parent (the result: it goes down to every child). It
// first runs the node to now, as Advance.
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
		s.Advance(now)
		copy(dst, data)
		s.down(k)
		return nil
	}
	ci, child := s.childIdx[from]
	if !child || s.heard[k*len(s.cfg.Children)+ci] {
		return fmt.Errorf("coll: SHARP node: chunk %d from %d, not a child awaited", k, from)
	}
	s.Advance(now)
	now = s.now
	s.heard[k*len(s.cfg.Children)+ci] = true
	// The data is reduced now, in the order the pieces arrive, which is
	// the order the unit reduces them in: the node need not keep a piece
	// that waits, only count it. The time is the unit's.
	if s.count[k] == 0 {
		copy(dst, data)
	} else {
		reduce(dst, data, s.cfg.DType, s.cfg.RedOp)
	}
	s.count[k]++
	if u := s.slot[k]; u >= 0 {
		s.units[u].pending++
		s.begin(u, now)
	}
	s.openUnits(now)
	return nil
}

// NextWake is when a unit next finishes reducing a piece; false when none
// is reducing one (with ReduceBps 0, never).
func (s *SharpNode) NextWake() (sim.Time, bool) {
	if s.busy == 0 {
		return 0, false
	}
	u := s.nextUnit()
	return s.units[u].until, true
}

// Advance runs the node to now: every piece whose reduction ends by now is
// reduced, and the results complete by then are ready for AppendSends.
// Time does not go back: an earlier now than the node has seen is taken as
// that.
func (s *SharpNode) Advance(now sim.Time) {
	for s.busy > 0 {
		u := s.nextUnit()
		t := s.units[u].until
		if t > now {
			break
		}
		s.finish(u, t)
		s.openUnits(t)
	}
	s.now = max(s.now, now)
}

// nextUnit is the busy unit whose piece ends first, the lower chunk on a
// tie.
func (s *SharpNode) nextUnit() int {
	best := -1
	for u := range s.units {
		un := &s.units[u]
		if un.busy && (best < 0 || un.until < s.units[best].until ||
			un.until == s.units[best].until && un.chunk < s.units[best].chunk) {
			best = u
		}
	}
	return best
}

// openUnits gives idle units to the next chunks, in chunk order, once a
// piece of each has arrived.
func (s *SharpNode) openUnits(t sim.Time) {
	for s.open < s.n && s.count[s.open] > 0 && len(s.free) > 0 {
		u := s.free[len(s.free)-1]
		s.free = s.free[:len(s.free)-1]
		k := s.open
		s.open++
		s.units[u] = sharpUnit{chunk: k, pending: s.count[k]}
		s.slot[k] = u
		s.begin(u, t)
	}
}

// begin starts unit u's next piece at t, or with free reduction reduces
// every waiting piece at once.
func (s *SharpNode) begin(u int, t sim.Time) {
	un := &s.units[u]
	if un.busy || un.pending == 0 {
		return
	}
	if s.cfg.ReduceBps == 0 {
		s.reduced[un.chunk] += un.pending
		un.pending = 0
		s.close(u)
		return
	}
	d := s.dur[0]
	if un.chunk == s.n-1 {
		d = s.dur[1]
	}
	un.pending--
	un.busy = true
	un.until = t + min(d, sim.MaxTime-t)
	s.busy++
}

// finish ends unit u's piece at t.
func (s *SharpNode) finish(u int, t sim.Time) {
	un := &s.units[u]
	un.busy = false
	s.busy--
	s.reduced[un.chunk]++
	if un.pending > 0 {
		s.begin(u, t)
		return
	}
	s.close(u)
}

// close ends unit u's aggregation if every child's piece is reduced: the
// result is ready and the unit idle.
func (s *SharpNode) close(u int) {
	un := &s.units[u]
	k := un.chunk
	if s.reduced[k] < len(s.cfg.Children) {
		return
	}
	if s.cfg.Parent >= 0 {
		off, n := s.span(k)
		s.ready = append(s.ready, Send{To: s.cfg.Parent, Chunk: ChunkID{Seq: int32(k)}, Offset: off, Len: n})
	} else {
		s.down(k)
	}
	s.slot[k] = -1
	*un = sharpUnit{chunk: -1}
	s.free = append(s.free, u)
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
