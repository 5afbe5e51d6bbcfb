package roce

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"net/netip"
	"sort"
	"strings"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/reth"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/topo"
)

// RoCE's priorities in the fabric: RoCEv2 frames (UDP port 4791) travel
// in the lossless class, priority 3, as NVIDIA's and most vendors'
// RoCE configurations put them; anything else in priority 0.
const (
	prioRoCE  = 3
	prioCNP   = 6 // CNPs: a higher, lossy priority, ahead of data (NVIDIA's default)
	prioOther = 0
)

// fabric is a fabric run's network state: the topology, the routes in
// force, the switches, and each flow's times.
type fabric struct {
	topo     *topo.Topology
	routes   *topo.Routes
	down     []bool // links routing avoids now
	hostIDs  []topo.NodeID
	switches []*sim.Switch // by switch index
	links    []*sim.Link   // by topology link
	valiant  bool          // Valiant routing on a Dragonfly
	// dragonfly: minimal or Valiant Dragonfly routing (dragonflyHop)
	dragonfly bool
	df        topo.DragonflyLayout
	portTo    map[[2]topo.NodeID]topo.Port // dragonfly: the port of a router toward a neighbour
	seedV     uint32
	reroutes  int

	flows  int
	start  []sim.Time // by connection
	finish []sim.Time // by connection; -1 while running
	sent   []uint64   // payload bytes each flow's requester sent (for rate samples)
	ideal  []sim.Time // ideal FCT by connection
	bad    []bool     // a WR of the flow failed or its data check did

	bufs bufPool // the running flows' buffers

	// ends has, for QP end 2i (connection i's requester) and 2i+1 (its
	// responder), where its frames go and their flow key: the NICs pass
	// the end's number to the switches instead of the destination host,
	// so that no switch reads a frame to route it.
	ends []endRoute
}

// endRoute is where a QP end's frames go: the destination host's index
// and the flow key of their 5-tuple (topo.FlowHash with seed 0), which
// every switch mixes with its seed (topo.SwitchHash).
type endRoute struct {
	host int32
	key  uint32
}

// classify is the network's Classify hook: RoCEv2 (UDP destination port
// 4791 over IPv4, untagged) is priority 3, the rest 0.
func classify(frame []byte) uint8 {
	if len(frame) >= 43 && frame[12] == 0x08 && frame[13] == 0x00 && frame[23] == 17 &&
		frame[36] == 0x12 && frame[37] == 0xB7 {
		if frame[42] == byte(opcode.CNP) {
			return prioCNP
		}
		return prioRoCE
	}
	return prioOther
}

// frameFlow is the 5-tuple of an untagged RoCEv2/IPv4 frame.
func frameFlow(f []byte) topo.FiveTuple {
	if len(f) < 38 {
		return topo.FiveTuple{}
	}
	return topo.FiveTuple{
		Src: netip.AddrFrom4([4]byte(f[26:30])), Dst: netip.AddrFrom4([4]byte(f[30:34])), Proto: f[23],
		SrcPort: binary.BigEndian.Uint16(f[34:36]), DstPort: binary.BigEndian.Uint16(f[36:38]),
	}
}

