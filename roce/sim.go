package roce

import (
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"sort"
	"time"

	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/internal/hugepage"
	"github.com/rocekit/rocekit/internal/prefetch"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// qpnBase is the first QP number: connection i has requester QPN
// qpnBase+2i and responder QPN qpnBase+2i+1 (rxe numbers its first QP 17).
const qpnBase = 0x11

// Options are the run-time settings of a simulation that are not part of
// the scenario.
type Options struct {
	// Trace, if set, receives a capture of every frame put on every link,
	// as its port sends it (before that link's faults; a frame corrupted
	// on one hop is captured corrupted on the next): classic pcap, or
	// pcapng with one interface per link (in scenario order), per
	// TraceFormat. Timestamps are simulated time from the Unix epoch, to
	// the nanosecond.
	Trace       io.Writer
	TraceFormat pcap.Format
	// TraceLinks chooses the links a fabric run traces: "all", "hosts"
	// (every host's link), or a comma-separated list of link names (a--b)
	// and node names (all of a node's links). Empty means the host links
	// of the first flow's two ends: all the links of a 128-host fabric
	// would write every frame five times over.
	TraceLinks string
	// Samples, if set, receives samples of a fabric run every
	// SampleInterval: Queues the bytes queued at every switch port (CSV
	// time_ns,port,queue_bytes), Rates every running flow's sending rate
	// over the last interval (time_ns,flow,gbps).
	SampleQueues, SampleRates io.Writer
	SampleInterval            sim.Time
	// Snaplen, if positive, cuts each captured frame to that many bytes.
	Snaplen int
	// Progress, if set, is called every ProgressEvery events (default
	// 65,536) and once at the end.
	Progress      func(Progress)
	ProgressEvery uint64
	// MaxMemoryBytes bounds the memory the simulation may take, by
	// Scenario.MemoryEstimate; 0 means DefaultMemoryLimit. New fails with a
	// *MemoryError for a scenario that needs more, before it allocates.
	MaxMemoryBytes int64
}

// Progress reports how far a run is.
type Progress struct {
	Completed, Total int64 // work requests
	SimTime          sim.Time
	Events           uint64
	Done             bool // the last call
}

// Sim is one simulation: an engine, a network of hosts whose NICs run RC
// QPs, and the work generators. Build it with New, run it once with Run.
type Sim struct {
	sc    *Scenario
	opt   Options
	eng   *sim.Engine
	net   *sim.Network
	nics  []*nic
	conns []*conn
	// connArr holds the conns, line-aligned (newConns); connection i's
	// ends have QPNs qpnBase+2i and qpnBase+2i+1.
	connArr  []conn
	prefetch bool           // the connections' state is too big for the cache (see prefetching)
	ahead    prefetch.Queue // region lines asked for a few at a time (see prefetching)
	slab     *rc.Slab       // the QPs
	arena    arena          // the connections' buffers
	pat      *pattern
	calc     icrc.Calc
	comps    []rc.Completion
	stop     sim.Time

	startAt  []sim.Time // by connection, when some start later than 0
	total    int64      // work requests of all connections
	done     int64      // completed
	finished bool
	ran      bool

	trace    *pcap.Writer
	traceIf  []int32  // fabric: pcapng interface of each link, -1 untraced
	traced   []string // fabric: the traced links' names, by interface
	rec      pcap.Record
	traceErr error
	snap     int

	st   counters
	hist Histogram

	fab  *fabric // a fabric run's state; nil for others
	ccs  []ccEnd // congestion control by QP end; nil without
	ccst ccStats
	int  bool // HPCC: switches stamp INT

	switches []*sim.Switch // every switch, in the order made
	samp     *sampler      // a fabric run's samples, if asked for
}

// counters are the run's tallies.
type counters struct {
	posted                    int64
	wrStatus, recvStatus      [32]uint64 // by rc.Status
	bytes                     uint64
	packets, dataPackets      uint64
	naks                      [6]uint64 // by NAK code; [5] reserved codes
	rnrNaks                   uint64
	malformed, ipChecksum     uint64
	misaddressed, unknownQP   uint64
	icrcErrors                uint64
	ceReceived                uint64
	checks, checkFailures     uint64
	orderErrors               uint64
	lastCompletion            sim.Time
	firstFailure              string
	recvWithoutSend, sendLost uint64
}

// New builds the simulation of a scenario: hosts and NICs, links with their
// faults and dead intervals, the switch, every connection's two QPs with
// their memory. The scenario must be valid (ParseScenario checks it; New
// checks it again).
func New(sc *Scenario, opt Options) (*Sim, error) {
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	s := &Sim{sc: sc, opt: opt, stop: sim.MaxTime, snap: opt.Snaplen}
	if sc.StopNS > 0 {
		s.stop = nsTime(sc.StopNS)
	}
	if s.opt.ProgressEvery == 0 {
		s.opt.ProgressEvery = 1 << 16
	}
	if err := sc.CheckMemory(opt.MaxMemoryBytes); err != nil {
		return nil, err
	}
	s.eng = sim.NewEngine(0)
	s.net = sim.NewNetwork(s.eng, sc.Seed)
	s.net.MarkCE = MarkCE
	hosts, qps := sc.Hosts, sc.QPs
	var plan *fabricPlan
	if sc.IsFabric() {
		var err error
		if plan, err = sc.plan(); err != nil {
			return nil, err
		}
		hosts, qps = plan.hosts, plan.qps
	}
	maxMsg := 0
	for i := range qps {
		maxMsg = max(maxMsg, newGenerator(&qps[i].Work, 0).maxSize)
	}
	s.pat = newPattern(sc.Seed, maxMsg)

	// Hosts.
	hostIdx := map[string]int{}
	for i, h := range hosts {
		n := &nic{s: s, idx: i, name: h.Name}
		n.mac = [6]byte{2, 0, 0, 0, byte((i + 1) >> 8), byte(i + 1)}
		if h.MAC != "" {
			n.mac, _ = parseMAC(h.MAC)
		}
		n.ip = [4]byte{10, 0, byte((i + 1) >> 8), byte(i + 1)}
		if h.IP != "" {
			n.ip = netip.MustParseAddr(h.IP).As4()
		}
		n.tx = packet.DefaultFrame(packet.RoCEv2IPv4)
		n.tx.Eth.Src, n.tx.IPv4.Src = n.mac, n.ip
		n.host = s.net.NewHost(h.Name, n)
		s.nics = append(s.nics, n)
		hostIdx[h.Name] = i
	}

	if plan != nil {
		if err := s.buildFabric(plan); err != nil {
			return nil, err
		}
	} else {
		s.buildLinks(hostIdx)
	}

	// Connections.
	n := 0
	var bufs int64
	for i := range qps {
		spec := &qps[i]
		n += spec.count()
		bufs += int64(bufferBytes(spec, newGenerator(&spec.Work, 0))) * int64(spec.count())
	}
	s.connArr = newConns(n)
	s.prefetch = prefetching && n*connStateBytes > prefetchAbove
	s.slab = rc.NewSlab(2 * n)
	if plan == nil {
		s.arena = newArena(bufs)
	}
	for i := range qps {
		spec := &qps[i]
		for k := 0; k < spec.count(); k++ {
			if err := s.addConn(spec, s.nics[hostIdx[spec.From]], s.nics[hostIdx[spec.To]]); err != nil {
				return nil, err
			}
			if spec.StartNS > 0 {
				if s.startAt == nil {
					s.startAt = make([]sim.Time, n)
				}
				s.startAt[len(s.conns)-1] = nsTime(spec.StartNS)
			}
		}
	}
	if s.fab != nil {
		s.fab.startFlows(s, qps)
	}
	if sc.CC != nil {
		if err := s.setupCC(sc.CC); err != nil {
			return nil, err
		}
	}

	if opt.Trace != nil {
		if err := s.startTrace(); err != nil {
			return nil, err
		}
	}
	if opt.SampleQueues != nil || opt.SampleRates != nil {
		if s.fab == nil {
			return nil, errors.New("roce: samples are for fabric scenarios (with a topology)")
		}
		if opt.SampleInterval <= 0 {
			return nil, fmt.Errorf("roce: sample interval %v: want more than 0", opt.SampleInterval)
		}
	}
	return s, nil
}

// applyTo sets on link, whose direction fwd goes from l.A to l.B, the
// faults and dead intervals l gives; a direction l gives no faults for
// keeps its own.
func (l *LinkSpec) applyTo(link *sim.Link, fwd sim.Direction) {
	fa, fb := l.Faults, l.Faults
	if l.AToB != nil {
		fa = l.AToB
	}
	if l.BToA != nil {
		fb = l.BToA
	}
	if fa != nil {
		link.SetFaults(fwd, fa.faults())
	}
	if fb != nil {
		link.SetFaults(fwd.Reverse(), fb.faults())
	}
	for _, d := range l.Dead {
		dirs := []sim.Direction{fwd, fwd.Reverse()}
		switch d.Dir {
		case "a_to_b":
			dirs = dirs[:1]
		case "b_to_a":
			dirs = dirs[1:]
		}
		for _, dir := range dirs {
			link.SetDeadAt(nsTime(d.FromNS), dir, true)
			if d.ToNS > 0 {
				link.SetDeadAt(nsTime(d.ToNS), dir, false)
			}
		}
	}
}

// buildLinks makes the switch, if the scenario has one, and the links of a
// scenario that lists them.
func (s *Sim) buildLinks(hostIdx map[string]int) {
	sc := s.sc
	var sw *sim.Switch
	if w := sc.Switch; w != nil {
		ports := 0
		for _, l := range sc.Links {
			if l.A == w.Name || l.B == w.Name {
				ports++
			}
		}
		sw = s.net.NewSwitch(w.Name, max(ports, 1), sim.PortConfig{QueueLimit: w.QueueBytes, ECNThreshold: w.ECNBytes})
		s.switches = append(s.switches, sw)
		if w.PFCXOffBytes > 0 {
			xon := w.PFCXOnBytes
			if xon == 0 {
				xon = w.PFCXOffBytes / 2
			}
			sw.SetPFC(sim.PFCConfig{XOff: w.PFCXOffBytes, XOn: xon})
		}
	}
	nextPort := 0
	port := func(name string) *sim.Port {
		if i, ok := hostIdx[name]; ok {
			return s.nics[i].host.Port()
		}
		p := sw.Port(nextPort)
		nextPort++
		return p
	}
	for _, l := range sc.Links {
		pa, pb := port(l.A), port(l.B)
		link := s.net.Connect(pa, pb, sim.LinkConfig{
			Bandwidth: int64(math.Round(l.BandwidthGbps * 1e9)),
			Delay:     nsTime(l.DelayNS),
			Name:      l.A + "--" + l.B,
		})
		l.applyTo(link, sim.AtoB)
		for _, side := range []struct {
			name string
			p    *sim.Port
		}{{l.A, pa}, {l.B, pb}} {
			if i, ok := hostIdx[side.name]; ok {
				s.nics[i].link = link
			} else {
				// A switch port: frames for the host at the other end leave here.
				other := l.A
				if side.name == l.A {
					other = l.B
				}
				for i := 0; i < sw.NumPorts(); i++ {
					if sw.Port(i) == side.p {
						sw.SetRoute(hostIdx[other], i)
					}
				}
			}
		}
	}

}

// bufferBytes is the memory a connection of spec needs (in floating point,
// so that MemoryEstimate can take it for any scenario, valid or not).
func bufferBytes(spec *QPSpec, g *generator) float64 {
	slot := math.Ceil(float64(max(g.maxSize, 8))/64) * 64 // slotSize
	b := float64(spec.outstanding()) * slot
	if g.hasResp {
		b *= 2
	}
	if g.hasSend {
		b += float64(spec.recvDepth()) * slot
	}
	return max(b, 0)
}

func slotSize(maxMsg int) int { return (max(maxMsg, 8) + 63) &^ 63 }

// newConns returns n conns in one array that starts on a cache line (a
// conn is whole lines: TestConnLayout), hinted to be huge pages.
func newConns(n int) []conn { return hugepage.Slice[conn](n) }

// arena hands out the connections' buffers (memory regions, READ and
// atomic destinations, receive buffers) from one allocation hinted to be
// huge pages: with thousands of connections every packet lands in a cold
// region, and should not also miss the TLB. Buffers are whole cache lines
// (slotSize), so each starts on one.
type arena struct{ b []byte }

func newArena(n int64) arena {
	b := make([]byte, n)
	hugepage.Bytes(b)
	return arena{b}
}

// take returns the next n bytes, zero.
func (a *arena) take(n int) []byte {
	if n > len(a.b) { // not counted in advance: cannot happen, but stay correct
		return make([]byte, n)
	}
	p := a.b[:n:n]
	a.b = a.b[n:]
	return p
}

func (s *Sim) addConn(spec *QPSpec, from, to *nic) error {
	id := len(s.conns)
	rqpn := uint32(qpnBase + 2*id)
	sqpn := rqpn + 1
	c := &s.connArr[id]
	c.s, c.id, c.q = s, id, int32(spec.outstanding())
	c.gen = *newGenerator(&spec.Work, connKey(s.sc.Seed, id))
	c.slot = uint32(slotSize(c.gen.maxSize))
	q, slot := int(c.q), int(c.slot)
	c.mr = rc.MR{Addr: 0x10000000, RKey: 0x100 + uint32(id), Access: rc.AccessAll}
	if q > postInline {
		c.postBig = make([]sim.Time, q)
	}
	if c.gen.hasSend {
		c.recvDepth = spec.recvDepth()
		c.repostDelay = nsTime(spec.RecvRepostDelayNS)
	}
	if s.fab == nil { // a fabric's flows take their buffers when they start (takeBuffers)
		if c.gen.hasResp {
			c.local = s.arena.take(q * slot)
		}
		c.mr.Buf = s.arena.take(q * slot)
		if c.gen.hasSend {
			c.recvBuf = s.arena.take(c.recvDepth * slot)
		}
	}
	mem := &c.mem
	if err := mem.Register(&c.mr); err != nil {
		return err
	}
	base := rc.Config{
		PKey:              0xFFFF,
		MTU:               spec.mtu(),
		Timeout:           u8or(spec.Timeout, DefaultTimeout),
		RetryCnt:          u8or(spec.RetryCnt, DefaultRetryCnt),
		RetryCnt7Infinite: spec.RetryCnt7Infinite,
		RNRRetry:          u8or(spec.RNRRetry, DefaultRNRRetry),
		MinRNRTimer:       u8or(spec.MinRNRTimer, DefaultMinRNRTimer),
		MaxRdAtomic:       spec.ord(),
		MaxDestRdAtomic:   spec.ird(),
		Access:            rc.AccessAll,
		SignalAll:         true,
		Window:            spec.Window,
	}
	if cs := s.sc.CC; cs != nil && cs.Algorithm == "hpcc" && spec.Window == 0 {
		base.Window = s.hpccWindow(from, to, spec.mtu())
	}
	reqCfg, rspCfg := base, base
	reqCfg.QPN, reqCfg.DestQPN, reqCfg.SQPSN, reqCfg.RQPSN = rqpn, sqpn, spec.SQPSN, spec.RQPSN
	rspCfg.QPN, rspCfg.DestQPN, rspCfg.SQPSN, rspCfg.RQPSN = sqpn, rqpn, spec.RQPSN, spec.SQPSN
	rspCfg.Memory = mem
	rq, err := s.slab.New(reqCfg)
	if err != nil {
		return err
	}
	rs, err := s.slab.New(rspCfg)
	if err != nil {
		return err
	}
	c.req = newEnd(c, rq, from, to, true)
	c.rsp = newEnd(c, rs, to, from, false)
	s.conns = append(s.conns, c)
	s.total += c.gen.count
	return nil
}

func newEnd(c *conn, q *rc.QP, local, remote *nic, isReq bool) qpEnd {
	cfg := q.Config()
	return qpEnd{qp: q, nic: local, conn: c, isReq: isReq, peer: int32(remote.idx), peerIP: remote.ip, peerMAC: remote.mac,
		udpSrc: packet.UDPSourcePort(0, cfg.QPN, cfg.DestQPN)}
}

// startTrace writes the capture header and installs the Tap. A fabric
// run traces the links Options.TraceLinks selects, one pcapng interface
// each in topology link order (classic pcap: all in one).
func (s *Sim) startTrace() error {
	f := s.opt.TraceFormat
	w, err := pcap.NewWriter(s.opt.Trace, f, pcap.LinkTypeEthernet)
	if err != nil {
		return err
	}
	n := len(s.net.Links())
	if s.fab != nil {
		links, err := s.fab.traceLinks(s.opt.TraceLinks, s)
		if err != nil {
			return err
		}
		sort.Ints(links)
		s.traceIf = make([]int32, n)
		for i := range s.traceIf {
			s.traceIf[i] = -1
		}
		for k, l := range links {
			s.traceIf[l] = int32(k)
			s.traced = append(s.traced, s.net.Links()[l].Name())
		}
		n = len(links)
	}
	if f == pcap.FormatPcapng {
		for range n - 1 {
			if _, err := w.AddInterface(pcap.LinkTypeEthernet); err != nil {
				return err
			}
		}
	}
	s.trace = w
	s.rec.LinkType = pcap.LinkTypeEthernet
	s.net.Tap = s.tap
	return nil
}

func (s *Sim) tap(now sim.Time, link int, _ sim.Direction, frame []byte) {
	if s.traceErr != nil {
		return
	}
	if s.traceIf != nil {
		if link = int(s.traceIf[link]); link < 0 {
			return
		}
	}
	r := &s.rec
	r.Time = time.Unix(0, int64(now/sim.Nanosecond))
	r.OrigLen = len(frame)
	r.Data = frame
	if s.snap > 0 && len(frame) > s.snap {
		r.Data = frame[:s.snap]
	}
	if s.opt.TraceFormat == pcap.FormatPcapng {
		r.Interface = link
	}
	s.traceErr = s.trace.WriteRecord(r)
	r.Data = nil
}

// Engine returns the simulation's event engine.
func (s *Sim) Engine() *sim.Engine { return s.eng }

// Network returns the simulated network.
func (s *Sim) Network() *sim.Network { return s.net }

// QPs returns the number of connections (each two QPs).
func (s *Sim) QPs() int { return len(s.conns) }

// ErrAlreadyRun is returned by a second Run.
var ErrAlreadyRun = errors.New("roce: Sim.Run called twice")

// Run runs the simulation until every work request has completed, the
// scenario's stop time, or nothing is left to happen, and returns the
// summary. The error reports a failed trace write (the run itself went on).
func (s *Sim) Run() (*Summary, error) {
	if s.ran {
		return nil, ErrAlreadyRun
	}
	s.ran = true
	start := time.Now()
	for i, c := range s.conns {
		if s.startAt != nil && s.startAt[i] > 0 {
			s.eng.Schedule(s.startAt[i], (*starter)(s), 0, uint64(i))
			continue
		}
		c.start(0)
	}
	for _, n := range s.nics {
		n.kick(0)
	}
	if s.total == 0 {
		s.finished = true
	}
	s.startSampler()
	eng := s.eng
	every := s.opt.ProgressEvery
	next := every
	for !s.finished && eng.StepUntil(s.stop) {
		if s.opt.Progress != nil && eng.Events() >= next {
			next += every
			s.opt.Progress(Progress{Completed: s.done, Total: s.total, SimTime: eng.Now(), Events: eng.Events()})
		}
	}
	wall := time.Since(start)
	end := eng.Now()
	if !s.finished && s.stop != sim.MaxTime {
		if t, ok := eng.Next(); ok && t > s.stop {
			end = s.stop
		}
	}
	if s.opt.Progress != nil {
		s.opt.Progress(Progress{Completed: s.done, Total: s.total, SimTime: end, Events: eng.Events(), Done: true})
	}
	err := s.traceErr
	if s.samp != nil && s.samp.err != nil && err == nil {
		err = fmt.Errorf("samples: %w", s.samp.err)
	}
	if s.trace != nil {
		if ferr := s.trace.Flush(); err == nil {
			err = ferr
		}
	}
	return s.summary(end, wall), err
}
