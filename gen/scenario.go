package gen

import (
	"fmt"
	"net/netip"

	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/roce"
	"github.com/rocekit/rocekit/sim"
)

// DefaultMessages is how many work requests each QP of the simulator's
// default scenario posts when gen runs it (DefaultScenario).
const DefaultMessages = 16

// DefaultScenario is the simulator's default scenario (roce.DefaultScenario:
// two hosts on a 100 Gb/s link, 1 MiB RDMA WRITEs at 4 KiB MTU) shortened to
// DefaultMessages work requests. FromScenario removes its link loss.
func DefaultScenario() *roce.Scenario {
	sc := roce.DefaultScenario()
	for i := range sc.QPs {
		sc.QPs[i].Work.Count = DefaultMessages
	}
	return sc
}

// ScenarioOptions adjust FromScenario.
type ScenarioOptions struct {
	// Messages, if positive, replaces the work request count of every QP
	// entry of the scenario.
	Messages int64
	// Encap is the encapsulation of the stimulus. 0 and packet.RoCEv2IPv4
	// keep the simulator's frames byte for byte; any other rebuilds each
	// frame's transport packet in that encapsulation (ICRC and, for native
	// IB, VCRC computed).
	Encap packet.Encap
	// MemInit is the initial content of the DUT's memory regions.
	MemInit MemInit
	// Latency is the DUT processing time the model allows (DUT.Latency).
	Latency sim.Time
}

// FromScenario runs the simulator (package roce) on a copy of sc whose
// links and switch lose, reorder, duplicate, corrupt and mark nothing, and
// keeps, in order, every frame that reaches the DUT for one of its responder
// QPs. The DUT is the responder host of the scenario's first QP entry; its
// QPs are the responder ends of every connection to that host (QP numbers
// 0x12+2i, peers 0x11+2i, for connection i in scenario order), with the
// entries' MTU, IRD, min_rnr_timer and PSNs, every access right, and
// receive queues of recv_depth WQEs (re-posted as they complete) as large
// as the largest SEND of the stream. Its memory regions are one per R_Key
// the stream uses, from the lowest address any RETH or AtomicETH names to
// the highest it reaches, rounded out to 64 bytes. A frame's time is when
// its first bit reaches the DUT (the simulator's send time plus the link's
// propagation delay).
func FromScenario(sc *roce.Scenario, o ScenarioOptions) (*Source, error) {
	if o.Encap == packet.EncapNone {
		o.Encap = packet.RoCEv2IPv4
	}
	sc, err := faultless(sc, o.Messages)
	if err != nil {
		return nil, err
	}
	dutHost := sc.QPs[0].To
	addrs := make([]Addr, len(sc.Hosts))
	hostIdx := -1
	for i, h := range sc.Hosts {
		if addrs[i], err = hostAddr(i, h); err != nil {
			return nil, err
		}
		if h.Name == dutHost {
			hostIdx = i
		}
	}
	link, dir := -1, sim.AtoB
	var gbps, delay float64
	for i, l := range sc.Links {
		if l.A == dutHost || l.B == dutHost {
			link, gbps, delay = i, l.BandwidthGbps, l.DelayNS
			if l.A == dutHost {
				dir = sim.BtoA
			}
			break
		}
	}
	if hostIdx < 0 || link < 0 {
		return nil, fmt.Errorf("scenario: the DUT host %q has no link", dutHost)
	}
	dut := DUT{Encap: o.Encap, Self: addrs[hostIdx], Gbps: gbps, Latency: o.Latency}
	dut.QPs = scenarioQPs(sc, dutHost, addrs)
	recs, err := tapScenario(sc, link, dir, sim.FromSeconds(delay*1e-9))
	if err != nil {
		return nil, err
	}
	return dutFrames(&dut, recs, o)
}