// buildFabric makes the switches and links of the plan's topology, their
// queues, ECN marking, PFC and routing.
func (s *Sim) buildFabric(p *fabricPlan) error {
	sc := s.sc
	t := p.topo
	fs := FabricSpec{}
	if sc.Fabric != nil {
		fs = *sc.Fabric
	}
	f := &fabric{topo: t, hostIDs: t.Hosts(), down: make([]bool, len(t.Links())), flows: len(p.qps)}
	s.fab = f
	r, err := t.Avoiding(nil)
	if err != nil {
		return err
	}
	f.routes = r
	s.net.Classify = classify

	buffer := fs.BufferBytes
	if buffer == 0 {
		buffer = DefaultBufferBytes
	}
	alpha := fs.Alpha
	if alpha == 0 {
		alpha = 1
	}
	pfc := fs.PFC == nil || *fs.PFC
	mtu := sc.flowSpec().MTU
	if mtu == 0 {
		mtu = DefaultMTU
	}
	maxFrameLen := mtu + frameHeaders

	swOf := make([]*sim.Switch, t.NumNodes())
	for _, id := range t.Switches() {
		sw := s.net.NewSwitch(t.Node(id).Name, t.NumPorts(id), sim.PortConfig{QueueLimit: fs.QueueBytes})
		sw.SetBuffer(sim.BufferConfig{Bytes: buffer, Alpha: alpha})
		swOf[id] = sw
		f.switches = append(f.switches, sw)
		s.switches = append(s.switches, sw)
	}
	port := func(id topo.NodeID, pt topo.Port) *sim.Port {
		if hi := t.HostIndex(id); hi >= 0 {
			return s.nics[hi].host.Port()
		}
		return swOf[id].Port(int(pt))
	}
	for _, l := range t.Links() {
		link := s.net.Connect(port(l.A, l.APort), port(l.B, l.BPort), sim.LinkConfig{
			Bandwidth: l.RateBps, Delay: l.Delay, Name: t.Node(l.A).Name + "--" + t.Node(l.B).Name,
		})
		if fs.LinkFaults != nil {
			link.SetFaults(sim.AtoB, fs.LinkFaults.faults())
			link.SetFaults(sim.BtoA, fs.LinkFaults.faults())
		} else if l.ErrorRate > 0 { // the topology file's error rate
			link.SetFaults(sim.AtoB, sim.Faults{Loss: l.ErrorRate})
			link.SetFaults(sim.BtoA, sim.Faults{Loss: l.ErrorRate})
		}
		for _, e := range [2]topo.NodeID{l.A, l.B} {
			if hi := t.HostIndex(e); hi >= 0 {
				s.nics[hi].link = link
			}
		}
		f.links = append(f.links, link)
	}

	// ECN and PFC per switch, from its ports' rates and delays.
	ecn := fs.ECN
	if ecn == nil {
		ecn = &ECNSpec{KMinBytes: 100_000, KMaxBytes: 400_000, PMax: 0.2, PerRate: true}
	}
	for si, id := range t.Switches() {
		sw := f.switches[si]
		headroom := 0
		for pt := 0; pt < t.NumPorts(id); pt++ {
			pi, _ := t.Port(id, topo.Port(pt))
			l := t.Links()[pi.Link]
			kmin, kmax := ecn.KMinBytes, ecn.KMaxBytes
			if ecn.PerRate {
				scale := float64(l.RateBps) / 25e9
				kmin, kmax = int(float64(kmin)*scale), int(float64(kmax)*scale)
			}
			red := sim.RED{KMin: kmin, KMax: kmax, PMax: ecn.PMax}
			sw.Port(pt).SetRED(prioRoCE, red)
			sw.Port(pt).SetRED(prioOther, red)
			headroom = max(headroom, sim.PFCHeadroom(l.RateBps, l.Delay, maxFrameLen))
		}
		if !pfc {
			continue
		}
		xoff, xon := fs.PFCXOffBytes, fs.PFCXOnBytes
		if xoff == 0 {
			xoff, xon = pfcDefaults(buffer, t.NumPorts(id), headroom, maxFrameLen)
		} else if xon == 0 {
			xon = xoff / 2
		}
		sw.SetPFC(sim.PFCConfig{XOff: xoff, XOn: xon, Priorities: 1 << prioRoCE})
	}

	// Link faults and dead intervals; routing follows the dead ones.
	conv := nsTime(fs.ConvergenceNS)
	for i, l := range sc.Links {
		li, err := fabricLink(t, l, fmt.Sprintf("links[%d]", i))
		if err != nil {
			return err
		}
		link := f.links[li]
		a, _ := t.Lookup(l.A)
		fwd := sim.AtoB
		if t.Links()[li].A != a { // the scenario names the ends the other way round
			fwd = sim.BtoA
		}
		l.applyTo(link, fwd)
		for _, d := range l.Dead { // routing follows, after the convergence delay
			s.eng.Schedule(nsTime(d.FromNS)+conv, (*rerouter)(f), 1, uint64(li))
			if d.ToNS > 0 {
				s.eng.Schedule(nsTime(d.ToNS)+conv, (*rerouter)(f), 0, uint64(li))
			}
		}
	}

	// Routing.
	if df, ok := t.Dragonfly(); ok && fs.Routing != "ecmp" {
		f.dragonfly, f.valiant, f.df = true, fs.Routing == "valiant", df
		f.seedV = topo.SwitchSeed(topo.NodeID(t.NumNodes())) ^ fs.ECMPSeed
		f.portTo = map[[2]topo.NodeID]topo.Port{}
		for _, id := range t.Switches() {
			for pt := 0; pt < t.NumPorts(id); pt++ {
				f.portTo[[2]topo.NodeID{id, t.Neighbor(id, topo.Port(pt))}] = topo.Port(pt)
			}
		}
	}
	for si, id := range t.Switches() {
		seed := topo.SwitchSeed(id)
		if fs.ECMPSeed != 0 {
			seed = topo.SwitchSeed(id ^ topo.NodeID(fs.ECMPSeed))
		}
		f.switches[si].Forward = f.forwarder(id, seed)
	}
	return nil
}

