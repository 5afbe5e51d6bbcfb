package coll

// The schedule: every algorithm is written as one global sequence of
// transfers (from, to, source region, destination region, copy or reduce),
// generated in causal order, step by step. Each rank generates the same
// sequence and keeps the transfers it takes part in, so the k-th chunk one
// rank sends another is, on both sides, the k-th transfer between them (its
// ChunkID.Seq). A send depends on the receives into the segments it reads
// that come before it in the sequence; a receive is applied as it arrives.
// That is safe because in every algorithm here a region a rank has sent is
// written again only by data that already contains what it sent.

// sendOp is a chunk this rank sends.
type sendOp struct {
	to, seq, ch, step int32
	off, n            int // bytes, in the input (in) or work buffer
	in                bool
	ndeps             int32 // receives it waits for
}

// recvOp is a chunk this rank receives.
type recvOp struct {
	from, seq, ch, step int32
	off, n              int // bytes in the work buffer
	reduce              bool
	dep0, dep1          int32 // dependents[dep0:dep1]: sends waiting for it
}

// builder collects one rank's part of a global transfer sequence.
type builder struct {
	me, p   int
	es      int // element size
	sends   []sendOp
	recvs   []recvOp
	deps    [][]int32 // per send: receives it waits for
	pend    [][]int32 // per segment: receives into it so far
	mark    []int32   // per receive: last send that listed it, plus one
	sendSeq []int32
	recvSeq []int32
}

func newBuilder(me, p, es, segs int) *builder {
	return &builder{me: me, p: p, es: es, pend: make([][]int32, segs),
		sendSeq: make([]int32, p), recvSeq: make([]int32, p)}
}

// xfer records a transfer of n elements from rank from (at element srcOff of
// its input buffer if in, else its work buffer, reading segments
// [s0, s1)) to rank to (at element dstOff of its work buffer, writing
// segments [d0, d1)), reduced into the destination or copied over it.
func (b *builder) xfer(step, ch, from, to int, in bool, srcOff, dstOff, n int, reduce bool, s0, s1, d0, d1 int) {
	if n == 0 || from == to {
		return
	}
	if from == b.me {
		id := int32(len(b.sends))
		var deps []int32
		if !in {
			for s := s0; s < s1; s++ {
				for _, r := range b.pend[s] {
					if b.mark[r] != id+1 {
						b.mark[r] = id + 1
						deps = append(deps, r)
					}
				}
			}
		}
		b.sends = append(b.sends, sendOp{to: int32(to), seq: b.sendSeq[to], ch: int32(ch), step: int32(step),
			off: srcOff * b.es, n: n * b.es, in: in, ndeps: int32(len(deps))})
		b.deps = append(b.deps, deps)
		b.sendSeq[to]++
	}
	if to == b.me {
		id := int32(len(b.recvs))
		b.recvs = append(b.recvs, recvOp{from: int32(from), seq: b.recvSeq[from], ch: int32(ch), step: int32(step),
			off: dstOff * b.es, n: n * b.es, reduce: reduce})
		b.mark = append(b.mark, 0)
		b.recvSeq[from]++
		for s := d0; s < d1; s++ {
			b.pend[s] = append(b.pend[s], id)
		}
	}
}

// block is a run of elements [off, off+n).
type block struct{ off, n int }

// split returns part i of n elements cut into k near-equal parts.
func split(n, k, i int) (lo, ln int) {
	lo = i * n / k
	return lo, (i+1)*n/k - lo
}

// xferRange sends blocks [lo, hi) of bl (segments seg+lo .. seg+hi) from
// rank from to rank to at the same offsets, one transfer per contiguous run.
func (b *builder) xferRange(step, ch, from, to int, bl []block, lo, hi int, reduce bool, seg int) {
	for j := lo; j < hi; {
		k := j + 1
		end := bl[j].off + bl[j].n
		for k < hi && bl[k].off == end {
			end += bl[k].n
			k++
		}
		b.xfer(step, ch, from, to, false, bl[j].off, bl[j].off, end-bl[j].off, reduce, seg+j, seg+k, seg+j, seg+k)
		j = k
	}
}

func mod(a, p int) int { return ((a % p) + p) % p }

