package analysis

import (
	"github.com/rocekit/rocekit/cm"
	"github.com/rocekit/rocekit/packet"
)

// CMInfo is what the CM exchange of a connection said (IBA Vol. 1 ch. 12).
// The active side sends the REQ, the passive side the REP. As Linux's CM
// uses them (and the captures confirm), the REQ's Starting PSN is the first
// PSN of the passive side's requests and the REP's Starting PSN the first
// PSN of the active side's requests.
type CMInfo struct {
	ServiceID      uint64
	Transport      string // from the REQ's Transport Service Type
	Active         Addr   // REQ sender
	Passive        Addr   // REP sender
	ActiveCommID   uint32 // REQ Local Communication ID
	PassiveCommID  uint32 // REP Local Communication ID
	ActiveQPN      uint32 // REQ Local QPN
	PassiveQPN     uint32 // REP Local QPN
	REQStartingPSN uint32 // first PSN of the passive side's requests
	REPStartingPSN uint32 // first PSN of the active side's requests
	PMTU           int    // REQ Path Packet Payload MTU, in bytes
	REQFrame       int
	REPFrame       int
	RTUFrame       int // 0 when not seen
	DREQFrame      int
	DREPFrame      int
}

// cmKey names a CM exchange: the active and passive addresses and the
// active side's communication ID.
type cmKey struct {
	encap           packet.Encap
	active, passive Addr
	comm            uint32
}

type cmREQ struct {
	qpn, psn  uint32
	mtu       int
	service   uint64
	transport cm.TransportType
	frame     int
}

// cm learns from a CM MAD: a REQ is remembered until its REP, which pairs
// the two data flows and sets their starting PSNs and path MTU.
func (t *Tracker) cm(o *obs) {
	m, frameNo, encap := &o.cm, o.frameNo, o.key.Encap
	src, dst := o.key.Src, o.key.Dst
	switch m.attr {
	case cm.AttrREQ:
		if !m.ok {
			return
		}
		k := cmKey{encap, src, dst, m.local}
		if _, ok := t.cmPending[k]; ok {
			return // a retry of a REQ already seen
		}
		t.cmPending[k] = &cmREQ{qpn: m.qpn, psn: m.psn, mtu: cm.MTUBytes(m.mtu),
			service: m.service, transport: m.transport, frame: frameNo}
	case cm.AttrREP:
		if !m.ok {
			return
		}
		k := cmKey{encap, dst, src, m.remote}
		req, ok := t.cmPending[k]
		if !ok {
			return
		}
		delete(t.cmPending, k)
		info := &CMInfo{
			ServiceID: req.service, Transport: req.transport.String(), Active: dst, Passive: src,
			ActiveCommID: k.comm, PassiveCommID: m.local, ActiveQPN: req.qpn, PassiveQPN: m.qpn,
			REQStartingPSN: req.psn, REPStartingPSN: m.psn, PMTU: req.mtu,
			REQFrame: req.frame, REPFrame: frameNo,
		}
		t.cmDone[k] = info
		// Active -> passive requests go to the passive QP, and back.
		ap := t.flow(FlowKey{encap, dst, src, m.qpn})
		pa := t.flow(FlowKey{encap, src, dst, req.qpn})
		t.pair(ap, pa, pairedCM)
		ap.cm, pa.cm = info, info
		if !ap.req.started {
			ap.req.setExpect(m.psn)
		}
		if !pa.req.started {
			pa.req.setExpect(req.psn)
		}
		ap.learnMTU(req.mtu, fromCM)
	case cm.AttrREJ:
		if m.ok {
			delete(t.cmPending, cmKey{encap, dst, src, m.remote})
			t.cmRejects++
		}
	case cm.AttrRTU, cm.AttrDREQ, cm.AttrDREP:
		// From the active side: (src, dst, local ID); from the passive
		// side: (dst, src, remote ID).
		info := t.cmDone[cmKey{encap, src, dst, m.local}]
		if info == nil {
			info = t.cmDone[cmKey{encap, dst, src, m.remote}]
		}
		if info == nil {
			return
		}
		switch m.attr {
		case cm.AttrRTU:
			info.RTUFrame = frameNo
		case cm.AttrDREQ:
			info.DREQFrame = frameNo
		default:
			info.DREPFrame = frameNo
		}
	}
}
