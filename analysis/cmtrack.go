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
	PKey           uint16 // REQ Partition Key
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
	pkey      uint16
	service   uint64
	transport cm.TransportType
	frame     int
}

// cm learns from a CM MAD: a REP that completes a REQ pairs the two data
// flows and sets their starting PSNs and path MTU.
func (t *Tracker) cm(o *obs) {
	info := t.conns.LearnCM(o.key.Encap, o.key.Src, o.key.Dst, &o.cm, o.frameNo)
	if info == nil {
		return
	}
	ap, pa := t.conns.PairCM(o.key.Encap, info)
	t.paired(ap, pa)
	if !ap.req.started {
		ap.req.setExpect(info.REPStartingPSN)
	}
	if !pa.req.started {
		pa.req.setExpect(info.REQStartingPSN)
	}
	ap.learnMTU(info.PMTU, fromCM)
}
