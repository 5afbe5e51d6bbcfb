package coll

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/rocekit/rocekit/sim"
)

// DefaultChunkSize is the chunk size New uses when Config.ChunkSize is 0:
// 512 KiB, one of the 8 steps of NCCL's default 4 MiB buffer per connection
// (NCCL_BUFFSIZE, NCCL_STEPS) with the Simple protocol.
const DefaultChunkSize = 512 << 10

// Config describes one rank's part in a collective. Every rank of a
// collective must have the same Config but for Rank.
type Config struct {
	Ranks int // number of ranks, at least 1
	Rank  int // this rank, 0 <= Rank < Ranks
	Op    Op
	Algo  Algo // Auto chooses with ChooseAlgo
	// Count is the element count of NCCL's API: the whole buffer for
	// AllReduce, Broadcast and Reduce; each rank's input for AllGather and
	// Gather; each rank's output for ReduceScatter and Scatter; what a rank
	// sends to each rank for AllToAll. Buffers of Count x Ranks elements
	// are laid out in rank order.
	Count int
	DType DType
	RedOp RedOp // for AllReduce, ReduceScatter, Reduce
	Root  int   // for Broadcast, Reduce, Scatter, Gather
	// ChunkSize is the largest chunk in bytes (rounded down to whole
	// elements; 0 is DefaultChunkSize). A collective is cut into slices
	// that run one after another's heels: a ring or RHD slice is ChunkSize
	// per block, a tree, chain or direct slice ChunkSize.
	ChunkSize int
	// Channels spreads the slices round-robin over this many channels
	// (connections); 0 is 1. A chunk's channel is in its ChunkID.
	Channels int
	// Local is the number of ranks per node (GPUs per machine), ranks
	// numbered node by node: ranks r and q share a node when r/Local ==
	// q/Local. Only Hier uses it, and needs it to divide Ranks; 0 is 1.
	Local int
}

// ChunkID names a chunk on the wire. Seq is its index among the chunks its
// sender sends its receiver in this collective, over all channels, which
// identifies it; Channel is the channel it belongs to.
type ChunkID struct {
	Channel int32
	Seq     int32
}

// Send is an action: send Len bytes at Offset of the rank's input buffer
// (FromInput) or work buffer to rank To as chunk Chunk. Payload returns the
// bytes. A driver carries it out, for instance as an RDMA WRITE with
// immediate (fabric-facts §7), and calls OnRecv at To when it has arrived.
type Send struct {
	To        int
	Chunk     ChunkID
	Offset    int
	Len       int
	FromInput bool
}

// Stats describes what one rank does in a collective, from its schedule.
type Stats struct {
	Steps     int   // distinct algorithm steps the rank sends or receives in
	Sends     int   // chunks sent
	Recvs     int   // chunks received
	SendBytes int64 // bytes sent
	RecvBytes int64 // bytes received
}

// Collective is one rank's part in a collective operation: a pure,
// deterministic state machine in the manner of package rc. Start begins it,
// OnRecv gives it a chunk that has arrived, AppendSends draws the chunks it
// wants sent; it owns its input, work and output buffers and reduces real
// data as chunks arrive. Nothing allocates after New.
type Collective struct {
	cfg     Config
	in      []byte
	work    []byte
	out     []byte // a slice of work, nil where the rank has no output
	sends   []sendOp
	recvs   []recvOp
	depOf   []int32 // recvs' dependents
	recvAt  []int32 // recvBase[from]+seq -> recv index
	recvBas []int32 // per peer, plus one
	stats   Stats

	started   bool
	left      []int32 // per send: receives still awaited
	got       []bool  // per receive: applied
	ready     []int32 // queue of sends whose data is ready
	head      int
	sendsLeft int
	recvsLeft int
	start     sim.Time
	last      sim.Time
}

// inputCount and workCount return the element counts of a rank's input and
// work buffers.
func inputCount(op Op, count, p int) int {
	switch op {
	case ReduceScatter, AllToAll, Scatter:
		return count * p
	}
	return count
}

