package plot

import (
	"fmt"
	"sort"
	"time"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/decode"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/rc"
)

// Event kinds of a capture's flows, as the PSN plot marks them.
const (
	EvRequest = iota // a request, sent for the first time
	EvRetrans        // a request the analysis flagged retransmission or duplicate_psn
	EvACK            // an ACK (AETH ACK syndrome) answering the flow's requests
	EvNAK            // a NAK (any code) answering the flow's requests
	EvRNRNAK         // an RNR NAK answering the flow's requests
	EvCNP            // a CNP about the flow's traffic
	numEvents
)

// eventNames name the event kinds in the plots' legends.
var eventNames = [numEvents]string{"requests", "retransmissions", "ACKs", "NAKs", "RNR NAKs", "CNPs"}

// PSNPoint is one point of a PSN graph: a time (since the capture's first
// frame) and a PSN relative to the flow's first request PSN (24-bit
// differences summed, so it keeps growing across a PSN wrap).
type PSNPoint struct {
	T     time.Duration
	PSN   int64
	Frame int // the frame's number in the capture
}

// RTTSample is one ACK round trip: the request's time and the time until
// the first response covering its PSN.
type RTTSample struct {
	T, RTT time.Duration
	PSN    uint32
}

// Flow is one direction of a connection as the capture plots see it: the
// requests it carried (and the responses, NAKs and CNPs of the reverse
// direction about them), its payload bytes over time and its ACK round
// trips.
type Flow struct {
	Conn int                 // the analysis connection's ID (1-based); 0 when unknown
	Dir  *analysis.Direction // the analysis' view of this direction
	// FirstPSN is the PSN of the flow's first request; the PSN points are
	// relative to it.
	FirstPSN uint32
	// Events holds the PSN points of each event kind (EvRequest ... EvCNP).
	// An ACK or NAK is placed at the PSN its AETH carries; a CNP, which
	// carries none, at the latest request PSN before it.
	Events [numEvents][]PSNPoint
	// Payload holds every frame of the direction that carried payload:
	// its time and payload length in bytes (requests and READ responses
	// alike).
	Payload []PayloadPoint
	RTT     []RTTSample
}

// PayloadPoint is the payload of one frame.
type PayloadPoint struct {
	T     time.Duration
	Bytes int
}

// Label names the flow in legends: QP number and addresses.
func (f *Flow) Label() string {
	return fmt.Sprintf("QP %#x %s→%s", f.Dir.DstQP, f.Dir.Src, f.Dir.Dst)
}

// Capture is what the capture plots are drawn from: every flow of a
// capture and the analysis summary.
type Capture struct {
	Name    string // the file, as given
	Start   time.Time
	Span    time.Duration // from the first frame to the last
	Flows   []*Flow       // in order of the analysis' connections
	Summary *analysis.Summary
}

// frameEvent is one IB transport frame as the first pass records it.
type frameEvent struct {
	t       time.Duration
	key     int // index of the frame's flow key
	frame   int
	psn     uint32
	op      opcode.Opcode
	ackReq  bool
	aeth    int8 // -1: no AETH; else the syndrome kind
	payload int32
	resend  bool
	cnp     bool
}

