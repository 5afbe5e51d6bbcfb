package roce

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/netip"
	"os"
	"strings"

	"github.com/rocekit/rocekit/internal/jsonerr"
	"github.com/rocekit/rocekit/sim"
)

// Scenario is a simulation described as JSON: the hosts, the links between
// them (or between them and one switch), the QPs and the work each QP does.
// The package documentation gives the exact format. ParseScenario decodes it
// strictly (an unknown key is an error naming the key) and checks it.
type Scenario struct {
	// Seed seeds every random decision: link faults and the work generator.
	Seed uint64 `json:"seed"`
	// StopNS stops the simulation at this simulated time in nanoseconds; 0
	// runs until every work request has completed (or nothing is left to
	// happen).
	StopNS float64 `json:"stop_ns,omitempty"`
	// Hosts are the end nodes; each has one NIC, so one link.
	Hosts []HostSpec `json:"hosts,omitempty"`
	// Switch, if set, is a store-and-forward switch that links may join.
	Switch *SwitchSpec `json:"switch,omitempty"`
	// Links join two hosts, or a host and the switch.
	Links []LinkSpec `json:"links,omitempty"`
	// QPs are the connections: each entry is Count RC connections from a
	// requester QP on From to a responder QP on To.
	QPs []QPSpec `json:"qps,omitempty"`

	// Topology makes the scenario a fabric (see FabricSpec): a generator
	// spec ("fat-tree:k=8", "leaf-spine:leaves=4,spines=2,hosts=8",
	// "dragonfly:a=4,p=2,h=2", "star:hosts=3") or a topology file (HPCC
	// ns-3's format, or rocekit's JSON form if it ends in .json). Hosts,
	// Switch and QPs are then left out.
	Topology string `json:"topology,omitempty"`
	// Traffic is the fabric's flows: a pattern ("permutation:size=10MB",
	// "incast:n=15,size=2MB", "all-to-all:size=1MB",
	// "poisson:load=0.3,cdf=websearch,duration=10ms") or an HPCC ns-3 flow
	// file; see package traffic.
	Traffic string `json:"traffic,omitempty"`
	// HostGbps is the rate of host links (default 100), FabricGbps of
	// switch-to-switch links (default HostGbps), DelayNS the propagation
	// delay of every link (default 1000), for generated topologies.
	HostGbps   float64  `json:"host_gbps,omitempty"`
	FabricGbps float64  `json:"fabric_gbps,omitempty"`
	DelayNS    *float64 `json:"delay_ns,omitempty"`
	// Fabric is the switches' model; Flow what each flow's connection does.
	Fabric *FabricSpec `json:"fabric,omitempty"`
	Flow   *FlowSpec   `json:"flow,omitempty"`
	// CC is every QP's congestion control (default none: line rate).
	CC *CCSpec `json:"cc,omitempty"`

	coll *collSetup // a collective's connections instead of traffic (RunCollective)
}

// HostSpec is a host. MAC and IP default to 02:00:00:00:HH:LL and
// 10.0.HH.LL from the host's 1-based index.
type HostSpec struct {
	Name string `json:"name"`
	MAC  string `json:"mac,omitempty"`
	IP   string `json:"ip,omitempty"`
}

// SwitchSpec is the switch: the output queue of every port holds at most
// QueueBytes (0: unlimited, drop-tail beyond) and marks frames ECN CE when
// it already holds more than ECNBytes (0: never). With PFCXOffBytes > 0 the
// switch is lossless as RoCE fabrics are, by priority flow control
// (sim.PFCConfig): when more than PFCXOffBytes that arrived by one port are
// in the switch, it pauses the sender on that port until they are down to
// PFCXOnBytes (0: half of PFCXOffBytes).
type SwitchSpec struct {
	Name         string `json:"name"`
	QueueBytes   int    `json:"queue_bytes,omitempty"`
	ECNBytes     int    `json:"ecn_bytes,omitempty"`
	PFCXOffBytes int    `json:"pfc_xoff_bytes,omitempty"`
	PFCXOnBytes  int    `json:"pfc_xon_bytes,omitempty"`
}