// pfcDefaults are the PFC thresholds of a switch with ports ports sharing
// buffer bytes: each ingress port may hold XOff plus the headroom (what
// still arrives after the pause is sent), and ports x (XOff + headroom) is
// the buffer, so a lossless frame never finds the buffer full; XOn is two
// frames below XOff.
func pfcDefaults(buffer, ports, headroom, frame int) (xoff, xon int) {
	xoff = max(buffer/max(ports, 1)-headroom, 2*frame)
	return xoff, max(xoff-2*frame, 0)
}

// forwarder is switch id's Forward function: ECMP over the routes in
// force, hashing the frame's 5-tuple with the switch's seed, or Valiant on
// a Dragonfly.
func (f *fabric) forwarder(id topo.NodeID, seed uint32) func(in, dst int, frame []byte) int {
	return func(_, dst int, frame []byte) int {
		if dst < 0 || dst >= len(f.ends) {
			return -1
		}
		er := f.ends[dst]
		to := f.hostIDs[er.host]
		if f.dragonfly {
			if p, ok := f.dragonflyHop(id, to, er.key, frame); ok {
				return int(p)
			}
		}
		hops := f.routes.NextHops(id, to)
		switch len(hops) {
		case 0:
			return -1
		case 1:
			return int(hops[0])
		}
		return int(topo.Pick(hops, topo.SwitchHash(seed, er.key)))
	}
}

// dragonflyHop routes a frame at router at of a Dragonfly toward host
// dst: minimally (a local hop to the router holding the global link to the
// destination's group, the global hop, a local hop to the destination's
// router), or by Valiant's rule: from the source group minimally to an
// intermediate group drawn per flow by its hash (never the source's or
// the destination's group), then minimally to the destination. A router
// knows the phase from its own group: in the source group the frame heads
// for the intermediate group; anywhere else, for the destination. It
// reports false where the shortest-path tables decide: at the
// destination's router (the host port), or when the hop's link is down.
func (f *fabric) dragonflyHop(at, dst topo.NodeID, key uint32, frame []byte) (topo.Port, bool) {
	d := f.df
	g, _ := d.RouterOf(at)
	target := d.HostRouter(dst)
	if f.valiant && d.G >= 3 {
		ft := frameFlow(frame)
		if src := f.hostByIP(ft.Src); src >= 0 {
			gs, _ := d.RouterOf(d.HostRouter(src))
			gd, _ := d.RouterOf(target)
			if gs != gd && g == gs {
				gi := int(topo.SwitchHash(f.seedV, key) % uint32(d.G-2))
				for _, x := range [2]int{min(gs, gd), max(gs, gd)} {
					if gi >= x {
						gi++
					}
				}
				target = d.Router(gi, d.GlobalRouter(gi, g))
			}
		}
	}
	if at == target {
		return 0, false
	}
	gt, _ := d.RouterOf(target)
	next := target
	if g != gt {
		next = d.Router(g, d.GlobalRouter(g, gt))
		if next == at {
			next = d.Router(gt, d.GlobalRouter(gt, g))
		}
	}
	p, ok := f.portTo[[2]topo.NodeID{at, next}]
	if !ok {
		return 0, false
	}
	if pi, _ := f.topo.Port(at, p); f.down[pi.Link] {
		return 0, false
	}
	return p, true
}