// faultless returns a checked copy of sc whose links and switch lose,
// reorder, duplicate, corrupt and mark nothing, and whose QP entries post
// messages work requests each if messages is positive.
func faultless(sc *roce.Scenario, messages int64) (*roce.Scenario, error) {
	sc = sc.Clone()
	if len(sc.QPs) == 0 {
		return nil, fmt.Errorf("scenario has no QPs: there is no traffic to turn into stimulus")
	}
	for i := range sc.QPs {
		if messages > 0 {
			sc.QPs[i].Work.Count = messages
		}
	}
	for i := range sc.Links {
		l := &sc.Links[i]
		l.Faults, l.AToB, l.BToA, l.Dead = nil, nil, nil, nil
	}
	if sc.Switch != nil {
		sc.Switch.QueueBytes, sc.Switch.ECNBytes = 0, 0
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return sc, nil
}

// scenarioQPs returns the DUT's QPs: the responder ends of every
// connection of sc to dutHost, as FromScenario describes them; addrs are
// the hosts' addresses.
func scenarioQPs(sc *roce.Scenario, dutHost string, addrs []Addr) []QP {
	byName := map[string]int{}
	for i, h := range sc.Hosts {
		byName[h.Name] = i
	}
	var qps []QP
	conn := 0
	for i := range sc.QPs {
		spec := &sc.QPs[i]
		n := max(spec.Count, 1)
		for k := 0; k < n; k, conn = k+1, conn+1 {
			if spec.To != dutHost {
				continue
			}
			out := spec.Outstanding
			if out <= 0 {
				out = roce.DefaultOutstanding
			}
			depth := spec.RecvDepth
			if depth <= 0 {
				depth = out
			}
			q := QP{
				QPN: uint32(0x12 + 2*conn), DestQPN: uint32(0x11 + 2*conn),
				RQPSN: spec.SQPSN, SQPSN: spec.RQPSN,
				MTU: spec.MTU, PKey: 0xFFFF, IRD: roce.DefaultIRD, MinRNRTimer: roce.DefaultMinRNRTimer,
				Access: rc.AccessAll, RecvWQEs: depth, RecvRepost: true, Peer: addrs[byName[spec.From]],
			}
			if q.MTU == 0 {
				q.MTU = roce.DefaultMTU
			}
			if spec.IRD != nil {
				q.IRD = *spec.IRD
			}
			if spec.MinRNRTimer != nil {
				q.MinRNRTimer = *spec.MinRNRTimer
			}
			qps = append(qps, q)
		}
	}
	return qps
}

// tapChunk is the size of the chunks frames are copied into as they go
// by, so the copies never move.
const tapChunk = 4 << 20

// tapScenario runs sc and returns a copy of every frame sent on link in
// direction dir, timed when its first bit arrives, delay after it was
// sent.
func tapScenario(sc *roce.Scenario, link int, dir sim.Direction, delay sim.Time) ([]SourceFrame, error) {
	s, err := roce.New(sc, roce.Options{})
	if err != nil {
		return nil, err
	}
	var arena []byte
	var recs []SourceFrame
	s.Network().Tap = func(now sim.Time, l int, dr sim.Direction, frame []byte) {
		if l != link || dr != dir {
			return
		}
		data := carve(&arena, len(frame), tapChunk)
		copy(data, frame)
		recs = append(recs, SourceFrame{Time: now + delay, Data: data})
	}
	sum, err := s.Run()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 && sum.PacketsSent > 0 {
		return nil, fmt.Errorf("the simulator sent %d frames but none reached gen's tap on link %d", sum.PacketsSent, link)
	}
	return recs, nil
}

// dutFrames keeps, in place, the frames of recs (every frame into the DUT
// host) that go to one of the DUT's QPs, rebuilt in encapsulation o.Encap
// if that is not RoCEv2 over IPv4, and derives the DUT's memory regions
// from them.
func dutFrames(dut *DUT, recs []SourceFrame, o ScenarioOptions) (*Source, error) {
	src := &Source{DUT: *dut, Frames: recs[:0]}
	var fr packet.Frame
	var ff packet.FrameFields
	var calc icrc.Calc
	var mem memDeriver
	mem.init(len(dut.QPs))
	var buf []byte
	for _, r := range recs {
		data := r.Data
		if err := fr.DecodeEthernet(data); err != nil || fr.Encap != packet.RoCEv2IPv4 {
			continue
		}
		q := dut.qpIndex(fr.Transport.BTH.DestQP())
		if q < 0 {
			continue // for a requester QP of the DUT host: not the DUT's business here
		}
		mem.add(q, &fr.Transport)
		if o.Encap != packet.RoCEv2IPv4 {
			ff = dut.inTemplate(&dut.QPs[q])
			ff.Transport = fr.Transport.Fields()
			data = carve(&buf, ff.Len(), tapChunk)
			if _, err := ff.EncodeWith(data, &calc); err != nil {
				return nil, fmt.Errorf("rebuilding %s as %s: %v", fr.Transport.Opcode(), o.Encap, err)
			}
		}
		src.Frames = append(src.Frames, SourceFrame{Time: r.Time, Data: data})
	}
	mem.finish(&src.DUT, o.MemInit)
	return src, nil
}

// hostAddr is host i's addressing as the simulator assigns it: the spec's
// MAC and IPv4 address or 02:00:00:00:HH:LL and 10.0.HH.LL from the 1-based
// index; for other encapsulations IPv6 (and GID) fd00::a.b.c.d and LID
// i+1.
func hostAddr(i int, h roce.HostSpec) (Addr, error) {
	a := Addr{MAC: [6]byte{2, 0, 0, 0, byte((i + 1) >> 8), byte(i + 1)}, IPv4: [4]byte{10, 0, byte((i + 1) >> 8), byte(i + 1)}}
	if h.MAC != "" {
		m, err := packet.ParseMAC(h.MAC)
		if err != nil {
			return a, fmt.Errorf("host %s: MAC %q", h.Name, h.MAC)
		}
		a.MAC = m
	}
	if h.IP != "" {
		ip, err := netip.ParseAddr(h.IP)
		if err != nil || !ip.Is4() {
			return a, fmt.Errorf("host %s: IP %q", h.Name, h.IP)
		}
		a.IPv4 = ip.As4()
	}
	a.IPv6 = [16]byte{0: 0xfd}
	copy(a.IPv6[12:], a.IPv4[:])
	a.LID = uint16(i + 1)
	return a, nil
}

// memDeriver gives the DUT one memory region per R_Key the stream uses,
// covering every RETH and AtomicETH range (rounded out to 64 bytes), and
// receive buffers as large as the largest SEND message (at least 64 bytes).
type memDeriver struct {
	spans   map[uint32]*span
	keys    []uint32
	sendLen []int
	maxSend []int
}

type span struct{ lo, hi uint64 }

func (m *memDeriver) init(qps int) {
	m.spans = map[uint32]*span{}
	m.sendLen = make([]int, qps)
	m.maxSend = make([]int, qps)
}

func (m *memDeriver) span(rkey uint32, va, n uint64) {
	if n == 0 || va+n < va {
		return
	}
	s := m.spans[rkey]
	if s == nil {
		s = &span{lo: va, hi: va + n}
		m.spans[rkey] = s
		m.keys = append(m.keys, rkey)
	}
	s.lo, s.hi = min(s.lo, va), max(s.hi, va+n)
}

// add takes one packet for DUT QP q.
func (m *memDeriver) add(q int, t *packet.Packet) {
	if t.RETH != nil {
		m.span(t.RETH.RKey(), t.RETH.VA(), uint64(t.RETH.DMALen()))
	}
	if t.AtomicETH != nil {
		m.span(t.AtomicETH.RKey(), t.AtomicETH.VA(), 8)
	}
	if op := t.Opcode(); op.Family() == opcode.FamilySend {
		if p := op.Position(); p == opcode.First || p == opcode.Only {
			m.sendLen[q] = 0
		}
		m.sendLen[q] += len(t.Payload)
		m.maxSend[q] = max(m.maxSend[q], m.sendLen[q])
	}
}

func (m *memDeriver) finish(d *DUT, init MemInit) {
	for _, k := range m.keys {
		s := m.spans[k]
		lo := s.lo &^ 63
		hi := (s.hi + 63) &^ 63
		if hi < s.hi {
			hi = s.hi
		}
		d.MRs = append(d.MRs, MR{Addr: lo, RKey: k, Length: int(hi - lo), Access: rc.AccessAll, Init: init})
	}
	for q := range d.QPs {
		d.QPs[q].RecvBytes = max(64, (m.maxSend[q]+63)&^63)
	}
}
