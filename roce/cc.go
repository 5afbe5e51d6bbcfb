package roce

import (
	"fmt"
	"sort"
	"strings"

	"github.com/rocekit/rocekit/cc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/sim"
)

// CCSpec is the congestion control of every QP (package cc): Algorithm
// "none" (line rate), "dcqcn" or "hpcc", with a named Preset (DCQCN:
// "paper", "ns3-mellanox", "htsim"; HPCC: "ns3", "paper") and Params
// overriding single parameters (cc.DCQCNParams.Set, cc.HPCCParams.Set keys).
type CCSpec struct {
	Algorithm string            `json:"algorithm"`
	Preset    string            `json:"preset,omitempty"`
	Params    map[string]string `json:"params,omitempty"`
}

// Congestion-control defaults: DCQCN's preset is the paper's, HPCC's HPCC
// ns-3's.
const (
	DefaultDCQCNPreset = "paper"
	DefaultHPCCPreset  = "ns3"
)

// resolve returns the algorithm's parameters, checking names and values;
// path is the spec's key path for errors.
func (c *CCSpec) resolve(path string) (algo string, d cc.DCQCNParams, h cc.HPCCParams, err error) {
	algo = c.Algorithm
	switch algo {
	case "none":
		if c.Preset != "" || len(c.Params) > 0 {
			return "", d, h, badValue(path, `"none" takes no preset or params`)
		}
		return algo, d, h, nil
	case "dcqcn":
		err = params(c, path, &d, DefaultDCQCNPreset, cc.Preset, cc.DCQCNPresets)
	case "hpcc":
		err = params(c, path, &h, DefaultHPCCPreset, cc.HPCCPreset, cc.HPCCPresets)
	default:
		return "", d, h, badValue(path+".algorithm", "%q: want none, dcqcn or hpcc", algo)
	}
	if err != nil {
		return "", d, h, err
	}
	return algo, d, h, nil
}

// params sets *p from the spec's preset (def when it names none) and its
// params in key order, and checks the result; errors name the key path.
func params[P any, PP interface {
	*P
	Set(key, value string) error
	Validate() error
}](c *CCSpec, path string, p PP, def string, preset func(string) (P, error), names func() []string) error {
	name := c.Preset
	if name == "" {
		name = def
	}
	v, err := preset(name)
	if err != nil {
		return badValue(path+".preset", "%q: want %s", name, strings.Join(names(), ", "))
	}
	*p = v
	for _, k := range sortedKeys(c.Params) {
		if err := p.Set(k, c.Params[k]); err != nil {
			return badValue(path+".params."+k, "%v", trimCC(err))
		}
	}
	if err := p.Validate(); err != nil {
		return badValue(path+".params", "%v", trimCC(err))
	}
	return nil
}

func trimCC(err error) string { return strings.TrimPrefix(err.Error(), "cc: ") }

// ccEnd is the congestion-control state of one QP end (Sim.ccs, by
// 2 x connection + 1 for the responder): its reaction point, pacing, the
// notification point for the data it receives, and for HPCC the telemetry
// to echo in its next ACK.
type ccEnd struct {
	e        *qpEnd
	alg      cc.Algorithm
	np       cc.NP
	npOn     bool     // DCQCN: CE-marked data is answered with CNPs
	paced    bool     // this end sends the flow's data
	nextSend sim.Time // pacing: the next data packet leaves no earlier
	lastSize int      // pacing: the last data frame's bytes
	rate     int64    // pacing: the rate nextSend was computed at
	paceAt   sim.Time // when the pending pacing wake-up fires
	wakeGen  uint64
	wakeAt   sim.Time
	waking   bool
	paceGen  uint64
	pacing   bool // a pacing wake-up is pending
	cnpQueue bool // a CNP to the peer waits in the NIC's queue
	acked    uint64
	lastUna  uint32
	lastNext uint32 // window-based: the PSN after the last data packet reported to OnSent
	nints    int
	ints     [cc.MaxINTHops]cc.INTHop // HPCC: received, echoed in the next ACK
	conv     [cc.MaxINTHops]cc.INTHop // scratch for conversions
	cnps     uint64                   // CNPs received for this end's data
}

// intNIC is a NIC that also takes the frames' in-band telemetry (HPCC
// runs): the network hands it every frame with the records switches
// stamped on it.
type intNIC nic

func (n *intNIC) Receive(now sim.Time, frame []byte) { (*nic)(n).Receive(now, frame) }
func (n *intNIC) TxDone(now sim.Time)                { (*nic)(n).TxDone(now) }

func (n *intNIC) ReceiveINT(now sim.Time, frame []byte, hops []sim.INTHop) {
	nn := (*nic)(n)
	nn.hops = hops
	nn.Receive(now, frame)
	nn.hops = nil
}

