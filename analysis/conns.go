package analysis

import (
	"github.com/rocekit/rocekit/cm"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// Pairing says how the two directions of a connection were matched.
type Pairing uint8

// Pairings.
const (
	Unpaired    Pairing = iota
	PairedByPSN         // a response's PSN fell among the requests of one reverse flow
	PairedByCM          // a CM REQ/REP exchange named both QPs
	Ambiguous           // unpaired: a response's PSN fell among the requests of several reverse flows
)

// String returns "", "psn", "cm" or "ambiguous".
func (p Pairing) String() string {
	switch p {
	case PairedByPSN:
		return "psn"
	case PairedByCM:
		return "cm"
	case Ambiguous:
		return "ambiguous"
	}
	return ""
}

// Link is the part of a flow that a Conns table manages: its key, the flow
// of the other direction of its connection and how the two were paired,
// and the CM exchange that named them. A flow type F embeds a Link[F].
type Link[F any] struct {
	Key      FlowKey
	Peer     *F // nil until paired
	PairedBy Pairing
	CM       *CMInfo // nil unless a CM REQ/REP paired the flows
}

// Linked constrains the flow types of a Conns table: a pointer to F that
// returns F's Link (FlowLink), and says what pairing by PSN needs to know of F.
type Linked[F any] interface {
	*F
	// FlowLink returns the flow's Link.
	FlowLink() *Link[F]
	// Requested reports whether the flow has carried a request that a
	// response resp with PSN q can answer: q lies among the PSNs its
	// requests used, and, as far as the flow's state tells, the request
	// at q is of the kind resp answers (a READ, FLUSH or ATOMIC WRITE for
	// a READ response, an atomic for an ATOMIC ACK).
	Requested(q uint32, resp opcode.Opcode) bool
}

// Conns is the table of the flows of a capture: flows are keyed by
// FlowKey (addresses and destination QP), the two directions of a
// connection are paired by the CM REQ/REP exchange when the capture holds
// one (LearnCM, PairCM), else by the PSN of a response (PairByPSN), and a
// CM exchange teaches the QPs' starting PSNs, path MTU and P_Key. It is
// the one home of these rules for the Tracker and for package conform.
// The zero Conns is not usable: call NewConns.
//
// A caller's flow type embeds a Link to itself:
//
//	type flow struct {
//		analysis.Link[flow]
//		// ... the caller's per-flow state
//	}
//
//	func (f *flow) FlowLink() *analysis.Link[flow] { return &f.Link }
//	func (f *flow) Requested(q uint32, resp opcode.Opcode) bool { ... }
//
//	conns := analysis.NewConns(func(k analysis.FlowKey) *flow {
//		f := &flow{}
//		f.Key = k
//		return f
//	})
type Conns[F any, P Linked[F]] struct {
	create    func(FlowKey) P
	flows     map[FlowKey]P
	order     []P
	byPair    map[pairKey][]P
	cmPending map[cmKey]*cmREQ
	cmDone    map[cmKey]*CMInfo
	cmRejects uint64
}

// NewConns returns an empty table; create makes the flow of a key not seen
// before, whose Link.Key it must set.
func NewConns[F any, P Linked[F]](create func(FlowKey) P) *Conns[F, P] {
	return &Conns[F, P]{
		create:    create,
		flows:     make(map[FlowKey]P),
		byPair:    make(map[pairKey][]P),
		cmPending: make(map[cmKey]*cmREQ),
		cmDone:    make(map[cmKey]*CMInfo),
	}
}

// Flow returns the flow with key k, creating it on first sight.
func (c *Conns[F, P]) Flow(k FlowKey) P {
	if fl, ok := c.flows[k]; ok {
		return fl
	}
	fl := c.create(k)
	c.flows[k] = fl
	c.order = append(c.order, fl)
	pk := pairKey{k.Encap, k.Src, k.Dst}
	c.byPair[pk] = append(c.byPair[pk], fl)
	return fl
}

// Flows returns every flow in the order it became known. The slice belongs
// to the table.
func (c *Conns[F, P]) Flows() []P { return c.order }

// Len is the number of flows.
func (c *Conns[F, P]) Len() int { return len(c.order) }

// Pair makes a and b the two directions of one connection, unpairing
// whatever either was paired with before.
func (c *Conns[F, P]) Pair(a, b P, how Pairing) {
	for _, x := range [2]P{a, b} {
		if l := x.FlowLink(); l.Peer != nil && P(l.Peer) != a && P(l.Peer) != b {
			pl := P(l.Peer).FlowLink()
			pl.Peer, pl.PairedBy = nil, Unpaired
		}
	}
	la, lb := a.FlowLink(), b.FlowLink()
	la.Peer, lb.Peer = (*F)(b), (*F)(a)
	la.PairedBy, lb.PairedBy = how, how
}

// PairByPSN pairs fl, which carries a response resp with PSN q and has no
// peer, with the flow of the other direction between the same two
// addresses whose requests resp can answer (Linked.Requested), and returns
// it. A response names its requester's QP (fl's DestQP) but not its own,
// and a request names only the responder's QP, so without a CM exchange the
// PSN and the kind of request are the evidence: when no unpaired reverse
// flow sent such a request PairByPSN returns nil; when several did
// (QPs whose PSN ranges overlap, as when every QP starts at the same PSN)
// the capture does not say which one fl answers, and PairByPSN pairs
// nothing, marks fl and those flows Ambiguous and returns nil. A later
// response of fl may settle it.
func (c *Conns[F, P]) PairByPSN(fl P, q uint32, resp opcode.Opcode) P {
	k := &fl.FlowLink().Key
	var found P
	n := 0
	rev := c.byPair[pairKey{k.Encap, k.Dst, k.Src}]
	for _, x := range rev {
		if x == fl || x.FlowLink().Peer != nil || !x.Requested(q, resp) {
			continue
		}
		found = x
		n++
	}
	switch {
	case n == 1:
		c.Pair(fl, found, PairedByPSN)
		return found
	case n > 1:
		fl.FlowLink().PairedBy = Ambiguous
		for _, x := range rev {
			if x != fl && x.FlowLink().Peer == nil && x.Requested(q, resp) {
				x.FlowLink().PairedBy = Ambiguous
			}
		}
	}
	return nil
}

// CMMessage is what a CM MAD to QP1 says that Conns learns from. It holds
// no pointer.
type CMMessage struct {
	Attr      cm.AttrID // the MAD's AttributeID; 0 for no MAD
	OK        bool      // a REQ, REP or REJ with all its fixed fields
	Transport cm.TransportType
	MTU       uint8  // REQ: Path Packet Payload MTU code
	PKey      uint16 // REQ: Partition Key
	Local     uint32 // the MAD's Local Communication ID (0 if absent)
	Remote    uint32 // the MAD's Remote Communication ID (0 if absent)
	QPN, PSN  uint32 // REQ, REP: Local QPN and Starting PSN
	Service   uint64 // REQ: Service ID
}

// Set fills m in from a CM MAD.
func (m *CMMessage) Set(mad cm.MAD) {
	*m = CMMessage{Attr: mad.AttributeID(), Local: mad.LocalCommID(), Remote: mad.RemoteCommID()}
	switch m.Attr {
	case cm.AttrREQ:
		if r, err := mad.REQ(); err == nil {
			m.OK = true
			m.QPN, m.PSN, m.MTU, m.PKey = r.LocalQPN(), r.StartingPSN(), r.PathMTU(), r.PKey()
			m.Service, m.Transport = r.ServiceID(), r.TransportType()
		}
	case cm.AttrREP:
		if r, err := mad.REP(); err == nil {
			m.OK = true
			m.QPN, m.PSN = r.LocalQPN(), r.StartingPSN()
		}
	case cm.AttrREJ:
		if _, err := mad.REJ(); err == nil {
			m.OK = true
		}
	}
}

// LearnCM takes the CM MAD m sent from src to dst in frame n. A REQ is
// remembered until its REP or REJ; it returns the exchange a REP completes
// (nil for any other MAD), which PairCM turns into a connection. An RTU,
// DREQ or DREP sets its frame in the exchange it belongs to.
func (c *Conns[F, P]) LearnCM(encap packet.Encap, src, dst Addr, m *CMMessage, n int) *CMInfo {
	switch m.Attr {
	case cm.AttrREQ:
		if !m.OK {
			return nil
		}
		k := cmKey{encap, src, dst, m.Local}
		if _, ok := c.cmPending[k]; ok {
			return nil // a retry of a REQ already seen
		}
		c.cmPending[k] = &cmREQ{qpn: m.QPN, psn: m.PSN, mtu: cm.MTUBytes(m.MTU), pkey: m.PKey,
			service: m.Service, transport: m.Transport, frame: n}
	case cm.AttrREP:
		if !m.OK {
			return nil
		}
		k := cmKey{encap, dst, src, m.Remote}
		req, ok := c.cmPending[k]
		if !ok {
			return nil
		}
		delete(c.cmPending, k)
		info := &CMInfo{
			ServiceID: req.service, Transport: req.transport.String(), Active: dst, Passive: src,
			ActiveCommID: k.comm, PassiveCommID: m.Local, ActiveQPN: req.qpn, PassiveQPN: m.QPN,
			REQStartingPSN: req.psn, REPStartingPSN: m.PSN, PMTU: req.mtu, PKey: req.pkey,
			REQFrame: req.frame, REPFrame: n,
		}
		c.cmDone[k] = info
		return info
	case cm.AttrREJ:
		if m.OK {
			delete(c.cmPending, cmKey{encap, dst, src, m.Remote})
			c.cmRejects++
		}
	case cm.AttrRTU, cm.AttrDREQ, cm.AttrDREP:
		// From the active side: (src, dst, local ID); from the passive
		// side: (dst, src, remote ID).
		info := c.cmDone[cmKey{encap, src, dst, m.Local}]
		if info == nil {
			info = c.cmDone[cmKey{encap, dst, src, m.Remote}]
		}
		if info == nil {
			return nil
		}
		switch m.Attr {
		case cm.AttrRTU:
			info.RTUFrame = n
		case cm.AttrDREQ:
			info.DREQFrame = n
		default:
			info.DREPFrame = n
		}
	}
	return nil
}

// CMRejects is the number of CM REJ messages LearnCM took.
func (c *Conns[F, P]) CMRejects() uint64 { return c.cmRejects }

// PairCM pairs, creating them, the two flows of the connection a CM
// exchange in encapsulation encap set up: ap carries the active side's requests to the passive
// QP (they start at info.REPStartingPSN), pa the passive side's requests
// to the active QP (they start at info.REQStartingPSN). Each is the other's
// peer, paired by CM, with info as its Link.CM.
func (c *Conns[F, P]) PairCM(encap packet.Encap, info *CMInfo) (ap, pa P) {
	ap = c.Flow(FlowKey{encap, info.Active, info.Passive, info.PassiveQPN})
	pa = c.Flow(FlowKey{encap, info.Passive, info.Active, info.ActiveQPN})
	c.Pair(ap, pa, PairedByCM)
	ap.FlowLink().CM, pa.FlowLink().CM = info, info
	return ap, pa
}
