package analysis_test

import (
	"testing"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/opcode"
	"pgregory.net/rapid"
)

// genMsg is one generated message.
type genMsg struct {
	kind string // send, write, read
	imm  bool
	size int
}

// segments returns the request packets of a message starting at psn, and
// how many PSNs it uses.
func (m genMsg) requests(psn uint32, pmtu int, fromB bool) ([]pkt, uint32) {
	n := (m.size + pmtu - 1) / pmtu
	if n == 0 {
		n = 1
	}
	if m.kind == "read" {
		return []pkt{{op: opcode.RCRDMAReadRequest, psn: psn, reth: uint32(m.size), ackReq: true, fromB: fromB}}, uint32(n)
	}
	var first, middle, last, only opcode.Opcode
	if m.kind == "send" {
		first, middle, last, only = opcode.RCSendFirst, opcode.RCSendMiddle, opcode.RCSendLast, opcode.RCSendOnly
		if m.imm {
			last, only = opcode.RCSendLastWithImmediate, opcode.RCSendOnlyWithImmediate
		}
	} else {
		first, middle, last, only = opcode.RCRDMAWriteFirst, opcode.RCRDMAWriteMiddle, opcode.RCRDMAWriteLast, opcode.RCRDMAWriteOnly
		if m.imm {
			last, only = opcode.RCRDMAWriteLastWithImmediate, opcode.RCRDMAWriteOnlyWithImmediate
		}
	}
	if n == 1 {
		return []pkt{{op: only, psn: psn, payload: m.size, reth: uint32(m.size), ackReq: true, fromB: fromB}}, 1
	}
	var out []pkt
	for i := 0; i < n; i++ {
		p := pkt{op: middle, psn: psn + uint32(i), payload: pmtu, fromB: fromB}
		switch i {
		case 0:
			p.op, p.reth = first, uint32(m.size)
		case n - 1:
			p.op, p.payload, p.ackReq = last, m.size-(n-1)*pmtu, true
		}
		out = append(out, p)
	}
	return out, uint32(n)
}

// responses returns what the responder sends for a message whose last (or
// READ) PSN range starts at psn: read responses, or an ACK when ack is set.
func (m genMsg) responses(psn, used uint32, pmtu int, fromB, ack bool) []pkt {
	if m.kind != "read" {
		if !ack {
			return nil
		}
		return []pkt{{op: opcode.RCAcknowledge, psn: psn + used - 1, syn: ackUnlimited, fromB: !fromB}}
	}
	if used == 1 {
		return []pkt{{op: opcode.RCRDMAReadResponseOnly, psn: psn, payload: m.size, syn: ackUnlimited, fromB: !fromB}}
	}
	var out []pkt
	for i := uint32(0); i < used; i++ {
		p := pkt{op: opcode.RCRDMAReadResponseMiddle, psn: psn + i, payload: pmtu, fromB: !fromB}
		switch i {
		case 0:
			p.op, p.syn = opcode.RCRDMAReadResponseFirst, ackUnlimited
		case used - 1:
			p.op, p.syn, p.payload = opcode.RCRDMAReadResponseLast, ackUnlimited, m.size-int(used-1)*pmtu
		}
		out = append(out, p)
	}
	return out
}

type sizeStats struct{ count, bytes, min, max uint64 }

func (s *sizeStats) add(n int) {
	v := uint64(n)
	if s.count == 0 || v < s.min {
		s.min = v
	}
	if v > s.max {
		s.max = v
	}
	s.count++
	s.bytes += v
}

// side generates one requester's traffic: its requests in order, and the
// peer's responses queued in order, released in random prefixes.
type side struct {
	fromB   bool
	psn     uint32
	pending []pkt
	want    map[string]*sizeStats
}

