package gen

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// decodeT decodes a frame of src's encapsulation.
func decodeT(src *Source, data []byte) (*packet.Frame, error) {
	fr := new(packet.Frame)
	err := decode(fr, src.DUT.Encap, data)
	return fr, err
}

// icrcOK recomputes the ICRC of a decoded frame independently of the
// package: from the bytes the network header covers (any opcode).
func icrcOK(t *testing.T, fr *packet.Frame) bool {
	t.Helper()
	net := fr.Network()
	require.NotNil(t, net)
	b := net[:len(net)-icrc.Len]
	var v uint32
	var err error
	switch fr.Encap {
	case packet.RoCEv2IPv4:
		v, err = icrc.IPv4(b)
	case packet.RoCEv2IPv6:
		v, err = icrc.IPv6(b)
	case packet.RoCEv1:
		v, err = icrc.GRH(b)
	default:
		v, err = icrc.LRH(b)
	}
	require.NoError(t, err)
	return v == icrc.Get(net[len(net)-icrc.Len:])
}

// pick finds the first source frame (from index from) whose decoded
// transport packet satisfies ok and that is followed by at least one more
// frame.
func pick(t *testing.T, src *Source, from int, ok func(p *packet.Packet) bool) int {
	t.Helper()
	for i := from; i+1 < len(src.Frames); i++ {
		fr, err := decodeT(src, src.Frames[i].Data)
		if err == nil && ok(&fr.Transport) {
			return i
		}
	}
	t.Fatalf("no source frame fits")
	return -1
}

func opIs(ops ...opcode.Opcode) func(p *packet.Packet) bool {
	return func(p *packet.Packet) bool {
		for _, o := range ops {
			if p.Opcode() == o {
				return true
			}
		}
		return false
	}
}

// allowed marks the bytes a fault may change: its field, the ICRC when
// recomputed or corrupted, the VCRC of native IB, the IPv4 header checksum
// when the fault says so.
func allowed(t *testing.T, n int, f *Fault, fr *packet.Frame) []bool {
	t.Helper()
	ok := make([]bool, n)
	for i := f.Offset; i < f.Offset+f.Size && i < n; i++ {
		ok[i] = true
	}
	l, good := frameLayout(fr)
	require.True(t, good)
	if f.ICRC == ICRCRecomputed || f.ICRC == ICRCCorrupted {
		for i := l.icrc; i < l.icrc+icrc.Len; i++ {
			ok[i] = true
		}
	}
	if l.vcrc >= 0 {
		ok[l.vcrc], ok[l.vcrc+1] = true, true
	}
	if f.IPChecksum {
		ok[l.l3+10], ok[l.l3+11] = true, true
	}
	return ok
}

// checkStream checks the input stream is the source with exactly the
// change the fault declares: every other frame identical and in order.
func checkStream(t *testing.T, src *Source, g *got, f *Fault) {
	t.Helper()
	var want [][]byte
	var marks []int // want index -> source index, -1 inserted
	for i := 0; i < len(src.Frames); i++ {
		d := src.Frames[i].Data
		switch {
		case i == f.Source && f.Kind.removes():
			continue
		case i == f.Source && f.Kind == Reorder:
			want = append(want, src.Frames[i+1].Data, d)
			marks = append(marks, i+1, i)
			i++
			continue
		}
		want = append(want, d)
		marks = append(marks, i)
		if i == f.Source && (f.Kind == Duplicate || f.Kind == GhostACK) {
			want = append(want, nil) // the inserted frame, checked by the caller
			marks = append(marks, -1)
		}
	}
	require.Len(t, g.in, len(want), "input stream length")
	for i := range want {
		if want[i] == nil || g.in[i].Fault != nil && g.in[i].Fault.Kind != Reorder {
			continue
		}
		require.Equal(t, want[i], g.in[i].Data, "input frame %d (source %d) must be unchanged", i, marks[i])
	}
}

// A fault case: the fault on a chosen source frame, the reaction the
// faulted frame (or, for removals, the next one) must get, and the finding
// rocekit check must report at it.
type faultCase struct {
	name    string
	kind    Kind
	src     func(t *testing.T) *Source
	pick    func(t *testing.T, src *Source) int
	expect  Reaction
	finding conform.Kind // "" for none required
}