func workCount(op Op, count, p int) int {
	switch op {
	case AllGather, ReduceScatter, AllToAll, Gather:
		return count * p
	}
	return count
}

// maxBytes bounds a buffer so that offsets stay far from overflow.
const maxBytes = 1 << 40

// maxChunks bounds the chunks a buffer is cut into, so that sequence
// numbers fit an int32 and schedules stay small.
const maxChunks = 1 << 24

// Validate checks cfg and returns an error naming the first field that is
// wrong.
func (cfg *Config) Validate() error {
	switch {
	case cfg.Ranks < 1:
		return fmt.Errorf("coll: Config.Ranks %d: need at least 1", cfg.Ranks)
	case cfg.Rank < 0 || cfg.Rank >= cfg.Ranks:
		return fmt.Errorf("coll: Config.Rank %d: not in [0, %d)", cfg.Rank, cfg.Ranks)
	case cfg.Op >= numOps:
		return fmt.Errorf("coll: Config.Op %d: unknown operation", cfg.Op)
	case cfg.Algo >= numAlgos:
		return fmt.Errorf("coll: Config.Algo %d: unknown algorithm", cfg.Algo)
	case !Supports(cfg.Algo, cfg.Op, cfg.Ranks):
		if cfg.Algo == RHD && (cfg.Op == AllGather || cfg.Op == ReduceScatter) {
			return fmt.Errorf("coll: Config.Algo rhd: %s needs a power-of-two rank count, not %d", cfg.Op, cfg.Ranks)
		}
		return fmt.Errorf("coll: Config.Algo %s: cannot carry out %s", cfg.Algo, cfg.Op)
	case cfg.Count < 0:
		return fmt.Errorf("coll: Config.Count %d: negative", cfg.Count)
	case cfg.DType >= numDTypes:
		return fmt.Errorf("coll: Config.DType %d: unknown data type", cfg.DType)
	case cfg.RedOp >= numRedOps:
		return fmt.Errorf("coll: Config.RedOp %d: unknown reduction", cfg.RedOp)
	case cfg.Op.rooted() && (cfg.Root < 0 || cfg.Root >= cfg.Ranks):
		return fmt.Errorf("coll: Config.Root %d: not in [0, %d)", cfg.Root, cfg.Ranks)
	case cfg.ChunkSize < 0:
		return fmt.Errorf("coll: Config.ChunkSize %d: negative", cfg.ChunkSize)
	case cfg.ChunkSize > 0 && cfg.ChunkSize < cfg.DType.Size():
		return fmt.Errorf("coll: Config.ChunkSize %d: smaller than one %s element", cfg.ChunkSize, cfg.DType)
	case cfg.Channels < 0:
		return fmt.Errorf("coll: Config.Channels %d: negative", cfg.Channels)
	case cfg.Local < 0:
		return fmt.Errorf("coll: Config.Local %d: negative", cfg.Local)
	case cfg.Algo == Hier && cfg.Ranks%max(cfg.Local, 1) != 0:
		return fmt.Errorf("coll: Config.Local %d: does not divide the %d ranks into nodes", cfg.Local, cfg.Ranks)
	case int64(cfg.Count)*int64(cfg.Ranks)*int64(cfg.DType.Size()) > maxBytes:
		return fmt.Errorf("coll: Config.Count %d: %d ranks of it exceed %d bytes", cfg.Count, cfg.Ranks, int64(maxBytes))
	}
	chunk := int64(cfg.ChunkSize)
	if chunk == 0 {
		chunk = DefaultChunkSize
	}
	if n := Bytes(cfg.Op, cfg.Count, cfg.DType.Size(), cfg.Ranks) / chunk; n > maxChunks {
		return fmt.Errorf("coll: Config.ChunkSize %d: %d chunks of the %d-byte buffer, more than %d", cfg.ChunkSize, n, Bytes(cfg.Op, cfg.Count, cfg.DType.Size(), cfg.Ranks), maxChunks)
	}
	return nil
}

// Bytes returns the size nccl-tests reports for a collective of count
// elements of es bytes over p ranks: the larger of a rank's input and
// output buffers.
func Bytes(op Op, count, es, p int) int64 {
	return int64(max(inputCount(op, count, p), workCount(op, count, p))) * int64(es)
}

