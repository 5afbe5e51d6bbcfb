package gen

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/reth"
)

// Kind is a fault kind.
type Kind uint8

// Fault kinds. Each changes exactly what its description says; every
// checksum the fault is not about (ICRC, VCRC) is recomputed, so that the
// fault is the only thing wrong with the frame.
const (
	BadICRC Kind = iota + 1
	BadVCRC
	FlipCovered
	FlipMasked
	PSNGap
	Duplicate
	Reorder
	Drop
	Truncate
	WrongPadCnt
	ReservedOpcode
	TVer
	WrongPKey
	WrongQKey
	RKeyViolation
	DMALenViolation
	MiddleWithoutFirst
	GhostACK
	numKinds
)

var kindText = [numKinds]struct{ name, desc string }{
	BadICRC:            {"bad-icrc", "XOR a random non-zero value into the ICRC (ib-facts.md §3); the receiver must drop the frame silently"},
	BadVCRC:            {"bad-vcrc", "XOR a random non-zero value into the VCRC of a native IB frame (§3.3; needs --encap ib or ib-global)"},
	FlipCovered:        {"flip-covered", "flip one bit of an ICRC-covered BTH/ETH field or payload byte, ICRC left as built, so it no longer matches"},
	FlipMasked:         {"flip-masked", "flip one bit of an ICRC-masked field (IPv4 DSCP/ECN/TTL, IPv6/GRH class/flow/hop limit, LRH VL, BTH FECN/BECN/resv6); the IPv4 header checksum follows; the ICRC still matches"},
	PSNGap:             {"psn-gap", "remove one request frame that a later frame of the same QP follows, so the DUT sees a PSN gap"},
	Duplicate:          {"duplicate", "send the frame twice, the copy right after the original"},
	Reorder:            {"reorder", "swap the frame with the next one"},
	Drop:               {"drop", "remove the frame (any frame, the last included)"},
	Truncate:           {"truncate", "cut the frame short inside its transport packet, length fields not adjusted"},
	WrongPadCnt:        {"wrong-padcnt", "change BTH.PadCnt of a frame with payload, so the payload length the DUT sees changes"},
	ReservedOpcode:     {"reserved-opcode", "replace the BTH opcode with a reserved RC opcode (0x15, 0x18-0x1B, 0x1E, 0x1F)"},
	TVer:               {"tver", "set BTH.TVer to a non-zero value (§5.11: must be 0)"},
	WrongPKey:          {"wrong-pkey", "replace BTH.P_Key with one that does not match the QP's (§5.11)"},
	WrongQKey:          {"wrong-qkey", "replace DETH.Q_Key (UD/RD frames only; an RC stream has none)"},
	RKeyViolation:      {"rkey-violation", "replace the R_Key of a RETH (non-zero length) or AtomicETH with one no DUT memory region has"},
	DMALenViolation:    {"dmalen-violation", "make RETH.DMA_Length reach 1 to 4096 bytes beyond the end of the memory region its R_Key names"},
	MiddleWithoutFirst: {"middle-without-first", "turn a SEND/WRITE First packet into a Middle packet (a WRITE's RETH removed, lengths updated)"},
	GhostACK:           {"ghost-ack", "insert after the frame an ACK (syndrome 0x1F) to the DUT's QP for a PSN the DUT never sent (its sq_psn)"},
}

func (k Kind) String() string {
	if k > 0 && k < numKinds {
		return kindText[k].name
	}
	return "fault-" + strconv.Itoa(int(k))
}

// Description is one line saying what the fault does.
func (k Kind) Description() string {
	if k > 0 && k < numKinds {
		return kindText[k].desc
	}
	return ""
}

// Kinds returns every fault kind in order.
func Kinds() []Kind {
	ks := make([]Kind, 0, numKinds-1)
	for k := Kind(1); k < numKinds; k++ {
		ks = append(ks, k)
	}
	return ks
}