func mixPick(ops ...opcode.Opcode) func(t *testing.T, src *Source) int {
	// From frame 5 on: rocekit check does not judge the opcode sequence of
	// a capture's first packets (it may start inside a message).
	return func(t *testing.T, src *Source) int { return pick(t, src, 5, opIs(ops...)) }
}

func faultCases() []faultCase {
	mix := func(t *testing.T) *Source { return mixSource(t) }
	ib := func(t *testing.T) *Source { return mixSourceEncap(t, packet.IBLocal) }
	v6 := func(t *testing.T) *Source { return mixSourceEncap(t, packet.RoCEv2IPv6) }
	ud := func(t *testing.T) *Source { return udSource(t) }
	anyFrame := func(t *testing.T, src *Source) int { return 3 }
	return []faultCase{
		{"bad-icrc", BadICRC, mix, anyFrame, SilentDrop, conform.BadICRC},
		{"bad-icrc/ib", BadICRC, ib, anyFrame, SilentDrop, conform.BadICRC},
		{"bad-vcrc", BadVCRC, ib, anyFrame, SilentDrop, conform.BadVCRC},
		{"flip-covered", FlipCovered, mix, anyFrame, SilentDrop, conform.BadICRC},
		{"flip-covered/ib", FlipCovered, ib, anyFrame, SilentDrop, conform.BadICRC},
		{"flip-masked", FlipMasked, mix, mixPick(opcode.RCRDMAWriteOnly), Accept, ""},
		{"flip-masked/ipv6", FlipMasked, v6, mixPick(opcode.RCRDMAWriteOnly), Accept, ""},
		{"flip-masked/ib", FlipMasked, ib, mixPick(opcode.RCRDMAWriteOnly), Accept, ""},
		{"psn-gap", PSNGap, mix, mixPick(opcode.RCSendOnly), NAKSequence, ""},
		{"duplicate/send", Duplicate, mix, mixPick(opcode.RCSendOnly), DupReACK, ""},
		{"duplicate/read", Duplicate, mix, mixPick(opcode.RCRDMAReadRequest), DupReadReplay, ""},
		{"duplicate/atomic", Duplicate, mix, mixPick(opcode.RCFetchAdd, opcode.RCCompareSwap), DupAtomicReplay, ""},
		{"reorder", Reorder, mix, mixPick(opcode.RCRDMAWriteOnly), NAKSequence, ""},
		{"drop", Drop, mix, mixPick(opcode.RCRDMAWriteFirst), NAKSequence, ""},
		{"truncate", Truncate, mix, anyFrame, SilentDrop, conform.Malformed},
		{"wrong-padcnt/write-first", WrongPadCnt, mix, mixPick(opcode.RCRDMAWriteFirst), NAKInvalid, ""},
		{"wrong-padcnt/send-only", WrongPadCnt, mix, mixPick(opcode.RCSendOnly), Accept, ""},
		{"reserved-opcode", ReservedOpcode, mix, anyFrame, SilentDrop, conform.Malformed},
		{"tver", TVer, mix, anyFrame, SilentDrop, conform.TVer},
		{"wrong-pkey", WrongPKey, mix, anyFrame, SilentDrop, conform.PKeyMismatch},
		{"wrong-qkey", WrongQKey, ud, func(t *testing.T, src *Source) int { return pick(t, src, 0, opIs(opcode.UDSendOnly)) }, SilentDrop, ""},
		{"rkey-violation/write", RKeyViolation, mix, mixPick(opcode.RCRDMAWriteOnly), NAKAccess, ""},
		{"rkey-violation/atomic", RKeyViolation, mix, mixPick(opcode.RCFetchAdd, opcode.RCCompareSwap), NAKAccess, ""},
		{"dmalen-violation", DMALenViolation, mix, mixPick(opcode.RCRDMAReadRequest), NAKAccess, ""},
		{"middle-without-first/send", MiddleWithoutFirst, mix, mixPick(opcode.RCSendFirst), NAKInvalid, conform.OpcodeSequence},
		{"middle-without-first/write", MiddleWithoutFirst, mix, mixPick(opcode.RCRDMAWriteFirst), NAKInvalid, conform.OpcodeSequence},
		{"ghost-ack", GhostACK, mix, anyFrame, SilentDrop, ""},
	}
}