// ReadCapture decodes the capture file at path (any file rocekit decode
// reads) with o (o.Append, o.Ordered, o.Out and o.SummaryOnly are ignored)
// and gathers the per-flow series: PSNs of requests, retransmissions,
// ACKs, NAKs, RNR NAKs and CNPs (retransmissions as the analysis flags
// them), payload per frame, and ACK round-trip samples taken as the
// analysis takes them (ib-facts §5.6-5.9: an ACK covers the PSNs up to its
// own, a NAK or RNR NAK those before it; Karn's rule drops the samples a
// go-back makes ambiguous). A file that cannot be read whole is an error.
func ReadCapture(path string, o decode.Options) (*Capture, error) {
	o.SummaryOnly = false
	keys := map[analysis.FlowKey]int{}
	var evs []frameEvent
	var start, last time.Time
	haveStart := false
	sum, err := decode.Decode(path, o, func(f *decode.Frame) error {
		ts := f.Record.Time
		if !haveStart {
			start, haveStart = ts, true
		}
		last = ts
		t := &f.Packet.Transport
		if t.BTH == nil || f.ReadErr != nil || !t.Framed() {
			return nil
		}
		src, dst := analysis.FrameAddrs(f.Packet)
		k := analysis.FlowKey{Encap: f.Packet.Encap, Src: src, Dst: dst, DstQP: t.BTH.DestQP()}
		ki, ok := keys[k]
		if !ok {
			ki = len(keys)
			keys[k] = ki
		}
		e := frameEvent{t: ts.Sub(start), key: ki, frame: f.Record.Index, psn: t.BTH.PSN(), op: t.BTH.Opcode(),
			ackReq: t.BTH.AckReq(), aeth: -1, payload: int32(t.PayloadLen())}
		if t.AETH != nil {
			e.aeth = int8(t.AETH.Syndrome().Kind())
		}
		for _, w := range f.Warnings {
			switch analysis.Warning(w) {
			case analysis.Retransmission, analysis.DuplicatePSN:
				e.resend = true
			case analysis.CNP:
				e.cnp = true
			}
		}
		if e.op.Transport() == opcode.CNPT {
			e.cnp = true
		}
		evs = append(evs, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := &Capture{Name: path, Start: start, Span: last.Sub(start), Summary: sum}
	// The analysis' directions, by key.
	type dirInfo struct {
		d    *analysis.Direction
		peer int // key of the reverse direction; -1 when none
		conn int
	}
	byKey := map[int]dirInfo{}
	keyOf := func(cn *analysis.Connection, d *analysis.Direction) (int, bool) {
		i, ok := keys[analysis.FlowKey{Encap: cn.Encap, Src: d.Src, Dst: d.Dst, DstQP: d.DstQP}]
		return i, ok
	}
	for _, cn := range sum.Connections {
		for _, pair := range [2][2]*analysis.Direction{{cn.A, cn.B}, {cn.B, cn.A}} {
			if pair[0] == nil || pair[0].Packets == 0 {
				continue
			}
			if i, ok := keyOf(cn, pair[0]); ok {
				di := dirInfo{d: pair[0], peer: -1, conn: cn.ID}
				if pair[1] != nil {
					if pi, ok := keyOf(cn, pair[1]); ok {
						di.peer = pi
					}
				}
				byKey[i] = di
			}
		}
	}
	flows := map[int]*Flow{}
	peerOf := map[int]int{} // responder key -> requester key
	for i, di := range byKey {
		fl := &Flow{Conn: di.conn, Dir: di.d}
		flows[i] = fl
		if di.peer >= 0 {
			peerOf[di.peer] = i
		}
	}
	// The second pass, in frame order: PSN events, payload and RTTs.
	type reqState struct {
		started bool
		first   uint32
		last    uint32 // latest request PSN
		rel     int64  // relative PSN of last
		ackq    []uint32
		ackt    []time.Duration
	}
	st := map[int]*reqState{}
	state := func(i int) *reqState {
		s := st[i]
		if s == nil {
			s = &reqState{}
			st[i] = s
		}
		return s
	}
	rel := func(s *reqState, q uint32) int64 { return s.rel + int64(rc.DiffPSN(q, s.last)) }
	for _, e := range evs {
		fl := flows[e.key]
		if fl == nil {
			continue
		}
		if e.payload > 0 {
			fl.Payload = append(fl.Payload, PayloadPoint{e.t, int(e.payload)})
		}
		switch {
		case e.op.IsRequest() && e.op.Transport() != opcode.UD:
			s := state(e.key)
			if !s.started {
				s.started, s.first, s.last, s.rel = true, e.psn, e.psn, 0
				fl.FirstPSN = e.psn
			}
			r := rel(s, e.psn)
			s.last, s.rel = e.psn, r
			kind := EvRequest
			if e.resend {
				kind = EvRetrans
				// Karn's rule: samples for PSNs from here on are ambiguous.
				n := len(s.ackq)
				for n > 0 && rc.DiffPSN(s.ackq[n-1], e.psn) >= 0 {
					n--
				}
				s.ackq, s.ackt = s.ackq[:n], s.ackt[:n]
			}
			fl.Events[kind] = append(fl.Events[kind], PSNPoint{e.t, r, e.frame})
			if e.ackReq && !e.resend && e.op.Transport() != opcode.UC {
				if len(s.ackq) == ackQLen {
					s.ackq, s.ackt = s.ackq[1:], s.ackt[1:]
				}
				s.ackq = append(s.ackq, e.psn)
				s.ackt = append(s.ackt, e.t)
			}
		case e.cnp:
			// A CNP travels to the QP whose packets were marked: on the
			// reverse key of the flow it is about.
			ri, ok := peerOf[e.key]
			if !ok {
				continue
			}
			s := state(ri)
			if !s.started {
				continue
			}
			rf := flows[ri]
			rf.Events[EvCNP] = append(rf.Events[EvCNP], PSNPoint{e.t, s.rel, e.frame})
		case e.op.IsResponse():
			ri, ok := peerOf[e.key]
			if !ok {
				continue
			}
			s := state(ri)
			if !s.started {
				continue
			}
			rf := flows[ri]
			cover := e.psn // the highest PSN the response acknowledges
			if e.aeth >= 0 {
				kind := EvACK
				switch aeth.Kind(e.aeth) {
				case aeth.NAK:
					kind, cover = EvNAK, (e.psn-1)&rc.PSNMask
				case aeth.RNRNAK:
					kind, cover = EvRNRNAK, (e.psn-1)&rc.PSNMask
				}
				if kind != EvACK || e.op.Operation() == opcode.Acknowledge {
					rf.Events[kind] = append(rf.Events[kind], PSNPoint{e.t, rel(s, e.psn), e.frame})
				}
			} else if e.op.Family() != opcode.FamilyReadResponse {
				continue
			}
			n := 0
			for n < len(s.ackq) && rc.DiffPSN(s.ackq[n], cover) <= 0 {
				rf.RTT = append(rf.RTT, RTTSample{T: s.ackt[n], RTT: e.t - s.ackt[n], PSN: s.ackq[n]})
				n++
			}
			s.ackq, s.ackt = s.ackq[n:], s.ackt[n:]
		}
	}
	ids := make([]int, 0, len(flows))
	for i := range flows {
		ids = append(ids, i)
	}
	sort.Slice(ids, func(a, b int) bool {
		fa, fb := flows[ids[a]], flows[ids[b]]
		if fa.Conn != fb.Conn {
			return fa.Conn < fb.Conn
		}
		return fa.Dir.FirstFrame < fb.Dir.FirstFrame
	})
	for _, i := range ids {
		c.Flows = append(c.Flows, flows[i])
	}
	return c, nil
}

// ackQLen bounds the requests waiting for an ACK, as the analysis does.
const ackQLen = 128

// Busiest returns up to n flows that carried requests, the most packets
// first, or, when qps is not empty, the flows whose destination or source
// QP is in qps, in capture order. payload selects by payload bytes instead
// (for throughput, where READ responses count) and keeps flows without
// requests.
func (c *Capture) Busiest(n int, qps map[uint32]bool, payload bool) []*Flow {
	var out []*Flow
	for _, f := range c.Flows {
		if payload && len(f.Payload) == 0 || !payload && len(f.Events[EvRequest])+len(f.Events[EvRetrans]) == 0 {
			continue
		}
		if len(qps) > 0 {
			if qps[f.Dir.DstQP] || f.Dir.SrcQPKnown && qps[f.Dir.SrcQP] {
				out = append(out, f)
			}
			continue
		}
		out = append(out, f)
	}
	if len(qps) > 0 {
		return out
	}
	sort.SliceStable(out, func(a, b int) bool {
		if payload {
			return out[a].Dir.PayloadBytes > out[b].Dir.PayloadBytes
		}
		return out[a].Dir.Packets > out[b].Dir.Packets
	})
	if len(out) > n {
		out = out[:n]
	}
	return out
}
