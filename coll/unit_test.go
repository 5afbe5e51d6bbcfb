package coll

import (
	"github.com/rocekit/rocekit/sim"
	"math"
	"strconv"
	"strings"
	"testing"
)

func f32s(v ...float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		le.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

func i32s(v ...int32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		le.PutUint32(b[4*i:], uint32(x))
	}
	return b
}

// SplitMix64 from state 0 gives 0xe220a8397b1dcdaf first (the published
// first output of the reference generator).
func TestSplitMix64(t *testing.T) {
	if got := splitmix64(0); got != 0xe220a8397b1dcdaf {
		t.Fatalf("splitmix64(0) = %#x", got)
	}
}

// Fill draws k/8 (k/1 for Int32), k in [-16, 16], the same for the same
// (seed, rank), different for another rank or seed, and uniformly: a
// chi-square test over the 33 values of 33,000 draws stays below 62.49,
// the 0.1% critical value for 32 degrees of freedom.
func TestFill(t *testing.T) {
	const n = 33000
	a := make([]byte, 4*n)
	b := make([]byte, 4*n)
	Fill(a, Float32, 7, 3)
	Fill(b, Float32, 7, 3)
	if string(a) != string(b) {
		t.Fatal("Fill not deterministic")
	}
	Fill(b, Float32, 7, 4)
	if string(a) == string(b) {
		t.Fatal("ranks 3 and 4 drew the same input")
	}
	Fill(b, Float32, 8, 3)
	if string(a) == string(b) {
		t.Fatal("seeds 7 and 8 drew the same input")
	}
	var hist [33]int
	for i := range n {
		v := value(a, Float32, i) * 8
		k := int(v)
		if float64(k) != v || k < -16 || k > 16 {
			t.Fatalf("element %d = %g, not k/8 with |k| <= 16", i, v/8)
		}
		hist[k+16]++
	}
	chi := 0.0
	for _, h := range hist {
		d := float64(h) - n/33.0
		chi += d * d / (n / 33.0)
	}
	if chi > 62.49 {
		t.Errorf("chi-square %.1f over 32 degrees of freedom", chi)
	}
	bi := make([]byte, 4*100)
	bf := make([]byte, 2*100)
	Fill(bi, Int32, 7, 3)
	Fill(bf, BFloat16, 7, 3)
	for i := range 100 {
		if value(bi, Int32, i) != value(a, Float32, i)*8 || value(bf, BFloat16, i) != value(a, Float32, i) {
			t.Fatalf("element %d: int32 %g, bfloat16 %g, float %g", i, value(bi, Int32, i), value(bf, BFloat16, i), value(a, Float32, i))
		}
	}
}

// Bfloat16 rounds to nearest, ties to even: 1+2^-8 (a tie) to 1, 1+3*2^-8
// (a tie) to 1+2^-6, 1+2^-8+2^-20 up to 1+2^-7; NaN stays NaN.
func TestBFloat16Rounding(t *testing.T) {
	for _, c := range []struct {
		f    float32
		want uint16
	}{
		{1, 0x3f80}, {1 + 0x1p-8, 0x3f80}, {1 + 3*0x1p-8, 0x3f82}, {1 + 0x1p-8 + 0x1p-20, 0x3f81},
		{-2, 0xc000}, {0.125, 0x3e00},
	} {
		if got := f32ToBF16(c.f); got != c.want {
			t.Errorf("f32ToBF16(%g) = %#04x, want %#04x", c.f, got, c.want)
		}
	}
	if got := bf16ToF32(f32ToBF16(float32(math.NaN()))); !math.IsNaN(float64(got)) {
		t.Errorf("NaN became %g", got)
	}
}