// LinkSpec is a full-duplex link between A and B (host or switch names).
// Faults apply to both directions; AToB and BToA, when present, replace them
// for one direction.
type LinkSpec struct {
	A             string     `json:"a"`
	B             string     `json:"b"`
	BandwidthGbps float64    `json:"bandwidth_gbps"`
	DelayNS       float64    `json:"delay_ns"`
	Faults        *FaultSpec `json:"faults,omitempty"`
	AToB          *FaultSpec `json:"a_to_b,omitempty"`
	BToA          *FaultSpec `json:"b_to_a,omitempty"`
	Dead          []DeadSpec `json:"dead,omitempty"`
}

// FaultSpec is the fault model of one link direction; every probability is
// per frame (see sim.Faults).
type FaultSpec struct {
	Loss           float64    `json:"loss,omitempty"`
	Burst          *BurstSpec `json:"burst,omitempty"`
	Reorder        float64    `json:"reorder,omitempty"`
	ReorderDelayNS float64    `json:"reorder_delay_ns,omitempty"`
	Duplicate      float64    `json:"duplicate,omitempty"`
	Corrupt        float64    `json:"corrupt,omitempty"`
}

// BurstSpec is Gilbert-Elliott burst loss (sim.GilbertElliott).
type BurstSpec struct {
	PGoodBad float64 `json:"p_good_bad"`
	PBadGood float64 `json:"p_bad_good"`
	LossBad  float64 `json:"loss_bad"`
	LossGood float64 `json:"loss_good,omitempty"`
}

// DeadSpec kills a link from FromNS until ToNS (0: for good) in direction
// Dir: "both" (the default), "a_to_b" or "b_to_a".
type DeadSpec struct {
	FromNS float64 `json:"from_ns"`
	ToNS   float64 `json:"to_ns,omitempty"`
	Dir    string  `json:"dir,omitempty"`
}

// QPSpec is Count connections from From to To, each a requester QP on From
// and a responder QP on To, with the same attributes and work.
type QPSpec struct {
	From  string `json:"from"`
	To    string `json:"to"`
	Count int    `json:"count,omitempty"` // connections; default 1
	// StartNS is when the connections start posting work (default 0).
	StartNS float64 `json:"start_ns,omitempty"`

	MTU int `json:"mtu,omitempty"` // path MTU: 256..4096; default 4096
	// 5-bit local ACK timeout (4.096 us x 2^t, 0 none); default 14.
	Timeout *uint8 `json:"timeout,omitempty"`
	// retry_cnt 0-7, default 7; RetryCnt7Infinite makes 7 mean forever (rxe).
	RetryCnt          *uint8 `json:"retry_cnt,omitempty"`
	RetryCnt7Infinite bool   `json:"retry_cnt_7_infinite,omitempty"`
	RNRRetry          *uint8 `json:"rnr_retry,omitempty"`     // 0-7, 7 infinite; default 7
	MinRNRTimer       *uint8 `json:"min_rnr_timer,omitempty"` // 5-bit code; default 12 (0.64 ms)
	ORD               *int   `json:"ord,omitempty"`           // max_rd_atomic, at most IRD; default 16 or IRD if less
	IRD               *int   `json:"ird,omitempty"`           // max_dest_rd_atomic; default 16
	// SQPSN is the requester's first PSN (the responder's rq_psn); RQPSN the
	// responder's sq_psn (the requester's rq_psn).
	SQPSN uint32 `json:"sq_psn,omitempty"`
	RQPSN uint32 `json:"rq_psn,omitempty"`
	// Window bounds the PSNs in flight (0: 2^23; rxe uses 128).
	Window uint32 `json:"window,omitempty"`

	// Outstanding is the most work requests posted and not completed at a
	// time (default 8): the generator posts the next one when one completes.
	Outstanding int `json:"outstanding,omitempty"`
	// RecvDepth is the receive WQEs the responder keeps posted for SENDs
	// (default Outstanding); RecvRepostDelayNS delays re-posting a consumed
	// one (0: at once), which with a small RecvDepth provokes RNR NAKs.
	RecvDepth         int     `json:"recv_depth,omitempty"`
	RecvRepostDelayNS float64 `json:"recv_repost_delay_ns,omitempty"`

	Work WorkSpec `json:"work"`
}

