package roce

import (
	"fmt"
	"math"

	"github.com/rocekit/rocekit/sim"
)

// NodeSpec is the inside of a machine that holds several ranks (GPUs) of
// a collective (fabric-facts §9): the GPUs are joined by NVLink through an
// NVSwitch, or talk over PCIe; the host's one NIC sits on PCIe beside them;
// with GPUDirect RDMA the NIC reads and writes GPU memory directly, without
// it every chunk is staged through host memory.
//
// The model is one of links as pipes, per chunk: each GPU has an NVLink
// port each way and a PCIe link each way, the NIC a PCIe link each way, and
// the host memory one pipe for both directions. A transfer of n bytes
// holds every pipe of its path for n over that pipe's rate, starting when
// all of them are free (in the order transfers ask), and takes n over the
// slowest rate plus its latency:
//
//   - GPU to GPU in the node: NVLink (sender's out, receiver's in), or
//     without NVLink peer-to-peer over PCIe (sender's link up, receiver's
//     down); the chunk is there when the transfer ends (NCCL's P2P
//     transport writes the peer's buffer, then a flag).
//   - GPU to the network with GPUDirect: the NIC reads the chunk from the
//     GPU over both PCIe links as it sends it; the RDMA WRITE is posted when
//     the read starts, but no earlier than the read's end minus the chunk's
//     time on the wire, so the wire never outruns PCIe. Without GPUDirect the
//     chunk is first copied GPU to host memory (a store and forward: GPU's
//     link up, memory), then read by the NIC from host memory in the same
//     way (memory, NIC's link).
//   - The network to a GPU: the reverse, the NIC writing while the chunk
//     arrives (GPUDirect) or into host memory followed by a copy to the GPU.
//
// There is no flow control between GPUs of a node beyond the pipes: a
// sender runs ahead as far as its schedule lets it.
type NodeSpec struct {
	// GPUs is the number of ranks per host; 0 or 1 is one rank per host
	// and no node model (the NIC is the rank).
	GPUs int
	// NVLinkBps is each GPU's NVLink rate per direction in bytes per
	// second; 0 means no NVLink: GPUs of a node talk over PCIe.
	NVLinkBps float64
	// PCIeBps is the rate of each PCIe link (every GPU's, the NIC's) per
	// direction in bytes per second, after protocol overhead.
	PCIeBps float64
	// HostMemBps is the host memory's bandwidth in bytes per second, both
	// directions together; it carries every chunk staged without
	// GPUDirect twice (written, then read).
	HostMemBps float64
	// GPUDirect is GPUDirect RDMA: the NIC reads and writes GPU memory.
	GPUDirect bool
	// NVLinkLatency and PCIeLatency are added to each transfer over them;
	// CopyLatency to each staging copy (a copy the host starts and waits
	// for, without GPUDirect).
	NVLinkLatency, PCIeLatency, CopyLatency sim.Time
}

// DefaultNode is an HGX H100-like machine (fabric-facts §9): NVLink 4 at
// 450 GB/s per GPU per direction (900 GB/s both ways), PCIe Gen5 x16 at
// 64 GB/s less 15% of protocol overhead, host memory at 200 GB/s,
// GPUDirect on; 1 us per NVLink or PCIe transfer and 5 us per staging copy.
func DefaultNode(gpus int) NodeSpec {
	return NodeSpec{GPUs: gpus, NVLinkBps: 450e9, PCIeBps: 64e9 * 0.85, HostMemBps: 200e9, GPUDirect: true,
		NVLinkLatency: sim.Microsecond, PCIeLatency: sim.Microsecond, CopyLatency: 5 * sim.Microsecond}
}

// Validate reports the first field of n that is wrong.
func (n *NodeSpec) Validate() error {
	bad := func(v float64) bool { return v < 0 || math.IsNaN(v) || math.IsInf(v, 0) }
	switch {
	case n.GPUs < 0 || n.GPUs > 1<<10:
		return fmt.Errorf("roce: NodeSpec.GPUs %d: want 0 to 1024", n.GPUs)
	case n.GPUs <= 1:
		return nil
	case bad(n.NVLinkBps):
		return fmt.Errorf("roce: NodeSpec.NVLinkBps %v: want a rate of 0 (no NVLink) or more", n.NVLinkBps)
	case bad(n.PCIeBps) || n.PCIeBps == 0:
		return fmt.Errorf("roce: NodeSpec.PCIeBps %v: want a positive rate", n.PCIeBps)
	case !n.GPUDirect && (bad(n.HostMemBps) || n.HostMemBps == 0):
		return fmt.Errorf("roce: NodeSpec.HostMemBps %v: want a positive rate (chunks are staged without GPUDirect)", n.HostMemBps)
	case n.NVLinkLatency < 0 || n.PCIeLatency < 0 || n.CopyLatency < 0:
		return fmt.Errorf("roce: NodeSpec latencies %v, %v, %v: negative", n.NVLinkLatency, n.PCIeLatency, n.CopyLatency)
	}
	return nil
}

// pipe is a link of a node in one direction (or host memory): busy until
// free, at bps bytes per second.
type pipe struct {
	free sim.Time
	bps  float64
}

func (p *pipe) dur(n int) sim.Time { return sim.Time(math.Ceil(float64(n) / p.bps * 1e12)) }