// schedule generates cfg's transfers for rank b.me. cfg is valid and its
// Algo is not Auto.
func schedule(cfg *Config, me int) *builder {
	p, count, es := cfg.Ranks, cfg.Count, cfg.DType.Size()
	chunk := cfg.ChunkSize / es
	if chunk < 1 {
		chunk = 1
	}
	nch := cfg.Channels
	var b *builder
	switch cfg.Op {
	case AllReduce:
		var per int // elements per slice
		switch cfg.Algo {
		case Hier:
			per = chunk * p // Local shards of p/Local sub-blocks
		case Ring:
			per = chunk * p
		case RHD:
			per = chunk * pow2floor(p)
		default:
			per = chunk
		}
		nsl := (count + per - 1) / per
		nblk := p
		if cfg.Algo == Tree {
			nblk = 1
		}
		b = newBuilder(me, p, es, nsl*nblk)
		var tr [2]tree
		if cfg.Algo == Tree {
			tr = doubleTree(p)
		}
		var h *hier
		if cfg.Algo == Hier {
			h = newHier(p, cfg.Local)
		}
		bl := make([]block, p)
		for s := 0; s < nsl; s++ {
			s0 := s * per
			n := min(per, count-s0)
			ch := s % nch
			switch cfg.Algo {
			case Ring:
				for j := range p {
					lo, ln := split(n, p, j)
					bl[j] = block{s0 + lo, ln}
				}
				ringRS(b, bl, ch, 0, 0, s*p)
				ringAG(b, bl, ch, 1, p-1, s*p)
			case RHD:
				rhdAllReduce(b, s0, n, ch, s*p)
			case Tree:
				treeAllReduce(b, &tr[s%2], s0, n, ch, s)
			case Hier:
				h.allReduce(b, s0, n, ch, s*p)
			}
		}
	case ReduceScatter, AllGather:
		nsl := (count + chunk - 1) / chunk
		b = newBuilder(me, p, es, nsl*p)
		bl := make([]block, p)
		for s := 0; s < nsl; s++ {
			n := min(chunk, count-s*chunk)
			for j := range p {
				bl[j] = block{j*count + s*chunk, n}
			}
			ch := s % nch
			switch {
			case cfg.Op == ReduceScatter && cfg.Algo == Ring:
				ringRS(b, bl, ch, -1, 0, s*p)
			case cfg.Op == AllGather && cfg.Algo == Ring:
				ringAG(b, bl, ch, 0, 0, s*p)
			case cfg.Op == ReduceScatter:
				rhdHalving(b, bl, ch, 0, s*p)
			default:
				rhdDoubling(b, bl, ch, 0, s*p, func(r int) (int, int) { return r, r + 1 })
			}
		}
	case Broadcast, Reduce:
		nsl := (count + chunk - 1) / chunk
		b = newBuilder(me, p, es, nsl)
		for s := 0; s < nsl; s++ {
			s0 := s * chunk
			n := min(chunk, count-s0)
			ch := s % nch
			at := func(v int) int { return (v + cfg.Root) % p }
			switch {
			case cfg.Algo == Ring && cfg.Op == Broadcast:
				for v := 0; v+1 < p; v++ {
					b.xfer(v, ch, at(v), at(v+1), false, s0, s0, n, false, s, s+1, s, s+1)
				}
			case cfg.Algo == Ring:
				for v := p - 1; v > 0; v-- {
					b.xfer(p-1-v, ch, at(v), at(v-1), false, s0, s0, n, true, s, s+1, s, s+1)
				}
			case cfg.Op == Broadcast:
				for k := 0; 1<<k < p; k++ {
					for v := 0; v < 1<<k && v+1<<k < p; v++ {
						b.xfer(k, ch, at(v), at(v+1<<k), false, s0, s0, n, false, s, s+1, s, s+1)
					}
				}
			default:
				K := log2ceil(p)
				for k := K - 1; k >= 0; k-- {
					for v := 0; v < 1<<k && v+1<<k < p; v++ {
						b.xfer(K-1-k, ch, at(v+1<<k), at(v), false, s0, s0, n, true, s, s+1, s, s+1)
					}
				}
			}
		}
	case AllToAll, Scatter, Gather:
		nsl := (count + chunk - 1) / chunk
		b = newBuilder(me, p, es, 0)
		for s := 0; s < nsl; s++ {
			s0 := s * chunk
			n := min(chunk, count-s0)
			ch := s % nch
			switch cfg.Op {
			case AllToAll:
				for k := 1; k < p; k++ {
					for r := range p {
						to := (r + k) % p
						b.xfer(k-1, ch, r, to, true, to*count+s0, r*count+s0, n, false, 0, 0, 0, 0)
					}
				}
			case Scatter:
				for j := range p {
					b.xfer(0, ch, cfg.Root, j, true, j*count+s0, s0, n, false, 0, 0, 0, 0)
				}
			case Gather:
				for j := range p {
					b.xfer(0, ch, j, cfg.Root, true, s0, j*count+s0, n, false, 0, 0, 0, 0)
				}
			}
		}
	}
	return b
}