// WorkSpec is what a connection's requester posts: Count work requests of Op
// with Size bytes, or sizes drawn uniformly from [Size, SizeMax] when SizeMax
// is larger; with Op "mix" each WR's op is drawn with the Mix weights. WRs,
// if given, is an explicit list posted in order (Count, if larger, cycles
// through it). Atomics always move 8 bytes.
type WorkSpec struct {
	Op      string   `json:"op,omitempty"` // write, send, read, atomic, fetch_add, cmp_swap or mix; default write
	Count   int64    `json:"count,omitempty"`
	Size    int      `json:"size,omitempty"`
	SizeMax int      `json:"size_max,omitempty"`
	Mix     *MixSpec `json:"mix,omitempty"`
	WRs     []WRSpec `json:"wrs,omitempty"`

	// longer makes the first longer WRs one byte longer than Size: a
	// fabric flow's bytes split into WRs as equal as can be.
	longer int64
}

// MixSpec weighs the ops of Op "mix"; all zero means equal weights.
type MixSpec struct {
	Write  uint32 `json:"write,omitempty"`
	Send   uint32 `json:"send,omitempty"`
	Read   uint32 `json:"read,omitempty"`
	Atomic uint32 `json:"atomic,omitempty"`
}

// WRSpec is one work request of an explicit list.
type WRSpec struct {
	Op   string `json:"op"` // write, send, read, atomic, fetch_add or cmp_swap
	Size int    `json:"size,omitempty"`
}

// Defaults for QPSpec fields left out.
const (
	DefaultMTU = 4096
	// DefaultTimeout is the local ACK timeout code perftest sets on its QPs
	// (DEF_QP_TIME 14 in linux-rdma/perftest src/perftest_parameters.h):
	// 4.096 us x 2^14 = 67 ms.
	DefaultTimeout     = 14
	DefaultRetryCnt    = 7
	DefaultRNRRetry    = 7
	DefaultMinRNRTimer = 12
	DefaultORD         = 16
	DefaultIRD         = 16
	DefaultOutstanding = 8
)

// MaxMessage is the largest message size (IBA's 2^31 bytes).
const MaxMessage = 1 << 31

// DefaultScenario is what `rocekit sim` runs with no arguments: two hosts
// on a 100 Gb/s link with 1 us of propagation delay and 1% loss each way,
// one QP streaming 2,000 RDMA WRITEs of 1 MiB at 4 KiB MTU, 4 outstanding,
// with rxe's 128-PSN window. The QP attributes left out take the defaults
// above: local ACK timeout 14 (67 ms), retry_cnt 7, rnr_retry 7.
func DefaultScenario() *Scenario {
	return &Scenario{
		Seed:  1,
		Hosts: []HostSpec{{Name: "a"}, {Name: "b"}},
		Links: []LinkSpec{{
			A: "a", B: "b", BandwidthGbps: 100, DelayNS: 1000,
			Faults: &FaultSpec{Loss: 0.01},
		}},
		QPs: []QPSpec{{
			From: "a", To: "b", MTU: 4096, Outstanding: 4, Window: 128,
			Work: WorkSpec{Op: "write", Count: 2000, Size: 1 << 20},
		}},
	}
}

// ParseScenario decodes and checks a scenario. Unknown keys, trailing data
// and values out of range are errors.
func ParseScenario(data []byte) (*Scenario, error) {
	return ReadScenario(bytes.NewReader(data))
}

