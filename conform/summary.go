package conform

import (
	"github.com/rocekit/rocekit/internal/jsonw"
	"sort"
	"strconv"

	"github.com/rocekit/rocekit/internal/plural"
	"github.com/rocekit/rocekit/rc"
)

// Summary is what a Checker saw, once the capture is over.
type Summary struct {
	Frames   int // frames read
	IBFrames int // frames carrying an IB transport packet
	RCFrames int // RC packets checked
	Findings int
	// Outstanding counts the requests still awaiting their answer at the
	// end of the capture, over every connection (Channel.Outstanding): not
	// findings.
	Outstanding int
	// Counts has one entry per kind, in Kinds order (zero counts
	// included).
	Counts      []KindCount
	Connections []Connection
}

// KindCount is how many findings of one kind there were.
type KindCount struct {
	Kind  Kind
	Count int
}

// Connection is one RC connection: two flows answering each other (or one
// flow whose peer never showed). A is the source of the first flow seen.
type Connection struct {
	Number   int    // 1-based, in order of the first packet
	Encap    string // "RoCEv2/IPv4", "IB/LRH", ...
	A, B     string // endpoint addresses
	QPA, QPB uint32 // A's and B's QP numbers (0: no packet went to that QP)
	// PairedBy is "cm", "psn", "" when only one direction was seen, or
	// "ambiguous" when the responses could answer the requests of several
	// reverse flows (no CM, overlapping PSNs): they are then not judged.
	PairedBy string
	PMTU     int    // bytes; 0 when never known
	PMTUFrom string // "option", "cm", "packets" or ""

	FirstFrame, LastFrame int
	Packets               int
	Findings              int
	// ErrorFrame is the frame of a NAK that moved the connection to the
	// Error state (invalid request, remote access or operational error);
	// later packets were not checked. 0 when none.
	ErrorFrame int

	AtoB, BtoA Channel // requests A sent to B (with B's answers), and back
}

// Channel counts one requester's requests and the answers to them.
type Channel struct {
	Started       bool   // a request was seen (or the CM announced the first PSN)
	FirstPSN      uint32 // first PSN known
	NextPSN       uint32 // PSN after the highest request PSN sent
	AckedPSN      uint32 // PSN after the highest PSN a response acknowledged
	Requests      int    // request packets
	Retransmitted int    // request packets at a PSN seen before (or filling a gap)
	GoBacks       int    // go-back-N runs
	MissingPSNs   int    // PSNs skipped in the captured requests (lost before the capture point)
	ACKs          int
	NAKs          int
	RNRNAKs       int
	ReadResponses int
	AtomicACKs    int
	// Outstanding counts the requests still awaiting their answer when the
	// capture ends: an AckReq request no ACK or NAK covers, a READ (FLUSH,
	// ATOMIC WRITE) without its last response, an atomic without its ATOMIC
	// ACK. A capture is a window: these are not findings. The oldest of
	// them (lowest PSN) has OutstandingPSN and was first captured at
	// OutstandingFrame (0 when none is outstanding).
	Outstanding      int
	OutstandingPSN   uint32
	OutstandingFrame int
	OutstandingOp    string
}

func (ch *channel) summary() Channel {
	return Channel{
		Started: ch.started, FirstPSN: ch.first, NextPSN: ch.frontier, AckedPSN: ch.level,
		Requests: ch.requests, Retransmitted: ch.retrans, GoBacks: ch.goBacks, MissingPSNs: ch.missingPSNs,
		ACKs: ch.acks, NAKs: ch.naks, RNRNAKs: ch.rnrNAKs, ReadResponses: ch.readResps, AtomicACKs: ch.atomicAcks,
		Outstanding: ch.outstanding, OutstandingPSN: ch.outPSN, OutstandingFrame: ch.outFrame, OutstandingOp: outOpName(ch),
	}
}

func outOpName(ch *channel) string {
	if ch.outstanding == 0 {
		return ""
	}
	return ch.outOp.String()
}