// Reference on hand-made inputs, against hand-computed outputs.
func TestReference(t *testing.T) {
	out, err := Reference(Config{Ranks: 3, Op: AllReduce, Count: 2, DType: Float32},
		[][]byte{f32s(1, 2), f32s(3, 4), f32s(0.5, -1)})
	if err != nil {
		t.Fatal(err)
	}
	for r := range 3 {
		if string(out[r]) != string(f32s(4.5, 5)) {
			t.Errorf("allreduce sum rank %d: % x", r, out[r])
		}
	}
	out, _ = Reference(Config{Ranks: 3, Op: Reduce, Count: 2, DType: Float32, RedOp: Max, Root: 1},
		[][]byte{f32s(1, 2), f32s(3, -4), f32s(0.5, -1)})
	if out[0] != nil || out[2] != nil || string(out[1]) != string(f32s(3, 2)) {
		t.Errorf("reduce max: %v", out)
	}
	out, _ = Reference(Config{Ranks: 2, Op: ReduceScatter, Count: 1, DType: Int32, RedOp: Prod},
		[][]byte{i32s(65536, 3), i32s(65536, -5)})
	if string(out[0]) != string(i32s(0)) || string(out[1]) != string(i32s(-15)) {
		t.Errorf("reducescatter prod (wrapping): %v", out)
	}
	out, _ = Reference(Config{Ranks: 2, Op: AllToAll, Count: 1, DType: Int32},
		[][]byte{i32s(10, 11), i32s(20, 21)})
	if string(out[0]) != string(i32s(10, 20)) || string(out[1]) != string(i32s(11, 21)) {
		t.Errorf("alltoall: %v", out)
	}
	out, _ = Reference(Config{Ranks: 3, Op: Gather, Count: 1, DType: Int32, Root: 2},
		[][]byte{i32s(1), i32s(2), i32s(3)})
	if out[0] != nil || string(out[2]) != string(i32s(1, 2, 3)) {
		t.Errorf("gather: %v", out)
	}
	// 1 + 2^-8 in bfloat16 is a tie and rounds to 1.
	bf := func(v float32) []byte { b := make([]byte, 2); le.PutUint16(b, f32ToBF16(v)); return b }
	out, _ = Reference(Config{Ranks: 2, Op: AllReduce, Count: 1, DType: BFloat16},
		[][]byte{bf(1), bf(0x1p-8)})
	if le.Uint16(out[0]) != 0x3f80 {
		t.Errorf("bfloat16 1+2^-8 = %#04x, want 0x3f80", le.Uint16(out[0]))
	}
	if _, err := Reference(Config{Ranks: 2, Op: AllReduce, Count: 2}, [][]byte{f32s(1, 2), f32s(1)}); err == nil ||
		!strings.Contains(err.Error(), "input of rank 1 is 4 bytes, want 8") {
		t.Errorf("short input: %v", err)
	}
}

// Check counts elements beyond the tolerance, missing ones and NaN
// mismatches; Tolerance's bounds are the stated ones.
func TestCheck(t *testing.T) {
	tol := Tolerance(Float32, Sum, 4)
	if want := 3 * 0x1p-24 * 4 * FillMax; tol.Abs != want || tol.Rel != 0x1p-24 {
		t.Fatalf("Tolerance(float, sum, 4) = %+v", tol)
	}
	if tol := Tolerance(BFloat16, Prod, 8); tol.Rel != 8*0x1p-8 || tol.Abs != 0 {
		t.Fatalf("Tolerance(bfloat16, prod, 8) = %+v", tol)
	}
	if tol := Tolerance(Int32, Sum, 8); tol != (Tol{}) {
		t.Fatalf("Tolerance(int32) = %+v", tol)
	}
	want := f32s(1, 2, 3, float32(math.NaN()))
	got := f32s(1+0x1p-22, 2+0x1p-20, 3, float32(math.NaN()))
	tl := Tol{Abs: 0x1p-21}
	if n := Check(got, want, Float32, tl); n != 1 {
		t.Errorf("Check = %d, want 1 (only 2+2^-20 is beyond 2^-21)", n)
	}
	if n := Check(got[:8], want, Float32, tl); n != 3 {
		t.Errorf("Check of a short output = %d, want 3", n)
	}
	if n := Check(f32s(0), f32s(float32(math.NaN())), Float32, Tol{Abs: 1}); n != 1 {
		t.Errorf("NaN against 0: %d wrong", n)
	}
	if n := Check(i32s(5, 6), i32s(5, 7), Int32, Tol{}); n != 1 {
		t.Errorf("int32: %d wrong", n)
	}
	if n := Check(f32s(0), f32s(float32(math.Copysign(0, -1))), Float32, Tol{}); n != 0 {
		t.Errorf("-0 against 0: %d wrong", n)
	}
}