// New returns rank cfg.Rank's part in the collective cfg describes, with
// zeroed buffers: fill Input before Start. It returns an error naming the
// Config field that is wrong.
func New(cfg Config) (*Collective, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.ChunkSize == 0 {
		cfg.ChunkSize = DefaultChunkSize
	}
	if cfg.Channels == 0 {
		cfg.Channels = 1
	}
	if cfg.Local == 0 {
		cfg.Local = 1
	}
	es, p := cfg.DType.Size(), cfg.Ranks
	if cfg.Algo == Auto {
		cfg.Algo = ChooseAlgo(cfg.Op, Bytes(cfg.Op, cfg.Count, es, p), p)
	}
	if !cfg.Op.rooted() {
		cfg.Root = 0
	}
	b := schedule(&cfg, cfg.Rank)
	c := &Collective{cfg: cfg, sends: b.sends, recvs: b.recvs}
	c.in = make([]byte, inputCount(cfg.Op, cfg.Count, p)*es)
	c.work = make([]byte, workCount(cfg.Op, cfg.Count, p)*es)
	n := cfg.Count * es
	switch cfg.Op {
	case ReduceScatter:
		c.out = c.work[cfg.Rank*n : (cfg.Rank+1)*n]
	case Reduce, Gather:
		if cfg.Rank == cfg.Root {
			c.out = c.work
		}
	default:
		c.out = c.work
	}
	// Invert the dependencies: each receive lists the sends waiting for it.
	cnt := make([]int32, len(c.recvs)+1)
	for _, ds := range b.deps {
		for _, r := range ds {
			cnt[r+1]++
		}
	}
	for i := 1; i < len(cnt); i++ {
		cnt[i] += cnt[i-1]
	}
	c.depOf = make([]int32, cnt[len(cnt)-1])
	fill := make([]int32, len(c.recvs))
	copy(fill, cnt)
	for s, ds := range b.deps {
		for _, r := range ds {
			c.depOf[fill[r]] = int32(s)
			fill[r]++
		}
	}
	for i := range c.recvs {
		c.recvs[i].dep0, c.recvs[i].dep1 = cnt[i], cnt[i+1]
	}
	c.recvBas = make([]int32, p+1)
	for from := range p {
		c.recvBas[from+1] = c.recvBas[from] + b.recvSeq[from]
	}
	c.recvAt = make([]int32, len(c.recvs))
	for i, r := range c.recvs {
		c.recvAt[c.recvBas[r.from]+r.seq] = int32(i)
	}
	c.left = make([]int32, len(c.sends))
	c.got = make([]bool, len(c.recvs))
	c.ready = make([]int32, 0, len(c.sends))
	var steps []bool
	mark := func(s int32) {
		for int(s) >= len(steps) {
			steps = append(steps, false)
		}
		if !steps[s] {
			steps[s] = true
			c.stats.Steps++
		}
	}
	for _, s := range c.sends {
		mark(s.step)
		c.stats.SendBytes += int64(s.n)
	}
	for _, r := range c.recvs {
		mark(r.step)
		c.stats.RecvBytes += int64(r.n)
	}
	c.stats.Sends, c.stats.Recvs = len(c.sends), len(c.recvs)
	return c, nil
}

// Config returns the collective's configuration, with Algo, ChunkSize and
// Channels as New resolved them.
func (c *Collective) Config() Config { return c.cfg }

// Input returns the rank's input buffer (NCCL's sendbuff), to be filled
// before Start. Start does not change it.
func (c *Collective) Input() []byte { return c.in }

// Output returns the rank's result (NCCL's recvbuff): valid once Done,
// nil for a rank without one (a non-root rank of Reduce or Gather).
func (c *Collective) Output() []byte { return c.out }

// Stats returns what the rank does in the collective.
func (c *Collective) Stats() Stats { return c.stats }