// Every fault kind: the faulted frame carries exactly the fault; the
// reaction the manifest states is what the RC model does (checked by an
// independent replay, and against the outputs); and rocekit check
// (conform) on the faulted input plus the expected output reports the
// fault's finding at the faulted frame and nothing on a frame the DUT
// handles normally or on any output.
func TestEveryFaultKind(t *testing.T) {
	seen := map[Kind]bool{}
	for _, c := range faultCases() {
		seen[c.kind] = true
		t.Run(c.name, func(t *testing.T) {
			src := c.src(t)
			at := c.pick(t, src)
			g := collect(t, src, Options{Seed: 5, Faults: []FaultSpec{{Kind: c.kind, At: at}}})
			require.Len(t, g.res.Faults, 1)
			f := g.res.Faults[0]
			require.Equal(t, c.kind, f.Kind)
			require.Equal(t, at, f.Source)
			checkStream(t, src, g, f)
			checkExactChange(t, src, g, f)

			// The reaction at the frame the fault is about.
			idx := f.Frame
			switch c.kind {
			case PSNGap, Drop:
				idx = at // the frame after the removed one now has its index
			case Reorder:
				idx = f.Other // the later frame, now first
				assert.Equal(t, Accept, g.in[f.Frame].Reaction, "the earlier frame, arriving second, fills the gap")
			}
			assert.Equal(t, c.expect, g.in[idx].Reaction, "input %d: %s (%s)", idx, g.in[idx].Purpose(), g.in[idx].Reason)

			replayCheck(t, src, g)
			conformCheck(t, src, g, idx, c.finding)
		})
	}
	for _, k := range Kinds() {
		assert.True(t, seen[k], "no test case for %s", k)
	}
}

