package roce

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/internal/plural"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// Summary is the result of a run. Its JSON form (encoding/json) is what
// `rocekit sim --json` prints; the keys are documented on the fields.
type Summary struct {
	// Complete is true when every work request completed (with any status).
	Complete bool `json:"complete"`
	// Hosts, Links and QPs describe the network: QPs counts connections.
	Hosts int `json:"hosts"`
	Links int `json:"links"`
	QPs   int `json:"qps"`
	// WRTotal is the work requests the scenario asks for; WRPosted those
	// posted; WRCompleted counts completions by status name (SUCCESS,
	// RETRY_EXC_ERR, WR_FLUSH_ERR, ...); RecvCompleted the responders'
	// receive completions by status.
	WRTotal       int64             `json:"wr_total"`
	WRPosted      int64             `json:"wr_posted"`
	WRCompleted   map[string]uint64 `json:"wr_completed"`
	RecvCompleted map[string]uint64 `json:"recv_completed"`
	// BytesDelivered is the message bytes of successful work requests;
	// GoodputGbps is their rate over SimTimeNS.
	BytesDelivered uint64  `json:"bytes_delivered"`
	GoodputGbps    float64 `json:"goodput_gbps"`
	// PacketsSent counts every frame the NICs sent (requests, responses,
	// ACKs, retransmissions); DataPackets those carrying payload.
	PacketsSent uint64 `json:"packets_sent"`
	DataPackets uint64 `json:"data_packets"`
	// Retransmissions counts request packets sent again; Timeouts local
	// ACK timer expiries that caused a retry; Retries go-back-N restarts.
	Retransmissions uint64 `json:"retransmissions"`
	Timeouts        uint64 `json:"timeouts"`
	Retries         uint64 `json:"retries"`
	// NAKs counts NAKs the responders sent, by kind: PSN_SEQUENCE_ERROR,
	// INVALID_REQUEST, REMOTE_ACCESS_ERROR, REMOTE_OPERATIONAL_ERROR and
	// RNR_NAK always, INVALID_RD_REQUEST and RESERVED (codes 5-31) when
	// seen; RNRNAKs repeats RNR_NAK.
	NAKs    map[string]uint64 `json:"naks"`
	RNRNAKs uint64            `json:"rnr_naks"`
	// Latency is the completion latency of successful work requests (post
	// to completion) in simulated nanoseconds.
	Latency LatencySummary `json:"latency_ns"`
	// Frames dropped by the receiving NICs: ICRCErrors (bad ICRC),
	// Malformed (not a decodable RoCEv2/IPv4 frame), IPChecksumErrors,
	// Misaddressed (MAC or IP not the host's or not the QP's peer),
	// UnknownQP; ECNCEReceived counts frames that arrived marked CE.
	ICRCErrors       uint64 `json:"icrc_errors"`
	Malformed        uint64 `json:"malformed_frames"`
	IPChecksumErrors uint64 `json:"ip_checksum_errors"`
	Misaddressed     uint64 `json:"misaddressed_frames"`
	UnknownQP        uint64 `json:"unknown_qp_frames"`
	ECNCEReceived    uint64 `json:"ecn_ce_received"`
	// Network counts what the links and switch did, summed over links
	// and directions.
	Network NetworkSummary `json:"network"`
	// SimTimeNS is the simulated time at the end: the last completion when
	// Complete, else the stop time or the last event.
	SimTimeNS float64 `json:"sim_time_ns"`
	// Events processed, wall-clock time and the rates they give.
	Events               uint64  `json:"events"`
	WallSeconds          float64 `json:"wall_seconds"`
	EventsPerSecond      float64 `json:"events_per_second"`
	PacketsPerSecond     float64 `json:"packets_per_wall_second"`
	DataPacketsPerSecond float64 `json:"data_packets_per_wall_second"`
	// DataIntegrityOK is true when every check passed: each successful
	// WRITE's bytes in the responder's memory, each READ's bytes in the
	// requester's buffer, each SEND's bytes in the receive buffer, and each
	// atomic's returned and resulting values, all as generated from (seed,
	// connection, WR number). IntegrityChecks counts the checks,
	// IntegrityFailures those that failed, FirstFailure describes one.
	DataIntegrityOK   bool   `json:"data_integrity_ok"`
	IntegrityChecks   uint64 `json:"integrity_checks"`
	IntegrityFailures uint64 `json:"integrity_failures"`
	FirstFailure      string `json:"first_failure,omitempty"`
	// CompletionOrderOK is true when every connection's completions came
	// exactly once each, in posting order.
	CompletionOrderOK bool `json:"completion_order_ok"`

	// A fabric run's flows, FCTs and ports (FabricSummary's keys).
	*FabricSummary
	// Congestion control's counts (CCSummary's keys), when it runs.
	*CCSummary

	scenario string
}

