package main

import (
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/roce"
)

// collFabric is the fabric and machine flags rocekit coll and rocekit
// workload share: where the ranks run.
type collFabric struct {
	topology              *string
	hostGbps, fabricGbps  *float64
	loss                  *float64
	cc                    *string
	seed                  *uint64
	gpus                  *int
	nvlink, pcie, hostMem *float64
	gdr                   *bool
}

func addCollFabric(fs *flag.FlagSet) *collFabric {
	return &collFabric{
		topology:   fs.String("topology", "", "topology spec or file (default: star:hosts=N, one host per --gpus ranks)"),
		hostGbps:   fs.Float64("host-gbps", roce.DefaultHostGbps, "rate of host links in `Gb/s`"),
		fabricGbps: fs.Float64("fabric-gbps", 0, "rate of switch-to-switch links in `Gb/s` (0: --host-gbps)"),
		loss:       fs.Float64("loss", 0, "loss probability `p` per frame on every link"),
		cc:         fs.String("cc", "none", "congestion control `algorithm[:preset]`: none, dcqcn or hpcc"),
		seed:       fs.Uint64("seed", 1, "seed of the data and the faults"),
		gpus:       fs.Int("gpus", 1, "ranks (GPUs) per host (`N`); above 1 the machine model of --nvlink, --pcie, --host-mem and --gdr joins them"),
		nvlink:     fs.Float64("nvlink", 450, "NVLink rate per GPU and direction in `GB/s` (0: no NVLink, GPUs talk over PCIe)"),
		pcie:       fs.Float64("pcie", 64*0.85, "PCIe rate per link and direction in `GB/s`, after protocol overhead (default: Gen5 x16 less 15%)"),
		hostMem:    fs.Float64("host-mem", 200, "host memory bandwidth in `GB/s`, which chunks staged without GPUDirect cross twice"),
		gdr:        fs.Bool("gdr", true, "GPUDirect RDMA: the NIC reads and writes GPU memory (false: every chunk is staged through host memory)"),
	}
}

// build returns the fabric scenario and the machine of the flags for
// ranks ranks: the topology (default star:hosts=ranks/gpus), the link
// rates, loss on every link (with a short retransmission timeout, 8:
// perftest's 67 ms would dwarf the collective), the congestion control.
// Its errors name the flag.
func (f *collFabric) build(ranks int) (*roce.Scenario, roce.NodeSpec, error) {
	g := *f.gpus
	if g < 1 || g > 1024 || ranks%g != 0 {
		return nil, roce.NodeSpec{}, fmt.Errorf("--gpus %d: want a divisor of the %d ranks", g, ranks)
	}
	node := roce.DefaultNode(g)
	node.NVLinkBps, node.PCIeBps, node.HostMemBps, node.GPUDirect = *f.nvlink*1e9, *f.pcie*1e9, *f.hostMem*1e9, *f.gdr
	if err := node.Validate(); err != nil || *f.nvlink < 0 || *f.pcie <= 0 || *f.hostMem <= 0 {
		return nil, node, fmt.Errorf("--nvlink %v, --pcie %v, --host-mem %v: want rates in GB/s, --pcie and --host-mem above 0", *f.nvlink, *f.pcie, *f.hostMem)
	}
	if !(*f.loss >= 0 && *f.loss <= 1) {
		return nil, node, fmt.Errorf("--loss %v: want a probability", *f.loss)
	}
	spec := *f.topology
	if spec == "" {
		spec = fmt.Sprintf("star:hosts=%d", ranks/g)
	}
	sc := &roce.Scenario{Seed: *f.seed, Topology: spec, Traffic: "incast:n=1,size=1KB", HostGbps: *f.hostGbps, FabricGbps: *f.fabricGbps}
	if *f.loss > 0 {
		sc.Fabric = &roce.FabricSpec{LinkFaults: &roce.FaultSpec{Loss: *f.loss}}
		to := uint8(8)
		sc.Flow = &roce.FlowSpec{Timeout: &to}
	}
	if *f.cc != "none" {
		name, preset, _ := strings.Cut(*f.cc, ":")
		sc.CC = &roce.CCSpec{Algorithm: name, Preset: preset}
	}
	if err := sc.Validate(); err != nil {
		return nil, node, err
	}
	return sc, node, nil
}

// placed describes where ranks ranks run, for a table's header: "8
// ranks", or the hosts and the machine.
func (f *collFabric) placed(ranks int) string {
	if *f.gpus <= 1 {
		return fmt.Sprintf("%d ranks", ranks)
	}
	nv := "no NVLink"
	if *f.nvlink > 0 {
		nv = "NVLink " + strconv.FormatFloat(*f.nvlink, 'g', -1, 64) + " GB/s"
	}
	gdr := "on"
	if !*f.gdr {
		gdr = "off"
	}
	return fmt.Sprintf("%d ranks (%d hosts x %d GPUs, %s, PCIe %s GB/s, GPUDirect %s)", ranks, ranks / *f.gpus, *f.gpus, nv,
		strconv.FormatFloat(*f.pcie, 'g', -1, 64), gdr)
}

// where is the header's "on TOPOLOGY at RATE Gb/s".
func (f *collFabric) where(sc *roce.Scenario) string {
	return fmt.Sprintf("on %s at %s Gb/s", sc.Topology, strconv.FormatFloat(*f.hostGbps, 'g', -1, 64))
}
