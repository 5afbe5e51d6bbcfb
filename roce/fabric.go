package roce

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/topo"
	"github.com/rocekit/rocekit/traffic"
)

// A fabric scenario names a topology and a traffic pattern instead of
// hosts, a switch, links and QPs:
//
//	{"seed": 1, "topology": "fat-tree:k=8", "traffic": "permutation:size=10MB"}
//
// Hosts, switches and links come from the topology (package topo), one RC
// connection per flow from the traffic (package traffic). Links, if given,
// name topology links by their two ends and set their faults and dead
// intervals; bandwidth_gbps and delay_ns there must be left out (the
// topology has them).

// FabricSpec is the switch model of a fabric scenario: every switch alike.
// Zero values take the defaults named on each field.
type FabricSpec struct {
	// BufferBytes is each switch's shared packet buffer (default
	// DefaultBufferBytes); Alpha the dynamic threshold of lossy queues: a
	// queue may hold at most Alpha times the free buffer (default 1).
	BufferBytes int     `json:"buffer_bytes,omitempty"`
	Alpha       float64 `json:"alpha,omitempty"`
	// QueueBytes is a static limit per egress queue (port and priority) of
	// the lossy class, on top of the dynamic one; 0 none.
	QueueBytes int `json:"queue_bytes,omitempty"`
	// PFC makes RoCE's priority 3 lossless at every hop (default true).
	// PFCXOffBytes and PFCXOnBytes are the per-ingress-port thresholds; 0
	// computes them from the buffer and the headroom (pfcDefaults).
	PFC          *bool `json:"pfc,omitempty"`
	PFCXOffBytes int   `json:"pfc_xoff_bytes,omitempty"`
	PFCXOnBytes  int   `json:"pfc_xon_bytes,omitempty"`
	// ECN is RED-style marking on every switch egress queue; default
	// HPCC ns-3's: Kmin 100 KB and Kmax 400 KB scaled by rate / 25 Gb/s,
	// Pmax 0.2 (fabric-facts §3).
	ECN *ECNSpec `json:"ecn,omitempty"`
	// Routing is "ecmp" (default: per-flow hashing over every shortest
	// path) or, on a Dragonfly, "minimal" (the same) or "valiant".
	Routing string `json:"routing,omitempty"`
	// ECMPSeed changes every switch's hash seed (0: the switches' own).
	ECMPSeed uint32 `json:"ecmp_seed,omitempty"`
	// LinkFaults are the faults of every link, both ways, unless the
	// scenario's links list sets a link's own.
	LinkFaults *FaultSpec `json:"link_faults,omitempty"`
	// ConvergenceNS is how long routing takes to move off a link that
	// went down and back onto one that came up; default 0: at once.
	ConvergenceNS float64 `json:"convergence_ns,omitempty"`
}

// ECNSpec is RED marking (sim.RED): KMin and KMax in bytes, PMax the
// probability at KMax. PerRate scales KMin and KMax by the port's rate /
// 25 Gb/s, as HPCC ns-3 does.
type ECNSpec struct {
	KMinBytes int     `json:"kmin_bytes"`
	KMaxBytes int     `json:"kmax_bytes"`
	PMax      float64 `json:"pmax"`
	PerRate   bool    `json:"per_rate,omitempty"`
}

// FlowSpec is what every flow's connection does: Op ("write", default;
// "send" or "read") of the flow's size, split into work requests of at most
// WRBytes (default 1 MiB) with Outstanding of them in flight (default 4),
// and the QP attributes (defaults as for qps entries).
type FlowSpec struct {
	Op          string `json:"op,omitempty"`
	MTU         int    `json:"mtu,omitempty"`
	WRBytes     int    `json:"wr_bytes,omitempty"`
	Outstanding int    `json:"outstanding,omitempty"`
	Window      uint32 `json:"window,omitempty"`
	Timeout     *uint8 `json:"timeout,omitempty"`
	RetryCnt    *uint8 `json:"retry_cnt,omitempty"`
}

