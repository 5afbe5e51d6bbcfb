package analysis

import (
	"encoding/binary"
	"time"
	"unsafe"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/cm"
	iobs "github.com/rocekit/rocekit/internal/obs"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// obs is what a Tracker needs to know of one frame: Set takes it from the
// decoded frame, which the obs does not refer to afterwards. So a program
// can decode frames on one core, keep their obs, and have another core
// observe them later, in order (Shards.observeObs). Package decode does,
// through internal/obs, whose opaque Obs an obs is: 128 bytes, two cache
// lines, and no pointer, so that decode can move it with stores the
// garbage collector does not see (non-temporal stores, internal/nt;
// internal/obs gives the figure).
type obs struct {
	seq     uint64
	frameNo int
	ts      int64
	key     FlowKey
	cm      CMMessage // what a CM MAD carried to QP1 said
	payload uint32    // transport payload bytes, pad excluded
	psn     uint32
	rethLen uint32
	srcQP   uint32 // the DETH's source QP
	pad     uint8
	state   obsState
	op      opcode.Opcode
	syn     aeth.Syndrome
	flags   obsFlags
	icrc    Check
	vcrc    Check
	_       [8]byte // to 128 bytes
}

// An internal/obs Obs holds an obs: these fail to compile if an obs is
// larger (it is as large, 128 bytes, on 64-bit platforms) or more
// strictly aligned.
var (
	_ [unsafe.Sizeof(iobs.Obs{}) - unsafe.Sizeof(obs{})]byte
	_ [unsafe.Alignof(iobs.Obs{}) - unsafe.Alignof(obs{})]byte
)

// of returns the obs o is.
func of(o *iobs.Obs) *obs { return (*obs)(unsafe.Pointer(o)) }

// The door through which package decode sets, shards and observes
// observations.
func init() {
	iobs.Provide(iobs.Methods[*Shards, Check, Warning]{
		Set: func(o *iobs.Obs, seq uint64, frameNo int, ts time.Time, f *packet.Frame, icrc, vcrc Check) {
			of(o).Set(seq, frameNo, ts, f, icrc, vcrc)
		},
		Of:      func(s *Shards, o *iobs.Obs) int { return s.ofObs(of(o)) },
		Observe: func(s *Shards, i int, o *iobs.Obs, w []Warning) []Warning { return s.ts[i].observeObs(of(o), w) },
	})
}

type obsState uint8

const (
	obsOther     obsState = iota // no IB transport packet
	obsUndecoded                 // an IB transport packet that did not decode completely
	obsDecoded
)

type obsFlags uint8

const (
	obsAckReq obsFlags = 1 << iota
	obsECNCE
	obsRETH
	obsAETH
	obsDETH
	obsRETHCut // the opcode carries a RETH the capture cut: its DMA length is unknown
)

// Set fills o in from decoded frame f: the frame at position seq of
// everything observed (see Shards.ObserveChecked), number frameNo of its
// capture, taken at ts, with the results of its ICRC and VCRC checks.
//
// A transport packet the capture cut (Packet.Cut) counts as decoded when
// its opcode and lengths are known (Packet.Framed): its payload length is
// the one on the wire, and a RETH the capture cut leaves the DMA length
// unknown (a READ's PSN count is then learnt from the traffic that
// follows, as while the PMTU is unknown).
func (o *obs) Set(seq uint64, frameNo int, ts time.Time, f *packet.Frame, icrc, vcrc Check) {
	o.seq, o.frameNo, o.ts = seq, frameNo, ts.UnixNano()
	o.icrc, o.vcrc = icrc, vcrc
	o.cm.Attr, o.flags = 0, 0
	p := &f.Transport
	switch {
	case !f.IsRoCE():
		o.state = obsOther
		return
	case p.BTH == nil || !p.Framed():
		o.state = obsUndecoded
		return
	}
	o.state = obsDecoded
	var h bth.BTH = p.BTH // named here so that its getters are inlined
	k := &o.key
	k.Encap, k.DstQP = f.Encap, h.DestQP()
	setAddrs(&k.Src, &k.Dst, f)
	o.op, o.psn = h.Opcode(), h.PSN()
	o.payload, o.pad = uint32(p.PayloadLen()), uint8(p.PadLen())
	if h.AckReq() {
		o.flags |= obsAckReq
	}
	if ecnCE(f) {
		o.flags |= obsECNCE
	}
	o.rethLen, o.syn, o.srcQP = 0, 0, 0
	if p.RETH != nil {
		o.flags |= obsRETH
		o.rethLen = p.RETH.DMALen()
	}
	if p.AETH != nil {
		o.flags |= obsAETH
		o.syn = p.AETH.Syndrome()
	}
	if p.DETH != nil {
		o.flags |= obsDETH
		o.srcQP = p.DETH.SrcQP()
		if o.key.DstQP == cm.GSIQP {
			if m, err := cm.FromPacket(p); err == nil {
				o.cm.Set(m)
			}
		}
	}
	if p.Cut != 0 && p.RETH == nil && o.op.Info().Has(opcode.RETH) {
		o.flags |= obsRETHCut
	}
}

// ecnCE reports ECN Congestion Experienced (ECN bits 11) in the IPv4 TOS,
// the IPv6 traffic class or the GRH TClass.
func ecnCE(f *packet.Frame) bool {
	switch f.Encap {
	case packet.RoCEv2IPv4:
		return f.IPv4.ECN() == 3
	case packet.RoCEv2IPv6:
		return f.IPv6.TrafficClass()&3 == 3
	case packet.RoCEv1, packet.IBGlobal:
		return f.GRH.TClass()&3 == 3
	}
	return false
}

// low32 is the number the shard of an endpoint pair is taken from: the
// last 32 bits of an IP address or GID, or the LID.
func (a *Addr) low32() uint32 {
	switch a.Kind {
	case AddrIPv4:
		return binary.BigEndian.Uint32(a.b[:4])
	case AddrLID:
		return uint32(a.LID())
	}
	return binary.BigEndian.Uint32(a.b[12:16])
}

// shardOf is the shard, of n, of the pair of endpoints a and b (see
// Shards.Of).
func shardOf(a, b *Addr, n int) int {
	return int((uint64(a.low32()) + uint64(b.low32())) % uint64(n))
}

// quick mixes the QP with some address bytes of k (any bits will do: the
// table of recent flows compares the whole key).
func (k *FlowKey) quick() uint32 {
	x := binary.LittleEndian.Uint32(k.Src.b[0:4]) ^ binary.LittleEndian.Uint32(k.Src.b[12:16]) ^
		(binary.LittleEndian.Uint32(k.Dst.b[0:4])^binary.LittleEndian.Uint32(k.Dst.b[12:16]))*0x2545F491
	x ^= k.DstQP * 0x9E3779B1
	return (x ^ x>>15 ^ x>>23) * 0x9E3779B1 >> 24
}

// same reports whether k and o are equal: k == o, without the call to
// memequal the compiler makes for the addresses' arrays.
func (k *FlowKey) same(o *FlowKey) bool {
	return k.DstQP == o.DstQP &&
		binary.LittleEndian.Uint64(k.Src.b[0:8]) == binary.LittleEndian.Uint64(o.Src.b[0:8]) &&
		binary.LittleEndian.Uint64(k.Src.b[8:16]) == binary.LittleEndian.Uint64(o.Src.b[8:16]) &&
		binary.LittleEndian.Uint64(k.Dst.b[0:8]) == binary.LittleEndian.Uint64(o.Dst.b[0:8]) &&
		binary.LittleEndian.Uint64(k.Dst.b[8:16]) == binary.LittleEndian.Uint64(o.Dst.b[8:16]) &&
		k.Encap == o.Encap && k.Src.Kind == o.Src.Kind && k.Dst.Kind == o.Dst.Kind
}