// checkExactChange checks the faulted frame against its source frame,
// kind by kind, from the bytes.
func checkExactChange(t *testing.T, src *Source, g *got, f *Fault) {
	t.Helper()
	if f.Kind.removes() {
		assert.Equal(t, -1, f.Frame)
		return
	}
	got := g.in[f.Frame].Data
	orig := src.Frames[f.Source].Data
	fo, _ := decodeT(src, orig)
	fg, gerr := decodeT(src, got)
	switch f.Kind {
	case Duplicate:
		assert.Equal(t, orig, got)
		assert.Equal(t, g.in[f.Other].Data, got)
		assert.Equal(t, f.Frame, f.Other+1, "the copy follows the original")
		return
	case Reorder:
		assert.Equal(t, orig, got)
		assert.Equal(t, src.Frames[f.Source+1].Data, g.in[f.Other].Data)
		assert.Equal(t, f.Frame, f.Other+1)
		return
	case GhostACK:
		require.NoError(t, gerr)
		p := &fg.Transport
		assert.Equal(t, opcode.RCAcknowledge, p.Opcode())
		assert.Equal(t, aeth.ACK, p.AETH.Syndrome().Kind())
		q := src.DUT.QPs[0]
		assert.Equal(t, q.QPN, p.BTH.DestQP())
		assert.Equal(t, q.SQPSN, p.BTH.PSN(), "a PSN the DUT never sent: its next one")
		assert.True(t, icrcOK(t, fg))
		return
	case Truncate:
		assert.Less(t, len(got), len(orig))
		assert.Equal(t, orig[:len(got)], got, "a truncated frame is a prefix of the original")
		l, ok := frameLayout(fo)
		require.True(t, ok)
		assert.GreaterOrEqual(t, len(got), l.bth+12, "the BTH survives")
		return
	case MiddleWithoutFirst:
		require.NoError(t, gerr)
		a, b := fo.Transport.Fields(), fg.Transport.Fields()
		op := a.BTH.Opcode
		want := opcode.RCSendMiddle
		if op == opcode.RCRDMAWriteFirst {
			want = opcode.RCRDMAWriteMiddle
			assert.NotNil(t, fo.Transport.RETH)
			assert.Nil(t, fg.Transport.RETH, "a Middle carries no RETH")
			assert.Equal(t, len(orig)-16, len(got))
		}
		assert.Equal(t, want, b.BTH.Opcode)
		a.BTH.Opcode, a.RETH = want, b.RETH
		assert.Equal(t, a, b, "only the opcode (and the RETH) changed")
		assert.True(t, icrcOK(t, fg))
		assert.Equal(t, fo.Eth, fg.Eth)
		assert.Equal(t, fo.IPv4.ComputeChecksum(), fo.IPv4.Checksum())
		assert.Equal(t, fg.IPv4.ComputeChecksum(), fg.IPv4.Checksum(), "IPv4 header checksum follows the length")
		assert.Equal(t, len(got)-14, int(fg.IPv4.TotalLength()))
		return
	}
	require.Equal(t, len(orig), len(got))
	if fg.Network() == nil {
		t.Fatalf("%s: faulted frame does not decode: %v", f.Kind, gerr)
	}
	ok := allowed(t, len(got), f, fg)
	nbits := 0
	for i := range got {
		if got[i] != orig[i] {
			assert.True(t, ok[i], "%s changed byte %d (%02x -> %02x) outside %s", f.Kind, i, orig[i], got[i], f.Field)
			if i >= f.Offset && i < f.Offset+f.Size {
				for x := got[i] ^ orig[i]; x != 0; x &= x - 1 {
					nbits++
				}
			}
		}
	}
	pf, po := &fg.Transport, &fo.Transport
	switch f.Kind {
	case BadICRC:
		assert.False(t, icrcOK(t, fg))
		assert.NotEqual(t, icrc.Get(pf.ICRC), icrc.Get(po.ICRC))
		assert.Equal(t, "ICRC", f.Field)
	case BadVCRC:
		assert.True(t, icrcOK(t, fg))
		ok, _, _, _ := fg.CheckVCRC()
		assert.False(t, ok)
	case FlipCovered:
		assert.Equal(t, 1, nbits, "one bit flipped")
		assert.Equal(t, 1, bitDiff(orig, got, ok, f), "one bit in all")
		assert.False(t, icrcOK(t, fg), "the ICRC no longer matches")
		assert.Equal(t, po.ICRC, pf.ICRC, "the ICRC is left as built")
	case FlipMasked:
		assert.Equal(t, 1, nbits, "one bit flipped")
		assert.True(t, icrcOK(t, fg), "a masked field leaves the ICRC valid")
		assert.Equal(t, po.ICRC, pf.ICRC)
		if fg.IPv4 != nil {
			assert.Equal(t, fg.IPv4.ComputeChecksum(), fg.IPv4.Checksum())
		}
		if fg.VCRC != nil {
			ok, _, _, _ := fg.CheckVCRC()
			assert.True(t, ok, "the VCRC is recomputed (it is per link)")
		}
	default:
		assert.True(t, icrcOK(t, fg), "the ICRC is recomputed")
		if fg.VCRC != nil {
			ok, _, _, _ := fg.CheckVCRC()
			assert.True(t, ok)
		}
	}
	switch f.Kind {
	case WrongPadCnt:
		assert.NotEqual(t, po.BTH.PadCnt(), pf.BTH.PadCnt())
		assert.Equal(t, uint64(pf.BTH.PadCnt()), f.New)
	case ReservedOpcode:
		assert.False(t, pf.BTH.Opcode().Valid())
		assert.Equal(t, opcode.RC, pf.BTH.Opcode().Transport())
	case TVer:
		assert.NotZero(t, pf.BTH.TVer())
	case WrongPKey:
		assert.False(t, rc.PKeyMatch(pf.BTH.PKey(), 0xFFFF))
		assert.Equal(t, po.BTH.PKey()&0x8000, pf.BTH.PKey()&0x8000)
	case WrongQKey:
		assert.NotEqual(t, po.DETH.QKey(), pf.DETH.QKey())
	case RKeyViolation:
		var k uint32
		if pf.RETH != nil {
			k = pf.RETH.RKey()
			assert.NotEqual(t, po.RETH.RKey(), k)
		} else {
			k = pf.AtomicETH.RKey()
			assert.NotEqual(t, po.AtomicETH.RKey(), k)
		}
		assert.Nil(t, src.DUT.mrFor(k), "no DUT region has the new R_Key")
	case DMALenViolation:
		mr := src.DUT.mrFor(pf.RETH.RKey())
		require.NotNil(t, mr)
		end := pf.RETH.VA() + uint64(pf.RETH.DMALen())
		assert.Greater(t, end, mr.Addr+uint64(mr.Length), "reaches past the region")
		assert.LessOrEqual(t, end, mr.Addr+uint64(mr.Length)+4096)
	}
}