// ringRS is the reduce-scatter half of a ring over blocks bl (segments
// seg+j): at step s rank r sends block r-s+shift to r+1 and reduces block
// r-s-1+shift from r-1; after p-1 steps rank r holds block r+1+shift
// reduced.
func ringRS(b *builder, bl []block, ch, shift, step0, seg int) {
	p := b.p
	for s := 0; s < p-1; s++ {
		for r := range p {
			j := mod(r-s+shift, p)
			b.xfer(step0+s, ch, r, (r+1)%p, false, bl[j].off, bl[j].off, bl[j].n, true, seg+j, seg+j+1, seg+j, seg+j+1)
		}
	}
}

// ringAG is the all-gather half of a ring: rank r starts holding block
// r+own; at step s it sends block r+own-s to r+1 and takes block r+own-s-1
// from r-1.
func ringAG(b *builder, bl []block, ch, own, step0, seg int) {
	p := b.p
	for s := 0; s < p-1; s++ {
		for r := range p {
			j := mod(r+own-s, p)
			b.xfer(step0+s, ch, r, (r+1)%p, false, bl[j].off, bl[j].off, bl[j].n, false, seg+j, seg+j+1, seg+j, seg+j+1)
		}
	}
}

// rhdHalving is recursive halving among ranks 0..p-1 over the p blocks of
// bl (p = len(bl), a power of two): with mask p/2, p/4, ..., 1 each rank keeps the half of its range
// that holds its own index, sends the other half to rank r^mask and reduces
// the partner's copy of its half. Rank r ends with block r reduced.
func rhdHalving(b *builder, bl []block, ch, step0, seg int) {
	p := len(bl)
	lo := make([]int, p)
	hi := make([]int, p)
	for r := range p {
		hi[r] = p
	}
	step := step0
	for mask := p / 2; mask >= 1; mask /= 2 {
		for r := range p {
			mid := lo[r] + (hi[r]-lo[r])/2
			if r&mask == 0 {
				b.xferRange(step, ch, r, r^mask, bl, mid, hi[r], true, seg)
			} else {
				b.xferRange(step, ch, r, r^mask, bl, lo[r], mid, true, seg)
			}
		}
		for r := range p {
			mid := lo[r] + (hi[r]-lo[r])/2
			if r&mask == 0 {
				hi[r] = mid
			} else {
				lo[r] = mid
			}
		}
		step++
	}
}

// rhdDoubling is recursive doubling among ranks 0..p-1 over the p blocks of
// bl (p = len(bl), a power of two): rank r starts with the blocks range(r) and, with mask 1, 2, ...,
// p/2, sends its range to r^mask and takes the partner's, doubling it.
func rhdDoubling(b *builder, bl []block, ch, step0, seg int, rng func(int) (int, int)) {
	p := len(bl)
	lo := make([]int, p)
	hi := make([]int, p)
	for r := range p {
		lo[r], hi[r] = rng(r)
	}
	step := step0
	for mask := 1; mask < p; mask *= 2 {
		for r := range p {
			b.xferRange(step, ch, r, r^mask, bl, lo[r], hi[r], false, seg)
		}
		for r := range p {
			if r&mask == 0 {
				hi[r] = hi[r^mask]
			} else {
				lo[r] = lo[r^mask]
			}
		}
		step++
	}
}

