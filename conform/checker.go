package conform

import (
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"time"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/cm"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// Options tune a Checker.
type Options struct {
	// PMTU is the path MTU in bytes (256, 512, 1024, 2048 or 4096). When
	// set it is what every connection is checked against; when 0 a CM REQ's
	// path MTU is used, else the first full-size First or Middle packet (or
	// READ response) of the connection teaches it.
	PMTU int
	// Ports lists extra UDP destination ports to decode as RoCEv2 besides
	// 4791 (CheckFile and CheckReader; a caller of Checker.Frame decodes).
	Ports []uint16
}

// mtuSource says where a connection's PMTU came from.
type mtuSource uint8

const (
	mtuNone mtuSource = iota
	mtuPackets
	mtuCM
	mtuOption
)

var mtuSourceNames = [...]string{"", "packets", "cm", "option"}

// crcTable hashes payloads so that a retransmission can be compared with
// the original (CRC-32C: hardware-accelerated on common CPUs). It is made on
// first use: building hash/crc32's CRC-32C tables takes about 0.2 ms, a
// tenth of the start of a rocekit command that never checks conformance.
var crcTable = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// flow is one direction between two QPs: the requests its source QP sends
// (req) and the responses its source QP sends to the peer flow's requests.
type flow struct {
	analysis.Link[flow]

	req channel

	pmtu     int
	pmtuFrom mtuSource
	pkey     uint16
	pkeySet  bool
	errFrame int // a fatal NAK stopped the connection at this frame

	firstFrame, lastFrame int
	packets               int
	findings              int
	seq                   int // creation order
}

// Checker replays the RC connections of a capture and reports every
// departure from the spec it can prove. Feed it every frame in capture
// order with Frame, then call Finish. It is not safe for concurrent use.
type Checker struct {
	opts  Options
	table *analysis.Conns[flow, *flow]
	cache [2]*flow

	frames, ibFrames, rcFrames, other int
	counts                            map[Kind]int
	total                             int
	lastFrame                         int
	finished                          bool

	out []Finding
	all []record
	cur *flow // flow of the frame being checked
}

// record is a finding and the flow it concerns (nil for none), kept so that
// Findings can number connections once the capture is over.
type record struct {
	f  Finding
	fl *flow
}

// New returns a Checker.
func New(opts Options) *Checker {
	if !rc.ValidMTU(opts.PMTU) {
		opts.PMTU = 0
	}
	c := &Checker{opts: opts, counts: make(map[Kind]int)}
	c.table = analysis.NewConns(c.newFlow)
	return c
}

// report records a finding about frame n.
func (c *Checker) report(n int, k Kind, expected, got, format string, args ...any) {
	f := Finding{Frame: n, Rule: k.Rule(), Kind: k, Message: fmt.Sprintf(format, args...), Expected: expected, Got: got}
	if c.cur != nil {
		c.cur.findings++
	}
	c.counts[k]++
	c.total++
	c.out = append(c.out, f)
	c.all = append(c.all, record{f, c.cur})
}

// Frame checks one frame and appends its findings to dst, which it returns
// (pass dst[:0] of a reused slice: a conforming frame allocates nothing).
// n is the frame's number in the capture, ts its time (unused by the rules
// today). decodeErr is the error the frame's decoding returned: a frame
// whose IB transport packet did not decode is a Malformed finding, except
// that a TVer other than 0 is reported as TVer and the frame is otherwise
// checked. The ICRC (and VCRC) is checked whenever the encapsulation bounds
// the transport packet, so an undecodable packet gets a BadICRC finding
// beside its Malformed one when its bytes were damaged. A frame the capture
// cut (f.Cut, packet.Frame.DecodeRecord) is checked from the headers it
// kept: its ICRC cannot be checked, headers it cut are not findings, and
// what they would have told is taken as unknown. Findings returned here have
// Conn 0: connections are numbered once the capture is over (Findings,
// Summary).
func (c *Checker) Frame(n int, ts time.Time, f *packet.Frame, decodeErr error, dst []Finding) []Finding {
	_ = ts
	c.out = dst
	c.cur = nil
	c.frames++
	c.lastFrame = n
	if !f.IsRoCE() {
		return c.out
	}
	c.ibFrames++
	p := &f.Transport
	if p.BTH == nil || !p.Framed() {
		c.checkCRCs(n, f)
		if decodeErr != nil || f.Cut == 0 {
			c.malformed(n, decodeErr)
		}
		return c.out
	}
	op := p.BTH.Opcode()
	var fl *flow
	if op.Transport() == opcode.RC && op.Valid() {
		// Findings about the frame itself count for its connection.
		fl = c.lookup(f, p.BTH.DestQP())
		c.cur = fl
		if fl.packets == 0 {
			fl.firstFrame = n
		}
		fl.packets++
		fl.lastFrame = n
		c.rcFrames++
	}
	c.checkCRCs(n, f)
	if v := p.BTH.TVer(); v != 0 {
		c.report(n, TVer, "TVer 0", fmt.Sprintf("TVer %d", v), "BTH transport header version is %d", v)
	}
	if decodeErr != nil && !isTVerError(decodeErr) {
		c.malformed(n, decodeErr)
		return c.out
	}
	switch {
	case op.Transport() == opcode.UD:
		if p.BTH.DestQP() == cm.GSIQP {
			c.cm(f, n)
		}
		return c.out
	case fl == nil:
		c.other++
		return c.out
	}
	if op.IsResponse() && fl.Peer == nil {
		c.pairByPSN(fl, p.BTH.PSN(), op)
	}
	c.checkPKey(fl, n, p.BTH.PKey())
	if fl.errFrame != 0 {
		return c.out
	}
	if op.IsRequest() {
		c.request(fl, n, p)
	} else {
		c.response(fl, n, p)
	}
	return c.out
}

// checkCRCs reports a bad ICRC or VCRC of frame n, when it can be checked.
func (c *Checker) checkCRCs(n int, f *packet.Frame) {
	if f.Network() != nil {
		if ok, want, got, err := f.CheckICRC(); err == nil && !ok {
			c.report(n, BadICRC, fmt.Sprintf("ICRC 0x%08x", want), fmt.Sprintf("0x%08x", got),
				"ICRC 0x%08x does not match the packet (computed 0x%08x)", got, want)
		}
	}
	if f.VCRC != nil {
		if ok, want, got, err := f.CheckVCRC(); err == nil && !ok {
			c.report(n, BadVCRC, fmt.Sprintf("VCRC 0x%04x", want), fmt.Sprintf("0x%04x", got),
				"VCRC 0x%04x does not match the packet (computed 0x%04x)", got, want)
		}
	}
}

func isTVerError(err error) bool {
	var he *rocekit.HeaderError
	return errors.As(err, &he) && he.Header == "bth" && he.Field == "TVer"
}

func (c *Checker) malformed(n int, err error) {
	got := "an undecodable packet"
	if err != nil {
		got = err.Error()
	}
	c.report(n, Malformed, "a complete, well-formed IB transport packet", got, "IB transport packet does not decode: %s", got)
}

// checkPKey compares a packet's P_Key with the connection's (§5.11).
func (c *Checker) checkPKey(fl *flow, n int, pk uint16) {
	if !fl.pkeySet && fl.Peer != nil && fl.Peer.pkeySet {
		fl.pkey, fl.pkeySet = fl.Peer.pkey, true
	}
	if !fl.pkeySet {
		fl.pkey, fl.pkeySet = pk, true
		if fl.Peer != nil && !fl.Peer.pkeySet {
			fl.Peer.pkey, fl.Peer.pkeySet = pk, true
		}
		return
	}
	if !rc.PKeyMatch(pk, fl.pkey) {
		c.report(n, PKeyMismatch, fmt.Sprintf("a P_Key matching 0x%04x (equal low 15 bits, one full member)", fl.pkey),
			fmt.Sprintf("0x%04x", pk), "P_Key 0x%04x does not match the connection's P_Key 0x%04x", pk, fl.pkey)
	}
}

// lookup returns the flow of frame f to QP qp, creating it.
func (c *Checker) lookup(f *packet.Frame, qp uint32) *flow {
	src, dst := analysis.FrameAddrs(f)
	k := analysis.FlowKey{Encap: f.Encap, Src: src, Dst: dst, DstQP: qp}
	for _, x := range c.cache {
		if x != nil && x.Key == k {
			return x
		}
	}
	fl := c.table.Flow(k)
	c.cache[1], c.cache[0] = c.cache[0], fl
	return fl
}

// newFlow makes the flow of a key seen for the first time.
func (c *Checker) newFlow(k analysis.FlowKey) *flow {
	fl := &flow{seq: c.table.Len()}
	fl.Key = k
	if c.opts.PMTU != 0 {
		fl.pmtu, fl.pmtuFrom = c.opts.PMTU, mtuOption
	}
	return fl
}

// FlowLink returns the flow's place in the Checker's Conns.
func (fl *flow) FlowLink() *analysis.Link[flow] { return &fl.Link }

// Requested reports whether the flow has carried a request that a
// response resp with PSN q can answer: q lies between the first PSN and
// the end of what was sent, and the request kept at q is one that READ
// responses answer, for a READ response, or an atomic, for an ATOMIC ACK.
func (fl *flow) Requested(q uint32, resp opcode.Opcode) bool {
	ch := &fl.req
	if !ch.started || ch.slots.len() == 0 || rc.DiffPSN(q, ch.first) < 0 || rc.DiffPSN(q, ch.sentEnd()) >= 0 {
		return false
	}
	switch resp.Family() {
	case opcode.FamilyReadResponse:
		i := ch.slots.find(q)
		return i >= 0 && rc.AnsweredByRead(ch.slots.at(i).op)
	case opcode.FamilyAtomicAck:
		i := ch.slots.find(q)
		return i >= 0 && ch.slots.at(i).psn == q && ch.slots.at(i).op.Family() == opcode.FamilyAtomic
	}
	return true
}

// paired makes the two directions of a connection share what one knows of
// the path MTU and the P_Key.
func (c *Checker) paired(a, b *flow) {
	switch {
	case a.pmtuFrom > b.pmtuFrom:
		c.setPMTU(b, a.pmtu, a.pmtuFrom)
	case b.pmtuFrom > a.pmtuFrom:
		c.setPMTU(a, b.pmtu, b.pmtuFrom)
	}
	switch {
	case a.pkeySet && !b.pkeySet:
		b.pkey, b.pkeySet = a.pkey, true
	case b.pkeySet && !a.pkeySet:
		a.pkey, a.pkeySet = b.pkey, true
	}
}

// pairByPSN pairs fl, which carries a response resp with PSN q, with the
// reverse flow whose requests it answers (analysis.Conns.PairByPSN).
func (c *Checker) pairByPSN(fl *flow, q uint32, resp opcode.Opcode) *flow {
	best := c.table.PairByPSN(fl, q, resp)
	if best != nil {
		c.paired(fl, best)
	}
	return best
}

// setPMTU records fl's (and its peer's) path MTU and resolves the READs
// whose PSN count was waiting for it.
func (c *Checker) setPMTU(fl *flow, n int, from mtuSource) {
	for _, x := range [2]*flow{fl, fl.Peer} {
		if x == nil {
			continue
		}
		changed := x.pmtu != n
		x.pmtu, x.pmtuFrom = n, from
		if changed {
			c.resolveReads(x)
		}
	}
}

// learnPMTU records a PMTU seen in a full packet, unless one is known.
func (c *Checker) learnPMTU(fl *flow, n int) {
	if fl.pmtu == 0 && rc.ValidMTU(n) {
		c.setPMTU(fl, n, mtuPackets)
	}
}

// cm learns QPNs, starting PSNs, PMTU and P_Key from a CM REQ/REP pair
// that sets up a reliable connection.
func (c *Checker) cm(f *packet.Frame, n int) {
	mad, err := cm.FromPacket(&f.Transport)
	if err != nil {
		return
	}
	var m analysis.CMMessage
	m.Set(mad)
	src, dst := analysis.FrameAddrs(f)
	info := c.table.LearnCM(f.Encap, src, dst, &m, n)
	if info == nil || info.Transport != cm.ServiceRC.String() {
		return
	}
	ap, pa := c.table.PairCM(f.Encap, info)
	c.paired(ap, pa)
	ap.req.startAt(info.REPStartingPSN)
	pa.req.startAt(info.REQStartingPSN)
	if info.PKey != 0 && !ap.pkeySet {
		ap.pkey, ap.pkeySet = info.PKey, true
		pa.pkey, pa.pkeySet = info.PKey, true
	}
	if rc.ValidMTU(info.PMTU) && ap.pmtuFrom < mtuCM {
		c.setPMTU(ap, info.PMTU, mtuCM)
	}
}