// conns groups the RC flows into connections, numbered in order of first
// packet, and returns each flow's connection number.
func (c *Checker) conns() ([]Connection, map[*flow]int) {
	var heads []*flow
	for _, fl := range c.table.Flows() {
		if fl.packets == 0 && (fl.Peer == nil || fl.Peer.packets == 0) {
			continue // created by the CM, never used
		}
		if fl.Peer != nil && fl.Peer.packets > 0 && (fl.Peer.firstFrame < fl.firstFrame || fl.packets == 0) {
			continue // listed with its peer
		}
		heads = append(heads, fl)
	}
	sort.SliceStable(heads, func(i, j int) bool { return heads[i].firstFrame < heads[j].firstFrame })
	num := map[*flow]int{}
	out := make([]Connection, 0, len(heads))
	for i, a := range heads {
		b := a.Peer
		cn := Connection{
			Number: i + 1, Encap: a.Key.Encap.String(), A: a.Key.Src.String(), B: a.Key.Dst.String(), QPB: a.Key.DstQP,
			PairedBy: a.PairedBy.String(), PMTU: a.pmtu, PMTUFrom: mtuSourceNames[a.pmtuFrom],
			FirstFrame: a.firstFrame, LastFrame: a.lastFrame, Packets: a.packets, Findings: a.findings,
			ErrorFrame: a.errFrame, AtoB: a.req.summary(),
		}
		num[a] = i + 1
		if b != nil {
			num[b] = i + 1
			cn.QPA = b.Key.DstQP
			cn.BtoA = b.req.summary()
			cn.Packets += b.packets
			cn.Findings += b.findings
			if b.packets > 0 && b.lastFrame > cn.LastFrame {
				cn.LastFrame = b.lastFrame
			}
		}
		out = append(out, cn)
	}
	return out, num
}

// Finish ends the capture: it decides the findings only the whole capture
// proves (BadRetransmission, MissingACK), appends them to dst, and counts
// the requests outstanding at its end (Channel.Outstanding).
// Frame must not be called after Finish.
func (c *Checker) Finish(dst []Finding) []Finding {
	if c.finished {
		return dst
	}
	c.finished = true
	c.out = dst
	for _, fl := range c.table.Flows() {
		c.finish(fl)
	}
	c.cur = nil
	return c.out
}

// Findings returns every finding so far, ordered by frame (stable), with
// Conn set to the connection numbers of Summary. Call it after Finish.
func (c *Checker) Findings() []Finding {
	_, num := c.conns()
	out := make([]Finding, len(c.all))
	for i, r := range c.all {
		out[i] = r.f
		if r.fl != nil {
			out[i].Conn = num[r.fl]
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Frame < out[j].Frame })
	return out
}

// Summary returns what the checker saw. Call it after Finish.
func (c *Checker) Summary() Summary {
	s := Summary{Frames: c.frames, IBFrames: c.ibFrames, RCFrames: c.rcFrames, Findings: c.total}
	for _, k := range Kinds {
		s.Counts = append(s.Counts, KindCount{k, c.counts[k]})
	}
	s.Connections, _ = c.conns()
	for i := range s.Connections {
		s.Outstanding += s.Connections[i].AtoB.Outstanding + s.Connections[i].BtoA.Outstanding
	}
	return s
}

