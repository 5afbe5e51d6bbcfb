package analysis

import (
	"fmt"
	"github.com/rocekit/rocekit/internal/jsonw"
	"io"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/rocekit/rocekit/internal/plural"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// Summary is what a Tracker learnt, per connection.
type Summary struct {
	Frames      uint64 // frames observed
	IBFrames    uint64 // frames carrying a complete IB transport packet
	Undecoded   uint64 // IB frames whose transport packet did not decode completely (or that the capture cut before its opcode and lengths were known)
	CMRejects   uint64 // CM REJ messages seen
	Connections []*Connection
	Warnings    []WarningCount // every kind, in Warnings order
}

// WarningCount is how often a warning was given.
type WarningCount struct {
	Warning Warning
	Count   uint64
}

// Connection is a pair of flows answering each other, or a single flow
// whose reverse direction was not identified (UD flows, one-sided captures).
type Connection struct {
	ID    int // 1-based, in order of first appearance
	Encap packet.Encap
	// PairedBy is "cm", "psn" (a response PSN matched the requests of one
	// reverse flow), "ambiguous" (unpaired: it matched those of several,
	// and the capture does not say which), or "".
	PairedBy string
	PMTU     int    // 0 when unknown
	PMTUFrom string // "cm", "packets", "option", or ""
	// A is the first direction seen (for a CM-paired connection, the active
	// side's requests); B its reverse, nil when unpaired.
	A, B *Direction
	CM   *CMInfo
}

// Direction is one flow: packets from Src to DstQP at Dst.
type Direction struct {
	Src, Dst   Addr
	DstQP      uint32
	SrcQP      uint32 // the peer's DstQP, or the DETH SrcQP of a UD flow
	SrcQPKnown bool
	Transport  string // RC, UC, RD, UD, XRC, CNP

	FirstFrame, LastFrame int // 0 when no packet was seen (a flow known from CM only)
	First, Last           time.Time
	Packets, Bytes        uint64 // Bytes counts BTH through ICRC
	PayloadBytes          uint64
	Opcodes               []OpcodeStats
	Messages              []MessageStats
	PartialMessages       uint64 // message fragments (and READs) that could not be reassembled whole

	// The requests this direction carried. NextPSN is the next PSN expected
	// (the lowest possible while a READ's PSN count is not known yet).
	PSNKnown          bool // a request was seen
	FirstPSN, NextPSN uint32
	PSNGaps           uint64 // gaps in request PSNs, and in READ response PSNs this direction carried
	MissingPSNs       uint64
	DuplicatePSNs     uint64
	Retransmissions   uint64
	SequenceErrors    uint64 // unexpected_opcode_sequence
	ReadRequests      uint64
	ReadsCompleted    uint64 // completed by responses in the other direction
	RTT               RTTStats

	// The responses this direction carried (answering the other one).
	ReadResponses          uint64
	ReadResponsesMatched   uint64
	ReadResponsesUnmatched uint64
	ACKs                   uint64 // Acknowledge packets with an ACK syndrome
	RNRNAKs                uint64
	NAKs                   NAKCounts

	// CNPs are the congestion notifications for this direction's traffic:
	// the CNPs the reverse direction carried (a CNP goes to the QP whose
	// packets were marked). CNPsSent are the CNPs this direction carried.
	CNPs, CNPsSent          uint64
	ECNCE, ICRCBad, VCRCBad uint64
	Warnings                []WarningCount // the kinds given, in Warnings order
}

// OpcodeStats counts one opcode.
type OpcodeStats struct {
	Opcode                  opcode.Opcode
	Packets, Bytes, Payload uint64
}

// MessageStats describes the messages of one kind: send, write, read
// (sized by the responses), atomic, flush, atomic_write.
type MessageStats struct {
	Kind                   string
	Count, Bytes, Min, Max uint64
	Hist                   []HistBucket // non-empty buckets, in size order
}

// Mean is Bytes/Count.
func (m *MessageStats) Mean() float64 {
	if m.Count == 0 {
		return 0
	}
	return float64(m.Bytes) / float64(m.Count)
}

// HistBucket counts messages of Min..Max bytes (powers of two).
type HistBucket struct {
	Min, Max uint64
	Count    uint64
}

// RTTStats are ACK round-trip estimates: from a request with AckReq to the
// first ACK (or READ response, ATOMIC ACK, or NAK) covering its PSN.
type RTTStats struct {
	Samples        int64
	Min, Mean, Max time.Duration
}

// NAKCounts counts NAKs by code.
type NAKCounts struct {
	PSNSequenceError, InvalidRequest, RemoteAccessError, RemoteOperationalError, InvalidRDRequest uint64
	Reserved                                                                                      uint64 // codes 5-31
}

// Total is the sum of all NAKs.
func (n NAKCounts) Total() uint64 {
	return n.PSNSequenceError + n.InvalidRequest + n.RemoteAccessError + n.RemoteOperationalError + n.InvalidRDRequest + n.Reserved
}

// Summary builds the report of everything observed so far.
func (t *Tracker) Summary() *Summary { return summarize([]*Tracker{t}) }

// summarize builds the Summary of the frames ts observed between them,
// each tracker a disjoint set of endpoint pairs (see Shards): the totals
// are summed, and the connections numbered in the order their first flow
// became known (by the position of the frame), across the trackers.
func summarize(ts []*Tracker) *Summary {
	s := &Summary{}
	var warn [numWarnings]uint64
	for _, t := range ts {
		s.Frames += t.frames
		s.IBFrames += t.ib
		s.Undecoded += t.undecoded
		s.CMRejects += t.conns.CMRejects()
		for k := range warn {
			warn[k] += t.warn[k]
		}
	}
	for k := wk(0); k < numWarnings; k++ {
		s.Warnings = append(s.Warnings, WarningCount{Warnings[k], warn[k]})
	}
	done := make(map[*flow]bool)
	next := make([]int, len(ts)) // position in each tracker's order
	for {
		// The flow known earliest among the trackers' next ones; a frame is
		// observed by one tracker, so only flows of one tracker tie, and
		// they stay in that tracker's order.
		best := -1
		for i, t := range ts {
			if next[i] < t.conns.Len() && (best < 0 || t.conns.Flows()[next[i]].created < ts[best].conns.Flows()[next[best]].created) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		fl := ts[best].conns.Flows()[next[best]]
		next[best]++
		if done[fl] {
			continue
		}
		a, b := fl, fl.Peer
		done[a] = true
		if b != nil {
			done[b] = true
			if a.CM != nil && a.Key.Src != a.CM.Active {
				a, b = b, a
			}
		}
		c := &Connection{ID: len(s.Connections) + 1, Encap: a.Key.Encap, PMTU: a.pmtu, CM: a.CM, A: a.direction()}
		c.PMTUFrom = [...]string{"", "option", "cm", "packets"}[a.pmtuFrom]
		c.PairedBy = a.PairedBy.String()
		if b != nil {
			c.B = b.direction()
		}
		s.Connections = append(s.Connections, c)
	}
	return s
}

func (fl *flow) direction() *Direction {
	d := &Direction{
		Src: fl.Key.Src, Dst: fl.Key.Dst, DstQP: fl.Key.DstQP,
		Transport:  fl.transport.String(),
		FirstFrame: fl.firstFrame, LastFrame: fl.lastFrame,
		Packets: fl.packets, Bytes: fl.bytes, PayloadBytes: fl.pay, PartialMessages: fl.partial,
		PSNKnown: fl.req.started, FirstPSN: fl.req.first, NextPSN: fl.req.next,
		PSNGaps: fl.req.gaps + fl.gaps, MissingPSNs: fl.req.missing + fl.missing,
		DuplicatePSNs: fl.req.dups + fl.dups, Retransmissions: fl.req.retrans,
		SequenceErrors: fl.req.seqErrs + fl.seqErrs,
		ReadRequests:   fl.readReqs, ReadsCompleted: fl.readsDone,
		ReadResponses: fl.readResps, ReadResponsesMatched: fl.readMatched, ReadResponsesUnmatched: fl.readUnmatched,
		ACKs: fl.acks, RNRNAKs: fl.rnrNAKs,
		NAKs:     NAKCounts{fl.naks[0], fl.naks[1], fl.naks[2], fl.naks[3], fl.naks[4], fl.naks[5]},
		CNPsSent: fl.cnps, ECNCE: fl.ecnCE, ICRCBad: fl.icrcBad, VCRCBad: fl.vcrcBad,
	}
	if !fl.transportSet {
		d.Transport = "-"
		if fl.cnps > 0 {
			d.Transport = "CNP"
		}
	}
	if fl.packets > 0 {
		d.First, d.Last = time.Unix(0, fl.firstTS).UTC(), time.Unix(0, fl.lastTS).UTC()
	}
	switch {
	case fl.Peer != nil:
		d.SrcQP, d.SrcQPKnown = fl.Peer.Key.DstQP, true
		d.CNPs = fl.Peer.cnps
	case fl.udSrcKnown && !fl.udManySrc:
		d.SrcQP, d.SrcQPKnown = fl.udSrcQP, true
	}
	for i := range fl.ops {
		if o := &fl.ops[i]; o.packets > 0 {
			d.Opcodes = append(d.Opcodes, OpcodeStats{opcode.Opcode(i), o.packets, o.bytes, o.payload})
		}
	}
	for k := kind(0); k < numKinds; k++ {
		m := &fl.msgs[k]
		if m.count == 0 {
			continue
		}
		ms := MessageStats{Kind: kindNames[k], Count: m.count, Bytes: m.bytes, Min: m.min, Max: m.max}
		for i, n := range m.hist {
			if n == 0 {
				continue
			}
			var lo, hi uint64
			if i > 0 {
				lo, hi = 1<<(i-1), 1<<i-1
			}
			if i == histBuckets-1 {
				hi = ^uint64(0)
			}
			ms.Hist = append(ms.Hist, HistBucket{lo, hi, n})
		}
		d.Messages = append(d.Messages, ms)
	}
	if r := fl.req.rtt; r.n > 0 {
		d.RTT = RTTStats{r.n, time.Duration(r.min), time.Duration(r.sum / r.n), time.Duration(r.max)}
	}
	for k := wk(0); k < numWarnings; k++ {
		if fl.warn[k] > 0 {
			d.Warnings = append(d.Warnings, WarningCount{Warnings[k], fl.warn[k]})
		}
	}
	return d
}

// Message returns the stats of one message kind (zero when none).
func (d *Direction) Message(kind string) MessageStats {
	for _, m := range d.Messages {
		if m.Kind == kind {
			return m
		}
	}
	return MessageStats{Kind: kind}
}

// OpcodeCount returns how many packets of op the direction carried.
func (d *Direction) OpcodeCount(op opcode.Opcode) uint64 {
	for _, o := range d.Opcodes {
		if o.Opcode == op {
			return o.Packets
		}
	}
	return 0
}

// WarningCount returns how often w was given in this direction.
func (d *Direction) WarningCount(w Warning) uint64 {
	for _, c := range d.Warnings {
		if c.Warning == w {
			return c.Count
		}
	}
	return 0
}

// Total returns how often w was given overall.
func (s *Summary) Total(w Warning) uint64 {
	for _, c := range s.Warnings {
		if c.Warning == w {
			return c.Count
		}
	}
	return 0
}

// WriteText writes the summary as readable text: totals, then one block per
// connection with a table per direction.
func (s *Summary) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "%s, %s (%d undecoded), %s", plural.Count(s.Frames, "frame"), plural.Count(s.IBFrames, "IB frame"), s.Undecoded,
		plural.Count(len(s.Connections), "connection"))
	if s.CMRejects > 0 {
		fmt.Fprintf(ew, ", %d CM REJ", s.CMRejects)
	}
	fmt.Fprintf(ew, "\nwarnings: %s\n", warningList(s.Warnings))
	for _, c := range s.Connections {
		fmt.Fprintf(ew, "\nconnection %d  %s", c.ID, c.Encap)
		switch {
		case c.B != nil:
			fmt.Fprintf(ew, "  paired by %s", c.PairedBy)
		case c.PairedBy == "ambiguous":
			fmt.Fprintf(ew, "  pairing ambiguous")
		}
		if c.PMTU > 0 {
			fmt.Fprintf(ew, "  PMTU %d (%s)", c.PMTU, c.PMTUFrom)
		}
		fmt.Fprintln(ew)
		if m := c.CM; m != nil {
			fmt.Fprintf(ew, "  CM %s service 0x%016x, PMTU %d, frames REQ %d REP %d RTU %s DREQ %s DREP %s\n",
				m.Transport, m.ServiceID, m.PMTU, m.REQFrame, m.REPFrame, frameOrDash(m.RTUFrame), frameOrDash(m.DREQFrame), frameOrDash(m.DREPFrame))
			fmt.Fprintf(ew, "    active  %s QP 0x%06x comm 0x%08x, sends from PSN 0x%06x\n", m.Active, m.ActiveQPN, m.ActiveCommID, m.REPStartingPSN)
			fmt.Fprintf(ew, "    passive %s QP 0x%06x comm 0x%08x, sends from PSN 0x%06x\n", m.Passive, m.PassiveQPN, m.PassiveCommID, m.REQStartingPSN)
		}
		for _, d := range []*Direction{c.A, c.B} {
			if d != nil {
				d.writeText(ew)
			}
		}
	}
	return ew.err
}