// hostByIP returns the topology host whose NIC has address a (hosts are
// numbered 10.0.HH.LL from 1), or -1.
func (f *fabric) hostByIP(a netip.Addr) topo.NodeID {
	b := a.As4()
	i := int(b[2])<<8 | int(b[3]) - 1
	if b[0] != 10 || b[1] != 0 || i < 0 || i >= len(f.hostIDs) {
		return -1
	}
	return f.hostIDs[i]
}

// rerouter recomputes the routes when a link goes down (event kind 1) or
// comes back (0), after the convergence delay.
type rerouter fabric

func (h *rerouter) Handle(ev sim.Event) {
	f := (*fabric)(h)
	f.down[ev.A] = ev.Kind == 1
	if r, err := f.topo.Avoiding(f.down); err == nil {
		f.routes = r
		f.reroutes++
	}
}

// startFlows sets up the flows' bookkeeping: start times and ideal FCTs.
func (f *fabric) startFlows(s *Sim, qps []QPSpec) {
	n := len(s.conns)
	f.start = make([]sim.Time, n)
	f.finish = make([]sim.Time, n)
	f.sent = make([]uint64, n)
	f.ideal = make([]sim.Time, n)
	f.bad = make([]bool, n)
	for i := range f.finish {
		f.finish[i] = -1
	}
	for i := range qps {
		f.start[i] = nsTime(qps[i].StartNS)
		f.ideal[i] = f.idealFCT(s.fab.hostIDs, &qps[i], s.conns[i])
	}
	f.ends = make([]endRoute, 2*n)
	for i, c := range s.conns {
		for k, e := range [2]*qpEnd{&c.req, &c.rsp} {
			f.ends[2*i+k] = endRoute{host: e.peer,
				key: topo.FlowHashV4(0, e.nic.ip, e.peerIP, 17, e.udpSrc, packet.RoCEv2Port)}
		}
	}
}

// idealFCT is the flow's completion time alone on the fabric: its frames
// back to back at the slower host's rate, plus, along the first shortest
// path, the propagation delays and the store-and-forward time of its
// largest frame at every hop after the first (the last frame waits behind
// the one before it), and the final ACK's way back (its serialisation at
// every hop and the delays). That is what a lone flow
// takes here (FCT slowdown 1); HPCC's analysis scripts use the same form
// (base RTT plus size over the bottleneck rate).
func (f *fabric) idealFCT(hostIDs []topo.NodeID, q *QPSpec, c *conn) sim.Time {
	t := f.topo
	src := hostIDs[c.req.nic.idx]
	dst := hostIDs[c.rsp.nic.idx]
	mtu := q.mtu()
	var wire int64
	big := 0 // the largest frame: each hop after the first adds its time
	for n := int64(0); n < c.gen.count; n++ {
		_, size := c.gen.at(n)
		pk := max((size+mtu-1)/mtu, 1)
		wire += int64(size) + int64(pk)*int64(minFrame) + rethLen
		big = max(big, minFrame+rethLen+min(size, mtu))
	}
	var rates []int64
	var delay sim.Time
	at := src
	for at != dst && len(rates) < 64 {
		hops := t.NextHops(at, dst)
		if len(hops) == 0 {
			break
		}
		pi, _ := t.Port(at, hops[0])
		l := t.Links()[pi.Link]
		rates = append(rates, l.RateBps)
		delay += l.Delay
		at = pi.Peer
	}
	if len(rates) == 0 {
		return 0
	}
	bottleneck := min(rates[0], rates[len(rates)-1])
	d := sim.TxTime(int(min(wire, math.MaxInt32)), bottleneck) + 2*delay
	for i, r := range rates {
		if i > 0 {
			d += sim.TxTime(big, r)
		}
		d += sim.TxTime(ackFrame, r)
	}
	return d
}