// AppendText appends the summary as text: one line per connection, then a
// total line. Requests outstanding at the end of the capture are named per
// channel and counted on the total line (only when there are any).
//
//	connection 1: 192.168.1.1 QP 0x000011 <-> 192.168.1.2 QP 0x000022, RoCEv2/IPv4, paired by psn, PMTU 1024 (packets), frames 1-40, 40 packets: a->b 20 requests (0 retransmitted, 1 outstanding from RC_SEND_ONLY PSN 0x000013 at frame 40), b->a 0 requests; 0 findings
//	40 frames, 40 RC packets, 1 connection: 0 findings; 1 request outstanding at the end of the capture
func (s *Summary) AppendText(b []byte) []byte {
	for i := range s.Connections {
		cn := &s.Connections[i]
		b = append(b, "connection "...)
		b = strconv.AppendInt(b, int64(cn.Number), 10)
		b = append(b, ": "...)
		b = append(b, cn.A...)
		b = appendQP(b, cn.QPA)
		b = append(b, " <-> "...)
		b = append(b, cn.B...)
		b = appendQP(b, cn.QPB)
		b = append(b, ", "...)
		b = append(b, cn.Encap...)
		switch cn.PairedBy {
		case "ambiguous":
			b = append(b, ", one direction, pairing ambiguous"...)
		case "":
			b = append(b, ", one direction"...)
		default:
			b = append(b, ", paired by "...)
			b = append(b, cn.PairedBy...)
		}
		if cn.PMTU != 0 {
			b = append(b, ", PMTU "...)
			b = strconv.AppendInt(b, int64(cn.PMTU), 10)
			b = append(b, " ("...)
			b = append(b, cn.PMTUFrom...)
			b = append(b, ')')
		}
		b = append(b, ", frames "...)
		b = strconv.AppendInt(b, int64(cn.FirstFrame), 10)
		b = append(b, '-')
		b = strconv.AppendInt(b, int64(cn.LastFrame), 10)
		b = append(b, ", "...)
		b = plural.Append(b, cn.Packets, "packet")
		b = append(b, ": a->b "...)
		b = appendChannel(b, &cn.AtoB)
		b = append(b, ", b->a "...)
		b = appendChannel(b, &cn.BtoA)
		if cn.ErrorFrame != 0 {
			b = append(b, ", error state from frame "...)
			b = strconv.AppendInt(b, int64(cn.ErrorFrame), 10)
		}
		b = append(b, "; "...)
		b = plural.Append(b, cn.Findings, "finding")
		b = append(b, '\n')
	}
	b = plural.Append(b, s.Frames, "frame")
	b = append(b, ", "...)
	b = plural.Append(b, s.RCFrames, "RC packet")
	b = append(b, ", "...)
	b = plural.Append(b, len(s.Connections), "connection")
	b = append(b, ": "...)
	b = plural.Append(b, s.Findings, "finding")
	first := true
	for _, kc := range s.Counts {
		if kc.Count == 0 {
			continue
		}
		if first {
			b = append(b, " ("...)
			first = false
		} else {
			b = append(b, ", "...)
		}
		b = append(b, kc.Kind...)
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(kc.Count), 10)
	}
	if !first {
		b = append(b, ')')
	}
	if s.Outstanding > 0 {
		b = append(b, "; "...)
		b = plural.Append(b, s.Outstanding, "request")
		b = append(b, " outstanding at the end of the capture"...)
	}
	return append(b, '\n')
}

func appendQP(b []byte, qp uint32) []byte {
	if qp == 0 {
		return append(b, " QP ?"...)
	}
	b = append(b, " QP 0x"...)
	return appendHex(b, uint64(qp), 6)
}

func appendHex(b []byte, v uint64, digits int) []byte {
	var d [16]byte
	for i := digits - 1; i >= 0; i-- {
		d[i] = "0123456789abcdef"[v&15]
		v >>= 4
	}
	return append(b, d[:digits]...)
}

func appendChannel(b []byte, ch *Channel) []byte {
	b = plural.Append(b, ch.Requests, "request")
	if ch.Requests > 0 {
		b = append(b, " ("...)
		b = strconv.AppendInt(b, int64(ch.Retransmitted), 10)
		b = append(b, " retransmitted"...)
		if ch.Outstanding > 0 {
			b = append(b, ", "...)
			b = strconv.AppendInt(b, int64(ch.Outstanding), 10)
			b = append(b, " outstanding from "...)
			b = append(b, ch.OutstandingOp...)
			b = append(b, " PSN 0x"...)
			b = appendHex(b, uint64(ch.OutstandingPSN), 6)
			b = append(b, " at frame "...)
			b = strconv.AppendInt(b, int64(ch.OutstandingFrame), 10)
		}
		b = append(b, ')')
	}
	return b
}

