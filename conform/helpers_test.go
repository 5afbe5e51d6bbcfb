package conform_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/cm"
	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/rc/rctest"
	"github.com/rocekit/rocekit/sim"
)

// capturePath returns the path of a shared capture, or skips t when
// ../shared/captures is absent.
func capturePath(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(oracle.Captures(t), name)
}

// tb is what the helpers need of a *testing.T or *rapid.T.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
	Logf(format string, args ...any)
}

// Endpoints of the synthetic streams: A is 192.168.1.1 with QP qa, B is
// 192.168.1.2 with QP qb.
const (
	qa = 0x101
	qb = 0x202
)

// pkt is one packet of a synthetic stream: Fields as rc builds them, the
// sender, and frame-level faults.
type pkt struct {
	from    rctest.Side
	f       packet.Fields
	icrcXor uint32
	vcrcXor uint16
	tver    uint8 // BTH TVer
}

// encodeFrame builds p as a frame of the given encapsulation.
func encodeFrame(t tb, encap packet.Encap, p *pkt) []byte {
	t.Helper()
	ff := packet.DefaultFrame(encap)
	ff.Transport = p.f
	if ff.Transport.BTH.PKey == 0 {
		ff.Transport.BTH.PKey = 0xFFFF
	}
	ff.ICRCXor, ff.VCRCXor = p.icrcXor, p.vcrcXor
	if p.from == rctest.B {
		ff.Eth.Src, ff.Eth.Dst = ff.Eth.Dst, ff.Eth.Src
		ff.IPv4.Src, ff.IPv4.Dst = ff.IPv4.Dst, ff.IPv4.Src
		ff.IPv6.Src, ff.IPv6.Dst = ff.IPv6.Dst, ff.IPv6.Src
		ff.GRH.SGID, ff.GRH.DGID = ff.GRH.DGID, ff.GRH.SGID
		ff.LRH.SLID, ff.LRH.DLID = ff.LRH.DLID, ff.LRH.SLID
	}
	ff.Transport.BTH.TVer = p.tver
	buf := make([]byte, ff.Len()+16)
	n, err := ff.Encode(buf)
	require.NoError(t, err)
	return buf[:n]
}

// run feeds the packets to a new Checker as frames 1, 2, ... and returns
// the findings (after Finish) and the summary.
func run(t tb, opts conform.Options, encap packet.Encap, pkts []pkt) ([]conform.Finding, conform.Summary) {
	t.Helper()
	c := conform.New(opts)
	var f packet.Frame
	ts := time.Unix(1700000000, 0)
	for i := range pkts {
		b := encodeFrame(t, encap, &pkts[i])
		var err error
		if encap == packet.IBLocal || encap == packet.IBGlobal {
			err = f.DecodeIB(b)
		} else {
			err = f.DecodeEthernet(b)
		}
		c.Frame(i+1, ts.Add(time.Duration(i)*time.Microsecond), &f, err, nil)
	}
	c.Finish(nil)
	return c.Findings(), c.Summary()
}

// brief is a finding as the tests compare it: frame, kind, rule.
type brief struct {
	Frame int
	Kind  conform.Kind
	Rule  string
}

func briefs(fs []conform.Finding) []brief {
	var out []brief
	for _, f := range fs {
		out = append(out, brief{f.Frame, f.Kind, f.Rule})
	}
	return out
}