// keepINT stores the telemetry a data packet for ce's end collected, for
// its next ACK to echo (the responder's side of HPCC).
func (ce *ccEnd) keepINT(hops []sim.INTHop) {
	ce.nints = copy(ce.ints[:], toCC(ce.conv[:0], hops))
}

// toCC converts the simulator's records to package cc's (the same fields).
func toCC(dst []cc.INTHop, hops []sim.INTHop) []cc.INTHop {
	for _, h := range hops {
		dst = append(dst, cc.INTHop(h))
	}
	return dst
}

// stampINT marks an HPCC end's data frame to collect telemetry, and
// attaches to an ACK the telemetry to echo.
func (ce *ccEnd) stampINT(fr *sim.Frame, t *packet.Fields) {
	switch {
	case ce.paced && len(t.Payload) > 0:
		fr.SetCollectINT(true)
	case t.BTH.Opcode == opcode.RCAcknowledge && ce.nints > 0:
		var hops [sim.MaxINTHops]sim.INTHop
		for i := 0; i < ce.nints; i++ {
			hops[i] = sim.INTHop(ce.ints[i])
		}
		fr.SetINT(hops[:ce.nints])
	}
}

// ccStats are the run's congestion-control counts.
type ccStats struct {
	cnpsSent, cnpsReceived uint64
}

// setupCC gives every QP end its congestion control (when the scenario has
// one other than none).
func (s *Sim) setupCC(spec *CCSpec) error {
	algo, dp, hp, err := spec.resolve("cc")
	if err != nil || algo == "none" {
		return err
	}
	s.ccs = make([]ccEnd, 2*len(s.conns))
	defer func() {
		if s.int { // HPCC: every switch stamps telemetry, every NIC takes it
			for _, sw := range s.switches {
				sw.SetINT(true)
			}
			for _, n := range s.nics {
				n.host.SetEndpoint((*intNIC)(n))
			}
		}
	}()
	for i, c := range s.conns {
		for k, e := range [2]*qpEnd{&c.req, &c.rsp} {
			ce := &s.ccs[2*i+k]
			ce.e = e
			line := e.nic.link.Bandwidth()
			switch algo {
			case "dcqcn":
				d, err := cc.NewDCQCN(dp, line)
				if err != nil {
					return err
				}
				ce.alg = d
				if ce.np, err = cc.NewNP(dp.CNPInterval); err != nil {
					return err
				}
				ce.npOn = true
			case "hpcc":
				h, err := cc.NewHPCC(hp, line, s.baseRTT(c))
				if err != nil {
					return err
				}
				ce.alg = h
				s.int = true
			}
			if ce.alg == nil {
				return fmt.Errorf("roce: congestion control %q", algo)
			}
			// The end that sends the data is paced: the requester of
			// WRITEs and SENDs, the responder of READs.
			ce.paced = e.isReq && (c.gen.hasSend || !c.gen.hasResp || c.gen.op == opMix) || !e.isReq && c.gen.hasResp
			ce.lastUna, ce.lastNext = e.qp.UnackedPSN(), e.qp.NextPSN()
		}
	}
	return nil
}

// baseRTT is a connection's round trip on an empty network: a full frame
// and an ACK serialised at every hop, and the delays both ways (HPCC's T).
func (s *Sim) baseRTT(c *conn) sim.Time { return s.baseRTTBetween(c.req.nic, c.rsp.nic) }

// hpccWindow is the PSN window of an HPCC connection between two NICs: its
// bandwidth-delay product in packets (HPCC's window never exceeds it), so
// that the requester asks for ACKs often enough (rc sets AckReq every half
// window) for the ACKs, which carry the telemetry, to keep coming.
func (s *Sim) hpccWindow(from, to *nic, mtu int) uint32 {
	bdp := float64(from.link.Bandwidth()) / 8 * s.baseRTTBetween(from, to).Seconds()
	return uint32(max(2, int(bdp)/mtu+1))
}

func (s *Sim) baseRTTBetween(a, b *nic) sim.Time {
	if f := s.fab; f != nil {
		src, dst := f.hostIDs[a.idx], f.hostIDs[b.idx]
		var t sim.Time
		at := src
		for hops := 0; at != dst && hops < 64; hops++ {
			h := f.topo.NextHops(at, dst)
			if len(h) == 0 {
				break
			}
			pi, _ := f.topo.Port(at, h[0])
			l := f.topo.Links()[pi.Link]
			t += 2*l.Delay + sim.TxTime(maxFrame, l.RateBps) + sim.TxTime(ackFrame, l.RateBps)
			at = pi.Peer
		}
		return t
	}
	l := a.link
	hops := sim.Time(1)
	if s.sc.Switch != nil {
		hops = 2
	}
	return hops * (2*l.Delay() + l.TxTime(maxFrame) + l.TxTime(ackFrame))
}