// AppendJSON appends the summary as one JSON object (no newline), keys in
// this order: "type" ("summary"), "frames", "ib_frames", "rc_frames",
// "findings", "outstanding", "counts" (an object with every kind of Kinds as key, in that
// order), "connections" (an array of objects with "connection", "encap",
// "a", "qp_a", "b", "qp_b", "paired_by", "pmtu", "pmtu_from",
// "first_frame", "last_frame", "packets", "findings", "error_frame",
// "a_to_b", "b_to_a"; each channel an object with "started", "first_psn",
// "next_psn", "acked_psn", "requests", "retransmitted", "go_backs",
// "missing_psns", "acks", "naks", "rnr_naks", "read_responses",
// "atomic_acks", "outstanding", "outstanding_psn", "outstanding_frame",
// "outstanding_op"; the last three name the oldest outstanding request, 0
// and "" when none).
func (s *Summary) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":"summary"`...)
	b = appendKV(b, "frames", s.Frames)
	b = appendKV(b, "ib_frames", s.IBFrames)
	b = appendKV(b, "rc_frames", s.RCFrames)
	b = appendKV(b, "findings", s.Findings)
	b = appendKV(b, "outstanding", s.Outstanding)
	b = append(b, `,"counts":{`...)
	for i, kc := range s.Counts {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonw.AppendString(b, string(kc.Kind))
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(kc.Count), 10)
	}
	b = append(b, `},"connections":[`...)
	for i := range s.Connections {
		cn := &s.Connections[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"connection":`...)
		b = strconv.AppendInt(b, int64(cn.Number), 10)
		b = append(b, `,"encap":`...)
		b = jsonw.AppendString(b, cn.Encap)
		b = append(b, `,"a":`...)
		b = jsonw.AppendString(b, cn.A)
		b = appendKV(b, "qp_a", int(cn.QPA))
		b = append(b, `,"b":`...)
		b = jsonw.AppendString(b, cn.B)
		b = appendKV(b, "qp_b", int(cn.QPB))
		b = append(b, `,"paired_by":`...)
		b = jsonw.AppendString(b, cn.PairedBy)
		b = appendKV(b, "pmtu", cn.PMTU)
		b = append(b, `,"pmtu_from":`...)
		b = jsonw.AppendString(b, cn.PMTUFrom)
		b = appendKV(b, "first_frame", cn.FirstFrame)
		b = appendKV(b, "last_frame", cn.LastFrame)
		b = appendKV(b, "packets", cn.Packets)
		b = appendKV(b, "findings", cn.Findings)
		b = appendKV(b, "error_frame", cn.ErrorFrame)
		b = append(b, `,"a_to_b":`...)
		b = cn.AtoB.appendJSON(b)
		b = append(b, `,"b_to_a":`...)
		b = cn.BtoA.appendJSON(b)
		b = append(b, '}')
	}
	return append(b, "]}"...)
}

func (ch *Channel) appendJSON(b []byte) []byte {
	b = append(b, `{"started":`...)
	b = strconv.AppendBool(b, ch.Started)
	b = appendKV(b, "first_psn", int(ch.FirstPSN&rc.PSNMask))
	b = appendKV(b, "next_psn", int(ch.NextPSN&rc.PSNMask))
	b = appendKV(b, "acked_psn", int(ch.AckedPSN&rc.PSNMask))
	b = appendKV(b, "requests", ch.Requests)
	b = appendKV(b, "retransmitted", ch.Retransmitted)
	b = appendKV(b, "go_backs", ch.GoBacks)
	b = appendKV(b, "missing_psns", ch.MissingPSNs)
	b = appendKV(b, "acks", ch.ACKs)
	b = appendKV(b, "naks", ch.NAKs)
	b = appendKV(b, "rnr_naks", ch.RNRNAKs)
	b = appendKV(b, "read_responses", ch.ReadResponses)
	b = appendKV(b, "atomic_acks", ch.AtomicACKs)
	b = appendKV(b, "outstanding", ch.Outstanding)
	b = appendKV(b, "outstanding_psn", int(ch.OutstandingPSN&rc.PSNMask))
	b = appendKV(b, "outstanding_frame", ch.OutstandingFrame)
	b = append(b, `,"outstanding_op":`...)
	b = jsonw.AppendString(b, ch.OutstandingOp)
	return append(b, '}')
}

func appendKV(b []byte, k string, v int) []byte {
	b = append(b, ',', '"')
	b = append(b, k...)
	b = append(b, '"', ':')
	return strconv.AppendInt(b, int64(v), 10)
}