// The busbw of fabric-facts §7's floor (8 ranks, 64 MB all-reduce in
// 8.96 ms) is the link's 12.5 GB/s; the factors are nccl-tests'.
func TestBandwidth(t *testing.T) {
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s = %.12g, want %.12g", what, got, want)
		}
	}
	near("AlgBW", AlgBW(64e6, 8.96e-3), 64e6/8.96e-3/1e9)
	near("BusBW allreduce", BusBW(AllReduce, 64e6, 8, 8.96e-3), 12.5)
	near("BusBW allgather", BusBW(AllGather, 1e9, 4, 1), 0.75)
	near("BusBW reducescatter", BusBW(ReduceScatter, 1e9, 4, 1), 0.75)
	near("BusBW alltoall", BusBW(AllToAll, 1e9, 5, 1), 0.8)
	near("BusBW broadcast", BusBW(Broadcast, 1e9, 16, 1), 1)
	near("BusBW reduce", BusBW(Reduce, 1e9, 16, 1), 1)
}

// AlphaBeta against hand-computed values: §7's floor for the ring, and
// small cases for the others.
func TestAlphaBetaValues(t *testing.T) {
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("%s = %.12g, want %.12g", what, got, want)
		}
	}
	beta := 1 / 12.5e9
	near("ring allreduce floor", AlphaBeta(Ring, AllReduce, 8, 64e6, 0, beta, 0), 8.96e-3)
	near("ring allreduce", AlphaBeta(Ring, AllReduce, 8, 64e6, 1e-6, beta, 1e-12), 14e-6+8.96e-3+0.875*64e6*1e-12)
	near("rhd allreduce", AlphaBeta(RHD, AllReduce, 8, 64e6, 1e-6, beta, 0), 6e-6+8.96e-3)
	// p = 6: 4 ranks halve and double (4 steps, 1.5 n), plus fold in and out.
	near("rhd allreduce p=6", AlphaBeta(RHD, AllReduce, 6, 1000, 1, 0.001, 0), 4+1.5+2*(1+1))
	near("ring allgather", AlphaBeta(Ring, AllGather, 4, 4000, 1, 0.001, 0), 3+3)
	near("rhd reducescatter", AlphaBeta(RHD, ReduceScatter, 4, 4000, 1, 0.001, 0.0005), 2+3+1.5)
	near("binomial broadcast p=5", AlphaBeta(Binomial, Broadcast, 5, 1000, 1, 0.001, 0), 6)
	near("binomial reduce p=5", AlphaBeta(Binomial, Reduce, 5, 1000, 1, 0.001, 0.001), 9)
	near("chain broadcast", AlphaBeta(Ring, Broadcast, 4, 1000, 1, 0.001, 0), 6)
	near("direct alltoall", AlphaBeta(Direct, AllToAll, 4, 4000, 1, 0.001, 0), 4)
	near("tree allreduce", AlphaBeta(Tree, AllReduce, 8, 1000, 1, 0.001, 0), 6+2)
	if v := AlphaBeta(Tree, Broadcast, 8, 1000, 1, 1, 1); !math.IsNaN(v) {
		t.Errorf("tree broadcast = %g, want NaN", v)
	}
}