// Frame sizes for the ideal FCT: Ethernet, IPv4, UDP, BTH and ICRC around
// every packet (minFrame); a RETH on each WR's first; an ACK with its AETH.
const (
	rethLen  = reth.Len
	ackFrame = minFrame + aeth.Len
)

// takeBuffers gives a flow's connection its buffers when it starts (the
// responder's region, READ destinations, receive buffers), from buffers
// finished flows gave back, so that memory follows the flows running at a
// time, not all the flows of the run.
func (f *fabric) takeBuffers(c *conn) {
	n := int(c.q) * int(c.slot)
	if c.gen.hasResp {
		c.local = f.bufs.get(n)
	}
	c.mr.Buf = f.bufs.get(n)
	if c.gen.hasSend {
		c.recvBuf = f.bufs.get(c.recvDepth * int(c.slot))
	}
}

// releaseBuffers takes them back once the flow's last work request has
// completed and been checked. Frames still on their way to the flow
// (duplicates, late retransmissions) find its QPs past them: the
// responder writes no duplicate, and the requester takes no response for
// a completed WR.
func (f *fabric) releaseBuffers(c *conn) {
	for _, b := range []*[]byte{&c.local, &c.mr.Buf, &c.recvBuf} {
		if *b != nil {
			f.bufs.put(*b)
			*b = nil
		}
	}
}

// bufPool keeps freed buffers by size for reuse.
type bufPool struct {
	free  map[int][][]byte
	bytes int64 // held by flows now
	peak  int64
}

func (p *bufPool) get(n int) []byte {
	p.bytes += int64(n)
	p.peak = max(p.peak, p.bytes)
	if l := p.free[n]; len(l) > 0 {
		b := l[len(l)-1]
		p.free[n] = l[:len(l)-1]
		return b
	}
	return make([]byte, n)
}

func (p *bufPool) put(b []byte) {
	p.bytes -= int64(len(b))
	if p.free == nil {
		p.free = map[int][][]byte{}
	}
	p.free[len(b)] = append(p.free[len(b)], b[:len(b):len(b)])
}

// flowDone records a connection's last completion.
func (f *fabric) flowDone(id int, now sim.Time) {
	if f.finish[id] < 0 {
		f.finish[id] = now
	}
}

// FlowResult is one flow of a fabric run.
type FlowResult struct {
	Flow     int
	Src, Dst string
	Size     int64
	Start    sim.Time
	Finish   sim.Time // -1: did not finish
	FCT      sim.Time // Finish - Start, or -1
	Ideal    sim.Time
	Slowdown float64 // FCT / Ideal, or 0
	OK       bool    // every WR completed with SUCCESS and its data checked
	CNPs     uint64  // CNPs the flow's data sender received (DCQCN)
}

// Flows returns the flows of a fabric run after Run, in flow order (nil
// for other runs).
func (s *Sim) Flows() []FlowResult {
	f := s.fab
	if f == nil || f.start == nil {
		return nil
	}
	out := make([]FlowResult, len(s.conns))
	for i, c := range s.conns {
		var size int64
		for n := int64(0); n < c.gen.count; n++ {
			_, sz := c.gen.at(n)
			size += int64(sz)
		}
		r := FlowResult{Flow: i, Src: c.req.nic.name, Dst: c.rsp.nic.name, Size: size,
			Start: f.start[i], Finish: f.finish[i], FCT: -1, Ideal: f.ideal[i]}
		if r.Finish >= 0 {
			r.FCT = r.Finish - r.Start
			if r.Ideal > 0 {
				r.Slowdown = float64(r.FCT) / float64(r.Ideal)
			}
		}
		r.OK = r.Finish >= 0 && !f.bad[i]
		if s.ccs != nil {
			r.CNPs = s.ccs[2*i].cnps + s.ccs[2*i+1].cnps
		}
		out[i] = r
	}
	return out
}

// FCTHeader is the first line of the --fct CSV.
const FCTHeader = "flow,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,ok,cnps"