// reserve holds both pipes for n bytes from the first time at or after at
// that both are free, and returns that start and the end of the transfer
// (n over the slower rate).
func reserve(a, b *pipe, at sim.Time, n int) (start, end sim.Time) {
	start = max(at, a.free, b.free)
	da, db := a.dur(n), b.dur(n)
	a.free, b.free = start+da, start+db
	return start, start + max(da, db)
}

// node is one machine's pipes.
type node struct {
	nvOut, nvIn, up, down []pipe // per GPU
	nicUp, nicDown        pipe   // NIC to memory, memory to NIC
	mem                   pipe
	wire                  float64 // the NIC's link, bytes per second
}

// nodes is the machines of a collective: rank r is GPU r mod GPUs of host
// r / GPUs.
type nodes struct {
	spec NodeSpec
	m    []node
}

func newNodes(spec NodeSpec, hosts int, wireBps func(host int) float64) *nodes {
	ns := &nodes{spec: spec, m: make([]node, hosts)}
	g := spec.GPUs
	for h := range ns.m {
		nd := &ns.m[h]
		nd.nvOut, nd.nvIn, nd.up, nd.down = make([]pipe, g), make([]pipe, g), make([]pipe, g), make([]pipe, g)
		for i := range g {
			nd.nvOut[i].bps, nd.nvIn[i].bps = spec.NVLinkBps, spec.NVLinkBps
			nd.up[i].bps, nd.down[i].bps = spec.PCIeBps, spec.PCIeBps
		}
		nd.nicUp.bps, nd.nicDown.bps, nd.mem.bps = spec.PCIeBps, spec.PCIeBps, spec.HostMemBps
		nd.wire = wireBps(h)
	}
	return ns
}

func (ns *nodes) host(r int) int { return r / ns.spec.GPUs }
func (ns *nodes) gpu(r int) int  { return r % ns.spec.GPUs }

// local returns when a chunk of n bytes sent at now from rank from to rank
// to, of the same node, has arrived.
func (ns *nodes) local(now sim.Time, from, to, n int) sim.Time {
	nd := &ns.m[ns.host(from)]
	a, b := ns.gpu(from), ns.gpu(to)
	if ns.spec.NVLinkBps > 0 {
		_, end := reserve(&nd.nvOut[a], &nd.nvIn[b], now, n)
		return end + ns.spec.NVLinkLatency
	}
	_, end := reserve(&nd.up[a], &nd.down[b], now, n)
	return end + ns.spec.PCIeLatency
}

// toWire moves a chunk of n bytes that rank from has ready at now toward
// the network. It returns when the next move is due and whether that is
// posting the RDMA WRITE (post) or, without GPUDirect, reading the chunk
// from host memory, where it is being copied (then call toWireStaged then).
func (ns *nodes) toWire(now sim.Time, from, n int) (at sim.Time, post bool) {
	nd := &ns.m[ns.host(from)]
	g := ns.gpu(from)
	if !ns.spec.GPUDirect {
		_, end := reserve(&nd.up[g], &nd.mem, now, n)
		return end + ns.spec.CopyLatency, false
	}
	return ns.nicRead(nd, &nd.up[g], now, n), true
}

// toWireStaged is the NIC reading a staged chunk from host memory: it
// returns when the RDMA WRITE may be posted.
func (ns *nodes) toWireStaged(now sim.Time, from, n int) sim.Time {
	nd := &ns.m[ns.host(from)]
	return ns.nicRead(nd, &nd.mem, now, n)
}

// nicRead is the NIC reading n bytes from src as it sends them: the WRITE
// is posted when the read starts, but no sooner than the read's end less
// the chunk's time on the wire.
func (ns *nodes) nicRead(nd *node, src *pipe, now sim.Time, n int) sim.Time {
	start, end := reserve(src, &nd.nicDown, now, n)
	return max(start, end-nd.wireTime(n)) + ns.spec.PCIeLatency
}

func (nd *node) wireTime(n int) sim.Time { return sim.Time(math.Ceil(float64(n) / nd.wire * 1e12)) }

// fromWire moves a chunk of n bytes whose last byte reached rank to's NIC
// at now: the NIC wrote it as it arrived, into the GPU (GPUDirect) or
// into host memory. It returns when the next move is due: the chunk is in
// the GPU (arrived), or, without GPUDirect, the copy from host memory to
// the GPU may start (then call fromWireStaged then).
func (ns *nodes) fromWire(now sim.Time, to, n int) (at sim.Time, arrived bool) {
	nd := &ns.m[ns.host(to)]
	dst := &nd.down[ns.gpu(to)]
	if !ns.spec.GPUDirect {
		dst = &nd.mem
	}
	_, end := reserve(&nd.nicUp, dst, max(now-nd.wireTime(n), 0), n)
	return max(now, end) + ns.spec.PCIeLatency, ns.spec.GPUDirect
}

// fromWireStaged copies a chunk from host memory to rank to's GPU and
// returns when it has arrived.
func (ns *nodes) fromWireStaged(now sim.Time, to, n int) sim.Time {
	nd := &ns.m[ns.host(to)]
	_, end := reserve(&nd.mem, &nd.down[ns.gpu(to)], now, n)
	return end + ns.spec.CopyLatency
}