// Start begins (or begins again) the collective at time now: it copies the
// rank's own input into place and makes ready the sends that need no
// received data.
func (c *Collective) Start(now sim.Time) {
	cfg := &c.cfg
	n := cfg.Count * cfg.DType.Size()
	r := cfg.Rank
	switch cfg.Op {
	case AllReduce, Reduce, ReduceScatter:
		copy(c.work, c.in)
	case Broadcast:
		if r == cfg.Root {
			copy(c.work, c.in)
		}
	case AllGather:
		copy(c.work[r*n:], c.in)
	case AllToAll:
		copy(c.work[r*n:(r+1)*n], c.in[r*n:])
	case Scatter:
		if r == cfg.Root {
			copy(c.work, c.in[r*n:(r+1)*n])
		}
	case Gather:
		if r == cfg.Root {
			copy(c.work[r*n:], c.in)
		}
	}
	c.started = true
	c.start, c.last = now, now
	c.ready = c.ready[:0]
	c.head = 0
	for i := range c.sends {
		c.left[i] = c.sends[i].ndeps
		if c.left[i] == 0 {
			c.ready = append(c.ready, int32(i))
		}
	}
	clear(c.got)
	c.sendsLeft, c.recvsLeft = len(c.sends), len(c.recvs)
}

// OnRecv applies chunk, sent by rank from, that arrived at time now: it is
// copied into the work buffer or reduced into it, and the sends waiting for
// it become ready. It returns an error, and changes nothing, when the chunk
// is not one the rank expects (unknown sender or sequence number, wrong
// channel or length, already received) or the collective is not started.
func (c *Collective) OnRecv(now sim.Time, from int, chunk ChunkID, data []byte) error {
	if !c.started {
		return fmt.Errorf("coll: rank %d: chunk %d from rank %d before Start", c.cfg.Rank, chunk.Seq, from)
	}
	if from < 0 || from >= c.cfg.Ranks {
		return fmt.Errorf("coll: rank %d: chunk from rank %d: not in [0, %d)", c.cfg.Rank, from, c.cfg.Ranks)
	}
	lo, hi := c.recvBas[from], c.recvBas[from+1]
	if chunk.Seq < 0 || chunk.Seq >= hi-lo {
		return fmt.Errorf("coll: rank %d: chunk %d from rank %d: expects %d chunks from it", c.cfg.Rank, chunk.Seq, from, hi-lo)
	}
	i := c.recvAt[lo+chunk.Seq]
	rv := &c.recvs[i]
	switch {
	case c.got[i]:
		return fmt.Errorf("coll: rank %d: chunk %d from rank %d: received twice", c.cfg.Rank, chunk.Seq, from)
	case chunk.Channel != rv.ch:
		return fmt.Errorf("coll: rank %d: chunk %d from rank %d: channel %d, want %d", c.cfg.Rank, chunk.Seq, from, chunk.Channel, rv.ch)
	case len(data) != rv.n:
		return fmt.Errorf("coll: rank %d: chunk %d from rank %d: %d bytes, want %d", c.cfg.Rank, chunk.Seq, from, len(data), rv.n)
	}
	dst := c.work[rv.off : rv.off+rv.n]
	if rv.reduce {
		reduce(dst, data, c.cfg.DType, c.cfg.RedOp)
	} else {
		copy(dst, data)
	}
	c.got[i] = true
	c.recvsLeft--
	for _, s := range c.depOf[rv.dep0:rv.dep1] {
		c.left[s]--
		if c.left[s] == 0 {
			c.ready = append(c.ready, s)
		}
	}
	if now > c.last {
		c.last = now
	}
	return nil
}

// AppendSends appends to dst the sends that have become ready since the
// last call, in the order they became ready, and returns it. A driver
// calls it after Start and after each OnRecv. It must read each Send's
// Payload before its next call to OnRecv: a later chunk may overwrite the
// bytes.
func (c *Collective) AppendSends(dst []Send) []Send {
	for ; c.head < len(c.ready); c.head++ {
		s := &c.sends[c.ready[c.head]]
		dst = append(dst, Send{To: int(s.to), Chunk: ChunkID{Channel: s.ch, Seq: s.seq}, Offset: s.off, Len: s.n, FromInput: s.in})
		c.sendsLeft--
	}
	return dst
}