// ParseKind parses a fault kind name.
func ParseKind(s string) (Kind, error) {
	for k := Kind(1); k < numKinds; k++ {
		if strings.EqualFold(s, kindText[k].name) {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown fault %q (rocekit gen --list-faults lists them)", s)
}

// removes reports whether the fault takes the frame out of the stream.
func (k Kind) removes() bool { return k == PSNGap || k == Drop }

// FaultSpec asks for faults of one kind: on each eligible frame with
// probability Rate, on exactly source frame At, or, with neither, on
// exactly one eligible frame chosen by the seed.
type FaultSpec struct {
	Kind Kind
	Rate float64 // probability per eligible frame, in (0, 1]
	At   int     // source frame index (0-based), or -1
}

// ParseFault parses KIND, KIND:RATE (a probability per eligible frame) or
// KIND:@N (exactly source frame N, counted from 0; KIND@N is accepted too).
func ParseFault(s string) (FaultSpec, error) {
	f := FaultSpec{At: -1}
	name, arg, hasArg := strings.Cut(s, ":")
	if !hasArg {
		if n, at, ok := strings.Cut(s, "@"); ok {
			name, arg, hasArg = n, "@"+at, true
		}
	}
	k, err := ParseKind(name)
	if err != nil {
		return f, err
	}
	f.Kind = k
	if !hasArg {
		return f, nil
	}
	if n, ok := strings.CutPrefix(arg, "@"); ok {
		v, err := strconv.Atoi(n)
		if err != nil || v < 0 {
			return f, fmt.Errorf("fault %q: @%s: want a frame number >= 0", s, n)
		}
		f.At = v
		return f, nil
	}
	r, err := strconv.ParseFloat(arg, 64)
	if err != nil || !(r > 0 && r <= 1) {
		return f, fmt.Errorf("fault %q: rate %q: want a probability in (0, 1] or @N", s, arg)
	}
	f.Rate = r
	return f, nil
}

func (f FaultSpec) String() string {
	switch {
	case f.At >= 0:
		return fmt.Sprintf("%s:@%d", f.Kind, f.At)
	case f.Rate > 0:
		return fmt.Sprintf("%s:%s", f.Kind, strconv.FormatFloat(f.Rate, 'g', -1, 64))
	}
	return f.Kind.String()
}

// ICRCState says what a fault left in the frame's ICRC.
type ICRCState uint8

// ICRC states.
const (
	ICRCNone       ICRCState = iota // no frame (removed) or unchanged frame
	ICRCRecomputed                  // recomputed over the changed frame: it matches
	ICRCKept                        // left as built before the change: it no longer matches
	ICRCCorrupted                   // the fault is the ICRC itself
	ICRCMasked                      // unchanged and still matching: only masked fields changed
)

func (s ICRCState) String() string {
	return [...]string{"unchanged", "recomputed", "kept", "corrupted", "still valid"}[s]
}

// Fault is one injected fault.
type Fault struct {
	Kind Kind
	// Source is the source frame the fault hit (for ghost-ack, the one the
	// ACK follows; for reorder, the earlier of the two).
	Source int
	// Frame is the faulted frame's index in the input stream; -1 when the
	// fault removed it. Other is the input index of the frame it was
	// swapped with (reorder) or copied from (duplicate), else -1.
	Frame, Other int
	// Field names what changed ("BTH.PSN", "ICRC", "RETH.R_Key"); Offset
	// and Size are its bytes in the faulted frame (Size 0: no field).
	Field        string
	Offset, Size int
	// Bit is the flipped bit of flip faults, counted over the frame from
	// the most significant bit of byte 0 (byte Bit/8, mask 0x80>>(Bit%8)),
	// or -1.
	Bit int
	// Old and New are the field's value before and after (for truncate,
	// the frame lengths; for flips, the field's bits read as a number).
	Old, New uint64
	ICRC     ICRCState
	// VCRC is true when a native IB frame's VCRC was recomputed.
	VCRC bool
	// IPChecksum is true when the IPv4 header checksum was recomputed
	// (flip-masked on the TOS or TTL).
	IPChecksum bool
	Detail     string
}

// field is a run of bits in a frame: masks[i] selects the bits of byte
// off+i that belong to it.
type field struct {
	name  string
	off   int
	masks []byte
}

var full4 = []byte{0xFF, 0xFF, 0xFF, 0xFF}
var full8 = []byte{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}

func bytesField(name string, off, n int) field {
	m := make([]byte, n)
	for i := range m {
		m[i] = 0xFF
	}
	return field{name, off, m}
}

// value reads the field's bits as a number (most significant first).
func (f field) value(b []byte) uint64 {
	var v uint64
	for i, m := range f.masks {
		for bit := 7; bit >= 0; bit-- {
			if m&(1<<bit) != 0 {
				v = v<<1 | uint64(b[f.off+i]>>bit&1)
			}
		}
	}
	return v
}

// set writes v into the field's bits.
func (f field) set(b []byte, v uint64) {
	n := f.width()
	for i, m := range f.masks {
		for bit := 7; bit >= 0; bit-- {
			if m&(1<<bit) != 0 {
				n--
				if v>>n&1 != 0 {
					b[f.off+i] |= 1 << bit
				} else {
					b[f.off+i] &^= 1 << bit
				}
			}
		}
	}
}

func (f field) width() int {
	n := 0
	for _, m := range f.masks {
		for ; m != 0; m &= m - 1 {
			n++
		}
	}
	return n
}

func (f field) size() int { return len(f.masks) }

// bit returns the frame bit index of the k-th bit (from the most
// significant) of the field.
func (f field) bit(k int) int {
	for i, m := range f.masks {
		for bit := 7; bit >= 0; bit-- {
			if m&(1<<bit) != 0 {
				if k == 0 {
					return (f.off+i)*8 + (7 - bit)
				}
				k--
			}
		}
	}
	return -1
}

// ethFields are the named fields of each extension header, offsets from
// the header's start.
var ethFields = map[opcode.Header][]struct {
	name      string
	off, size int
}{
	opcode.RETH:      {{"RETH.VA", 0, 8}, {"RETH.R_Key", 8, 4}, {"RETH.DMA_Length", 12, 4}},
	opcode.AtomicETH: {{"AtomicETH.VA", 0, 8}, {"AtomicETH.R_Key", 8, 4}, {"AtomicETH.SwapAdd", 12, 8}, {"AtomicETH.Compare", 20, 8}},
	opcode.DETH:      {{"DETH.Q_Key", 0, 4}, {"DETH.SrcQP", 5, 3}},
	opcode.RDETH:     {{"RDETH.EE_Context", 1, 3}},
	opcode.XRCETH:    {{"XRCETH.XRCSRQ", 1, 3}},
	opcode.AETH:      {{"AETH.Syndrome", 0, 1}, {"AETH.MSN", 1, 3}},
	opcode.AtomicAckETH: {
		{"AtomicAckETH.OrigRemDt", 0, 8}},
	opcode.ImmDt:   {{"ImmDt", 0, 4}},
	opcode.IETH:    {{"IETH.R_Key", 0, 4}},
	opcode.FETH:    {{"FETH", 0, 4}},
	opcode.CNPBody: {{"CNP.Reserved", 0, 16}},
}

// ethField returns the named field of header h of the frame, if it has h.
func ethField(fr *packet.Frame, l layout, h opcode.Header, name string) (field, bool) {
	op := fr.Transport.BTH.Opcode()
	o := op.Info().Offset(h)
	if o < 0 {
		return field{}, false
	}
	for _, f := range ethFields[h] {
		if f.name == name {
			return bytesField(f.name, l.bth+bth.Len+o+f.off, f.size), true
		}
	}
	return field{}, false
}

// bthFields returns the BTH fields a fault may change.
func bthField(l layout, name string) field {
	b := l.bth
	switch name {
	case "BTH.OpCode":
		return field{name, b, []byte{0xFF}}
	case "BTH.SE":
		return field{name, b + 1, []byte{0x80}}
	case "BTH.M":
		return field{name, b + 1, []byte{0x40}}
	case "BTH.PadCnt":
		return field{name, b + 1, []byte{0x30}}
	case "BTH.TVer":
		return field{name, b + 1, []byte{0x0F}}
	case "BTH.P_Key":
		return field{name, b + 2, []byte{0xFF, 0xFF}}
	case "BTH.FECN":
		return field{name, b + 4, []byte{0x80}}
	case "BTH.BECN":
		return field{name, b + 4, []byte{0x40}}
	case "BTH.Resv6":
		return field{name, b + 4, []byte{0x3F}}
	case "BTH.DestQP":
		return field{name, b + 5, []byte{0xFF, 0xFF, 0xFF}}
	case "BTH.AckReq":
		return field{name, b + 8, []byte{0x80}}
	case "BTH.Resv7":
		return field{name, b + 8, []byte{0x7F}}
	case "BTH.PSN":
		return field{name, b + 9, []byte{0xFF, 0xFF, 0xFF}}
	}
	panic("gen: no BTH field " + name)
}

// coveredFields are the fields flip-covered chooses from: BTH fields that
// leave the frame decodable, every named ETH field, and each payload byte
// (as one field "payload" whose byte is drawn).
func coveredFields(fr *packet.Frame, l layout) []field {
	fs := []field{bthField(l, "BTH.SE"), bthField(l, "BTH.M"), bthField(l, "BTH.P_Key"), bthField(l, "BTH.DestQP"),
		bthField(l, "BTH.AckReq"), bthField(l, "BTH.Resv7"), bthField(l, "BTH.PSN")}
	op := fr.Transport.BTH.Opcode()
	for _, h := range op.Headers() {
		for _, f := range ethFields[h] {
			g, _ := ethField(fr, l, h, f.name)
			fs = append(fs, g)
		}
	}
	return fs
}

// maskedFields are the ICRC-masked fields of the frame's encapsulation
// (ib-facts.md §3.1) flip-masked chooses from. TTL and hop limits only
// offer the bits whose flip leaves them non-zero.
func maskedFields(fr *packet.Frame, data []byte, l layout) []field {
	nz := func(v byte) byte { // bits whose flip keeps v non-zero
		var m byte
		for bit := 0; bit < 8; bit++ {
			if v^(1<<bit) != 0 {
				m |= 1 << bit
			}
		}
		return m
	}
	var fs []field
	grhAt := func(o int) {
		fs = append(fs, field{"GRH.TClass", o, []byte{0x0F, 0xF0}}, field{"GRH.FlowLabel", o + 1, []byte{0x0F, 0xFF, 0xFF}},
			field{"GRH.HopLmt", o + 7, []byte{nz(data[o+7])}})
	}
	switch fr.Encap {
	case packet.RoCEv2IPv4:
		fs = append(fs, field{"IPv4.DSCP", l.l3 + 1, []byte{0xFC}}, field{"IPv4.ECN", l.l3 + 1, []byte{0x03}},
			field{"IPv4.TTL", l.l3 + 8, []byte{nz(data[l.l3+8])}})
	case packet.RoCEv2IPv6:
		fs = append(fs, field{"IPv6.TrafficClass", l.l3, []byte{0x0F, 0xF0}}, field{"IPv6.FlowLabel", l.l3 + 1, []byte{0x0F, 0xFF, 0xFF}},
			field{"IPv6.HopLimit", l.l3 + 7, []byte{nz(data[l.l3+7])}})
	case packet.RoCEv1:
		grhAt(l.l3)
	case packet.IBLocal:
		fs = append(fs, field{"LRH.VL", 0, []byte{0xF0}})
	case packet.IBGlobal:
		fs = append(fs, field{"LRH.VL", 0, []byte{0xF0}})
		grhAt(8)
	}
	return append(fs, bthField(l, "BTH.FECN"), bthField(l, "BTH.BECN"), bthField(l, "BTH.Resv6"))
}

// reservedRC are the RC opcodes no packet may carry (ib-facts.md §2.2).
var reservedRC = []opcode.Opcode{0x15, 0x18, 0x19, 0x1A, 0x1B, 0x1E, 0x1F}

// eligible reports whether a fault of kind k can hit source frame i.
// next is the source frame after i (nil for the last), hasLater whether a
// later frame goes to the same DUT QP.
func eligible(k Kind, fr *packet.Frame, data []byte, in *info, dut *DUT, hasLater bool) bool {
	l, ok := frameLayout(fr)
	if !ok {
		return false
	}
	t := &fr.Transport
	op := t.BTH.Opcode()
	switch k {
	case BadVCRC:
		return l.vcrc >= 0
	case PSNGap:
		return in.qp >= 0 && op.IsRequest() && hasLater
	case WrongPadCnt:
		return op.Valid() && op.HasPayload() && t.Payload != nil && len(t.Payload)+len(t.Pad) >= 1
	case WrongQKey:
		return t.DETH != nil
	case RKeyViolation:
		return t.RETH != nil && t.RETH.DMALen() > 0 || t.AtomicETH != nil
	case DMALenViolation:
		if t.RETH == nil || t.RETH.DMALen() == 0 {
			return false
		}
		mr := dut.mrFor(t.RETH.RKey())
		va := t.RETH.VA()
		return mr != nil && va >= mr.Addr && va-mr.Addr <= uint64(mr.Length) &&
			uint64(mr.Length)-(va-mr.Addr)+1 <= 1<<31-4096
	case MiddleWithoutFirst:
		return op.Valid() && op.Position() == opcode.First &&
			(op.Operation() == opcode.SendFirst || op.Operation() == opcode.RDMAWriteFirst)
	case GhostACK:
		return in.qp >= 0
	case Truncate:
		return len(data) > l.bth+bth.Len+1
	}
	return true
}

// faulter applies faults to copies of frames.
type faulter struct {
	dut  *DUT
	calc icrc.Calc
	fr   packet.Frame
}

// apply changes data (a private copy of a source frame) as fault kind k
// says and returns the new frame and the fault's record (Source, Frame and
// Other are left for the caller). fr must be data decoded.
func (fa *faulter) apply(k Kind, data []byte, fr *packet.Frame, rng *rand.Rand) ([]byte, Fault, error) {
	e := faultEdit{fa: fa, data: data, fr: fr, rng: rng, f: Fault{Kind: k, Bit: -1, Frame: -1, Other: -1}}
	var ok bool
	if e.l, ok = frameLayout(fr); !ok {
		return nil, e.f, fmt.Errorf("%s: frame carries no IB transport packet", k)
	}
	var err error
	switch k {
	case BadICRC:
		e.badICRC()
	case BadVCRC:
		err = e.badVCRC()
	case FlipCovered:
		e.flipCovered()
	case FlipMasked:
		e.flipMasked()
	case Truncate:
		e.truncate()
		return e.data, e.f, nil
	case WrongPadCnt, ReservedOpcode, TVer, WrongPKey:
		e.bthValue(k)
	case WrongQKey, RKeyViolation, DMALenViolation:
		e.keyOrLength(k)
	case MiddleWithoutFirst:
		err = e.middleWithoutFirst()
	case GhostACK:
		return nil, e.f, fmt.Errorf("ghost-ack is built, not applied")
	default:
		return nil, e.f, fmt.Errorf("%s does not change a frame's bytes", k)
	}
	if err != nil {
		return nil, e.f, err
	}
	if e.f.ICRC == ICRCNone {
		if err := e.recompute(); err != nil {
			return nil, e.f, err
		}
	}
	return e.data, e.f, nil
}

// faultEdit is one fault being applied: the frame's bytes, decoded (fr)
// and laid out (l), and the record being filled in.
type faultEdit struct {
	fa   *faulter
	data []byte
	fr   *packet.Frame
	l    layout
	rng  *rand.Rand
	f    Fault
}

// setField sets field g to v and records the change.
func (e *faultEdit) setField(g field, v uint64) {
	e.f.Field, e.f.Offset, e.f.Size = g.name, g.off, g.size()
	e.f.Old = g.value(e.data)
	g.set(e.data, v)
	e.f.New = v
}

// flip flips bit k of field g and records the change.
func (e *faultEdit) flip(g field, k int) {
	e.f.Field, e.f.Offset, e.f.Size = g.name, g.off, g.size()
	e.f.Old = g.value(e.data)
	e.f.Bit = g.bit(k)
	e.data[e.f.Bit/8] ^= 0x80 >> (e.f.Bit % 8)
	e.f.New = g.value(e.data)
}

// recompute writes the ICRC (and VCRC) the changed frame calls for.
func (e *faultEdit) recompute() error {
	fa := e.fa
	if err := decode(&fa.fr, e.fr.Encap, e.data); fa.fr.Network() == nil {
		return fmt.Errorf("%s: changed frame no longer decodes: %v", e.f.Kind, err)
	}
	e.f.ICRC = ICRCRecomputed
	e.f.VCRC = e.l.vcrc >= 0
	return putCRCs(&fa.calc, &fa.fr, e.data, true)
}

// vcrcOnly recomputes the VCRC, if the frame has one, and no ICRC.
func (e *faultEdit) vcrcOnly() {
	if l := e.l; l.vcrc >= 0 {
		icrc.PutVCRC(e.data[l.vcrc:], icrc.VCRC(e.data[l.l3:l.vcrc]))
		e.f.VCRC = true
	}
}

// badICRC XORs the ICRC with a random non-zero value.
func (e *faultEdit) badICRC() {
	l, data, f := e.l, e.data, &e.f
	x := e.rng.Uint32() | 1<<uint(e.rng.IntN(32))
	old := icrc.Get(data[l.icrc:])
	icrc.Put(data[l.icrc:], old^x)
	f.Field, f.Offset, f.Size, f.Old, f.New = "ICRC", l.icrc, icrc.Len, uint64(old), uint64(old^x)
	f.ICRC = ICRCCorrupted
	e.vcrcOnly()
	f.Detail = fmt.Sprintf("ICRC 0x%08x -> 0x%08x (XOR 0x%08x)", old, old^x, x)
}

// badVCRC XORs the VCRC of a native IB frame with a random non-zero value.
func (e *faultEdit) badVCRC() error {
	l, data, f := e.l, e.data, &e.f
	if l.vcrc < 0 {
		return fmt.Errorf("bad-vcrc: RoCE frames carry no VCRC (ib-facts.md §1.1); generate native IB frames with --encap ib")
	}
	x := uint16(e.rng.Uint32()) | 1<<uint(e.rng.IntN(16))
	old := icrc.GetVCRC(data[l.vcrc:])
	icrc.PutVCRC(data[l.vcrc:], old^x)
	f.Field, f.Offset, f.Size, f.Old, f.New = "VCRC", l.vcrc, icrc.VCRCLen, uint64(old), uint64(old^x)
	f.ICRC = ICRCMasked
	f.Detail = fmt.Sprintf("VCRC 0x%04x -> 0x%04x (XOR 0x%04x)", old, old^x, x)
	return nil
}

// flipCovered flips one bit of a field or payload byte the ICRC covers and
// leaves the ICRC as built.
func (e *faultEdit) flipCovered() {
	l, t, rng := e.l, &e.fr.Transport, e.rng
	fs := coveredFields(e.fr, l)
	if n := len(t.Payload); n > 0 {
		o := l.icrc - len(t.Pad) - n + rng.IntN(n)
		fs = append(fs, field{fmt.Sprintf("payload[%d]", o-(l.icrc-len(t.Pad)-n)), o, []byte{0xFF}})
	}
	g := fs[rng.IntN(len(fs))]
	e.flip(g, rng.IntN(g.width()))
	e.f.ICRC = ICRCKept
	e.vcrcOnly()
	e.f.Detail = fmt.Sprintf("%s bit flipped: 0x%x -> 0x%x; ICRC left as built", g.name, e.f.Old, e.f.New)
}

// flipMasked flips one bit of a field masked from the ICRC, which still
// matches; an IPv4 header checksum is updated.
func (e *faultEdit) flipMasked() {
	l, data, f, rng := e.l, e.data, &e.f, e.rng
	fs := maskedFields(e.fr, data, l)
	var g field
	for {
		g = fs[rng.IntN(len(fs))]
		if g.width() > 0 {
			break
		}
	}
	e.flip(g, rng.IntN(g.width()))
	f.ICRC = ICRCMasked
	if e.fr.Encap == packet.RoCEv2IPv4 && strings.HasPrefix(g.name, "IPv4.") {
		ip := packet.IPv4(data[l.l3:])
		ip.SetChecksum(ip.ComputeChecksum())
		f.IPChecksum = true
	}
	e.vcrcOnly()
	f.Detail = fmt.Sprintf("%s bit flipped: 0x%x -> 0x%x (masked from the ICRC, which still matches)", g.name, f.Old, f.New)
	if f.IPChecksum {
		f.Detail += "; IPv4 header checksum updated"
	}
}

// truncate cuts the frame inside its transport packet, after the BTH.
func (e *faultEdit) truncate() {
	n := len(e.data)
	lo := e.l.bth + bth.Len
	m := lo + e.rng.IntN(n-lo)
	e.f.Old, e.f.New = uint64(n), uint64(m)
	e.f.Detail = fmt.Sprintf("cut from %d to %d bytes inside the transport packet; length fields and CRCs not adjusted", n, m)
	e.data = e.data[:m:m]
}

// bthValue gives a BTH field a value a receiver must refuse: another pad
// count (WrongPadCnt), a reserved RC opcode (ReservedOpcode), a non-zero
// TVer (TVer) or a P_Key the QP's does not match (WrongPKey).
func (e *faultEdit) bthValue(k Kind) {
	l, t, f, rng := e.l, &e.fr.Transport, &e.f, e.rng
	switch k {
	case WrongPadCnt:
		body := len(t.Payload) + len(t.Pad)
		old := int(t.BTH.PadCnt())
		var choices []uint64
		for v := 0; v <= 3 && v <= body; v++ {
			if v != old {
				choices = append(choices, uint64(v))
			}
		}
		e.setField(bthField(l, "BTH.PadCnt"), choices[rng.IntN(len(choices))])
		f.Detail = fmt.Sprintf("PadCnt %d -> %d: the DUT sees %d payload bytes instead of %d", f.Old, f.New, body-int(f.New), body-old)
	case ReservedOpcode:
		e.setField(bthField(l, "BTH.OpCode"), uint64(reservedRC[rng.IntN(len(reservedRC))]))
		f.Detail = fmt.Sprintf("opcode 0x%02x (%s) -> reserved 0x%02x", f.Old, opcode.Opcode(f.Old), f.New)
	case TVer:
		e.setField(bthField(l, "BTH.TVer"), uint64(1+rng.IntN(15)))
		f.Detail = fmt.Sprintf("TVer %d -> %d", f.Old, f.New)
	case WrongPKey:
		dut := e.fa.dut
		old := t.BTH.PKey()
		var qp uint16 = 0xFFFF
		if q := dut.qpIndex(t.BTH.DestQP()); q >= 0 {
			qp = dut.QPs[q].pkey()
		}
		var v uint16
		for {
			v = old&0x8000 | uint16(1+rng.IntN(0x7FFF))
			if !rc.PKeyMatch(v, qp) {
				break
			}
		}
		e.setField(bthField(l, "BTH.P_Key"), uint64(v))
		f.Detail = fmt.Sprintf("P_Key 0x%04x -> 0x%04x (the QP's is 0x%04x)", old, v, qp)
	}
}

// keyOrLength changes a key or length of an extended transport header: the
// DETH's Q_Key (WrongQKey), an R_Key no memory region has (RKeyViolation),
// or a RETH DMA length past the end of its region (DMALenViolation).
func (e *faultEdit) keyOrLength(k Kind) {
	l, t, f, rng, fr, dut := e.l, &e.fr.Transport, &e.f, e.rng, e.fr, e.fa.dut
	switch k {
	case WrongQKey:
		g, _ := ethField(fr, l, opcode.DETH, "DETH.Q_Key")
		old := g.value(e.data)
		e.setField(g, old^uint64(rng.Uint32()|1<<uint(rng.IntN(32))))
		f.Detail = fmt.Sprintf("Q_Key 0x%08x -> 0x%08x", f.Old, f.New)
	case RKeyViolation:
		g, ok := ethField(fr, l, opcode.RETH, "RETH.R_Key")
		if !ok || t.RETH.DMALen() == 0 {
			g, _ = ethField(fr, l, opcode.AtomicETH, "AtomicETH.R_Key")
		}
		old := uint32(g.value(e.data))
		var v uint32
		for {
			v = rng.Uint32()
			if v != old && dut.mrFor(v) == nil {
				break
			}
		}
		e.setField(g, uint64(v))
		f.Detail = fmt.Sprintf("%s 0x%x -> 0x%x, which no DUT memory region has", g.name, old, v)
	case DMALenViolation:
		r := t.RETH
		mr := dut.mrFor(r.RKey())
		room := uint64(mr.Length) - (r.VA() - mr.Addr)
		g, _ := ethField(fr, l, opcode.RETH, "RETH.DMA_Length")
		e.setField(g, room+uint64(1+rng.IntN(4096)))
		f.Detail = fmt.Sprintf("DMA length %d -> %d: the region 0x%x ends %d bytes after VA 0x%x", f.Old, f.New, mr.RKey, room, r.VA())
	}
}

// middleWithoutFirst turns a SEND or RDMA WRITE First packet into a Middle
// one, dropping its RETH (and fixing the length fields) if it has one.
func (e *faultEdit) middleWithoutFirst() error {
	l, t, f := e.l, &e.fr.Transport, &e.f
	op := t.BTH.Opcode()
	mid := opcode.Opcode(uint8(op.Transport()) | uint8(opcode.SendMiddle))
	if op.Operation() == opcode.RDMAWriteFirst {
		mid = opcode.Opcode(uint8(op.Transport()) | uint8(opcode.RDMAWriteMiddle))
	}
	e.setField(bthField(l, "BTH.OpCode"), uint64(mid))
	f.Detail = fmt.Sprintf("%s -> %s", op, mid)
	if o := op.Info().Offset(opcode.RETH); o >= 0 {
		at := l.bth + bth.Len + o
		e.data = append(e.data[:at], e.data[at+reth.Len:]...)
		if err := adjustLengths(e.fr, e.data, l, -reth.Len); err != nil {
			return err
		}
		f.Detail += "; RETH removed, length fields updated"
	}
	return nil
}

// adjustLengths adds delta to every length field of a frame after its
// transport packet grew or shrank (IPv4 total length and header checksum,
// IPv6 payload length, UDP length, GRH PayLen, LRH PktLen).
func adjustLengths(fr *packet.Frame, data []byte, l layout, delta int) error {
	add16 := func(off int) {
		binary.BigEndian.PutUint16(data[off:], uint16(int(binary.BigEndian.Uint16(data[off:]))+delta))
	}
	switch fr.Encap {
	case packet.RoCEv2IPv4:
		add16(l.l3 + 2)
		ip := packet.IPv4(data[l.l3:])
		ip.SetChecksum(ip.ComputeChecksum())
		add16(l.bth - packet.UDPLen + 4)
	case packet.RoCEv2IPv6:
		add16(l.l3 + 4)
		add16(l.bth - packet.UDPLen + 4)
	case packet.RoCEv1:
		add16(l.l3 + 4)
	case packet.IBLocal, packet.IBGlobal:
		if delta%4 != 0 {
			return fmt.Errorf("native IB packet length must change by whole words")
		}
		w := int(binary.BigEndian.Uint16(data[4:])&0x7FF) + delta/4
		binary.BigEndian.PutUint16(data[4:], binary.BigEndian.Uint16(data[4:])&^0x7FF|uint16(w)&0x7FF)
		if fr.Encap == packet.IBGlobal {
			add16(8 + 4)
		}
	}
	return nil
}

// ghostACK builds the ghost-ack frame for DUT QP q: an RC Acknowledge
// (syndrome 0x1F, MSN 0) for the DUT's sq_psn, which the DUT has not sent,
// from q's peer.
func (fa *faulter) ghostACK(q int, buf []byte) ([]byte, Fault, error) {
	qp := &fa.dut.QPs[q]
	ff := fa.dut.inTemplate(qp)
	ff.Transport.BTH.Opcode = opcode.RCAcknowledge
	ff.Transport.BTH.PKey = qp.pkey()
	ff.Transport.BTH.DestQP = qp.QPN
	ff.Transport.BTH.PSN = qp.SQPSN
	ff.Transport.AETH.Syndrome = aeth.ACKSyndrome(aeth.Unlimited)
	n := ff.Len()
	if cap(buf) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := ff.EncodeWith(buf, &fa.calc); err != nil {
		return nil, Fault{}, err
	}
	return buf, Fault{Kind: GhostACK, Frame: -1, Other: -1, Bit: -1, ICRC: ICRCNone,
		Detail: fmt.Sprintf("inserted RC_ACKNOWLEDGE (ACK unlimited, MSN 0) to QP 0x%x for PSN %d, which the DUT never sent (its send queue is empty)", qp.QPN, qp.SQPSN)}, nil
}