// bitDiff counts the differing bits of a and b, outside the CRC bytes the
// fault may rewrite.
func bitDiff(a, b []byte, ok []bool, f *Fault) int {
	n := 0
	for i := range a {
		if i >= f.Offset && i < f.Offset+f.Size || !ok[i] {
			for x := a[i] ^ b[i]; x != 0; x &= x - 1 {
				n++
			}
		}
	}
	return n
}

// replayCheck replays the input stream into fresh rc.QPs configured from
// the DUT description, behind a receive path written here (decode, ICRC,
// VCRC, IPv4 header checksum), and checks that the outputs are the expected
// output stream byte for byte and that each input's reaction is what the
// QP did.
func replayCheck(t *testing.T, src *Source, g *got) {
	t.Helper()
	d := &src.DUT
	mem := rc.NewMemory()
	for _, m := range d.MRs {
		buf := make([]byte, m.Length)
		if m.Init == MemPattern {
			for i := range buf {
				buf[i] = byte(i + i>>8 + i>>16 + i>>24)
			}
		}
		require.NoError(t, mem.Register(&rc.MR{Addr: m.Addr, RKey: m.RKey, Access: m.Access, Buf: buf}))
	}
	type qpT struct {
		q     *rc.QP
		tmpl  packet.FrameFields
		next  uint64
		bufs  []byte
		count int
		size  int
	}
	var qps []*qpT
	for _, dq := range d.QPs {
		cfg := rc.DefaultConfig()
		cfg.QPN, cfg.DestQPN, cfg.RQPSN, cfg.SQPSN, cfg.MTU = dq.QPN, dq.DestQPN, dq.RQPSN, dq.SQPSN, dq.MTU
		cfg.PKey, cfg.MaxDestRdAtomic, cfg.MinRNRTimer, cfg.Access, cfg.Memory = dq.PKey, dq.IRD, dq.MinRNRTimer, dq.Access, mem
		q, err := rc.New(cfg)
		require.NoError(t, err)
		x := &qpT{q: q, count: dq.RecvWQEs, size: dq.RecvBytes, bufs: make([]byte, dq.RecvWQEs*dq.RecvBytes)}
		post := func() {
			s := int(x.next%uint64(x.count)) * x.size
			require.NoError(t, q.PostRecv(rc.RecvWR{ID: x.next, Buf: x.bufs[s : s+x.size]}))
			x.next++
		}
		for range x.count {
			post()
		}
		tm := packet.DefaultFrame(d.Encap)
		tm.Eth.Src, tm.Eth.Dst = d.Self.MAC, dq.Peer.MAC
		tm.IPv4.Src, tm.IPv4.Dst = d.Self.IPv4, dq.Peer.IPv4
		tm.IPv6.Src, tm.IPv6.Dst = d.Self.IPv6, dq.Peer.IPv6
		tm.GRH.SGID, tm.GRH.DGID = d.Self.IPv6, dq.Peer.IPv6
		tm.LRH.SLID, tm.LRH.DLID = d.Self.LID, dq.Peer.LID
		tm.UDP.SrcPort = packet.UDPSourcePort(0, dq.QPN, dq.DestQPN)
		x.tmpl = tm
		qps = append(qps, x)
	}
	var outs [][]byte
	for i := range g.in {
		in := &g.in[i]
		fr, err := decodeT(src, in.Data)
		drop := fr.Network() == nil || fr.Transport.BTH == nil ||
			err != nil && fr.Transport.BTH.TVer() == 0 && fr.Transport.BTH.Opcode().Valid()
		if !drop {
			drop = !icrcOK(t, fr)
		}
		if !drop && fr.VCRC != nil {
			ok, _, _, _ := fr.CheckVCRC()
			drop = !ok
		}
		if !drop && fr.IPv4 != nil {
			drop = fr.IPv4.ComputeChecksum() != fr.IPv4.Checksum()
		}
		qi := -1
		if !drop {
			qi = d.qpIndex(fr.Transport.BTH.DestQP())
			drop = qi < 0
		}
		if drop {
			assert.Equal(t, SilentDrop, in.Reaction, "input %d is dropped before any QP", i)
			assert.Zero(t, in.NumOut)
			continue
		}
		x := qps[qi]
		st0 := x.q.Stats()
		wasErr := x.q.State() == rc.StateError
		x.q.Receive(rc.Time(in.Time), &fr.Transport)
		var syns []aeth.Syndrome
		first := len(outs)
		for x.q.NextPacket(rc.Time(in.Time), &x.tmpl.Transport) {
			b := make([]byte, x.tmpl.Len())
			_, err := x.tmpl.Encode(b)
			require.NoError(t, err)
			outs = append(outs, b)
			if x.tmpl.Transport.BTH.Opcode == opcode.RCAcknowledge {
				syns = append(syns, x.tmpl.Transport.AETH.Syndrome)
			}
		}
		for _, c := range x.q.AppendCompletions(nil) {
			if c.Opcode.IsRecv() && c.Status == rc.Success && x.q.State() != rc.StateError {
				s := int(x.next%uint64(x.count)) * x.size
				require.NoError(t, x.q.PostRecv(rc.RecvWR{ID: x.next, Buf: x.bufs[s : s+x.size]}))
				x.next++
			}
		}
		st := x.q.Stats()
		assert.Equal(t, first, in.FirstOut, "input %d: first output", i)
		assert.Equal(t, len(outs)-first, in.NumOut, "input %d: number of outputs", i)
		// The reaction, from what the QP did.
		var want Reaction
		nak := func(code aeth.NAKCode) bool {
			for _, s := range syns {
				if s.Kind() == aeth.NAK && s.NAKCode() == code {
					return true
				}
			}
			return false
		}
		switch {
		case st.Dropped > st0.Dropped:
			want = SilentDrop
			if wasErr {
				assert.Contains(t, in.Reason, "Error state")
			}
		case st.Duplicates > st0.Duplicates:
			switch {
			case len(outs) == first:
				want = DupDrop
			case len(syns) > 0:
				want = DupReACK
			default:
				op := fr.Transport.Opcode()
				switch {
				case op == opcode.RCRDMAReadRequest:
					want = DupReadReplay
				case op == opcode.RCFetchAdd || op == opcode.RCCompareSwap:
					want = DupAtomicReplay
				default:
					want = DupResponseReplay
				}
			}
		case nak(aeth.PSNSequenceError):
			want = NAKSequence
		case st.OutOfSequence > st0.OutOfSequence:
			want = SilentDrop
		case nak(aeth.InvalidRequest):
			want = NAKInvalid
		case nak(aeth.RemoteAccessError):
			want = NAKAccess
		case nak(aeth.RemoteOperationalError):
			want = NAKOperational
		case len(syns) > 0 && syns[0].Kind() == aeth.RNRNAK:
			want = RNR
		default:
			want = Accept
		}
		assert.Equal(t, want, in.Reaction, "input %d (%s)", i, in.Purpose())
	}
	require.Len(t, g.out, len(outs))
	for i := range outs {
		assert.Equal(t, outs[i], g.out[i].Data, "output %d", i)
		assert.GreaterOrEqual(t, g.out[i].Time, g.in[g.out[i].Cause].Time)
		if i > 0 {
			assert.GreaterOrEqual(t, g.out[i].Time, g.out[i-1].Time)
		}
	}
}