// rhdAllReduce is Rabenseifner's all-reduce of the n elements at s0:
// ranks p2..p-1 (p2 the largest power of two not above p) first reduce
// their data into rank r-p2, the first p2 ranks reduce-scatter by recursive
// halving and all-gather by recursive doubling over p2 blocks, and rank
// r-p2 finally sends the result to rank r.
func rhdAllReduce(b *builder, s0, n, ch, seg int) {
	p := b.p
	p2 := pow2floor(p)
	step := 0
	if p2 < p {
		for r := p2; r < p; r++ {
			b.xfer(0, ch, r, r-p2, false, s0, s0, n, true, seg, seg+p2, seg, seg+p2)
		}
		step = 1
	}
	bl := make([]block, p2)
	for j := range p2 {
		lo, ln := split(n, p2, j)
		bl[j] = block{s0 + lo, ln}
	}
	// The halving and doubling run among the first p2 ranks, one per block.
	rhdHalving(b, bl, ch, step, seg)
	rhdDoubling(b, bl, ch, step+log2ceil(p2), seg, func(r int) (int, int) { return r, r + 1 })
	step += 2 * log2ceil(p2)
	if p2 < p {
		for r := p2; r < p; r++ {
			b.xfer(step, ch, r-p2, r, false, s0, s0, n, false, seg, seg+p2, seg, seg+p2)
		}
	}
}

// tree is a binary tree over the ranks.
type tree struct {
	parent []int   // -1 at the root
	kids   [][]int // at most two
	height []int   // 0 at leaves
	depth  []int   // 0 at the root
	byH    []int   // ranks by increasing height
	byD    []int   // ranks by increasing depth
}

// inorderParent returns the parent of position i (1-based) in the in-order
// binary tree over 1..n: the tree over 1..2^k-1 in which position i, with
// lowest set bit l, has children i-l/2 and i+l/2, cut to 1..n (a parent
// beyond n is replaced by its own parent). It returns 0 at the root, the
// largest power of two not above n.
func inorderParent(i, n int) int {
	root := pow2floor(n)
	for i != root {
		l := i & -i
		if i&(2*l) == 0 {
			i += l
		} else {
			i -= l
		}
		if i <= n {
			return i
		}
	}
	return 0
}

// doubleTree returns NCCL's double binary tree over p ranks: tree 0 puts
// rank r at in-order position r+1; tree 1 mirrors it (position p-r) when p
// is even and shifts it (position (r+1) mod p + 1) when p is odd, so that
// the leaves of one tree (odd positions) are inner nodes of the other.
func doubleTree(p int) [2]tree {
	var t [2]tree
	for k := range t {
		pos := make([]int, p)
		rank := make([]int, p+1)
		for r := range p {
			switch {
			case k == 0:
				pos[r] = r + 1
			case p%2 == 0:
				pos[r] = p - r
			default:
				pos[r] = (r+1)%p + 1
			}
			rank[pos[r]] = r
		}
		tr := &t[k]
		tr.parent = make([]int, p)
		tr.kids = make([][]int, p)
		tr.height = make([]int, p)
		tr.depth = make([]int, p)
		for r := range p {
			q := inorderParent(pos[r], p)
			if q == 0 {
				tr.parent[r] = -1
				continue
			}
			tr.parent[r] = rank[q]
			tr.kids[rank[q]] = append(tr.kids[rank[q]], r)
		}
		var hgt, dep func(r int) int
		hgt = func(r int) int {
			h := 0
			for _, c := range tr.kids[r] {
				h = max(h, hgt(c)+1)
			}
			tr.height[r] = h
			return h
		}
		dep = func(r int) int {
			if tr.parent[r] < 0 {
				return 0
			}
			return dep(tr.parent[r]) + 1
		}
		for r := range p {
			if tr.parent[r] < 0 {
				hgt(r)
			}
			tr.depth[r] = dep(r)
		}
		tr.byH = make([]int, p)
		tr.byD = make([]int, p)
		for r := range p {
			tr.byH[r], tr.byD[r] = r, r
		}
		sortBy(tr.byH, tr.height)
		sortBy(tr.byD, tr.depth)
	}
	return t
}