// Fabric defaults.
const (
	DefaultHostGbps    = 100
	DefaultLinkDelayNS = 1000
	// DefaultBufferBytes is a switch's shared buffer: 32 MB, a data-centre
	// switch of the 100 Gb/s generation (and HPCC ns-3's BUFFER_SIZE).
	DefaultBufferBytes = 32 << 20
	DefaultWRBytes     = 256 << 10
	DefaultFlowWRs     = 4
	// DefaultTraffic is the traffic of `rocekit sim --topology` alone.
	DefaultTraffic = "permutation:size=1MB"
	// MaxFlows bounds a fabric scenario's flows (one connection each).
	MaxFlows = 1 << 20
)

// IsFabric reports whether the scenario is a fabric one (it has a
// topology).
func (sc *Scenario) IsFabric() bool { return sc.Topology != "" }

// fabricPlan is a fabric scenario resolved: the topology, the flows, and
// the hosts and QP entries they make.
type fabricPlan struct {
	topo  *topo.Topology
	flows []traffic.Flow
	hosts []HostSpec
	qps   []QPSpec
}

// hostGbps, fabricGbps and delayNS are the scenario's link parameters with
// their defaults.
func (sc *Scenario) hostGbps() float64 {
	if sc.HostGbps > 0 {
		return sc.HostGbps
	}
	return DefaultHostGbps
}

func (sc *Scenario) fabricGbps() float64 {
	if sc.FabricGbps > 0 {
		return sc.FabricGbps
	}
	return sc.hostGbps()
}

func (sc *Scenario) delayNS() float64 {
	if sc.DelayNS != nil {
		return *sc.DelayNS
	}
	return DefaultLinkDelayNS
}

// isFile reports whether spec names an existing file rather than a
// generator spec. Only regular files count: a device such as /dev/zero
// would be read without end.
func isFile(spec string) bool {
	if st, err := os.Stat(spec); err == nil && st.Mode().IsRegular() {
		return true
	}
	return false
}

