package coll

import (
	"fmt"
	"math/bits"
)

// Op is a collective operation, with NCCL's buffer conventions (Config.Count
// says which count is meant for each).
type Op uint8

// The collective operations.
const (
	AllReduce     Op = iota // every rank gets the reduction of all inputs
	AllGather               // every rank gets every rank's input, in rank order
	ReduceScatter           // rank r gets block r of the reduction
	Broadcast               // every rank gets the root's input
	Reduce                  // the root gets the reduction of all inputs
	AllToAll                // rank r gets block r of every rank's input
	Scatter                 // rank r gets block r of the root's input
	Gather                  // the root gets every rank's input, in rank order
	numOps
)

var opNames = [...]string{"allreduce", "allgather", "reducescatter", "broadcast", "reduce", "alltoall", "scatter", "gather"}

// String returns the operation's lower-case name, as ParseOp accepts it.
func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("Op(%d)", uint8(o))
}

// ParseOp returns the operation named s (as Op.String spells it).
func ParseOp(s string) (Op, error) {
	for i, n := range opNames {
		if n == s {
			return Op(i), nil
		}
	}
	return 0, fmt.Errorf("coll: unknown operation %q", s)
}

// reduces reports whether the operation combines inputs with a RedOp.
func (o Op) reduces() bool { return o == AllReduce || o == ReduceScatter || o == Reduce }

// rooted reports whether the operation has a root.
func (o Op) rooted() bool { return o == Broadcast || o == Reduce || o == Scatter || o == Gather }

// Algo is the algorithm that carries out a collective.
type Algo uint8

// The algorithms. Not every algorithm serves every operation: see Supports.
const (
	// Auto lets New choose with the rule of the function Auto.
	Auto Algo = iota
	// Ring passes blocks around the ring of ranks r -> r+1 (all-reduce,
	// all-gather, reduce-scatter), or along the chain root, root+1, ...
	// (broadcast, reduce), pipelined in chunks.
	Ring
	// Tree is NCCL's double binary tree for all-reduce: two binary trees
	// over the ranks in which a rank that is a leaf in one is an inner node
	// in the other (at most one exception), each carrying half the chunks:
	// reduce up, broadcast down.
	Tree
	// RHD is recursive halving then recursive doubling (Rabenseifner's
	// all-reduce; fabric-facts §7): all-reduce at any rank count (ranks
	// beyond the largest power of two fold into a partner first and get the
	// result back last), reduce-scatter and all-gather at power-of-two rank
	// counts.
	RHD
	// Direct sends each block straight to the rank that needs it:
	// all-to-all (pairwise, rank r sends to r+1, r+2, ... in turn), scatter,
	// gather.
	Direct
	// Binomial is the binomial tree for broadcast and reduce:
	// ceil(log2 p) rounds, the ranks holding data doubling each round.
	Binomial
	// Hier is the hierarchical all-reduce of machines with several GPUs
	// (Config.Local ranks per node): a ring reduce-scatter inside each
	// node, then a ring all-reduce between nodes of each node-local shard
	// (rank g of every node together), then a ring all-gather inside each
	// node, pipelined chunk by chunk (fabric-facts §9).
	Hier
	numAlgos
)

var algoNames = [...]string{"auto", "ring", "tree", "rhd", "direct", "binomial", "hier"}

// String returns the algorithm's lower-case name, as ParseAlgo accepts it.
func (a Algo) String() string {
	if a < numAlgos {
		return algoNames[a]
	}
	return fmt.Sprintf("Algo(%d)", uint8(a))
}

// ParseAlgo returns the algorithm named s (as Algo.String spells it).
func ParseAlgo(s string) (Algo, error) {
	for i, n := range algoNames {
		if n == s {
			return Algo(i), nil
		}
	}
	return 0, fmt.Errorf("coll: unknown algorithm %q", s)
}

