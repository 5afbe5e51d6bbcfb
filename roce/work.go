package roce

import (
	"bytes"
	"encoding/binary"
)

// opKind is a work-request kind of the generator.
type opKind uint8

const (
	opWrite opKind = iota
	opSend
	opRead
	opFetchAdd
	opCmpSwap
	opAtomic // fetch_add or cmp_swap, drawn per WR
	opMix    // write, send, read or atomic, drawn per WR
)

var opByName = map[string]opKind{
	"write": opWrite, "send": opSend, "read": opRead, "fetch_add": opFetchAdd,
	"cmp_swap": opCmpSwap, "atomic": opAtomic, "mix": opMix,
}

var opNames = [...]string{"write", "send", "read", "fetch_add", "cmp_swap", "atomic", "mix"}

func (o opKind) String() string { return opNames[o] }

func (o opKind) isAtomic() bool { return o == opFetchAdd || o == opCmpSwap }

// golden is 2^64 / phi, the splitmix64 increment.
const golden = 0x9e3779b97f4a7c15

// mix is the splitmix64 finaliser: a bijective 64-bit hash.
func mix(x uint64) uint64 {
	x += golden
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// wrKey is the hash every property of WR n of a connection derives from:
// its op and size (when drawn), its data and its atomic operands. It
// depends on the scenario seed, the connection index and n only.
func wrKey(connKey uint64, n int64) uint64 { return mix(connKey ^ mix(uint64(n))) }

// connKey derives a connection's hash key from the seed.
func connKey(seed uint64, conn int) uint64 { return mix(seed ^ mix(uint64(conn)+0x5bd1e995)) }

type wrItem struct {
	op   opKind
	size int
}

// generator produces a connection's work requests lazily: WR n's op and size
// are a pure function of (seed, connection, n), so nothing is stored per WR.
//
// What at reads for a fixed op and size comes first (it shares a cache line
// with the connection's counters; see conn), the rest after.
type generator struct {
	key     uint64
	count   int64
	size    int
	sizeMax int
	op      opKind
	list    bool      // WRs from wrs, cyclically
	longer  int64     // the first longer WRs are one byte longer than size
	cum     [4]uint64 // cumulative mix weights: write, send, read, atomic
	wrs     []wrItem
	maxSize int  // largest message, at least 8
	hasSend bool // SENDs: the responder needs receive buffers
	hasResp bool // READs or atomics: the requester needs local buffers
}

func newGenerator(w *WorkSpec, key uint64) *generator {
	g := &generator{key: key, count: w.Count}
	if len(w.WRs) > 0 {
		for _, x := range w.WRs {
			it := wrItem{op: opByName[x.Op], size: x.Size}
			g.wrs = append(g.wrs, it)
			g.maxSize = max(g.maxSize, it.size)
			g.hasSend = g.hasSend || it.op == opSend
			g.hasResp = g.hasResp || it.op != opSend && it.op != opWrite
		}
		if g.count == 0 {
			g.count = int64(len(g.wrs))
		}
		g.list = true
	} else {
		g.op = opByName[w.opName()]
		g.size, g.sizeMax = w.Size, max(w.SizeMax, w.Size)
		g.maxSize = g.sizeMax
		if w.longer > 0 {
			g.longer = w.longer
			g.maxSize = g.size + 1
		}
		wt := [4]uint64{1, 1, 1, 1}
		if m := w.Mix; m != nil && uint64(m.Write)+uint64(m.Send)+uint64(m.Read)+uint64(m.Atomic) > 0 {
			wt = [4]uint64{uint64(m.Write), uint64(m.Send), uint64(m.Read), uint64(m.Atomic)}
		}
		var c uint64
		for i, x := range wt {
			c += x
			g.cum[i] = c
		}
		g.hasSend = g.op == opSend || g.op == opMix && wt[1] > 0
		g.hasResp = g.op == opRead || g.op.isAtomic() || g.op == opAtomic || g.op == opMix && wt[2]+wt[3] > 0
	}
	g.maxSize = max(g.maxSize, 8)
	return g
}

// at returns WR n's op (never opAtomic or opMix) and message size.
func (g *generator) at(n int64) (opKind, int) {
	h := wrKey(g.key, n)
	var op opKind
	var size int
	if g.list {
		it := g.wrs[n%int64(len(g.wrs))]
		op, size = it.op, it.size
	} else {
		op, size = g.op, g.size
		if op == opMix {
			r := mix(h^1) % g.cum[3]
			switch {
			case r < g.cum[0]:
				op = opWrite
			case r < g.cum[1]:
				op = opSend
			case r < g.cum[2]:
				op = opRead
			default:
				op = opAtomic
			}
		}
		if g.sizeMax > g.size {
			size += int(mix(h^2) % uint64(g.sizeMax-g.size+1))
		}
		if n < g.longer {
			size++
		}
	}
	if op == opAtomic {
		op = opFetchAdd
		if mix(h^3)&1 != 0 {
			op = opCmpSwap
		}
	}
	if op.isAtomic() {
		size = 8
	}
	return op, size
}

// atomicOperands returns WR n's atomic values: the target's value before
// the operation (written there when the WR is posted), the FetchAdd addend
// or CmpSwap swap value, the CmpSwap compare value (equal to orig half of
// the time, so that half of the swaps happen), and the value the target must
// hold after.
func atomicOperands(op opKind, key uint64) (orig, operand, compare, after uint64) {
	orig, operand = mix(key^4), mix(key^5)
	if op == opFetchAdd {
		return orig, operand, 0, orig + operand
	}
	compare = orig
	if mix(key^6)&1 != 0 {
		compare = orig ^ 1
	}
	after = orig
	if compare == orig {
		after = operand
	}
	return orig, operand, compare, after
}

// Data pattern. The bytes of WR n of a connection are a window of a noise
// buffer drawn from the seed: they start at offset 64 x ((base + n) mod
// 1024), where base is drawn from (seed, connection). So every WR's data is
// a pure function of (seed, connection, n); the 1,024 WRs around any WR
// each have different data (no window is a shift of another by less than
// 64 KiB, and the noise has no such period), so data landing in the wrong
// slot or at the wrong offset is caught. WRITEs and SENDs send straight
// from the noise buffer (it is read-only), so building work costs nothing;
// checking is a memory compare.
const (
	patPositions = 1024
	patAlign     = 64
	patSpan      = patPositions * patAlign
)

type pattern struct {
	noise []byte
}

// newPattern draws the noise for messages of up to maxMsg bytes.
func newPattern(seed uint64, maxMsg int) *pattern {
	n := (patSpan + maxMsg + 7) &^ 7
	p := &pattern{noise: make([]byte, n)}
	x := mix(seed ^ 0x6a09e667f3bcc908)
	for i := 0; i < n; i += 8 {
		x += golden
		binary.LittleEndian.PutUint64(p.noise[i:], mix(x))
	}
	return p
}

// data returns the bytes of WR n of the connection with hash key ck: a
// read-only view of the noise.
func (p *pattern) data(ck uint64, n int64, size int) []byte {
	off := int((ck+uint64(n))%patPositions) * patAlign
	return p.noise[off : off+size : off+size]
}

// check reports whether b holds the bytes of WR n.
func (p *pattern) check(b []byte, ck uint64, n int64) bool {
	return bytes.Equal(b, p.data(ck, n, len(b)))
}