// ChooseAlgo at 8 ranks: Tree below 2 MB (where 2 log2 8 latencies plus
// 2n bytes beat 14 latencies plus 1.75n), Ring above; Ring at 2 ranks; the
// fixed choices of the other operations.
func TestChooseAlgo(t *testing.T) {
	for _, c := range []struct {
		op    Op
		bytes int64
		ranks int
		want  Algo
	}{
		{AllReduce, 1 << 20, 8, Tree}, {AllReduce, 1.9e6, 8, Tree}, {AllReduce, 2.1e6, 8, Ring},
		{AllReduce, 64 << 20, 8, Ring}, {AllReduce, 1024, 2, Ring},
		{AllGather, 8, 8, Ring}, {Broadcast, 8, 8, Ring}, {AllToAll, 8, 8, Direct}, {Gather, 8, 8, Direct},
	} {
		if got := ChooseAlgo(c.op, c.bytes, c.ranks); got != c.want {
			t.Errorf("ChooseAlgo(%s, %d, %d) = %s, want %s", c.op, c.bytes, c.ranks, got, c.want)
		}
	}
	c, err := New(Config{Ranks: 8, Op: AllReduce, Count: 256})
	if err != nil || c.Config().Algo != Tree || c.Config().ChunkSize != DefaultChunkSize || c.Config().Channels != 1 {
		t.Errorf("New with Auto: %+v, %v", c.Config(), err)
	}
}

// The double binary tree: each tree spans the ranks with p-1 edges and at
// most two children per rank; at an even rank count no rank has children
// in both trees, at an odd one at most one rank does.
func TestDoubleTree(t *testing.T) {
	for p := 2; p <= 33; p++ {
		tr := doubleTree(p)
		both := 0
		for r := range p {
			if len(tr[0].kids[r]) > 0 && len(tr[1].kids[r]) > 0 {
				both++
			}
		}
		if (p%2 == 0 && both > 0) || both > 1 {
			t.Errorf("p=%d: %d ranks inner in both trees", p, both)
		}
		for k := range tr {
			roots, edges := 0, 0
			for r := range p {
				if len(tr[k].kids[r]) > 2 {
					t.Errorf("p=%d tree %d: rank %d has %d children", p, k, r, len(tr[k].kids[r]))
				}
				edges += len(tr[k].kids[r])
				if tr[k].parent[r] < 0 {
					roots++
				}
				// Walking up reaches the root within p steps.
				q, n := r, 0
				for tr[k].parent[q] >= 0 && n <= p {
					q, n = tr[k].parent[q], n+1
				}
				if n > p {
					t.Errorf("p=%d tree %d: rank %d in a cycle", p, k, r)
				}
			}
			if roots != 1 || edges != p-1 {
				t.Errorf("p=%d tree %d: %d roots, %d edges", p, k, roots, edges)
			}
		}
	}
}