func dump(fs []conform.Finding) string {
	var b strings.Builder
	for _, f := range fs {
		b.WriteString(f.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// want is a finding expected at frame with kind (its rule is the kind's).
func want(frame int, k conform.Kind) brief { return brief{frame, k, k.Rule()} }

// Packet builders for hand-made streams. A's requests go to qb, B's
// responses to qa.
func req(op opcode.Opcode, psn uint32, payload int, ackReq bool) pkt {
	var p pkt
	p.f.BTH.Opcode, p.f.BTH.PSN, p.f.BTH.DestQP, p.f.BTH.AckReq = op, psn&rc.PSNMask, qb, ackReq
	p.f.Payload = payloadBytes[:payload]
	p.f.SetPad()
	return p
}

func write(op opcode.Opcode, psn uint32, payload int, dmaLen uint32, ackReq bool) pkt {
	p := req(op, psn, payload, ackReq)
	p.f.RETH.VA, p.f.RETH.RKey, p.f.RETH.DMALen = 0x10000, 0x77, dmaLen
	return p
}

func read(psn, length uint32) pkt {
	p := req(opcode.RCRDMAReadRequest, psn, 0, true)
	p.f.RETH.VA, p.f.RETH.RKey, p.f.RETH.DMALen = 0x20000, 0x78, length
	return p
}

func resp(op opcode.Opcode, psn uint32, syn aeth.Syndrome, msn uint32, payload int) pkt {
	var p pkt
	p.from = rctest.B
	p.f.BTH.Opcode, p.f.BTH.PSN, p.f.BTH.DestQP = op, psn&rc.PSNMask, qa
	p.f.AETH.Syndrome, p.f.AETH.MSN = syn, msn
	p.f.Payload = payloadBytes[:payload]
	p.f.SetPad()
	return p
}

func ack(psn, msn uint32) pkt {
	return resp(opcode.RCAcknowledge, psn, aeth.ACKSyndrome(aeth.Unlimited), msn, 0)
}

func nak(psn uint32, code aeth.NAKCode, msn uint32) pkt {
	return resp(opcode.RCAcknowledge, psn, aeth.NAKSyndrome(code), msn, 0)
}

var payloadBytes = func() []byte {
	b := make([]byte, 65536)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}()

// cmMAD builds a CM MAD of attribute a.
func cmMAD(a cm.AttrID, set func(cm.MAD)) []byte {
	m := cm.MAD(make([]byte, cm.MADLen))
	m.SetBaseVersion(cm.BaseVer)
	m.SetMgmtClass(cm.MgmtClass)
	m.SetClassVersion(cm.ClassVer)
	m.SetMethod(cm.MethodSend)
	m.SetAttributeID(a)
	set(m)
	return m
}

func mad(from rctest.Side, m []byte) pkt {
	var p pkt
	p.from = from
	p.f.BTH.Opcode, p.f.BTH.DestQP = opcode.UDSendOnly, cm.GSIQP
	p.f.DETH.QKey, p.f.DETH.SrcQP = cm.GSIQKey, 1
	p.f.Payload = m
	return p
}

// cmExchange is a REQ from A and a REP from B announcing QPs qa and qb,
// A's requests starting at psnA and B's at psnB, PMTU code mtu.
func cmExchange(psnA, psnB uint32, mtu uint8) []pkt {
	reqMAD := cmMAD(cm.AttrREQ, func(m cm.MAD) {
		r, _ := m.REQ()
		r.SetLocalCommID(0x1000)
		r.SetLocalQPN(qa)
		r.SetStartingPSN(psnB)
		r.SetPathMTU(mtu)
		r.SetPKey(0xFFFF)
	})
	repMAD := cmMAD(cm.AttrREP, func(m cm.MAD) {
		r, _ := m.REP()
		r.SetLocalCommID(0x2000)
		r.SetRemoteCommID(0x1000)
		r.SetLocalQPN(qb)
		r.SetStartingPSN(psnA)
	})
	return []pkt{mad(rctest.A, reqMAD), mad(rctest.B, repMAD)}
}

// exchange is a run of two rc.QPs through rctest, recorded as a capture
// taken at one end's port (the vantage): that end's packets as it sent
// them, the other end's as they arrived.
type exchange struct {
	a, b    *rc.QP
	net     *rctest.Net
	memA    *rc.Memory
	memB    *rc.Memory
	mrA     *rc.MR
	mrB     *rc.MR
	vantage rctest.Side
	delay   sim.Time
	events  []captured
	seq     int
}

// captured is one packet a QP sent: when, in which order, how many
// packets had been delivered (to either QP) before, and whether it was
// dropped.
type captured struct {
	at        sim.Time
	seq       int
	delivered uint64
	dropped   bool
	p         pkt
}

// newExchange connects two QPs with the given configuration (QPNs, PSNs and
// memory are filled in): each side has a 1 MiB region with R_Key 0xA1 (A)
// or 0xB1 (B).
func newExchange(t tb, cfg rc.Config, psnA, psnB uint32, vantage rctest.Side, seed uint64) *exchange {
	t.Helper()
	x := &exchange{memA: rc.NewMemory(), memB: rc.NewMemory(), vantage: vantage, delay: sim.Microsecond}
	x.mrA = &rc.MR{Addr: 0x1_0000_0000, RKey: 0xA1, Access: rc.AccessAll, Buf: make([]byte, 1<<20)}
	x.mrB = &rc.MR{Addr: 0x2_0000_0000, RKey: 0xB1, Access: rc.AccessAll, Buf: make([]byte, 1<<20)}
	for i := range x.mrA.Buf {
		x.mrA.Buf[i], x.mrB.Buf[i] = byte(i), byte(i*3)
	}
	require.NoError(t, x.memA.Register(x.mrA))
	require.NoError(t, x.memB.Register(x.mrB))
	ca, cb := cfg, cfg
	ca.Memory, cb.Memory = x.memA, x.memB
	ca.QPN, ca.DestQPN, cb.QPN, cb.DestQPN = qa, qb, qb, qa
	ca.SQPSN, cb.RQPSN = psnA, psnA
	cb.SQPSN, ca.RQPSN = psnB, psnB
	var err error
	x.a, err = rc.New(ca)
	require.NoError(t, err)
	x.b, err = rc.New(cb)
	require.NoError(t, err)
	x.net = rctest.New(x.a, x.b, seed)
	x.net.Link[rctest.A] = rctest.Link{Delay: x.delay}
	x.net.Link[rctest.B] = rctest.Link{Delay: x.delay}
	x.net.Trace = x.trace
	return x
}

func (x *exchange) trace(e *rctest.Event) {
	if e.Kind != rctest.Sent {
		return
	}
	p := pkt{from: e.Side, f: *e.Packet}
	p.f.Payload = bytes.Clone(e.Packet.Payload)
	x.seq++
	x.events = append(x.events, captured{at: e.Time, seq: x.seq, delivered: x.net.Delivered, dropped: e.Verdict == rctest.Drop, p: p})
}

// capture returns the packets in the order a capture at the vantage's port
// sees them: its own packets when it sends them, the peer's when they
// arrive. rctest delivers packets in (arrival time, send order) and lets the
// QPs send after each delivery, so a sent packet goes after the k-th
// delivery when k packets had been delivered when it was sent.
func (x *exchange) capture() []pkt {
	var del []captured
	for _, e := range x.events {
		if !e.dropped {
			del = append(del, e)
		}
	}
	sort.SliceStable(del, func(i, j int) bool { return del[i].at < del[j].at }) // same delay both ways
	index := map[int]uint64{}                                                   // seq -> delivery number (1-based)
	for k, e := range del {
		index[e.seq] = uint64(k + 1)
	}
	type ord struct {
		k    uint64 // deliveries before (sends), or own delivery number (arrivals)
		send bool   // a send goes after the arrival with the same k
		seq  int
		p    pkt
	}
	var ev []ord
	for _, e := range x.events {
		switch {
		case e.p.from == x.vantage:
			ev = append(ev, ord{e.delivered, true, e.seq, e.p})
		case !e.dropped:
			ev = append(ev, ord{index[e.seq], false, e.seq, e.p})
		}
	}
	sort.SliceStable(ev, func(i, j int) bool {
		a, b := ev[i], ev[j]
		if a.k != b.k {
			return a.k < b.k
		}
		if a.send != b.send {
			return !a.send
		}
		return a.seq < b.seq
	})
	out := make([]pkt, len(ev))
	for i, e := range ev {
		out[i] = e.p
	}
	return out
}

// captureMidpoint returns the packets as a capture point halfway along the
// path sees them (same delay both ways: in the order they were sent): each
// lost packet was lost before that point or after it, as keep decides.
func (x *exchange) captureMidpoint(keep func() bool) []pkt {
	var out []pkt
	for _, e := range x.events {
		if e.dropped && !keep() {
			continue
		}
		out = append(out, e.p)
	}
	return out
}

// runAll runs until every posted WR completed and the network is quiet.
func (x *exchange) runAll(t tb, nA, nB int) {
	t.Helper()
	done := func() bool {
		return len(x.net.Completions[rctest.A]) >= nA && len(x.net.Completions[rctest.B]) >= nB
	}
	x.net.RunUntil(done, 100*sim.Second)
	x.net.Run(200 * sim.Second)
}

// find returns the index of the i-th (0-based) captured packet matching
// match, or fails.
func find(t tb, pkts []pkt, i int, match func(*pkt) bool) int {
	t.Helper()
	for k := range pkts {
		if match(&pkts[k]) {
			if i == 0 {
				return k
			}
			i--
		}
	}
	t.Fatalf("no such packet")
	return -1
}

func describe(pkts []pkt) string {
	var b strings.Builder
	for i, p := range pkts {
		fmt.Fprintf(&b, "%d %s %s psn=%d", i+1, p.from, p.f.BTH.Opcode, p.f.BTH.PSN)
		if p.f.BTH.Opcode.Info().Has(opcode.AETH) {
			fmt.Fprintf(&b, " %s msn=%d", p.f.AETH.Syndrome, p.f.AETH.MSN)
		}
		fmt.Fprintf(&b, " len=%d\n", len(p.f.Payload))
	}
	return b.String()
}
