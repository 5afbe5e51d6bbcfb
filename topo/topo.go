package topo

import (
	"fmt"
	"math"

	"github.com/rocekit/rocekit/sim"
)

// NodeID is a node's dense index in its Topology: 0 .. NumNodes()-1.
type NodeID int32

// None is the NodeID of no node.
const None NodeID = -1

// Port is a port number on one node: 0 .. NumPorts(node)-1. A node's ports
// are numbered in the order its links were added, so a generator or file
// that adds links in a fixed order gives every node the same numbering
// every time.
type Port uint16

// NoPort is returned by Pick when there is nothing to pick from.
const NoPort Port = math.MaxUint16

// MaxPorts is the most ports one node may have.
const MaxPorts = math.MaxUint16

// Kind says whether a node is a host or a switch.
type Kind uint8

// Node kinds.
const (
	Host Kind = iota
	Switch
)

func (k Kind) String() string {
	switch k {
	case Host:
		return "host"
	case Switch:
		return "switch"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Node is a host or a switch.
type Node struct {
	ID   NodeID
	Name string
	Kind Kind
}

// Link is a full-duplex link between port APort of node A and port BPort of
// node B, with the same rate and delay both ways.
type Link struct {
	A, B         NodeID
	APort, BPort Port
	// RateBps is the line rate in bits per second, each way.
	RateBps int64
	// Delay is the propagation delay in picoseconds (package sim's Time).
	Delay sim.Time
	// ErrorRate is the per-packet error probability the HPCC ns-3 file
	// carries (0 .. 1); kept for the file's sake, 0 from generators.
	ErrorRate float64
}

// PortInfo says where one port leads.
type PortInfo struct {
	Link     int    // index into Links()
	Peer     NodeID // the node at the other end
	PeerPort Port   // the port number on the peer
}

// Topology is an immutable, validated graph of hosts and switches with its
// shortest-path equal-cost next-hop tables. Build one with a generator
// (Star, FatTree, LeafSpine, Dragonfly, Parse), a file reader (ReadNS3,
// ReadJSON) or a Builder. All methods are safe for concurrent use.
type Topology struct {
	nodes     []Node
	links     []Link
	portStart []int32 // per node, index of its port 0 in ports; len nodes+1
	ports     []PortInfo
	names     map[string]NodeID

	hosts, switches []NodeID
	index           []int32 // per node: its index in hosts or switches

	// Next hops: for host index hi and switch index si the ports are
	// hopPool[hopOff[hi*S+si]:hopOff[hi*S+si+1]].
	hopOff  []uint32
	hopPool []Port

	df *DragonflyLayout
}

// NumNodes returns the number of nodes (hosts and switches).
func (t *Topology) NumNodes() int { return len(t.nodes) }

// Node returns node id. It returns the zero Node with ID None if id is out
// of range.
func (t *Topology) Node(id NodeID) Node {
	if id < 0 || int(id) >= len(t.nodes) {
		return Node{ID: None}
	}
	return t.nodes[id]
}

// Lookup returns the node with this name.
func (t *Topology) Lookup(name string) (NodeID, bool) {
	id, ok := t.names[name]
	return id, ok
}

// Hosts returns the host ids in increasing order. The slice is shared: do
// not modify it.
func (t *Topology) Hosts() []NodeID { return t.hosts }

// Switches returns the switch ids in increasing order. The slice is shared:
// do not modify it.
func (t *Topology) Switches() []NodeID { return t.switches }

// Links returns every link in the order added. The slice is shared: do not
// modify it.
func (t *Topology) Links() []Link { return t.links }

// NumPorts returns the number of ports of node id (0 if out of range).
func (t *Topology) NumPorts(id NodeID) int {
	if id < 0 || int(id) >= len(t.nodes) {
		return 0
	}
	return int(t.portStart[id+1] - t.portStart[id])
}

// Port returns where port p of node id leads. ok is false if there is no
// such port.
func (t *Topology) Port(id NodeID, p Port) (info PortInfo, ok bool) {
	if int(p) >= t.NumPorts(id) {
		return PortInfo{Link: -1, Peer: None}, false
	}
	return t.ports[t.portStart[id]+int32(p)], true
}

// Neighbor returns the node at the other end of port p of node id, or None.
func (t *Topology) Neighbor(id NodeID, p Port) NodeID {
	info, _ := t.Port(id, p)
	return info.Peer
}

// HostIndex returns the index of host id in Hosts(), or -1.
func (t *Topology) HostIndex(id NodeID) int {
	if id < 0 || int(id) >= len(t.nodes) || t.nodes[id].Kind != Host {
		return -1
	}
	return int(t.index[id])
}

// SwitchIndex returns the index of switch id in Switches(), or -1.
func (t *Topology) SwitchIndex(id NodeID) int {
	if id < 0 || int(id) >= len(t.nodes) || t.nodes[id].Kind != Switch {
		return -1
	}
	return int(t.index[id])
}

// Equal reports whether t and u have the same nodes (ids, names, kinds) and
// the same links in the same order.
func (t *Topology) Equal(u *Topology) bool {
	if len(t.nodes) != len(u.nodes) || len(t.links) != len(u.links) {
		return false
	}
	for i := range t.nodes {
		if t.nodes[i] != u.nodes[i] {
			return false
		}
	}
	for i := range t.links {
		if t.links[i] != u.links[i] {
			return false
		}
	}
	return true
}