// Each wrong field of a Config gets an error naming it.
func TestConfigErrors(t *testing.T) {
	ok := Config{Ranks: 4, Op: Broadcast, Algo: Ring, Count: 8, Root: 1}
	for _, c := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.Ranks = 0 }, "Config.Ranks 0"},
		{func(c *Config) { c.Rank = 4 }, "Config.Rank 4"},
		{func(c *Config) { c.Op = 99 }, "Config.Op 99"},
		{func(c *Config) { c.Algo = 99 }, "Config.Algo 99"},
		{func(c *Config) { c.Algo = Direct }, "Config.Algo direct: cannot carry out broadcast"},
		{func(c *Config) { c.Op, c.Algo, c.Ranks = AllGather, RHD, 6 }, "needs a power-of-two rank count, not 6"},
		{func(c *Config) { c.Count = -1 }, "Config.Count -1"},
		{func(c *Config) { c.DType = 9 }, "Config.DType 9"},
		{func(c *Config) { c.RedOp = 9 }, "Config.RedOp 9"},
		{func(c *Config) { c.Root = 4 }, "Config.Root 4"},
		{func(c *Config) { c.ChunkSize = -1 }, "Config.ChunkSize -1"},
		{func(c *Config) { c.ChunkSize = 3 }, "Config.ChunkSize 3: smaller than one float element"},
		{func(c *Config) { c.Channels = -2 }, "Config.Channels -2"},
		{func(c *Config) { c.Count = int(huge) }, "Config.Count 1099511627776"},
		{func(c *Config) { c.Count, c.ChunkSize = 1<<27, 4 }, "Config.ChunkSize 4: 134217728 chunks of the 536870912-byte buffer, more than 16777216"},
	} {
		if strings.HasPrefix(c.want, "Config.Count 1099511627776") && strconv.IntSize < 64 {
			continue // no such int on 32-bit platforms
		}
		cfg := ok
		c.mod(&cfg)
		_, err := New(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one containing %q", cfg, err, c.want)
		}
	}
	if _, err := New(ok); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"allreduce", "gather"} {
		if op, err := ParseOp(s); err != nil || op.String() != s {
			t.Errorf("ParseOp(%q) = %v, %v", s, op, err)
		}
	}
	if _, err := ParseAlgo("ring2"); err == nil || !strings.Contains(err.Error(), `"ring2"`) {
		t.Errorf("ParseAlgo: %v", err)
	}
	if d, err := ParseDType("bfloat16"); err != nil || d != BFloat16 {
		t.Errorf("ParseDType: %v %v", d, err)
	}
	if r, err := ParseRedOp("min"); err != nil || r != Min {
		t.Errorf("ParseRedOp: %v %v", r, err)
	}
}

// OnRecv refuses a chunk the rank does not expect, with an error naming
// it, and changes nothing.
func TestOnRecvErrors(t *testing.T) {
	cfg := Config{Ranks: 4, Rank: 1, Op: AllReduce, Algo: Ring, Count: 16, ChunkSize: 16, Channels: 2}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.OnRecv(0, 0, ChunkID{}, make([]byte, 16)); err == nil || !strings.Contains(err.Error(), "before Start") {
		t.Errorf("before Start: %v", err)
	}
	Fill(c.Input(), Float32, 1, 1)
	c.Start(0)
	before := string(c.Output())
	good := make([]byte, 16)
	for _, e := range []struct {
		from  int
		chunk ChunkID
		data  []byte
		want  string
	}{
		{-1, ChunkID{}, good, "from rank -1"},
		{4, ChunkID{}, good, "from rank 4"},
		{2, ChunkID{}, good, "expects 0 chunks from it"},
		{0, ChunkID{Seq: 6}, good, "chunk 6 from rank 0: expects 6 chunks"},
		{0, ChunkID{Seq: -1}, good, "chunk -1"},
		{0, ChunkID{Channel: 1}, good, "channel 1, want 0"},
		{0, ChunkID{}, good[:12], "12 bytes, want 16"},
	} {
		if err := c.OnRecv(1, e.from, e.chunk, e.data); err == nil || !strings.Contains(err.Error(), e.want) {
			t.Errorf("from %d %+v: error %v, want %q", e.from, e.chunk, err, e.want)
		}
	}
	if string(c.Output()) != before {
		t.Error("a refused chunk changed the buffer")
	}
	if err := c.OnRecv(1, 0, ChunkID{}, good); err != nil {
		t.Fatal(err)
	}
	if err := c.OnRecv(2, 0, ChunkID{}, good); err == nil || !strings.Contains(err.Error(), "received twice") {
		t.Errorf("duplicate: %v", err)
	}
}

// huge is 2^40, as a variable so that 32-bit builds compile.
var huge = int64(1) << 40