// conformCheck runs rocekit check's checker on the faulted input and the
// expected output merged in time order. Findings must fall on input frames
// the manifest says the DUT does not simply accept (or that carry the
// fault) and never on an output frame; the fault's own finding, if it has
// one, must be reported at the faulted frame.
func conformCheck(t *testing.T, src *Source, g *got, idx int, want conform.Kind) {
	t.Helper()
	m := g.merged()
	path := tempPath(t, "merged.pcap")
	writeCapture(t, path, src, m)
	fs, _, err := conform.CheckFile(path, conform.Options{})
	require.NoError(t, err)
	found := false
	for _, f := range fs {
		x := &m[f.Frame-1]
		require.Equal(t, In, x.Stream, "finding on an output frame: %s", f)
		in := &g.in[x.Index]
		explained := in.Fault != nil || in.Reaction != Accept
		if !explained && (f.Kind == conform.PayloadSize || f.Kind == conform.PadCount) {
			// A WRITE whose RETH a fault changed: its later packets are
			// judged against the wrong length.
			for k := x.Index - 1; k >= 0 && !explained; k-- {
				explained = g.in[k].Fault != nil
			}
		}
		assert.True(t, explained, "finding on input %d (%s, expect %s, no fault): %s", x.Index, in.Purpose(), in.Reaction, f)
		if x.Index == idx && f.Kind == want {
			found = true
		}
	}
	if want != "" {
		assert.True(t, found, "rocekit check reports no %s at input %d: %v", want, idx, fs)
	}
}