// TestPropertyCleanConversation: a clean generated RC conversation (random
// message kinds and sizes, PMTU 256-4096 never told to the tracker, PSNs
// near 2^24 so they wrap, requests in both directions, READ responses and
// coalesced ACKs delayed) gives no warning at all and exactly the messages
// generated, per direction and kind.
func TestPropertyCleanConversation(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		pmtu := rapid.SampledFrom([]int{256, 512, 1024, 2048, 4096}).Draw(rt, "pmtu")
		start := func(name string) uint32 {
			if rapid.Bool().Draw(rt, name+"_wrap") {
				return uint32(1<<24 - rapid.IntRange(1, 40).Draw(rt, name+"_below"))
			}
			return uint32(rapid.IntRange(0, 1<<24-1).Draw(rt, name))
		}
		sides := []*side{{fromB: false, psn: start("psnA")}, {fromB: true, psn: start("psnB")}}
		if !rapid.Bool().Draw(rt, "bidirectional") {
			sides = sides[:1]
		}
		for _, s := range sides {
			s.want = map[string]*sizeStats{"send": {}, "write": {}, "read": {}}
		}
		genMsgs := rapid.SliceOfN(rapid.Custom(func(t *rapid.T) genMsg {
			return genMsg{
				kind: rapid.SampledFrom([]string{"send", "write", "read"}).Draw(t, "kind"),
				imm:  rapid.Bool().Draw(t, "imm"),
				size: rapid.IntRange(0, 5*pmtu).Draw(t, "size"),
			}
		}), 1, 30)

		var stream []pkt
		plans := make([][]genMsg, len(sides))
		for i := range sides {
			plans[i] = genMsgs.Draw(rt, "msgs")
		}
		idx := make([]int, len(sides))
		for {
			var live []int
			for i := range sides {
				if idx[i] < len(plans[i]) || len(sides[i].pending) > 0 {
					live = append(live, i)
				}
			}
			if len(live) == 0 {
				break
			}
			i := live[rapid.IntRange(0, len(live)-1).Draw(rt, "who")]
			s := sides[i]
			if idx[i] < len(plans[i]) && (len(s.pending) == 0 || rapid.Bool().Draw(rt, "request")) {
				m := plans[i][idx[i]]
				idx[i]++
				reqs, used := m.requests(s.psn, pmtu, s.fromB)
				for j := range reqs {
					reqs[j].psn &= 0xFFFFFF
				}
				stream = append(stream, reqs...)
				ack := idx[i] == len(plans[i]) || rapid.Bool().Draw(rt, "ack")
				resps := m.responses(s.psn, used, pmtu, s.fromB, ack)
				for j := range resps {
					resps[j].psn &= 0xFFFFFF
				}
				s.pending = append(s.pending, resps...)
				s.want[m.kind].add(m.size)
				s.psn = (s.psn + used) & 0xFFFFFF
			} else {
				k := rapid.IntRange(1, len(s.pending)).Draw(rt, "release")
				stream = append(stream, s.pending[:k]...)
				s.pending = s.pending[k:]
			}
		}

		c := newConv(rt, analysis.Options{})
		for i, p := range stream {
			if w := c.send(p); len(w) > 0 {
				rt.Fatalf("frame %d (%s PSN %d fromB=%v): warnings %v", i+1, p.op, p.psn, p.fromB, w)
			}
		}
		sum := c.tr.Summary()
		if len(sum.Connections) != 1 || sum.Connections[0].B == nil {
			rt.Fatalf("want one paired connection, got %d", len(sum.Connections))
		}
		conn := sum.Connections[0]
		for _, s := range sides {
			d := conn.A
			if d.Src.String() != "192.168.1.1" {
				d = conn.B
			}
			if s.fromB {
				d = conn.B
				if d.Src.String() != "192.168.1.2" {
					d = conn.A
				}
			}
			for kind, w := range s.want {
				got := d.Message(kind)
				if got.Count != w.count || got.Bytes != w.bytes || (w.count > 0 && (got.Min != w.min || got.Max != w.max)) {
					rt.Fatalf("fromB=%v %s messages: got count %d bytes %d min %d max %d, want %+v",
						s.fromB, kind, got.Count, got.Bytes, got.Min, got.Max, *w)
				}
			}
			if d.PartialMessages != 0 || d.SequenceErrors != 0 || d.ReadsCompleted != d.ReadRequests {
				rt.Fatalf("fromB=%v: partial %d, sequence errors %d, reads %d/%d", s.fromB, d.PartialMessages, d.SequenceErrors, d.ReadsCompleted, d.ReadRequests)
			}
		}
	})
}