// LatencySummary is a latency distribution in nanoseconds.
type LatencySummary struct {
	Count uint64  `json:"count"`
	Mean  float64 `json:"mean"`
	P50   float64 `json:"p50"`
	P99   float64 `json:"p99"`
	Min   float64 `json:"min"`
	Max   float64 `json:"max"`
}

// NetworkSummary sums the links' counters (sim.Counters) over every link
// and direction, and the drops by cause.
type NetworkSummary struct {
	FramesOnWire uint64            `json:"frames_on_wire"`
	BytesOnWire  uint64            `json:"bytes_on_wire"`
	Drops        map[string]uint64 `json:"drops"` // loss, burst, dead, queue
	Duplicated   uint64            `json:"duplicated"`
	Reordered    uint64            `json:"reordered"`
	Corrupted    uint64            `json:"corrupted"`
	ECNMarked    uint64            `json:"ecn_marked"`
	PeakQueue    int               `json:"peak_switch_queue_bytes"`
	PFCPauses    uint64            `json:"pfc_pauses"`    // PFC pause frames sent
	PFCPausedNS  float64           `json:"pfc_paused_ns"` // time senders spent paused, summed over ports
}

// Statuses that always appear in WRCompleted, even at 0.
var summaryStatuses = []rc.Status{rc.Success}