// Payload returns the bytes of s, a Send this Collective emitted: a slice
// of its input or work buffer, not a copy.
func (c *Collective) Payload(s Send) []byte {
	b := c.work
	if s.FromInput {
		b = c.in
	}
	return b[s.Offset : s.Offset+s.Len]
}

// SendPlan returns, from the rank's schedule, the ranks it sends chunks
// to (each once, in the order of its first chunk to each) and its largest
// chunk in bytes: what a driver needs to set up connections and landing
// buffers before the collective runs.
func (c *Collective) SendPlan() (to []int, maxLen int) {
	seen := map[int32]bool{}
	for _, s := range c.sends {
		if !seen[s.to] {
			seen[s.to] = true
			to = append(to, int(s.to))
		}
		maxLen = max(maxLen, s.n)
	}
	return to, maxLen
}

// SendsTo returns how many chunks the rank sends rank to in all.
func (c *Collective) SendsTo(to int) int {
	n := 0
	for i := range c.sends {
		if int(c.sends[i].to) == to {
			n++
		}
	}
	return n
}

// Done reports whether the rank has received every chunk it expects and
// emitted every send: its Output is final.
func (c *Collective) Done() bool { return c.started && c.recvsLeft == 0 && c.sendsLeft == 0 }

// Elapsed returns the time from Start to the last chunk received (0 for a
// rank that receives none).
func (c *Collective) Elapsed() sim.Time { return c.last - c.start }

var le = binary.LittleEndian

// reduce combines src into dst element by element.
func reduce(dst, src []byte, dt DType, op RedOp) {
	switch dt {
	case Float32:
		src = src[:len(dst)]
		switch op {
		case Sum:
			for i := 0; i+4 <= len(dst); i += 4 {
				a := math.Float32frombits(le.Uint32(dst[i : i+4]))
				b := math.Float32frombits(le.Uint32(src[i : i+4]))
				le.PutUint32(dst[i:i+4], math.Float32bits(a+b))
			}
			return
		case Prod:
			for i := 0; i+4 <= len(dst); i += 4 {
				a := math.Float32frombits(le.Uint32(dst[i : i+4]))
				b := math.Float32frombits(le.Uint32(src[i : i+4]))
				le.PutUint32(dst[i:i+4], math.Float32bits(a*b))
			}
			return
		}
		for i := 0; i+4 <= len(dst); i += 4 {
			a := math.Float32frombits(le.Uint32(dst[i:]))
			b := math.Float32frombits(le.Uint32(src[i:]))
			le.PutUint32(dst[i:], math.Float32bits(redF32(a, b, op)))
		}
	case Int32:
		for i := 0; i+4 <= len(dst); i += 4 {
			a := int32(le.Uint32(dst[i:]))
			b := int32(le.Uint32(src[i:]))
			var v int32
			switch op {
			case Sum:
				v = a + b
			case Prod:
				v = a * b
			case Max:
				v = max(a, b)
			default:
				v = min(a, b)
			}
			le.PutUint32(dst[i:], uint32(v))
		}
	case BFloat16:
		for i := 0; i+2 <= len(dst); i += 2 {
			a := bf16ToF32(le.Uint16(dst[i:]))
			b := bf16ToF32(le.Uint16(src[i:]))
			le.PutUint16(dst[i:], f32ToBF16(redF32(a, b, op)))
		}
	}
}

func redF32(a, b float32, op RedOp) float32 {
	switch op {
	case Sum:
		return a + b
	case Prod:
		return a * b
	case Max:
		if b > a {
			return b
		}
		return a
	default:
		if b < a {
			return b
		}
		return a
	}
}

func bf16ToF32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// f32ToBF16 rounds f to the nearest bfloat16, ties to even; NaN stays NaN.
func f32ToBF16(f float32) uint16 {
	u := math.Float32bits(f)
	if u&0x7fffffff > 0x7f800000 {
		return uint16(u>>16) | 0x40
	}
	u += 0x7fff + (u>>16)&1
	return uint16(u >> 16)
}