// loadTopology builds the scenario's topology: a generator spec such as
// "fat-tree:k=8", or a file, rocekit's JSON form if it ends in .json, else
// HPCC ns-3's topology format.
func (sc *Scenario) loadTopology() (*topo.Topology, error) {
	lp := topo.LinkParams{
		HostRateBps:   int64(math.Round(sc.hostGbps() * 1e9)),
		FabricRateBps: int64(math.Round(sc.fabricGbps() * 1e9)),
		Delay:         nsTime(sc.delayNS()),
	}
	spec := sc.Topology
	if !isFile(spec) {
		if strings.ContainsAny(spec, `/\`) || strings.HasSuffix(spec, ".json") || strings.HasSuffix(spec, ".txt") {
			return nil, badValue("topology", "%q: no such file", spec)
		}
		t, err := topo.Parse(spec, lp)
		if err != nil {
			return nil, badValue("topology", "%s", strings.TrimPrefix(err.Error(), "topo: "))
		}
		return t, nil
	}
	f, err := os.Open(spec)
	if err != nil {
		return nil, badValue("topology", "%v", err)
	}
	defer f.Close()
	var t *topo.Topology
	if strings.EqualFold(filepath.Ext(spec), ".json") {
		t, err = topo.ReadJSON(f, spec)
	} else {
		t, err = topo.ReadNS3(f, spec)
	}
	if err != nil {
		return nil, badValue("topology", "%s", strings.TrimPrefix(err.Error(), "topo: "))
	}
	return t, nil
}

// loadTraffic draws the scenario's flows over hosts hosts: a pattern such
// as "permutation:size=10MB", or an HPCC ns-3 flow file, or several of
// them joined by "+" ("poisson:load=0.3,cdf=websearch,duration=5ms+
// incasts:n=60,size=500KB,load=0.02,duration=5ms"): their flows together,
// by start time, part i drawn with seed+i unless it names its own.
func (sc *Scenario) loadTraffic(hosts int) ([]traffic.Flow, error) {
	spec := sc.Traffic
	if spec == "" {
		return nil, badValue("traffic", "missing: a fabric scenario needs a traffic pattern or flow file")
	}
	if isFile(spec) || !strings.Contains(spec, "+") {
		return sc.trafficPart(spec, hosts, sc.Seed)
	}
	var all []traffic.Flow
	for i, part := range strings.Split(spec, "+") {
		fl, err := sc.trafficPart(part, hosts, sc.Seed+uint64(i))
		if err != nil {
			return nil, err
		}
		if len(all)+len(fl) > MaxFlows {
			return nil, badValue("traffic", "more than %d flows", MaxFlows)
		}
		all = append(all, fl...)
	}
	sort.SliceStable(all, func(i, j int) bool {
		a, b := all[i], all[j]
		if a.Start != b.Start {
			return a.Start < b.Start
		}
		if a.Src != b.Src {
			return a.Src < b.Src
		}
		return a.Dst < b.Dst
	})
	return all, nil
}

// trafficPart is one pattern or flow file of the scenario's traffic.
func (sc *Scenario) trafficPart(spec string, hosts int, seed uint64) ([]traffic.Flow, error) {
	if isFile(spec) {
		f, err := os.Open(spec)
		if err != nil {
			return nil, badValue("traffic", "%v", err)
		}
		defer f.Close()
		fl, err := traffic.ReadHPCCFlows(f, spec, hosts)
		if err != nil {
			return nil, badValue("traffic", "%s", strings.TrimPrefix(err.Error(), "traffic: "))
		}
		return fl, nil
	}
	if _, err := os.Stat(spec); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, badValue("traffic", "%v", err)
	}
	p, err := traffic.Parse(spec)
	if err != nil {
		return nil, badValue("traffic", "%s", strings.TrimPrefix(err.Error(), "traffic: "))
	}
	fl, err := traffic.Generate(p, hosts, int64(math.Round(sc.hostGbps()*1e9)), seed)
	if err != nil {
		return nil, badValue("traffic", "%s", strings.TrimPrefix(err.Error(), "traffic: "))
	}
	return fl, nil
}

// flowSpec returns the scenario's FlowSpec with defaults.
func (sc *Scenario) flowSpec() FlowSpec {
	f := FlowSpec{}
	if sc.Flow != nil {
		f = *sc.Flow
	}
	if f.Op == "" {
		f.Op = "write"
	}
	if f.WRBytes == 0 {
		f.WRBytes = DefaultWRBytes
	}
	if f.Outstanding == 0 {
		f.Outstanding = DefaultFlowWRs
	}
	return f
}

// plan resolves a fabric scenario. The last plan is kept (by the values it
// depends on): a scenario is checked, estimated and built from the same
// plan.
func (sc *Scenario) plan() (*fabricPlan, error) {
	key := sc.planKey()
	planCache.Lock()
	defer planCache.Unlock()
	if planCache.plan != nil && planCache.key == key {
		return planCache.plan, nil
	}
	p, err := sc.makePlan()
	if err != nil {
		return nil, err
	}
	planCache.key, planCache.plan = key, p
	return p, nil
}

// planCache is the last plan made.
var planCache struct {
	sync.Mutex
	key  string
	plan *fabricPlan
}

func (sc *Scenario) makePlan() (*fabricPlan, error) {
	var t *topo.Topology
	var err error
	if sc.coll != nil && sc.coll.topo != nil {
		t = sc.coll.topo
	} else if t, err = sc.loadTopology(); err != nil {
		return nil, err
	}
	hostIDs := t.Hosts()
	if len(hostIDs) > 65000 {
		return nil, badValue("topology", "%d hosts; at most 65000", len(hostIDs))
	}
	if sc.coll != nil {
		return sc.collPlan(t)
	}
	flows, err := sc.loadTraffic(len(hostIDs))
	if err != nil {
		return nil, err
	}
	if len(flows) > MaxFlows {
		return nil, badValue("traffic", "%d flows; at most %d", len(flows), MaxFlows)
	}
	p := &fabricPlan{topo: t, flows: flows}
	p.hosts = make([]HostSpec, len(hostIDs))
	for i, h := range hostIDs {
		p.hosts[i] = HostSpec{Name: t.Node(h).Name}
	}
	fs := sc.flowSpec()
	p.qps = make([]QPSpec, len(flows))
	for i, fl := range flows {
		q := &p.qps[i]
		q.From, q.To = p.hosts[fl.Src].Name, p.hosts[fl.Dst].Name
		q.MTU, q.Window, q.Timeout, q.RetryCnt = fs.MTU, fs.Window, fs.Timeout, fs.RetryCnt
		q.StartNS = float64(fl.Start) / float64(sim.Nanosecond)
		q.Work = splitWork(fs.Op, fl.Size, fs.WRBytes)
		q.Outstanding = int(min(int64(fs.Outstanding), q.Work.Count))
	}
	return p, nil
}

// planKey is what a plan depends on.
func (sc *Scenario) planKey() string {
	b, _ := json.Marshal(struct {
		Topology, Traffic    string
		HostGbps, FabricGbps float64
		DelayNS              *float64
		Seed                 uint64
		Flow                 *FlowSpec
	}{sc.Topology, sc.Traffic, sc.HostGbps, sc.FabricGbps, sc.DelayNS, sc.Seed, sc.Flow})
	if c := sc.coll; c != nil {
		return fmt.Sprintf("%s|coll %v %v %p %d %d", b, c.pairs, c.hostOf, c.topo, c.slot, c.slots)
	}
	return string(b)
}

// splitWork is a flow of size bytes as work requests of at most chunk
// bytes, as equal as can be (the first ones one byte longer), without a
// list: the generator computes each WR's size.
func splitWork(op string, size int64, chunk int) WorkSpec {
	n := max((size+int64(chunk)-1)/int64(chunk), 1)
	return WorkSpec{Op: op, Count: n, Size: int(size / n), longer: size % n}
}

// validateFabric checks a fabric scenario: no hosts, switch or QPs of its
// own, the link parameters, the switch model, the flows' attributes, the
// topology and traffic themselves, and the link overrides.
func (sc *Scenario) validateFabric() error {
	if len(sc.Hosts) > 0 {
		return badValue("hosts", "a fabric scenario takes its hosts from the topology: leave hosts out")
	}
	if sc.Switch != nil {
		return badValue("switch", "a fabric scenario takes its switches from the topology; set the switch model in fabric")
	}
	if len(sc.QPs) > 0 {
		return badValue("qps", "a fabric scenario makes one connection per flow of its traffic: leave qps out")
	}
	if !(sc.StopNS >= 0) || math.IsInf(sc.StopNS, 0) {
		return badValue("stop_ns", "%v is not a time", sc.StopNS)
	}
	if !(sc.HostGbps >= 0) || sc.HostGbps > 1e6 {
		return badValue("host_gbps", "%v: want a rate in Gb/s, more than 0", sc.HostGbps)
	}
	if !(sc.FabricGbps >= 0) || sc.FabricGbps > 1e6 {
		return badValue("fabric_gbps", "%v: want a rate in Gb/s, more than 0", sc.FabricGbps)
	}
	if d := sc.delayNS(); !(d >= 0) || d > 1e12 {
		return badValue("delay_ns", "%v: want a delay in ns, 0 or more", d)
	}
	if f := sc.Fabric; f != nil {
		if f.BufferBytes < 0 || f.QueueBytes < 0 || f.PFCXOffBytes < 0 || f.PFCXOnBytes < 0 {
			return badValue("fabric", "negative buffer_bytes, queue_bytes, pfc_xoff_bytes or pfc_xon_bytes")
		}
		if f.PFCXOnBytes > f.PFCXOffBytes && f.PFCXOffBytes > 0 {
			return badValue("fabric.pfc_xon_bytes", "%d is more than pfc_xoff_bytes %d", f.PFCXOnBytes, f.PFCXOffBytes)
		}
		if !(f.Alpha >= 0) || f.Alpha > 1e6 {
			return badValue("fabric.alpha", "%v: want 0 (default) or more", f.Alpha)
		}
		if !(f.ConvergenceNS >= 0) || f.ConvergenceNS > 1e15 {
			return badValue("fabric.convergence_ns", "%v: want 0 or more", f.ConvergenceNS)
		}
		switch f.Routing {
		case "", "ecmp", "minimal", "valiant":
		default:
			return badValue("fabric.routing", "%q: want ecmp, minimal or valiant", f.Routing)
		}
		if f.LinkFaults != nil {
			if err := f.LinkFaults.check("fabric.link_faults"); err != nil {
				return err
			}
		}
		if e := f.ECN; e != nil {
			if e.KMinBytes < 0 || e.KMaxBytes < e.KMinBytes {
				return badValue("fabric.ecn", "want 0 <= kmin_bytes <= kmax_bytes")
			}
			if !sim.IsProbability(e.PMax) {
				return badValue("fabric.ecn.pmax", "%v is not a probability", e.PMax)
			}
		}
	}
	if f := sc.Flow; f != nil {
		switch f.Op {
		case "", "write", "send", "read":
		default:
			return badValue("flow.op", "%q: want write, send or read", f.Op)
		}
		if f.WRBytes < 0 || int64(f.WRBytes) > MaxMessage {
			return badValue("flow.wr_bytes", "%d: want 0 (default) to 2^31", f.WRBytes)
		}
		if f.Outstanding < 0 || f.Outstanding > 1<<16 {
			return badValue("flow.outstanding", "%d: 0 (default) to 65536", f.Outstanding)
		}
		q := QPSpec{MTU: f.MTU, Window: f.Window, Timeout: f.Timeout, RetryCnt: f.RetryCnt}
		if err := q.check("flow"); err != nil {
			return err
		}
	}
	if err := sc.validateCC(); err != nil {
		return err
	}
	p, err := sc.plan()
	if err != nil {
		return err
	}
	t := p.topo
	if r := sc.Fabric; r != nil && (r.Routing == "valiant" || r.Routing == "minimal") {
		if _, ok := t.Dragonfly(); !ok {
			return badValue("fabric.routing", "%q needs a Dragonfly topology", r.Routing)
		}
	}
	seen := map[int]int{}
	for i, l := range sc.Links {
		path := fmt.Sprintf("links[%d]", i)
		li, err := fabricLink(t, l, path)
		if err != nil {
			return err
		}
		if j, dup := seen[li]; dup {
			return badValue(path, "the link between %q and %q is already set by links[%d]", l.A, l.B, j)
		}
		seen[li] = i
		lc := l
		lc.BandwidthGbps, lc.DelayNS = 1, 0
		if err := lc.check(path); err != nil {
			return err
		}
	}
	for i := range p.qps {
		if err := p.qps[i].Work.check(fmt.Sprintf("traffic: flow %d", i), p.qps[i].ord()); err != nil {
			return err
		}
	}
	return nil
}

// fabricLink finds the topology link a scenario link names by its ends.
func fabricLink(t *topo.Topology, l LinkSpec, path string) (int, error) {
	a, ok := t.Lookup(l.A)
	if !ok {
		return 0, badValue(path+".a", "%q is not a node of the topology", l.A)
	}
	b, ok := t.Lookup(l.B)
	if !ok {
		return 0, badValue(path+".b", "%q is not a node of the topology", l.B)
	}
	if l.BandwidthGbps != 0 || l.DelayNS != 0 {
		return 0, badValue(path, "bandwidth_gbps and delay_ns come from the topology in a fabric scenario: leave them out")
	}
	for p := 0; p < t.NumPorts(a); p++ {
		if pi, _ := t.Port(a, topo.Port(p)); pi.Peer == b {
			return pi.Link, nil
		}
	}
	return 0, badValue(path, "the topology has no link between %q and %q", l.A, l.B)
}