func (s *Sim) summary(end sim.Time, wall time.Duration) *Summary {
	st := &s.st
	sum := &Summary{
		Complete:          s.done == s.total,
		Hosts:             len(s.nics),
		Links:             len(s.net.Links()),
		QPs:               len(s.conns),
		WRTotal:           s.total,
		WRPosted:          st.posted,
		WRCompleted:       map[string]uint64{},
		RecvCompleted:     map[string]uint64{},
		BytesDelivered:    st.bytes,
		PacketsSent:       st.packets,
		DataPackets:       st.dataPackets,
		NAKs:              map[string]uint64{},
		RNRNAKs:           st.rnrNaks,
		ICRCErrors:        st.icrcErrors,
		Malformed:         st.malformed,
		IPChecksumErrors:  st.ipChecksum,
		Misaddressed:      st.misaddressed,
		UnknownQP:         st.unknownQP,
		ECNCEReceived:     st.ceReceived,
		SimTimeNS:         end.Nanoseconds(),
		Events:            s.eng.Events(),
		WallSeconds:       wall.Seconds(),
		DataIntegrityOK:   st.checkFailures == 0,
		IntegrityChecks:   st.checks,
		IntegrityFailures: st.checkFailures,
		FirstFailure:      st.firstFailure,
		CompletionOrderOK: st.orderErrors == 0,
	}
	for _, x := range summaryStatuses {
		sum.WRCompleted[x.String()] = 0
	}
	for i, n := range st.wrStatus {
		if n > 0 {
			sum.WRCompleted[rc.Status(i).String()] = n
		}
	}
	for i, n := range st.recvStatus {
		if n > 0 {
			sum.RecvCompleted[rc.Status(i).String()] = n
		}
	}
	for c := aeth.PSNSequenceError; c <= aeth.RemoteOperationalError; c++ {
		sum.NAKs[c.String()] = st.naks[c]
	}
	if st.naks[aeth.InvalidRDRequest] > 0 { // RD only: not expected on RC
		sum.NAKs[aeth.InvalidRDRequest.String()] = st.naks[aeth.InvalidRDRequest]
	}
	if st.naks[5] > 0 {
		sum.NAKs["RESERVED"] = st.naks[5]
	}
	sum.NAKs["RNR_NAK"] = st.rnrNaks
	for _, c := range s.conns {
		for _, e := range []*qpEnd{&c.req, &c.rsp} {
			qs := e.qp.Stats()
			sum.Retransmissions += qs.Retransmitted
			sum.Timeouts += qs.Timeouts
			sum.Retries += qs.Retries
		}
	}
	if end > 0 {
		sum.GoodputGbps = float64(st.bytes) * 8 / end.Seconds() / 1e9
	}
	if w := wall.Seconds(); w > 0 {
		sum.EventsPerSecond = float64(sum.Events) / w
		sum.PacketsPerSecond = float64(st.packets) / w
		sum.DataPacketsPerSecond = float64(st.dataPackets) / w
	}
	h := &s.hist
	ns := func(t sim.Time) float64 { return t.Nanoseconds() }
	sum.Latency = LatencySummary{Count: h.Count(), Mean: ns(h.Mean()), P50: ns(h.Quantile(0.5)),
		P99: ns(h.Quantile(0.99)), Min: ns(h.Min()), Max: ns(h.Max())}

	net := &sum.Network
	net.Drops = map[string]uint64{}
	for _, l := range s.net.Links() {
		for _, d := range []sim.Direction{sim.AtoB, sim.BtoA} {
			c := l.Counters(d)
			net.FramesOnWire += c.SentFrames
			net.BytesOnWire += c.SentBytes
			net.Drops["loss"] += c.LossDrops
			net.Drops["burst"] += c.BurstDrops
			net.Drops["dead"] += c.DeadDrops
			net.Drops["queue"] += c.QueueDrops
			net.Duplicated += c.Duplicated
			net.Reordered += c.Reordered
			net.Corrupted += c.Corrupted
			net.ECNMarked += c.ECNMarked
			net.PFCPauses += c.PauseFrames
			net.PFCPausedNS += c.PausedTime.Nanoseconds()
		}
		if s.fab != nil {
			continue
		}
		for _, p := range []*sim.Port{l.A(), l.B()} {
			if p != nil && p.Link() != nil && s.isSwitchPort(p) {
				net.PeakQueue = max(net.PeakQueue, p.PeakQueuedBytes())
			}
		}
	}
	if s.fab != nil {
		for _, sw := range s.fab.switches {
			for i := 0; i < sw.NumPorts(); i++ {
				net.PeakQueue = max(net.PeakQueue, sw.Port(i).PeakQueuedBytes())
			}
		}
	}
	sum.scenario = s.describe()
	if s.fab != nil {
		sum.FabricSummary = s.fabricSummary()
	}
	s.ccSummary(sum)
	return sum
}

func (s *Sim) isSwitchPort(p *sim.Port) bool {
	for _, n := range s.nics {
		if n.host.Port() == p {
			return false
		}
	}
	return true
}