// sortBy sorts rs stably by key[r] (insertion sort; p is small).
func sortBy(rs, key []int) {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && key[rs[j]] < key[rs[j-1]]; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
}

// treeAllReduce reduces the n elements at s0 up tree t (a rank sends to
// its parent once its children's data is in) and broadcasts the result down
// it. A rank's send up is step height, its send down step H+depth, H the
// root's height plus one.
func treeAllReduce(b *builder, t *tree, s0, n, ch, seg int) {
	H := 0
	for _, r := range t.byH {
		if t.parent[r] >= 0 {
			b.xfer(t.height[r], ch, r, t.parent[r], false, s0, s0, n, true, seg, seg+1, seg, seg+1)
		} else {
			H = t.height[r] + 1
		}
	}
	for _, r := range t.byD {
		for _, c := range t.kids[r] {
			b.xfer(H+t.depth[r], ch, r, c, false, s0, s0, n, false, seg, seg+1, seg, seg+1)
		}
	}
}

// hier is the plan of a hierarchical all-reduce: M nodes of G ranks. A
// slice is cut into G shards (shard j ends reduced on each node's rank j)
// of M sub-blocks (sub-block k is what node k reduces between nodes);
// sub-block (j, k) is segment seg + j*M + k.
type hier struct {
	g, m  int
	ranks []int   // scratch: the ranks of one ring
	bl    []block // scratch: its blocks
	segs  []int   // scratch: their segments
	sub   []block // sub-block (j, k) at j*M + k
}

func newHier(p, g int) *hier {
	m := p / g
	return &hier{g: g, m: m, ranks: make([]int, max(g, m)), bl: make([]block, max(g, m)),
		segs: make([]int, max(g, m)), sub: make([]block, p)}
}

// allReduce adds the transfers of the slice of n elements at s0, whose
// segments start at seg, in causal order: the reduce-scatters inside the
// nodes, the rings between nodes, the all-gathers inside the nodes.
func (h *hier) allReduce(b *builder, s0, n, ch, seg int) {
	G, M := h.g, h.m
	for j := range G {
		lo, ln := split(n, G, j)
		for k := range M {
			klo, kln := split(ln, M, k)
			h.sub[j*M+k] = block{s0 + lo + klo, kln}
		}
	}
	ranks, bl, segs := h.ranks[:G], h.bl[:G], h.segs[:G]
	inNode := func(node, k int) {
		for j := range G {
			ranks[j] = node*G + j
			bl[j] = h.sub[j*M+k]
			segs[j] = seg + j*M + k
		}
	}
	for node := range M {
		for k := range M {
			inNode(node, k)
			ringOn(b, ranks, bl, segs, ch, -1, 0, true)
		}
	}
	step := G - 1
	if M > 1 {
		ranks, bl, segs := h.ranks[:M], h.bl[:M], h.segs[:M]
		for j := range G {
			for k := range M {
				ranks[k] = k*G + j
				bl[k] = h.sub[j*M+k]
				segs[k] = seg + j*M + k
			}
			ringOn(b, ranks, bl, segs, ch, 0, step, true)
			ringOn(b, ranks, bl, segs, ch, 1, step+M-1, false)
		}
		step += 2 * (M - 1)
	}
	for node := range M {
		for k := range M {
			inNode(node, k)
			ringOn(b, ranks, bl, segs, ch, 0, step, false)
		}
	}
}

// ringOn is a ring over the ranks listed (ranks[i] -> ranks[i+1]) on
// blocks bl (block j in segment segs[j]). As a reduce-scatter (reduce),
// at step s position i sends block i-s+shift and reduces block i-s-1+shift
// from its predecessor, ending with block i+1+shift reduced; as an
// all-gather, position i starts holding block i+shift and at step s sends
// block i+shift-s.
func ringOn(b *builder, ranks []int, bl []block, segs []int, ch, shift, step0 int, reduce bool) {
	q := len(ranks)
	for s := 0; s < q-1; s++ {
		for i := range q {
			j := mod(i-s+shift, q)
			b.xfer(step0+s, ch, ranks[i], ranks[(i+1)%q], false, bl[j].off, bl[j].off, bl[j].n, reduce,
				segs[j], segs[j]+1, segs[j], segs[j]+1)
		}
	}
}