func frameOrDash(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

func warningList(ws []WarningCount) string {
	var b []byte
	for _, c := range ws {
		if c.Count == 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, c.Warning...)
		b = append(b, '=')
		b = strconv.AppendUint(b, c.Count, 10)
	}
	if len(b) == 0 {
		return "none"
	}
	return string(b)
}

func (d *Direction) writeText(w io.Writer) {
	fmt.Fprintf(w, "  %s", d.Src)
	if d.SrcQPKnown {
		fmt.Fprintf(w, " QP 0x%06x", d.SrcQP)
	}
	fmt.Fprintf(w, " -> %s QP 0x%06x  %s", d.Dst, d.DstQP, d.Transport)
	if d.Packets > 0 {
		fmt.Fprintf(w, "  frames %d-%d  %s", d.FirstFrame, d.LastFrame, d.Last.Sub(d.First))
	}
	fmt.Fprintf(w, "\n    packets %d, bytes %d (payload %d)\n", d.Packets, d.Bytes, d.PayloadBytes)
	if len(d.Opcodes) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, o := range d.Opcodes {
			fmt.Fprintf(tw, "      %s\t%s\t%d B\tpayload %d\n", o.Opcode, plural.Count(o.Packets, "pkt"), o.Bytes, o.Payload)
		}
		tw.Flush()
	}
	if len(d.Messages) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		for _, m := range d.Messages {
			fmt.Fprintf(tw, "      %s messages\t%d\tbytes %d\tmin %d\tmean %.1f\tmax %d\n", m.Kind, m.Count, m.Bytes, m.Min, m.Mean(), m.Max)
		}
		tw.Flush()
	}
	if d.PartialMessages > 0 {
		fmt.Fprintf(w, "    partial messages %d\n", d.PartialMessages)
	}
	if d.PSNKnown {
		fmt.Fprintf(w, "    request PSNs 0x%06x..0x%06x: gaps %d (%d missing), duplicates %d, retransmissions %d, sequence errors %d\n",
			d.FirstPSN, (d.NextPSN-1)&rc.PSNMask, d.PSNGaps, d.MissingPSNs, d.DuplicatePSNs, d.Retransmissions, d.SequenceErrors)
	} else if d.PSNGaps+d.DuplicatePSNs+d.SequenceErrors > 0 {
		fmt.Fprintf(w, "    gaps %d (%d missing), duplicates %d, sequence errors %d\n", d.PSNGaps, d.MissingPSNs, d.DuplicatePSNs, d.SequenceErrors)
	}
	if d.ReadRequests > 0 {
		fmt.Fprintf(w, "    reads requested %d, completed %d\n", d.ReadRequests, d.ReadsCompleted)
	}
	if r := d.RTT; r.Samples > 0 {
		fmt.Fprintf(w, "    ACK RTT %s: min %s, mean %s, max %s\n", plural.Count(r.Samples, "sample"), r.Min, r.Mean, r.Max)
	}
	if d.ACKs+d.RNRNAKs+d.NAKs.Total()+d.ReadResponses > 0 {
		fmt.Fprintf(w, "    responses: ACK %d, RNR NAK %d, NAK %d, read responses %d (matched %d, unmatched %d)\n",
			d.ACKs, d.RNRNAKs, d.NAKs.Total(), d.ReadResponses, d.ReadResponsesMatched, d.ReadResponsesUnmatched)
	}
	if n := d.NAKs; n.Total() > 0 {
		fmt.Fprintf(w, "    NAKs: PSN sequence error %d, invalid request %d, remote access error %d, remote operational error %d, invalid RD request %d, reserved %d\n",
			n.PSNSequenceError, n.InvalidRequest, n.RemoteAccessError, n.RemoteOperationalError, n.InvalidRDRequest, n.Reserved)
	}
	if d.CNPs+d.CNPsSent+d.ECNCE+d.ICRCBad+d.VCRCBad > 0 {
		fmt.Fprintf(w, "    CNPs for this traffic %d, CNPs sent %d, ECN-CE %d, ICRC bad %d, VCRC bad %d\n", d.CNPs, d.CNPsSent, d.ECNCE, d.ICRCBad, d.VCRCBad)
	}
	fmt.Fprintf(w, "    warnings: %s\n", warningList(d.Warnings))
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(b []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(b)
	e.err = err
	return n, err
}