// describe is a one-line description of the scenario for the text summary.
func (s *Sim) describe() string {
	sc := s.sc
	var b strings.Builder
	if f := s.fab; f != nil {
		fs := sc.flowSpec()
		mtu := fs.MTU
		if mtu == 0 {
			mtu = DefaultMTU
		}
		fmt.Fprintf(&b, "%s (%s, %s, %s), %s: %s of RDMA %s, MTU %d, seed %d", sc.Topology,
			plural.Count(len(s.nics), "host"), plural.Count(len(f.switches), "switch"), plural.Count(len(s.net.Links()), "link"),
			sc.Traffic, plural.Count(f.flows, "flow"), strings.ToUpper(fs.Op), mtu, sc.Seed)
		return b.String()
	}
	fmt.Fprintf(&b, "%s, %s", plural.Count(len(sc.Hosts), "host"), plural.Count(len(sc.Links), "link"))
	if sc.Switch != nil {
		fmt.Fprintf(&b, " through switch %s", sc.Switch.Name)
	}
	if len(sc.Links) == 1 {
		l := sc.Links[0]
		fmt.Fprintf(&b, " (%g Gb/s, %s", l.BandwidthGbps, nsTime(l.DelayNS))
		if f := l.Faults; f != nil && f.Loss > 0 {
			fmt.Fprintf(&b, ", %g%% loss", f.Loss*100)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, ", %s", plural.Count(len(s.conns), "QP"))
	if len(sc.QPs) == 1 {
		q := &sc.QPs[0]
		w := &q.Work
		if len(w.WRs) == 0 {
			size := humanBytes(float64(w.Size))
			if w.SizeMax > w.Size {
				size += "-" + humanBytes(float64(w.SizeMax))
			}
			fmt.Fprintf(&b, ": %d x %s of %s each, MTU %d", w.Count, strings.ToUpper(w.opName()), size, q.mtu())
		} else {
			fmt.Fprintf(&b, ": %s from a list, MTU %d", plural.Count(max(w.Count, int64(len(w.WRs))), "WR"), q.mtu())
		}
	}
	fmt.Fprintf(&b, ", seed %d", sc.Seed)
	return b.String()
}

// JSON returns the summary as one JSON object (with a trailing newline).
func (sum *Summary) JSON() []byte {
	b, err := json.Marshal(sum)
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

// WriteText writes the summary for people.
func (sum *Summary) WriteText(w io.Writer) error {
	var b strings.Builder
	line := func(label, format string, a ...any) {
		fmt.Fprintf(&b, "  %-13s %s\n", label, fmt.Sprintf(format, a...))
	}
	if sum.scenario != "" {
		fmt.Fprintf(&b, "rocekit sim: %s\n", sum.scenario)
	}
	line("work requests", "%d posted, %s", sum.WRPosted, wrState(sum))
	if len(sum.RecvCompleted) > 0 {
		line("receives", "%s", statusList(sum.RecvCompleted))
	}
	line("delivered", "%s in %s simulated: %.2f Gb/s goodput", humanBytes(float64(sum.BytesDelivered)),
		nsString(sum.SimTimeNS), sum.GoodputGbps)
	line("packets", "%d sent (%d with data), %d retransmitted, %s, %s",
		sum.PacketsSent, sum.DataPackets, sum.Retransmissions, plural.Count(sum.Timeouts, "timeout"), plural.Count(sum.Retries, "go-back-N retry"))
	line("NAKs", "%s; RNR NAKs %d", nakList(sum.NAKs), sum.RNRNAKs)
	line("latency", "mean %s  p50 %s  p99 %s  max %s (simulated, %s)",
		nsString(sum.Latency.Mean), nsString(sum.Latency.P50), nsString(sum.Latency.P99), nsString(sum.Latency.Max), plural.Count(sum.Latency.Count, "WR"))
	n := &sum.Network
	line("network", "%s on the wire; dropped: %d loss, %d burst, %d dead, %d queue; %d duplicated, %d reordered, %d corrupted, %d ECN-marked",
		plural.Count(n.FramesOnWire, "frame"), n.Drops["loss"], n.Drops["burst"], n.Drops["dead"], n.Drops["queue"], n.Duplicated, n.Reordered, n.Corrupted, n.ECNMarked)
	if n.PFCPauses > 0 {
		line("PFC", "%s, senders paused %s in all", plural.Count(n.PFCPauses, "pause"), nsString(n.PFCPausedNS))
	}
	line("NIC drops", "%d bad ICRC, %d malformed, %d bad IP checksum, %d misaddressed, %d unknown QP; %d arrived CE",
		sum.ICRCErrors, sum.Malformed, sum.IPChecksumErrors, sum.Misaddressed, sum.UnknownQP, sum.ECNCEReceived)
	integrity := fmt.Sprintf("OK (%s)", plural.Count(sum.IntegrityChecks, "check"))
	if !sum.DataIntegrityOK {
		integrity = fmt.Sprintf("FAILED: %d of %s; first: %s", sum.IntegrityFailures, plural.Count(sum.IntegrityChecks, "check"), sum.FirstFailure)
	}
	if !sum.CompletionOrderOK {
		integrity += "; completions out of posting order"
	}
	line("integrity", "%s", integrity)
	if c := sum.CCSummary; c != nil {
		line("CC", "%s", c.String())
	}
	if f := sum.FabricSummary; f != nil {
		flows := fmt.Sprintf("%d of %d completed with every byte verified", f.FlowsCompleted, f.Flows)
		if f.FlowsCompleted == f.Flows {
			flows = fmt.Sprintf("all %d completed with every byte verified", f.Flows)
		}
		if f.FlowsFailed > 0 {
			flows += fmt.Sprintf("; %d FAILED", f.FlowsFailed)
		}
		if rest := f.Flows - f.FlowsCompleted - f.FlowsFailed; rest > 0 {
			flows += fmt.Sprintf("; %d did not finish (stopped or stalled)", rest)
		}
		line("flows", "%s", flows)
		for _, bk := range f.FCTSlowdown {
			line("FCT slowdown", "%-11s p50 %.3g  p95 %.3g  p99 %.3g  (%s)", bk.Bucket, bk.P50, bk.P95, bk.P99, plural.Count(bk.Flows, "flow"))
		}
		line("fabric", "max switch queue %s; %s; %s; drops: %d queue, %d buffer, %d loss, %d dead, %d no route",
			humanBytes(float64(f.MaxQueueBytes)), plural.Count(f.PFCPauses, "PFC pause"), plural.Count(f.ECNMarks, "ECN mark"),
			f.Drops["queue"], f.Drops["buffer"], f.Drops["loss"], f.Drops["dead"], f.Drops["no_route"])
		if f.Reroutes > 0 {
			line("routing", "recomputed %s after links went down or up", plural.Count(f.Reroutes, "time"))
		}
		if len(f.TracedLinks) > 0 {
			line("trace", "links %s (pcapng interfaces in that order)", strings.Join(f.TracedLinks, ", "))
		}
	}
	line("engine", "%s in %.3f s wall: %.3g events/s, %.3g packets/s (%.3g with data)",
		plural.Count(sum.Events, "event"), sum.WallSeconds, sum.EventsPerSecond, sum.PacketsPerSecond, sum.DataPacketsPerSecond)
	_, err := io.WriteString(w, b.String())
	return err
}

// AllSucceeded reports whether every work request of the scenario
// completed, and with SUCCESS.
func (sum *Summary) AllSucceeded() bool {
	return sum.Complete && sum.WRCompleted["SUCCESS"] == uint64(sum.WRTotal)
}

// Failed is the number of work requests that completed with a status other
// than SUCCESS.
func (sum *Summary) Failed() uint64 {
	var n uint64
	for k, v := range sum.WRCompleted {
		if k != "SUCCESS" {
			n += v
		}
	}
	return n
}

// wrState is the work requests' line of the text summary after the posted
// count: "all completed" only when every one completed with SUCCESS;
// otherwise the failures by status come first, then those not completed,
// then the successes.
func wrState(sum *Summary) string {
	if sum.AllSucceeded() {
		return "all completed: " + statusList(sum.WRCompleted)
	}
	var parts []string
	if n := sum.Failed(); n > 0 {
		failed := make(map[string]uint64, len(sum.WRCompleted))
		for k, v := range sum.WRCompleted {
			if k != "SUCCESS" {
				failed[k] = v
			}
		}
		parts = append(parts, fmt.Sprintf("%d FAILED: %s", n, statusList(failed)))
	}
	if !sum.Complete {
		parts = append(parts, fmt.Sprintf("%d of %d not completed (stopped or stalled)", sum.WRTotal-completedCount(sum), sum.WRTotal))
	}
	parts = append(parts, fmt.Sprintf("SUCCESS %d", sum.WRCompleted["SUCCESS"]))
	return strings.Join(parts, "; ")
}

func completedCount(sum *Summary) int64 {
	var n uint64
	for _, v := range sum.WRCompleted {
		n += v
	}
	return int64(n)
}

// statusList formats counts by status, SUCCESS first, then by name.
func statusList(m map[string]uint64) string {
	var parts []string
	if v, ok := m["SUCCESS"]; ok {
		parts = append(parts, fmt.Sprintf("SUCCESS %d", v))
	}
	for _, k := range sortedKeys(m) {
		if k != "SUCCESS" {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func nakList(m map[string]uint64) string {
	var parts []string
	for _, k := range sortedKeys(m) {
		if m[k] > 0 && k != "RNR_NAK" {
			parts = append(parts, fmt.Sprintf("%s %d", k, m[k]))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// nsString formats nanoseconds with four significant digits in ns, us, ms
// or s.
func nsString(ns float64) string {
	switch {
	case ns < 1e3:
		return fmt.Sprintf("%.4gns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.4gus", ns/1e3)
	case ns < 1e9:
		return fmt.Sprintf("%.4gms", ns/1e6)
	}
	return fmt.Sprintf("%.4gs", ns/1e9)
}

func humanBytes(v float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", v)
	}
	return fmt.Sprintf("%.4g %s", v, units[i])
}