// ccOf returns e's congestion control, or nil.
func (s *Sim) ccOf(e *qpEnd) *ccEnd {
	if s.ccs == nil {
		return nil
	}
	i := 2 * e.conn.id
	if !e.isReq {
		i++
	}
	return &s.ccs[i]
}

// mayPace reports whether e may send now. A paced end holds back until its
// pacing time, and with a window (HPCC) while the bytes in flight reach it;
// it is woken at the pacing time, or by the ACK that opens the window.
func (ce *ccEnd) mayPace(now sim.Time) bool {
	if !ce.paced {
		return true
	}
	if w := ce.alg.Window(); w > 0 {
		q := ce.e.qp
		mtu := q.Config().MTU
		inflight := int(psnDiff(q.NextPSN(), q.UnackedPSN())) * mtu
		if inflight >= w {
			return false
		}
		// Every data packet asks for an ACK, which brings its telemetry
		// back: HPCC reacts per ACK, and the packet that fills the window
		// must not wait for an AckReq (§5.2: the responder ACKs only those).
		q.RequestAck()
	}
	if now < ce.nextSend {
		if !ce.pacing {
			ce.wakeForPace(ce.nextSend)
		}
		return false
	}
	return true
}

// psnDiff is a - b in 24-bit PSN space.
func psnDiff(a, b uint32) uint32 { return (a - b) & 0xFFFFFF }

// sent accounts a frame of n bytes e sent: the algorithm's byte counter
// and the pacing time of the next one. A rate-based algorithm (DCQCN) is
// told the frame's bytes, as its byte counter counts them. A window-based
// one (HPCC) is told the new PSNs times the MTU instead: onAck can only
// count acknowledged bytes that way (an ACK names a PSN), and the two must
// count alike, or the sequence HPCC waits for before its once-per-RTT
// update drifts ahead of what ACKs can reach (by the headers, 1.4% of
// every packet at 4 KiB MTU) and the update comes ever more rarely.
func (ce *ccEnd) sent(now sim.Time, n int) {
	if !ce.paced {
		return
	}
	if ce.alg.Window() > 0 {
		q := ce.e.qp
		next := q.NextPSN()
		ce.alg.OnSent(now, int(psnDiff(next, ce.lastNext))*q.Config().MTU)
		ce.lastNext = next
	} else {
		ce.alg.OnSent(now, n)
	}
	ce.rate, ce.lastSize = ce.alg.Rate(), n
	ce.nextSend = max(ce.nextSend, now) + sim.TxTime(n, ce.rate)
	ce.arm(now)
}

// wakeForPace schedules the pacing wake-up at t; one pending before it is
// left to fire in vain.
func (ce *ccEnd) wakeForPace(t sim.Time) {
	ce.pacing, ce.paceAt = true, t
	ce.paceGen++
	ce.e.nic.s.eng.Schedule(t, (*ccPace)(ce), 0, ce.paceGen)
}

// retime moves the departure of the next data packet to the algorithm's
// current rate when the rate changed since the last one left: the gap
// after that packet becomes its time on the wire at the new rate, as HPCC
// ns-3's ChangeRate does (rdma-hw.cc). A sender cut to min_rate would
// otherwise keep the gap of the slow rate after it has recovered: 332 us
// for a 4 KiB frame at 100 Mb/s. A pending wake-up that is now too late is
// replaced; one that is now too early fires and finds the packet not due.
func (ce *ccEnd) retime(now sim.Time) {
	r := ce.alg.Rate()
	if r == ce.rate || !ce.paced || ce.lastSize == 0 {
		return
	}
	ce.nextSend += sim.TxTime(ce.lastSize, r) - sim.TxTime(ce.lastSize, ce.rate)
	ce.rate = r
	if ce.pacing && ce.nextSend < ce.paceAt {
		ce.wakeForPace(max(ce.nextSend, now))
	}
}

// arm schedules the algorithm's next timer.
func (ce *ccEnd) arm(now sim.Time) {
	w := ce.alg.NextWake()
	if w == sim.MaxTime || ce.waking && ce.wakeAt <= w {
		return
	}
	ce.wakeGen++
	ce.waking, ce.wakeAt = true, max(w, now)
	ce.e.nic.s.eng.Schedule(ce.wakeAt, ce, 0, ce.wakeGen)
}

// Handle runs the algorithm's timer.
func (ce *ccEnd) Handle(ev sim.Event) {
	if ev.A != ce.wakeGen {
		return
	}
	ce.waking = false
	ce.alg.Advance(ev.At)
	ce.retime(ev.At)
	ce.arm(ev.At)
}

// ccPace wakes a paced end at its pacing time.
type ccPace ccEnd