// AppendJSON appends the summary as one JSON object with a fixed key order.
func (s *Summary) AppendJSON(b []byte) []byte {
	b = append(b, `{"frames":`...)
	b = strconv.AppendUint(b, s.Frames, 10)
	b = append(b, `,"ib_frames":`...)
	b = strconv.AppendUint(b, s.IBFrames, 10)
	b = append(b, `,"undecoded":`...)
	b = strconv.AppendUint(b, s.Undecoded, 10)
	b = append(b, `,"cm_rejects":`...)
	b = strconv.AppendUint(b, s.CMRejects, 10)
	b = append(b, `,"warnings":`...)
	b = appendWarnings(b, s.Warnings)
	b = append(b, `,"connections":[`...)
	for i, c := range s.Connections {
		if i > 0 {
			b = append(b, ',')
		}
		b = c.appendJSON(b)
	}
	return append(b, "]}"...)
}

func appendWarnings(b []byte, ws []WarningCount) []byte {
	b = append(b, '{')
	for i, c := range ws {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.AppendString(b, string(c.Warning))
		b = append(b, ':')
		b = strconv.AppendUint(b, c.Count, 10)
	}
	return append(b, '}')
}

func (c *Connection) appendJSON(b []byte) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, int64(c.ID), 10)
	b = append(b, `,"encap":`...)
	b = jsonw.AppendString(b, c.Encap.String())
	b = append(b, `,"paired_by":`...)
	b = jsonw.AppendString(b, c.PairedBy)
	b = append(b, `,"pmtu":`...)
	b = strconv.AppendInt(b, int64(c.PMTU), 10)
	b = append(b, `,"pmtu_from":`...)
	b = jsonw.AppendString(b, c.PMTUFrom)
	b = append(b, `,"cm":`...)
	if m := c.CM; m != nil {
		b = append(b, `{"service_id":`...)
		b = strconv.AppendUint(b, m.ServiceID, 10)
		b = append(b, `,"transport":`...)
		b = jsonw.AppendString(b, m.Transport)
		b = append(b, `,"active":`...)
		b = appendAddr(b, m.Active)
		b = append(b, `,"passive":`...)
		b = appendAddr(b, m.Passive)
		for _, kv := range [...]struct {
			k string
			v uint64
		}{
			{"active_comm_id", uint64(m.ActiveCommID)}, {"passive_comm_id", uint64(m.PassiveCommID)},
			{"active_qpn", uint64(m.ActiveQPN)}, {"passive_qpn", uint64(m.PassiveQPN)},
			{"req_starting_psn", uint64(m.REQStartingPSN)}, {"rep_starting_psn", uint64(m.REPStartingPSN)},
			{"pmtu", uint64(m.PMTU)}, {"req_frame", uint64(m.REQFrame)}, {"rep_frame", uint64(m.REPFrame)},
			{"rtu_frame", uint64(m.RTUFrame)}, {"dreq_frame", uint64(m.DREQFrame)}, {"drep_frame", uint64(m.DREPFrame)},
		} {
			b = append(b, ',')
			b = jsonw.AppendString(b, kv.k)
			b = append(b, ':')
			b = strconv.AppendUint(b, kv.v, 10)
		}
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"directions":[`...)
	b = c.A.appendJSON(b)
	if c.B != nil {
		b = append(b, ',')
		b = c.B.appendJSON(b)
	}
	return append(b, "]}"...)
}

func (d *Direction) appendJSON(b []byte) []byte {
	b = append(b, `{"src":`...)
	b = appendAddr(b, d.Src)
	b = append(b, `,"dst":`...)
	b = appendAddr(b, d.Dst)
	b = append(b, `,"dst_qp":`...)
	b = strconv.AppendUint(b, uint64(d.DstQP), 10)
	b = append(b, `,"src_qp":`...)
	if d.SrcQPKnown {
		b = strconv.AppendUint(b, uint64(d.SrcQP), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"transport":`...)
	b = jsonw.AppendString(b, d.Transport)
	b = append(b, `,"first_frame":`...)
	b = strconv.AppendInt(b, int64(d.FirstFrame), 10)
	b = append(b, `,"last_frame":`...)
	b = strconv.AppendInt(b, int64(d.LastFrame), 10)
	b = append(b, `,"first_time":`...)
	b = appendTime(b, d.First)
	b = append(b, `,"last_time":`...)
	b = appendTime(b, d.Last)
	b = kv(b, "packets", d.Packets)
	b = kv(b, "bytes", d.Bytes)
	b = kv(b, "payload_bytes", d.PayloadBytes)
	b = append(b, `,"opcodes":[`...)
	for i, o := range d.Opcodes {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"opcode":`...)
		b = strconv.AppendUint(b, uint64(o.Opcode), 10)
		b = append(b, `,"name":`...)
		b = jsonw.AppendString(b, o.Opcode.String())
		b = kv(b, "packets", o.Packets)
		b = kv(b, "bytes", o.Bytes)
		b = kv(b, "payload_bytes", o.Payload)
		b = append(b, '}')
	}
	b = append(b, `],"messages":[`...)
	for i, m := range d.Messages {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"kind":`...)
		b = jsonw.AppendString(b, m.Kind)
		b = kv(b, "count", m.Count)
		b = kv(b, "bytes", m.Bytes)
		b = kv(b, "min", m.Min)
		b = append(b, `,"mean":`...)
		b = strconv.AppendFloat(b, m.Mean(), 'f', -1, 64)
		b = kv(b, "max", m.Max)
		b = append(b, `,"hist":[`...)
		for j, h := range m.Hist {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"min":`...)
			b = strconv.AppendUint(b, h.Min, 10)
			b = kv(b, "max", h.Max)
			b = kv(b, "count", h.Count)
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, ']')
	b = kv(b, "partial_messages", d.PartialMessages)
	b = append(b, `,"psn":`...)
	if d.PSNKnown {
		b = append(b, `{"first":`...)
		b = strconv.AppendUint(b, uint64(d.FirstPSN), 10)
		b = kv(b, "next", uint64(d.NextPSN))
		b = append(b, '}')
	} else {
		b = append(b, "null"...)
	}
	b = kv(b, "psn_gaps", d.PSNGaps)
	b = kv(b, "missing_psns", d.MissingPSNs)
	b = kv(b, "duplicate_psns", d.DuplicatePSNs)
	b = kv(b, "retransmissions", d.Retransmissions)
	b = kv(b, "sequence_errors", d.SequenceErrors)
	b = kv(b, "read_requests", d.ReadRequests)
	b = kv(b, "reads_completed", d.ReadsCompleted)
	b = kv(b, "read_responses", d.ReadResponses)
	b = kv(b, "read_responses_matched", d.ReadResponsesMatched)
	b = kv(b, "read_responses_unmatched", d.ReadResponsesUnmatched)
	b = kv(b, "acks", d.ACKs)
	b = kv(b, "rnr_naks", d.RNRNAKs)
	n := d.NAKs
	b = append(b, `,"naks":{"psn_sequence_error":`...)
	b = strconv.AppendUint(b, n.PSNSequenceError, 10)
	b = kv(b, "invalid_request", n.InvalidRequest)
	b = kv(b, "remote_access_error", n.RemoteAccessError)
	b = kv(b, "remote_operational_error", n.RemoteOperationalError)
	b = kv(b, "invalid_rd_request", n.InvalidRDRequest)
	b = kv(b, "reserved", n.Reserved)
	b = append(b, '}')
	b = kv(b, "cnps", d.CNPs)
	b = kv(b, "cnps_sent", d.CNPsSent)
	b = kv(b, "ecn_ce", d.ECNCE)
	b = kv(b, "icrc_bad", d.ICRCBad)
	b = kv(b, "vcrc_bad", d.VCRCBad)
	b = append(b, `,"rtt":{"samples":`...)
	b = strconv.AppendInt(b, d.RTT.Samples, 10)
	b = append(b, `,"min_ns":`...)
	b = strconv.AppendInt(b, int64(d.RTT.Min), 10)
	b = append(b, `,"mean_ns":`...)
	b = strconv.AppendInt(b, int64(d.RTT.Mean), 10)
	b = append(b, `,"max_ns":`...)
	b = strconv.AppendInt(b, int64(d.RTT.Max), 10)
	b = append(b, `},"warnings":`...)
	b = appendWarnings(b, d.Warnings)
	return append(b, '}')
}

// kv appends ,"k":v.
func kv(b []byte, k string, v uint64) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return strconv.AppendUint(b, v, 10)
}

func appendAddr(b []byte, a Addr) []byte {
	b = append(b, '"')
	b = a.AppendTo(b)
	return append(b, '"')
}

func appendTime(b []byte, t time.Time) []byte {
	if t.IsZero() {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"')
}