// AppendCSV appends the flow as a line of the --fct CSV (times in ns).
func (r FlowResult) AppendCSV(b []byte) []byte {
	ns := func(t sim.Time) string {
		if t < 0 {
			return ""
		}
		return fmt.Sprintf("%.3f", float64(t)/float64(sim.Nanosecond))
	}
	sd := ""
	if r.Slowdown > 0 {
		sd = fmt.Sprintf("%.4f", r.Slowdown)
	}
	return fmt.Appendf(b, "%d,%s,%s,%d,%s,%s,%s,%s,%s,%t,%d\n", r.Flow, r.Src, r.Dst, r.Size,
		ns(r.Start), ns(r.Finish), ns(r.FCT), ns(r.Ideal), sd, r.OK, r.CNPs)
}

// SizeBuckets are the flow-size buckets of the FCT slowdown summary, by
// upper bound in bytes (the last is unbounded), in the spirit of HPCC's
// fct_analysis.py.
var SizeBuckets = []int64{10_000, 100_000, 1_000_000, 10_000_000, math.MaxInt64}

// BucketNames name SizeBuckets, in order, as the summary's fct_slowdown
// does: "<10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", ">=10MB".
var BucketNames = []string{"<10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", ">=10MB"}

// SlowdownBucket is the FCT slowdown of the completed flows of one size
// bucket.
type SlowdownBucket struct {
	Bucket string  `json:"bucket"`
	Flows  int     `json:"flows"`
	P50    float64 `json:"p50"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
}

// Slowdowns summarises flows' FCT slowdowns per size bucket: the
// nearest-rank p50, p95 and p99 of each bucket's slowdowns, flows with no
// slowdown (not completed: 0) left out, and so empty buckets. size(i) and
// slowdown(i) give flow i of n; the summary and rocekit plot (from the FCT
// CSV) both use it.
func Slowdowns(n int, size func(int) int64, slowdown func(int) float64) []SlowdownBucket {
	by := make([][]float64, len(SizeBuckets))
	for f := 0; f < n; f++ {
		sd := slowdown(f)
		if sd <= 0 {
			continue
		}
		sz := size(f)
		i := min(sort.Search(len(SizeBuckets), func(i int) bool { return sz < SizeBuckets[i] }), len(by)-1)
		by[i] = append(by[i], sd)
	}
	var out []SlowdownBucket
	for i, v := range by {
		if len(v) == 0 {
			continue
		}
		sort.Float64s(v)
		q := func(p float64) float64 { return v[min(int(math.Ceil(p*float64(len(v))))-1, len(v)-1)] }
		out = append(out, SlowdownBucket{Bucket: BucketNames[i], Flows: len(v), P50: q(0.50), P95: q(0.95), P99: q(0.99)})
	}
	return out
}

// slowdowns summarises a run's flows per bucket (Slowdowns).
func slowdowns(flows []FlowResult) []SlowdownBucket {
	return Slowdowns(len(flows), func(i int) int64 { return flows[i].Size }, func(i int) float64 { return flows[i].Slowdown })
}

// traceLinks resolves Options.TraceLinks to the topology links to trace:
// "all", "hosts" (every host link), or a comma-separated list of link
// names ("a--b") and node names (every link of the node). The default is
// the host links of the first flow's two ends.
func (f *fabric) traceLinks(spec string, s *Sim) ([]int, error) {
	t := f.topo
	var out []int
	add := func(l int) {
		for _, x := range out {
			if x == l {
				return
			}
		}
		out = append(out, l)
	}
	hostLink := func(id topo.NodeID) int { pi, _ := t.Port(id, 0); return pi.Link }
	switch spec {
	case "all":
		for i := range t.Links() {
			out = append(out, i)
		}
		return out, nil
	case "hosts":
		for _, h := range t.Hosts() {
			add(hostLink(h))
		}
		sort.Ints(out)
		return out, nil
	case "":
		if len(s.conns) > 0 {
			add(hostLink(f.hostIDs[s.conns[0].req.nic.idx]))
			add(hostLink(f.hostIDs[s.conns[0].rsp.nic.idx]))
		}
		return out, nil
	}
	for _, name := range strings.Split(spec, ",") {
		if a, b, ok := strings.Cut(name, "--"); ok {
			li, err := fabricLink(t, LinkSpec{A: a, B: b}, "--trace-links")
			if err != nil {
				return nil, fmt.Errorf("--trace-links: %q: no such link", name)
			}
			add(li)
			continue
		}
		id, ok := t.Lookup(name)
		if !ok {
			return nil, fmt.Errorf("--trace-links: %q is not a node or a link (a--b) of the topology", name)
		}
		for pt := 0; pt < t.NumPorts(id); pt++ {
			pi, _ := t.Port(id, topo.Port(pt))
			add(pi.Link)
		}
	}
	return out, nil
}

// sampler writes a fabric run's samples every interval: the bytes queued
// at every switch port, and every running flow's sending rate (payload
// bytes put on the wire over the interval). It stops when nothing else is
// left to happen.
type sampler struct {
	s        *Sim
	q, r     io.Writer
	every    sim.Time
	lastSent []uint64
	buf      []byte
	err      error
}

func (sm *sampler) Handle(ev sim.Event) {
	s, f, now := sm.s, sm.s.fab, ev.At
	t := float64(now) / float64(sim.Nanosecond)
	if sm.q != nil {
		b := sm.buf[:0]
		for _, sw := range f.switches {
			for i := 0; i < sw.NumPorts(); i++ {
				p := sw.Port(i)
				b = fmt.Appendf(b, "%.0f,%s,%d\n", t, p.Name(), p.QueuedBytes())
			}
		}
		sm.write(sm.q, b)
		sm.buf = b
	}
	if sm.r != nil {
		b := sm.buf[:0]
		for i := range s.conns {
			if f.start[i] > now || f.finish[i] >= 0 && f.finish[i] <= now-sm.every {
				continue
			}
			d := f.sent[i] - sm.lastSent[i]
			sm.lastSent[i] = f.sent[i]
			b = fmt.Appendf(b, "%.0f,%d,%.3f\n", t, i, float64(d)*8/sm.every.Seconds()/1e9)
		}
		sm.write(sm.r, b)
		sm.buf = b
	}
	if !s.finished && s.eng.Pending() > 0 {
		s.eng.Schedule(now+sm.every, sm, 0, 0)
	}
}

func (sm *sampler) write(w io.Writer, b []byte) {
	if sm.err == nil && len(b) > 0 {
		_, sm.err = w.Write(b)
	}
}

// startSampler writes the CSV headers and schedules the first sample (New
// checked the options).
func (s *Sim) startSampler() {
	o := &s.opt
	if s.fab == nil || o.SampleQueues == nil && o.SampleRates == nil {
		return
	}
	sm := &sampler{s: s, q: o.SampleQueues, r: o.SampleRates, every: o.SampleInterval, lastSent: make([]uint64, len(s.conns))}
	if sm.q != nil {
		sm.write(sm.q, []byte("time_ns,port,queue_bytes\n"))
	}
	if sm.r != nil {
		sm.write(sm.r, []byte("time_ns,flow,gbps\n"))
	}
	s.samp = sm
	s.eng.Schedule(o.SampleInterval, sm, 0, 0)
}

// FabricSummary is what a fabric run adds to the summary: its JSON keys
// sit at the top level of `rocekit sim --json`, beside the others, and
// are absent for other runs.
type FabricSummary struct {
	// Topology and Traffic are the scenario's; Switches counts switches.
	Topology string `json:"topology"`
	Traffic  string `json:"traffic"`
	Switches int    `json:"switches"`
	// Flows counts the flows; FlowsCompleted those whose every work
	// request completed with SUCCESS and whose data was verified where it
	// landed; FlowsFailed those with a failed work request or check;
	// the rest did not finish (stopped, or stalled).
	Flows          int `json:"flows"`
	FlowsCompleted int `json:"flows_completed"`
	FlowsFailed    int `json:"flows_failed"`
	// FCTSlowdown is the completed flows' FCT / ideal FCT by size bucket.
	FCTSlowdown []SlowdownBucket `json:"fct_slowdown"`
	// Over every port: PFC pause frames sent, ECN marks, the largest queue
	// of a switch port, and drops by cause.
	PFCPauses     uint64            `json:"pfc_pauses"`
	ECNMarks      uint64            `json:"ecn_marks"`
	MaxQueueBytes int               `json:"max_queue_bytes"`
	Drops         map[string]uint64 `json:"drops"`
	// Reroutes counts routing recomputations after links went down or up.
	Reroutes int `json:"reroutes"`
	// TracedLinks names the links --trace recorded, by pcapng interface.
	TracedLinks []string `json:"traced_links,omitempty"`
	// Ports has every port that sent or queued anything: switch ports
	// ("switch/port") and host ports (the host's name).
	Ports []PortSummary `json:"ports"`
}

// PortSummary is one port of a fabric run (sim.PortStats).
type PortSummary struct {
	Port           string            `json:"port"`
	Peer           string            `json:"peer"`
	Frames         uint64            `json:"frames"`
	Bytes          uint64            `json:"bytes"`
	Drops          map[string]uint64 `json:"drops,omitempty"`
	ECNMarks       uint64            `json:"ecn_marks"`
	PausesSent     uint64            `json:"pfc_pauses_sent"`
	PausesReceived uint64            `json:"pfc_pauses_received"`
	PausedNS       float64           `json:"paused_ns"`
	MaxQueueBytes  int               `json:"max_queue_bytes"`
	MeanQueueBytes float64           `json:"mean_queue_bytes"`
}

// fabricSummary fills the fabric part of a summary.
func (s *Sim) fabricSummary() *FabricSummary {
	f := s.fab
	fs := &FabricSummary{Topology: s.sc.Topology, Traffic: s.sc.Traffic, Switches: len(f.switches),
		Flows: f.flows, Drops: map[string]uint64{}, Reroutes: f.reroutes, TracedLinks: s.traced}
	flows := s.Flows()
	for _, r := range flows {
		switch {
		case r.OK:
			fs.FlowsCompleted++
		case f.bad[r.Flow]:
			fs.FlowsFailed++
		}
	}
	hostPort := make(map[*sim.Port]bool, len(s.nics))
	for _, n := range s.nics {
		hostPort[n.host.Port()] = true
	}
	fs.FCTSlowdown = slowdowns(flows)
	if fs.FCTSlowdown == nil {
		fs.FCTSlowdown = []SlowdownBucket{}
	}
	for _, l := range s.net.Links() {
		for _, p := range []*sim.Port{l.A(), l.B()} {
			st := p.Stats()
			sw := !hostPort[p]
			fs.PFCPauses += st.PauseSent
			fs.ECNMarks += st.ECNMarked
			if sw {
				fs.MaxQueueBytes = max(fs.MaxQueueBytes, st.MaxQueueBytes)
			}
			drops := map[string]uint64{}
			for _, d := range []struct {
				name string
				n    uint64
			}{{"queue", st.QueueDrops}, {"buffer", st.BufferDrops}, {"loss", st.LossDrops}, {"burst", st.BurstDrops},
				{"dead", st.DeadDrops}, {"no_route", st.NoRouteDrops}} {
				if d.n > 0 {
					drops[d.name] = d.n
					fs.Drops[d.name] += d.n
				}
			}
			if st.SentFrames == 0 && st.MaxQueueBytes == 0 && len(drops) == 0 && st.PauseReceived == 0 {
				continue
			}
			ps := PortSummary{Port: p.Name(), Peer: p.Peer().Name(), Frames: st.SentFrames, Bytes: st.SentBytes,
				ECNMarks: st.ECNMarked, PausesSent: st.PauseSent, PausesReceived: st.PauseReceived,
				PausedNS: st.PausedTime.Nanoseconds(), MaxQueueBytes: st.MaxQueueBytes, MeanQueueBytes: st.MeanQueueBytes}
			if len(drops) > 0 {
				ps.Drops = drops
			}
			fs.Ports = append(fs.Ports, ps)
		}
	}
	for _, k := range []string{"queue", "buffer", "loss", "burst", "dead", "no_route"} {
		fs.Drops[k] += 0
	}
	return fs
}