// A clean run (no faults) of every source: the DUT accepts everything and
// rocekit check finds nothing in the two streams.
func TestCleanRunsConform(t *testing.T) {
	for _, c := range []struct {
		name string
		src  func(t *testing.T) *Source
	}{
		{"mix", func(t *testing.T) *Source { return mixSource(t) }},
		{"mix/ipv6", func(t *testing.T) *Source { return mixSourceEncap(t, packet.RoCEv2IPv6) }},
		{"mix/rocev1", func(t *testing.T) *Source { return mixSourceEncap(t, packet.RoCEv1) }},
		{"mix/ib", func(t *testing.T) *Source { return mixSourceEncap(t, packet.IBLocal) }},
		{"mix/ib-global", func(t *testing.T) *Source { return mixSourceEncap(t, packet.IBGlobal) }},
		{"default", func(t *testing.T) *Source {
			return cachedSource(t, "default", func() (*Source, error) { return FromScenario(DefaultScenario(), ScenarioOptions{Messages: 2}) })
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := c.src(t)
			g := collect(t, src, Options{})
			assert.Equal(t, len(src.Frames), g.res.Count(Accept), "every frame accepted")
			assert.Empty(t, g.res.Faults)
			replayCheck(t, src, g)
			path := tempPath(t, "clean.pcap")
			writeCapture(t, path, src, g.merged())
			fs, sum, err := conform.CheckFile(path, conform.Options{})
			require.NoError(t, err)
			assert.Empty(t, fs, "a clean run has no findings")
			assert.Equal(t, len(g.in)+len(g.out), sum.Frames)
		})
	}
}

// The simulator's requester frames are kept byte for byte, and for a
// WRITE/SEND-only scenario the expected output is exactly what the
// simulator's responder sent back (same builder, same addresses).
func TestScenarioSourceMatchesSimulator(t *testing.T) {
	src := cachedSource(t, "default", func() (*Source, error) { return FromScenario(DefaultScenario(), ScenarioOptions{Messages: 2}) })
	require.Len(t, src.Frames, 2*256, "two 1 MiB WRITEs at 4 KiB MTU")
	g := collect(t, src, Options{})
	require.Len(t, g.out, 8, "AckReq every 64 packets and on the Last (ib-facts.md §5.2): 4 ACKs per WRITE")
	for i, f := range g.out {
		fr, err := decodeT(src, f.Data)
		require.NoError(t, err)
		assert.Equal(t, opcode.RCAcknowledge, fr.Transport.Opcode())
		assert.Equal(t, uint32(63+64*i), fr.Transport.BTH.PSN())
		assert.Equal(t, uint32((i+1)/4), fr.Transport.AETH.MSN(), "MSN counts completed WRITEs")
		assert.Equal(t, [4]byte{10, 0, 0, 2}, [4]byte(fr.IPv4[12:16]), "from the DUT")
		assert.Equal(t, uint16(packet.UDPSourcePort(0, 0x11, 0x12)), binary.BigEndian.Uint16(fr.UDP[0:2]))
	}
	d := src.DUT
	assert.Equal(t, uint32(0x12), d.QPs[0].QPN)
	assert.Equal(t, []MR{{Addr: 0x10000000, RKey: 0x100, Length: 2 << 20, Access: rc.AccessAll}}, d.MRs)
}

