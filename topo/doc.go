// Package topo describes network fabrics: hosts and switches joined by
// full-duplex links, built by small generator functions (Star, FatTree,
// LeafSpine, Dragonfly, or a spec string with Parse) or read from a file
// (the HPCC ns-3 topology format with ReadNS3, rocekit's JSON form with
// ReadJSON), validated, and frozen into an immutable Topology.
//
// Units: link rates are int64 bits per second (RateBps); delays are
// package sim's Time, integer picoseconds.
//
// Nodes have dense ids (NodeID, 0 .. NumNodes()-1) and unique names. A
// node's ports are numbered from 0 in the order its links were added. A
// host has exactly one link (hosts are single-homed); hosts never forward.
//
// When a Topology is built, every switch gets, for every destination host,
// the set of its egress ports that lie on a shortest path by hop count
// (NextHops, computed by one breadth-first search from each host). The
// table takes 4 bytes per (switch, host) pair plus 2 bytes per next-hop
// entry: 5,507,076 bytes (5.3 MiB) for a k=16 fat-tree (1,024 hosts, 320
// switches; TestRoutingMemoryK16 checks the count). ECMP
// chooses among them with Pick and FlowHash, a MurmurHash3 of the 5-tuple
// with a seed per switch (SwitchSeed); for RoCEv2 the source port is
// packet.UDPSourcePort. Dragonfly topologies also offer minimal and
// Valiant router paths (DragonflyLayout).
//
// This package holds no simulation state: no queues, no time.
package topo