// Supports reports whether algorithm a can carry out op at the given rank
// count. RHD's reduce-scatter and all-gather need a power of two.
func Supports(a Algo, op Op, ranks int) bool {
	switch a {
	case Auto:
		return op < numOps
	case Ring:
		return op == AllReduce || op == AllGather || op == ReduceScatter || op == Broadcast || op == Reduce
	case Tree:
		return op == AllReduce
	case RHD:
		if op == AllReduce {
			return true
		}
		return (op == AllGather || op == ReduceScatter) && ranks > 0 && ranks&(ranks-1) == 0
	case Direct:
		return op == AllToAll || op == Scatter || op == Gather
	case Binomial:
		return op == Broadcast || op == Reduce
	case Hier:
		return op == AllReduce
	}
	return false
}

// Default link parameters of the rule in ChooseAlgo: 5 us per step (a
// message's software and network latency) and 100 Gb/s.
const (
	DefaultAlpha = 5e-6
	DefaultBeta  = 8 / 100e9
)

// ChooseAlgo is the rule Auto stands for. In the spirit of NCCL's tuning,
// which models each algorithm's time as a latency plus size over bandwidth
// and takes the fastest, all-reduce takes Tree or Ring, whichever AlphaBeta
// predicts to be faster with DefaultAlpha and DefaultBeta: Tree for small
// messages (2 ceil(log2 p) latencies instead of 2(p-1)), Ring for large
// ones (less than 2n bytes sent per rank); at 8 ranks the switch is at
// about 2 MB. All-gather and reduce-scatter take Ring, broadcast and reduce
// Ring (a pipelined chain, as NCCL), all-to-all, scatter and gather Direct.
// RHD, Binomial and Hier are chosen only by name: NCCL has neither of the
// first two, and on machines with several GPUs runs its rings and trees
// through the nodes (a ring enters and leaves each node once), as Ring and
// Tree do with ranks numbered node by node.
func ChooseAlgo(op Op, bytes int64, ranks int) Algo {
	switch op {
	case AllReduce:
		if ranks <= 2 {
			return Ring
		}
		t := AlphaBeta(Tree, op, ranks, bytes, DefaultAlpha, DefaultBeta, 0)
		r := AlphaBeta(Ring, op, ranks, bytes, DefaultAlpha, DefaultBeta, 0)
		if t < r {
			return Tree
		}
		return Ring
	case AllGather, ReduceScatter, Broadcast, Reduce:
		return Ring
	}
	return Direct
}

// RedOp is the reduction of a reducing collective.
type RedOp uint8

// The reductions.
const (
	Sum RedOp = iota
	Prod
	Max
	Min
	numRedOps
)

var redOpNames = [...]string{"sum", "prod", "max", "min"}

// String returns the reduction's name as nccl-tests prints it.
func (r RedOp) String() string {
	if r < numRedOps {
		return redOpNames[r]
	}
	return fmt.Sprintf("RedOp(%d)", uint8(r))
}

// ParseRedOp returns the reduction named s (as RedOp.String spells it).
func ParseRedOp(s string) (RedOp, error) {
	for i, n := range redOpNames {
		if n == s {
			return RedOp(i), nil
		}
	}
	return 0, fmt.Errorf("coll: unknown reduction %q", s)
}

// DType is the element type of a collective's buffers, stored
// little-endian.
type DType uint8

// The element types.
const (
	Float32  DType = iota // IEEE 754 binary32
	Int32                 // two's complement; Sum and Prod wrap
	BFloat16              // the upper half of a binary32, rounded to nearest even
	numDTypes
)

var dtypeNames = [...]string{"float", "int32", "bfloat16"}

// String returns the type's name as nccl-tests prints it.
func (d DType) String() string {
	if d < numDTypes {
		return dtypeNames[d]
	}
	return fmt.Sprintf("DType(%d)", uint8(d))
}

// ParseDType returns the type named s (as DType.String spells it).
func ParseDType(s string) (DType, error) {
	for i, n := range dtypeNames {
		if n == s {
			return DType(i), nil
		}
	}
	return 0, fmt.Errorf("coll: unknown data type %q", s)
}

// Size returns the size of one element in bytes.
func (d DType) Size() int {
	if d == BFloat16 {
		return 2
	}
	return 4
}

// log2ceil returns ceil(log2 p) for p >= 1.
func log2ceil(p int) int {
	if p <= 1 {
		return 0
	}
	return bits.Len(uint(p - 1))
}

// pow2floor returns the largest power of two not above p (p >= 1).
func pow2floor(p int) int { return 1 << (bits.Len(uint(p)) - 1) }