// Faults asked for with a rate hit about that share of eligible frames;
// @N hits exactly frame N; a frame takes one fault at most.
func TestFaultPlacement(t *testing.T) {
	src := mixSource(t)
	g := collect(t, src, Options{Seed: 9, Faults: []FaultSpec{{Kind: Duplicate, Rate: 0.5, At: -1}, {Kind: BadICRC, Rate: 1, At: -1}}})
	dups, bad := 0, 0
	for _, f := range g.res.Faults {
		switch f.Kind {
		case Duplicate:
			dups++
		case BadICRC:
			bad++
		}
	}
	n := len(src.Frames)
	assert.InDelta(t, n/2, dups, float64(n)/5, "about half the frames duplicated")
	assert.Equal(t, n-dups, bad, "every frame not duplicated gets a bad ICRC: one fault per frame")
	assert.Len(t, g.in, n+dups)

	_, err := Generate(src, Options{Faults: []FaultSpec{{Kind: BadICRC, At: 2}, {Kind: TVer, At: 2}}}, SinkFunc(func(*Frame) error { return nil }))
	var ie *InputError
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "already taken")

	_, err = Generate(src, Options{Faults: []FaultSpec{{Kind: BadVCRC, At: -1}}}, SinkFunc(func(*Frame) error { return nil }))
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "--encap ib")

	_, err = Generate(src, Options{Faults: []FaultSpec{{Kind: WrongQKey, At: -1}}}, SinkFunc(func(*Frame) error { return nil }))
	require.ErrorAs(t, err, &ie)
	assert.Contains(t, err.Error(), "no eligible frame")

	_, err = Generate(src, Options{Faults: []FaultSpec{{Kind: MiddleWithoutFirst, At: 0}}}, SinkFunc(func(*Frame) error { return nil }))
	if fr, _ := decodeT(src, src.Frames[0].Data); fr.Transport.Opcode().Position() != opcode.First {
		require.ErrorAs(t, err, &ie)
		assert.Contains(t, err.Error(), "not eligible")
	}
}

func TestParseFault(t *testing.T) {
	for _, c := range []struct {
		in   string
		want FaultSpec
		err  string
	}{
		{"bad-icrc", FaultSpec{Kind: BadICRC, At: -1}, ""},
		{"drop:0.25", FaultSpec{Kind: Drop, Rate: 0.25, At: -1}, ""},
		{"tver:@7", FaultSpec{Kind: TVer, At: 7}, ""},
		{"tver@7", FaultSpec{Kind: TVer, At: 7}, ""},
		{"TVER:1", FaultSpec{Kind: TVer, Rate: 1, At: -1}, ""},
		{"nope", FaultSpec{}, "unknown fault"},
		{"drop:0", FaultSpec{}, "probability"},
		{"drop:1.5", FaultSpec{}, "probability"},
		{"drop:@-1", FaultSpec{}, "frame number"},
	} {
		got, err := ParseFault(c.in)
		if c.err != "" {
			assert.ErrorContains(t, err, c.err, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		assert.Equal(t, c.want, got, c.in)
		again, err := ParseFault(got.String())
		require.NoError(t, err)
		assert.Equal(t, got, again, "String round trip")
	}
	for _, k := range Kinds() {
		p, err := ParseKind(k.String())
		require.NoError(t, err)
		assert.Equal(t, k, p)
		assert.NotEmpty(t, k.Description())
	}
}

func ExampleKinds() {
	for _, k := range Kinds()[:3] {
		fmt.Println(k)
	}
	// Output:
	// bad-icrc
	// bad-vcrc
	// flip-covered
}

var _ = bytes.Equal
