// Package coll is rocekit's collective operations (all-reduce, all-gather,
// reduce-scatter, broadcast, reduce, all-to-all, scatter, gather) as pure,
// deterministic state machines in the manner of packages rc and cc: no
// I/O, no clock, no goroutines, no randomness. Time (package sim's Time) is
// passed in; the data is real and really reduced.
//
// # One rank, driven from outside
//
// A Collective is one rank's part. New builds it from a Config (rank count,
// this rank, operation, algorithm, element count, type, reduction, root,
// chunk size, channels); the caller fills Input, calls Start, and then
// drives it with two calls: AppendSends draws the chunks that are ready to
// go (a Send names the peer, the ChunkID, and the bytes, which Payload
// returns), and OnRecv hands it a chunk that has arrived, which it copies
// into its work buffer or reduces into it (Sum, Prod, Max, Min over
// Float32, Int32 or BFloat16). Done reports that the rank's Output is
// final. A driver calls AppendSends after Start and after every OnRecv and
// reads each Send's Payload before its next OnRecv, since a later chunk may
// overwrite those bytes. Over RoCE a Send is naturally an RDMA WRITE of the
// chunk with an immediate that carries its ChunkID, as NCCL's net transport
// signals with WRITE_WITH_IMM (fabric-facts §7). After New nothing
// allocates: Start, OnRecv and AppendSends reuse the schedule and buffers,
// and Start may run the same collective again.
//
// A chunk is identified by its sender and its Seq, its index among the
// chunks that sender sends this rank; arrival order does not matter, and
// chunks may overtake one another, across channels or within one. OnRecv
// refuses with an error, changing nothing, a chunk from an unknown rank,
// with an unknown Seq, on the wrong channel, of the wrong length, or
// received twice.
//
// # Schedules
//
// Every algorithm is written once as a global sequence of transfers
// between ranks, step by step (file schedule.go); each rank keeps the
// transfers it sends or receives. A send waits for the receives into the
// data it reads; a receive is applied on arrival, which is safe because in
// every algorithm here a rank receives into data it has already sent only
// what already includes its contribution. The data is cut into slices of
// at most ChunkSize bytes per block (512 KiB by default, a step of NCCL's
// default buffer) that pipeline behind one another, spread round-robin
// over Channels.
//
//   - Ring: all-reduce as a reduce-scatter then an all-gather around the
//     ring r -> r+1, 2(p-1) steps each moving n/p bytes; all-gather and
//     reduce-scatter alone, p-1 steps; broadcast and reduce along the
//     chain root, root+1, ....
//   - Tree: NCCL's double binary tree for all-reduce. Two in-order binary
//     trees, the second mirrored (even p) or shifted by one (odd p), so
//     that a rank that is a leaf in one is inner in the other; even slices
//     go up and down the first, odd slices the second.
//   - RHD: Rabenseifner's recursive halving (reduce-scatter) then
//     recursive doubling (all-gather), 2 log2 p steps; at other rank counts
//     the ranks above the largest power of two fold into a partner first.
//     Reduce-scatter and all-gather alone need a power of two.
//   - Binomial: broadcast and reduce in ceil(log2 p) rounds.
//   - Hier: all-reduce on nodes of Config.Local ranks (GPUs of one
//     machine): a ring reduce-scatter inside each node leaves shard g on
//     the node's rank g, a ring all-reduce between nodes of each shard
//     (rank g of every node together), a ring all-gather inside each
//     node. A slice's shards are cut into one sub-block per node, each at
//     most a chunk, so that the ring between nodes starts on a sub-block
//     as soon as it is reduced inside the node. Each rank sends 2(G-1)/G n
//     inside its node and 2(M-1)/M n/G out of it, for G ranks per node and
//     M nodes.
//   - Direct: all-to-all (at step k rank r sends to r+k), scatter, gather.
//
// Auto picks by the rule of ChooseAlgo: Tree or Ring for all-reduce by the
// alpha-beta model, as NCCL's tuner picks by its cost model; Ring for the
// other ring operations, Direct for the rest.
//
// Stats gives the steps, chunks and bytes a rank sends and receives, the
// quantities of the alpha-beta model.
//
// # Data and checking
//
// Fill draws a rank's input from a seed; Reference computes every rank's
// expected output directly from all inputs; Check counts the wrong
// elements, as nccl-tests' #wrong, within the tolerance Tolerance states
// for summation in any order.
//
// # Performance figures
//
// AlgBW, BusBW and BusFactor are nccl-tests' algorithm and bus bandwidth
// (fabric-facts §7); AlphaBeta is the alpha-beta model of each algorithm
// (Thakur, Rabenseifner and Gropp 2005); FormatTable prints results in
// nccl-tests' columns.
//
// # Choices and omissions
//
// There is no flow control between ranks: a chunk lands in the receiver's
// own buffer, as an RDMA WRITE would, and a sender may run ahead of a slow
// receiver by any number of chunks (NCCL bounds this with its staging
// buffers of NCCL_STEPS slots). A rank's reductions take no time here; a
// driver that charges for them can use the received Len.
//
// # In-network aggregation
//
// SHARP (fabric-facts §8) runs an all-reduce over a tree of aggregation
// nodes in the switches: SharpLeaf is a rank, SharpNode a node, driven as a
// Collective. A node has SharpConfig.Streams aggregation units (2 by
// default, the switch's concurrent streaming aggregations) that take the
// chunks in order, one each, and reduce each piece at ReduceBps; a piece
// for a chunk with no unit waits. Its clock is passed in as elsewhere:
// NextWake says when a unit next finishes a piece, Advance runs the node
// to a time.
package coll