// ReadScenario is ParseScenario from a reader.
func ReadScenario(r io.Reader) (*Scenario, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	var sc Scenario
	if err := jsonerr.Decode(data, &sc, scenarioTop); err != nil {
		if strings.HasPrefix(err.Error(), scenarioTop) {
			return nil, err
		}
		return nil, fmt.Errorf("scenario: %w", err)
	}
	if err := sc.Validate(); err != nil {
		return nil, err
	}
	return &sc, nil
}

// scenarioTop is the error for a file that holds no JSON object.
const scenarioTop = "the scenario must be an object"

// LoadScenario reads and checks the scenario in file name.
func LoadScenario(name string) (*Scenario, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc, err := ReadScenario(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return sc, nil
}

// MarshalIndent returns the scenario as indented JSON, in the format
// ParseScenario reads.
func (sc *Scenario) MarshalIndent() []byte {
	b, err := json.MarshalIndent(sc, "", "  ")
	if err != nil {
		panic(err) // plain data: cannot fail
	}
	return append(b, '\n')
}

// Clone returns a deep copy of the scenario (through JSON).
func (sc *Scenario) Clone() *Scenario {
	var c Scenario
	if err := json.Unmarshal(sc.MarshalIndent(), &c); err != nil {
		panic(err)
	}
	return &c
}

// A ValueError is a scenario value that Validate refuses.
type ValueError struct {
	Path string // the value's key path as the JSON writes it: qps[0].mtu
	Msg  string // what is wrong, starting with the value where it is one
}

func (e *ValueError) Error() string { return "scenario: " + e.Path + ": " + e.Msg }

func badValue(path, format string, a ...any) error {
	return &ValueError{path, fmt.Sprintf(format, a...)}
}

// node kinds of names in a scenario.
const (
	nodeNone = iota
	nodeHost
	nodeSwitch
)

// Validate checks names, references, ranges and topology: every host has
// exactly one link, and every QP's hosts are joined directly or through the
// switch.
func (sc *Scenario) Validate() error {
	if sc.IsFabric() {
		return sc.validateFabric()
	}
	if sc.Traffic != "" || sc.HostGbps != 0 || sc.FabricGbps != 0 || sc.DelayNS != nil || sc.Fabric != nil || sc.Flow != nil {
		return badValue("topology", "missing: traffic, host_gbps, fabric_gbps, delay_ns, fabric and flow belong to a fabric scenario")
	}
	kind, hostIdx, err := sc.validateHosts()
	if err != nil {
		return err
	}
	if err := sc.Switch.check(kind); err != nil {
		return err
	}
	if !(sc.StopNS >= 0) || math.IsInf(sc.StopNS, 0) {
		return badValue("stop_ns", "%v is not a time", sc.StopNS)
	}
	if err := sc.validateLinks(kind, hostIdx); err != nil {
		return err
	}
	if err := sc.validateCC(); err != nil {
		return err
	}
	return sc.validateQPs(kind)
}

// validateCC checks the congestion control, if any.
func (sc *Scenario) validateCC() error {
	if sc.CC == nil {
		return nil
	}
	_, _, _, err := sc.CC.resolve("cc")
	return err
}

// validateHosts checks the hosts' names (unique), MAC and IPv4 addresses
// and number, and returns the kind of every name so far (nodeHost) and
// each host's index by name.
func (sc *Scenario) validateHosts() (kind, hostIdx map[string]int, err error) {
	if len(sc.Hosts) == 0 {
		return nil, nil, badValue("hosts", "at least one host is needed")
	}
	kind = map[string]int{}
	hostIdx = map[string]int{}
	for i, h := range sc.Hosts {
		p := fmt.Sprintf("hosts[%d]", i)
		if h.Name == "" {
			return nil, nil, badValue(p+".name", "missing")
		}
		if kind[h.Name] != nodeNone {
			return nil, nil, badValue(p+".name", "%q is used twice", h.Name)
		}
		kind[h.Name] = nodeHost
		hostIdx[h.Name] = i
		if h.MAC != "" {
			if _, err := parseMAC(h.MAC); err != nil {
				return nil, nil, badValue(p+".mac", "%v", err)
			}
		}
		if h.IP != "" {
			if a, err := netip.ParseAddr(h.IP); err != nil || !a.Is4() {
				return nil, nil, badValue(p+".ip", "%q is not an IPv4 address", h.IP)
			}
		}
	}
	if len(sc.Hosts) > 65000 {
		return nil, nil, badValue("hosts", "%d hosts; at most 65000", len(sc.Hosts))
	}
	return kind, hostIdx, nil
}

// check checks the switch, if there is one (s may be nil): a name no host
// has, which it adds to kind as nodeSwitch, and its queue thresholds.
func (s *SwitchSpec) check(kind map[string]int) error {
	if s == nil {
		return nil
	}
	if s.Name == "" {
		return badValue("switch.name", "missing")
	}
	if kind[s.Name] != nodeNone {
		return badValue("switch.name", "%q is also a host", s.Name)
	}
	kind[s.Name] = nodeSwitch
	if s.QueueBytes < 0 || s.ECNBytes < 0 || s.PFCXOffBytes < 0 || s.PFCXOnBytes < 0 {
		return badValue("switch", "negative queue_bytes, ecn_bytes, pfc_xoff_bytes or pfc_xon_bytes")
	}
	if s.PFCXOnBytes > s.PFCXOffBytes {
		return badValue("switch.pfc_xon_bytes", "%d is more than pfc_xoff_bytes %d", s.PFCXOnBytes, s.PFCXOffBytes)
	}
	return nil
}

// validateLinks checks the topology the links make (known ends, no loops,
// at most one link between two nodes, one link per host) and each link's
// own values.
func (sc *Scenario) validateLinks(kind, hostIdx map[string]int) error {
	hostLink := make([]int, len(sc.Hosts))
	for i := range hostLink {
		hostLink[i] = -1
	}
	linkNames := map[string]bool{}
	for i, l := range sc.Links {
		p := fmt.Sprintf("links[%d]", i)
		ka, kb := kind[l.A], kind[l.B]
		if ka == nodeNone {
			return badValue(p+".a", "%q is not a host or the switch", l.A)
		}
		if kb == nodeNone {
			return badValue(p+".b", "%q is not a host or the switch", l.B)
		}
		if l.A == l.B {
			return badValue(p, "joins %q to itself", l.A)
		}
		if ka == nodeSwitch && kb == nodeSwitch {
			return badValue(p, "joins the switch to itself")
		}
		name := l.A + "--" + l.B
		if linkNames[name] || linkNames[l.B+"--"+l.A] {
			return badValue(p, "a second link between %q and %q", l.A, l.B)
		}
		linkNames[name] = true
		for _, n := range []string{l.A, l.B} {
			if kind[n] == nodeHost {
				h := hostIdx[n]
				if hostLink[h] >= 0 {
					return badValue(p, "host %q already has a link (links[%d]); a host has one NIC", n, hostLink[h])
				}
				hostLink[h] = i
			}
		}
		if err := l.check(p); err != nil {
			return err
		}
	}
	return nil
}

// check checks a link's own values, the link being at key path p: rate,
// delay, faults and dead intervals.
func (l *LinkSpec) check(p string) error {
	if !(l.BandwidthGbps > 0) || l.BandwidthGbps > 1e6 {
		return badValue(p+".bandwidth_gbps", "%v: want a rate in Gb/s, more than 0", l.BandwidthGbps)
	}
	if !(l.DelayNS >= 0) || l.DelayNS > 1e12 {
		return badValue(p+".delay_ns", "%v: want a delay in ns, 0 or more", l.DelayNS)
	}
	for _, f := range []struct {
		name string
		f    *FaultSpec
	}{{"faults", l.Faults}, {"a_to_b", l.AToB}, {"b_to_a", l.BToA}} {
		if err := f.f.check(p + "." + f.name); err != nil {
			return err
		}
	}
	for j, d := range l.Dead {
		q := fmt.Sprintf("%s.dead[%d]", p, j)
		if !(d.FromNS >= 0) || !(d.ToNS >= 0) || math.IsInf(d.FromNS, 0) || math.IsInf(d.ToNS, 0) {
			return badValue(q, "times must be 0 or more")
		}
		if d.ToNS != 0 && d.ToNS <= d.FromNS {
			return badValue(q+".to_ns", "%v is not after from_ns %v", d.ToNS, d.FromNS)
		}
		switch d.Dir {
		case "", "both", "a_to_b", "b_to_a":
		default:
			return badValue(q+".dir", "%q: want both, a_to_b or b_to_a", d.Dir)
		}
	}
	return nil
}

// validateQPs checks every QP entry and the number of connections they
// make together.
func (sc *Scenario) validateQPs(kind map[string]int) error {
	total := 0
	for i := range sc.QPs {
		q := &sc.QPs[i]
		p := fmt.Sprintf("qps[%d]", i)
		if kind[q.From] != nodeHost {
			return badValue(p+".from", "%q is not a host", q.From)
		}
		if kind[q.To] != nodeHost {
			return badValue(p+".to", "%q is not a host", q.To)
		}
		if q.From == q.To {
			return badValue(p, "from and to are the same host %q", q.From)
		}
		if !sc.connected(q.From, q.To) {
			return badValue(p, "no path from %q to %q: link them, or link both to the switch", q.From, q.To)
		}
		if q.Count < 0 {
			return badValue(p+".count", "negative")
		}
		total += max(q.Count, 1)
		if err := q.check(p); err != nil {
			return err
		}
	}
	if total > maxQPs {
		return badValue("qps", "%d connections; at most %d", total, maxQPs)
	}
	return nil
}

// check checks a QP entry's own values, the entry being at key path p:
// MTU, timer and retry codes, ORD and IRD, PSNs, window and queue depths,
// and its work.
func (q *QPSpec) check(p string) error {
	switch q.MTU {
	case 0, 256, 512, 1024, 2048, 4096:
	default:
		return badValue(p+".mtu", "%d: want 256, 512, 1024, 2048 or 4096", q.MTU)
	}
	if q.Timeout != nil && *q.Timeout > 31 {
		return badValue(p+".timeout", "%d: a 5-bit code (0-31)", *q.Timeout)
	}
	if q.MinRNRTimer != nil && *q.MinRNRTimer > 31 {
		return badValue(p+".min_rnr_timer", "%d: a 5-bit code (0-31)", *q.MinRNRTimer)
	}
	if q.RetryCnt != nil && *q.RetryCnt > 7 {
		return badValue(p+".retry_cnt", "%d: 0-7", *q.RetryCnt)
	}
	if q.RNRRetry != nil && *q.RNRRetry > 7 {
		return badValue(p+".rnr_retry", "%d: 0-7", *q.RNRRetry)
	}
	if q.ORD != nil && (*q.ORD < 0 || *q.ORD > 128) {
		return badValue(p+".ord", "%d: 0-128", *q.ORD)
	}
	if q.IRD != nil && (*q.IRD < 0 || *q.IRD > 128) {
		return badValue(p+".ird", "%d: 0-128", *q.IRD)
	}
	if q.ord() > q.ird() {
		// CM gives the requester an ORD of at most the responder's IRD
		// (rdma_connect's initiator_depth): a responder with fewer
		// resources overwrites saved ones still needed to answer a
		// retried READ or atomic (§5.4).
		return badValue(p+".ord", "%d is more than the responder's %s.ird %d", q.ord(), p, q.ird())
	}
	if q.SQPSN > 0xFFFFFF || q.RQPSN > 0xFFFFFF {
		return badValue(p, "PSNs are 24 bits")
	}
	if q.Window > 1<<23 {
		return badValue(p+".window", "%d exceeds 2^23", q.Window)
	}
	if q.Outstanding < 0 || q.Outstanding > 1<<16 {
		return badValue(p+".outstanding", "%d: 0 (default) to 65536", q.Outstanding)
	}
	if q.RecvDepth < 0 || q.RecvDepth > 1<<16 {
		return badValue(p+".recv_depth", "%d: 0 (default) to 65536", q.RecvDepth)
	}
	if !(q.StartNS >= 0) || q.StartNS > 1e15 {
		return badValue(p+".start_ns", "%v: want 0 or more", q.StartNS)
	}
	if !(q.RecvRepostDelayNS >= 0) || q.RecvRepostDelayNS > 1e15 {
		return badValue(p+".recv_repost_delay_ns", "%v: want 0 or more", q.RecvRepostDelayNS)
	}
	return q.Work.check(p+".work", q.ord())
}

// maxQPs bounds the connections: two 24-bit QP numbers each, from qpnBase.
const maxQPs = (0xFFFFFF - qpnBase) / 2

func (sc *Scenario) connected(a, b string) bool {
	for _, l := range sc.Links {
		if l.A == a && l.B == b || l.A == b && l.B == a {
			return true
		}
	}
	if sc.Switch == nil {
		return false
	}
	onSwitch := func(h string) bool {
		for _, l := range sc.Links {
			if l.A == h && l.B == sc.Switch.Name || l.B == h && l.A == sc.Switch.Name {
				return true
			}
		}
		return false
	}
	return onSwitch(a) && onSwitch(b)
}

func (w *WorkSpec) check(p string, ord int) error {
	bad := badValue
	if w.Count < 0 {
		return bad(p+".count", "negative")
	}
	if w.Size < 0 || int64(w.Size) > MaxMessage {
		return bad(p+".size", "%d: 0 to 2^31", w.Size)
	}
	if w.SizeMax != 0 && (w.SizeMax < w.Size || int64(w.SizeMax) > MaxMessage) {
		return bad(p+".size_max", "%d: from size (%d) to 2^31", w.SizeMax, w.Size)
	}
	op, ok := opByName[w.opName()]
	if !ok {
		return bad(p+".op", "%q: want write, send, read, atomic, fetch_add, cmp_swap or mix", w.Op)
	}
	if w.Mix != nil && op != opMix {
		return bad(p+".mix", "weights given but op is %q, not mix", w.Op)
	}
	if m := w.Mix; m != nil && uint64(m.Write)+uint64(m.Send)+uint64(m.Read)+uint64(m.Atomic) > math.MaxUint32 {
		return bad(p+".mix", "weights too large")
	}
	needsORD := op == opRead || op == opAtomic || op == opFetchAdd || op == opCmpSwap ||
		op == opMix && (w.Mix == nil || w.Mix.Read > 0 || w.Mix.Atomic > 0)
	for i, wr := range w.WRs {
		q := fmt.Sprintf("%s.wrs[%d]", p, i)
		o, ok := opByName[wr.Op]
		if !ok || o == opMix {
			return bad(q+".op", "%q: want write, send, read, atomic, fetch_add or cmp_swap", wr.Op)
		}
		if wr.Size < 0 || int64(wr.Size) > MaxMessage {
			return bad(q+".size", "%d: 0 to 2^31", wr.Size)
		}
		if o != opWrite && o != opSend {
			needsORD = true
		}
	}
	if len(w.WRs) > 0 && (w.Op != "" || w.Size != 0 || w.SizeMax != 0 || w.Mix != nil) {
		return bad(p, "wrs is given: leave out op, size, size_max and mix")
	}
	if needsORD && ord == 0 {
		return bad(p, "READ and atomic work needs ord > 0")
	}
	return nil
}

func (w *WorkSpec) opName() string {
	if w.Op == "" {
		return "write"
	}
	return w.Op
}

// check checks the faults at path p, naming each value by its key.
func (f *FaultSpec) check(p string) error {
	if f == nil {
		return nil
	}
	probs := []struct {
		key string
		v   float64
	}{{"loss", f.Loss}, {"reorder", f.Reorder}, {"duplicate", f.Duplicate}, {"corrupt", f.Corrupt}}
	if b := f.Burst; b != nil {
		probs = append(probs, []struct {
			key string
			v   float64
		}{{"burst.p_good_bad", b.PGoodBad}, {"burst.p_bad_good", b.PBadGood}, {"burst.loss_bad", b.LossBad}, {"burst.loss_good", b.LossGood}}...)
	}
	for _, x := range probs {
		if !sim.IsProbability(x.v) {
			return badValue(p+"."+x.key, "%v: want a probability in [0, 1]", x.v)
		}
	}
	if !(f.ReorderDelayNS >= 0) || math.IsInf(f.ReorderDelayNS, 0) {
		return badValue(p+".reorder_delay_ns", "%v: want a delay in ns, 0 or more", f.ReorderDelayNS)
	}
	if err := f.faults().Validate(); err != nil {
		return badValue(p, "%v", strings.TrimPrefix(err.Error(), "sim: "))
	}
	return nil
}

func (f *FaultSpec) faults() sim.Faults {
	if f == nil {
		return sim.Faults{}
	}
	out := sim.Faults{
		Loss:         f.Loss,
		Reorder:      f.Reorder,
		ReorderDelay: nsTime(f.ReorderDelayNS),
		Duplicate:    f.Duplicate,
		Corrupt:      f.Corrupt,
	}
	if f.Reorder > 0 && out.ReorderDelay == 0 {
		out.ReorderDelay = 10 * sim.Microsecond
	}
	if b := f.Burst; b != nil {
		out.Burst = sim.GilbertElliott{PGoodBad: b.PGoodBad, PBadGood: b.PBadGood, LossBad: b.LossBad, LossGood: b.LossGood}
	}
	return out
}

// nsTime converts nanoseconds to sim.Time (picoseconds), saturating.
func nsTime(ns float64) sim.Time { return sim.FromSeconds(ns / 1e9) }

func parseMAC(s string) ([6]byte, error) {
	var m [6]byte
	parts := strings.Split(s, ":")
	if len(parts) != 6 {
		return m, fmt.Errorf("%q: want six hex bytes separated by colons", s)
	}
	for i, p := range parts {
		var v uint8
		if len(p) != 2 {
			return m, fmt.Errorf("%q: want six hex bytes separated by colons", s)
		}
		for _, c := range []byte(p) {
			var d byte
			switch {
			case c >= '0' && c <= '9':
				d = c - '0'
			case c >= 'a' && c <= 'f':
				d = c - 'a' + 10
			case c >= 'A' && c <= 'F':
				d = c - 'A' + 10
			default:
				return m, fmt.Errorf("%q: want six hex bytes separated by colons", s)
			}
			v = v<<4 | d
		}
		m[i] = v
	}
	return m, nil
}

// accessors with defaults

func (q *QPSpec) count() int {
	if q.Count == 0 {
		return 1
	}
	return q.Count
}

func (q *QPSpec) mtu() int {
	if q.MTU == 0 {
		return DefaultMTU
	}
	return q.MTU
}

func u8or(p *uint8, d uint8) uint8 {
	if p == nil {
		return d
	}
	return *p
}

// ord is the requester's ORD: as given, or DefaultORD lowered to the
// responder's IRD as CM negotiates it.
func (q *QPSpec) ord() int {
	if q.ORD == nil {
		return min(DefaultORD, q.ird())
	}
	return *q.ORD
}

func (q *QPSpec) ird() int {
	if q.IRD == nil {
		return DefaultIRD
	}
	return *q.IRD
}

func (q *QPSpec) outstanding() int {
	if q.Outstanding == 0 {
		return DefaultOutstanding
	}
	return q.Outstanding
}

func (q *QPSpec) recvDepth() int {
	if q.RecvDepth == 0 {
		return q.outstanding()
	}
	return q.RecvDepth
}