func (h *ccPace) Handle(ev sim.Event) {
	ce := (*ccEnd)(h)
	if ev.A != ce.paceGen {
		return
	}
	ce.pacing = false
	e := ce.e
	e.service(ev.At)
	e.nic.kick(ev.At)
}

// onCNP is a CNP arriving for e.
func (ce *ccEnd) onCNP(now sim.Time) {
	ce.cnps++
	ce.alg.OnCNP(now)
	ce.retime(now)
	ce.arm(now)
}

// onAck feeds the algorithm an ACK that arrived for e, with the telemetry
// it echoes: the acknowledged sequence in bytes is the PSNs acknowledged so
// far times the MTU (exact but for each message's last packet).
func (ce *ccEnd) onAck(now sim.Time, hops []cc.INTHop) {
	if !ce.paced {
		return
	}
	una := ce.e.qp.UnackedPSN()
	ce.acked += uint64(psnDiff(una, ce.lastUna)) * uint64(ce.e.qp.Config().MTU)
	ce.lastUna = una
	ce.alg.OnAck(now, ce.acked, hops)
	ce.retime(now)
	ce.arm(now)
}

// queueCNP asks the NIC to send a CNP to the QP whose data e received
// marked CE, unless one is already waiting.
func (n *nic) queueCNP(ce *ccEnd) {
	if ce.cnpQueue {
		return
	}
	ce.cnpQueue = true
	n.cnps.Push(ce)
}

// sendCNP builds and sends the CNP of ce as ConnectX NICs do (ib-facts
// §1.6): BTH opcode 0x81 with BECN set, P_Key 0xFFFF, PSN 0, to the peer
// QP, 16 reserved bytes, its ICRC; IPv4 DSCP 48 with ECT(0). It goes ahead
// of the NIC's data.
func (n *nic) sendCNP(now sim.Time, ce *ccEnd) {
	ce.cnpQueue = false
	e := ce.e
	s := n.s
	n.tx.Eth.Dst, n.tx.IPv4.Dst, n.tx.UDP.SrcPort = e.peerMAC, e.peerIP, e.udpSrc
	t := &n.tx.Transport
	*t = packet.Fields{}
	t.BTH.Opcode = opcode.CNP
	t.BTH.PKey = 0xFFFF
	t.BTH.BECN = true
	t.BTH.DestQP = e.qp.Config().DestQPN
	s.ccst.cnpsSent++
	tos := n.tx.IPv4.TOS
	n.tx.IPv4.TOS = 48<<2 | tos&3
	n.transmitFrame(now, e)
	n.tx.IPv4.TOS = tos
}

// ccSummary is what congestion control adds to the summary.
func (s *Sim) ccSummary(sum *Summary) {
	if s.ccs == nil {
		return
	}
	c := &CCSummary{Algorithm: s.sc.CC.Algorithm, CNPsSent: s.ccst.cnpsSent, CNPsReceived: s.ccst.cnpsReceived}
	var rates []float64
	for i := range s.ccs {
		ce := &s.ccs[i]
		if !ce.paced {
			continue
		}
		if d, ok := ce.alg.(*cc.DCQCN); ok {
			cuts, _ := d.Counts()
			c.RateDecreases += cuts
		}
		if h, ok := ce.alg.(*cc.HPCC); ok {
			c.WindowUpdates += h.Updates()
		}
		rates = append(rates, float64(ce.alg.Rate())/1e9)
	}
	if len(rates) > 0 {
		sort.Float64s(rates)
		c.FinalRateGbps = [3]float64{rates[0], rates[len(rates)/2], rates[len(rates)-1]}
	}
	sum.CCSummary = c
}

// CCSummary is the congestion control of a run (absent without one).
type CCSummary struct {
	Algorithm     string `json:"cc"`
	CNPsSent      uint64 `json:"cnps_sent"`
	CNPsReceived  uint64 `json:"cnps_received"`
	RateDecreases uint64 `json:"rate_decreases"`
	WindowUpdates uint64 `json:"window_updates"`
	// FinalRateGbps is the senders' rates at the end: least, median, most.
	FinalRateGbps [3]float64 `json:"final_rate_gbps"`
}

func (c *CCSummary) String() string {
	s := fmt.Sprintf("%s: %d CNPs sent, %d received, %d rate decreases", c.Algorithm, c.CNPsSent, c.CNPsReceived, c.RateDecreases)
	if c.WindowUpdates > 0 {
		s += fmt.Sprintf(", %d window updates", c.WindowUpdates)
	}
	return s + fmt.Sprintf("; senders' rates at the end %.3g / %.3g / %.3g Gb/s (least / median / most)",
		c.FinalRateGbps[0], c.FinalRateGbps[1], c.FinalRateGbps[2])
}