// SendPlan names the peers a ring rank sends to (its successor only) and
// the largest chunk; a direct all-to-all rank sends to every other rank.
func TestSendPlan(t *testing.T) {
	c, err := New(Config{Ranks: 4, Rank: 1, Op: AllReduce, Algo: Ring, Count: 1 << 20, ChunkSize: 65536})
	if err != nil {
		t.Fatal(err)
	}
	to, maxLen := c.SendPlan()
	if len(to) != 1 || to[0] != 2 || maxLen != 65536 {
		t.Fatalf("ring rank 1: sends to %v, largest chunk %d; want [2], 65536", to, maxLen)
	}
	c, err = New(Config{Ranks: 4, Rank: 0, Op: AllToAll, Algo: Direct, Count: 1000})
	if err != nil {
		t.Fatal(err)
	}
	to, maxLen = c.SendPlan()
	if len(to) != 3 || maxLen != 4000 {
		t.Fatalf("all-to-all rank 0: sends to %v, largest %d; want 3 peers, 4000", to, maxLen)
	}
}

// A SHARP tree of two nodes under a root, driven by hand: the leaves'
// vectors summed at the nodes come back to every leaf; the node refuses a
// chunk from a stranger or twice from one child.
func TestSharpTree(t *testing.T) {
	base := SharpConfig{Count: 10, DType: Int32, RedOp: Sum, ChunkSize: 16} // 3 chunks: 16, 16, 8 bytes
	// Participants: leaves 0-3; nodes 4 (leaves 0, 1), 5 (leaves 2, 3), 6 the root.
	var leaves []*SharpLeaf
	for r := 0; r < 4; r++ {
		c := base
		c.Parent = 4 + r/2
		l, err := NewSharpLeaf(c)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 10; i++ {
			le.PutUint32(l.Input()[4*i:], uint32(100*r+i))
		}
		leaves = append(leaves, l)
	}
	mk := func(parent int, children ...int) *SharpNode {
		c := base
		c.Parent, c.Children = parent, children
		n, err := NewSharpNode(c)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	parts := []interface {
		Start(sim.Time)
		AppendSends([]Send) []Send
		Payload(Send) []byte
		OnRecv(sim.Time, int, ChunkID, []byte) error
		Done() bool
	}{leaves[0], leaves[1], leaves[2], leaves[3], mk(6, 0, 1), mk(6, 2, 3), mk(-1, 4, 5)}
	type msg struct {
		from int
		s    Send
		data []byte
	}
	var q []msg
	for i, p := range parts {
		p.Start(0)
		for _, s := range p.AppendSends(nil) {
			q = append(q, msg{i, s, append([]byte(nil), p.Payload(s)...)})
		}
	}
	for len(q) > 0 {
		m := q[0]
		q = q[1:]
		to := parts[m.s.To]
		if err := to.OnRecv(1, m.from, m.s.Chunk, m.data); err != nil {
			t.Fatal(err)
		}
		for _, s := range to.AppendSends(nil) {
			q = append(q, msg{m.s.To, s, append([]byte(nil), to.Payload(s)...)})
		}
	}
	for r, l := range leaves {
		if !l.Done() {
			t.Fatalf("leaf %d not done", r)
		}
		for i := 0; i < 10; i++ {
			if got, want := le.Uint32(l.Output()[4*i:]), uint32(600+4*i); got != want { // 0+100+200+300 + 4i
				t.Fatalf("leaf %d element %d: %d, want %d", r, i, got, want)
			}
		}
	}
	for i := 4; i < 7; i++ {
		if !parts[i].Done() {
			t.Fatalf("node %d not done", i)
		}
	}
	n := mk(-1, 0, 1)
	if err := n.OnRecv(0, 3, ChunkID{Seq: 0}, make([]byte, 16)); err == nil {
		t.Fatal("a chunk from a stranger was taken")
	}
	if err := n.OnRecv(0, 0, ChunkID{Seq: 0}, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	if err := n.OnRecv(0, 0, ChunkID{Seq: 0}, make([]byte, 16)); err == nil {
		t.Fatal("a child's chunk was taken twice")
	}
}
