// Package opcode is rocekit's single table of BTH OpCode facts: names,
// transports, which opcodes are valid, which extension headers follow the BTH
// in wire order, whether a payload follows, direction, operation family and
// message position.
// Parsing, building, naming and the tests all read this table; nothing else in
// rocekit restates these facts.
//
// Sources: ../shared/reference/ib-facts.md §1.5, §1.6, §2 (IBA Vol. 1 ch. 9 as
// implemented by Linux rxe and dissected by Wireshark).
package opcode

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
)

// Opcode is the 8-bit BTH OpCode: bits 7-5 name the transport, bits 4-0 the
// operation.
type Opcode uint8

// Transport is the transport prefix of an opcode (its bits 7-5, kept in place).
type Transport uint8

// Transport prefixes (ib-facts.md §2.1). Vendor covers 0xC0-0xFF.
const (
	RC     Transport = 0x00
	UC     Transport = 0x20
	RD     Transport = 0x40
	UD     Transport = 0x60
	CNPT   Transport = 0x80
	XRC    Transport = 0xA0
	Vendor Transport = 0xC0
)

var transportNames = map[Transport]string{RC: "RC", UC: "UC", RD: "RD", UD: "UD", CNPT: "CNP", XRC: "XRC", Vendor: "VENDOR"}

func (t Transport) String() string {
	if n, ok := transportNames[t]; ok {
		return n
	}
	return fmt.Sprintf("TRANSPORT_0x%02X", uint8(t))
}

// Operation is the low five bits of an opcode.
type Operation uint8

// Operations (ib-facts.md §2.2). Names follow the Linux ib_pack.h constants.
const (
	SendFirst                  Operation = 0x00
	SendMiddle                 Operation = 0x01
	SendLast                   Operation = 0x02
	SendLastWithImmediate      Operation = 0x03
	SendOnly                   Operation = 0x04
	SendOnlyWithImmediate      Operation = 0x05
	RDMAWriteFirst             Operation = 0x06
	RDMAWriteMiddle            Operation = 0x07
	RDMAWriteLast              Operation = 0x08
	RDMAWriteLastWithImmediate Operation = 0x09
	RDMAWriteOnly              Operation = 0x0A
	RDMAWriteOnlyWithImmediate Operation = 0x0B
	RDMAReadRequest            Operation = 0x0C
	RDMAReadResponseFirst      Operation = 0x0D
	RDMAReadResponseMiddle     Operation = 0x0E
	RDMAReadResponseLast       Operation = 0x0F
	RDMAReadResponseOnly       Operation = 0x10
	Acknowledge                Operation = 0x11
	AtomicAcknowledge          Operation = 0x12
	CompareSwap                Operation = 0x13
	FetchAdd                   Operation = 0x14
	Resync                     Operation = 0x15
	SendLastWithInvalidate     Operation = 0x16
	SendOnlyWithInvalidate     Operation = 0x17
	Flush                      Operation = 0x1C
	AtomicWrite                Operation = 0x1D
)

// Header names an extension header that can follow the BTH.
type Header uint8

// Extension headers (ib-facts.md §1.5, §1.6). CNPBody is the 16 reserved bytes
// of a RoCEv2 CNP.
const (
	NoHeader Header = iota
	RDETH
	DETH
	XRCETH
	RETH
	AtomicETH
	AETH
	AtomicAckETH
	ImmDt
	IETH
	FETH
	CNPBody
)

var headerInfo = [...]struct {
	name string
	len  int
}{
	NoHeader:     {"none", 0},
	RDETH:        {"RDETH", 4},
	DETH:         {"DETH", 8},
	XRCETH:       {"XRCETH", 4},
	RETH:         {"RETH", 16},
	AtomicETH:    {"AtomicETH", 28},
	AETH:         {"AETH", 4},
	AtomicAckETH: {"AtomicAckETH", 8},
	ImmDt:        {"ImmDt", 4},
	IETH:         {"IETH", 4},
	FETH:         {"FETH", 4},
	CNPBody:      {"CNP", 16},
}

// Len is the header's size in bytes.
func (h Header) Len() int {
	if int(h) < len(headerInfo) {
		return headerInfo[h].len
	}
	return 0
}

func (h Header) String() string {
	if int(h) < len(headerInfo) {
		return headerInfo[h].name
	}
	return fmt.Sprintf("Header(%d)", uint8(h))
}

// Position is where a packet stands in its message.
type Position uint8

// Message positions.
const (
	First Position = iota + 1
	Middle
	Last
	Only
)

func (p Position) String() string {
	switch p {
	case First:
		return "first"
	case Middle:
		return "middle"
	case Last:
		return "last"
	case Only:
		return "only"
	}
	return "none"
}

// Direction says whether an opcode travels from requester to responder, back,
// or is a congestion notification.
type Direction uint8

// Directions.
const (
	Request Direction = iota + 1
	Response
	Notification
)

func (d Direction) String() string {
	switch d {
	case Request:
		return "request"
	case Response:
		return "response"
	case Notification:
		return "notification"
	}
	return "none"
}

// Family is the operation an opcode belongs to, whatever its position in
// the message: every SEND opcode is FamilySend, every RDMA WRITE opcode
// FamilyWrite, and so on. The zero Family is that of invalid opcodes.
type Family uint8

// Families.
const (
	FamilyNone         Family = iota
	FamilySend                // SEND First ... Only, with immediate or invalidate
	FamilyWrite               // RDMA WRITE First ... Only, with immediate
	FamilyRead                // RDMA READ Request
	FamilyAtomic              // CmpSwap and FetchAdd
	FamilyFlush               // FLUSH
	FamilyAtomicWrite         // ATOMIC WRITE
	FamilyResync              // RESYNC (RD)
	FamilyReadResponse        // RDMA READ Response First ... Only
	FamilyAck                 // Acknowledge
	FamilyAtomicAck           // Atomic Acknowledge
	FamilyCNP                 // congestion notification
)

var familyNames = [...]string{FamilyNone: "none", FamilySend: "SEND", FamilyWrite: "RDMA WRITE", FamilyRead: "RDMA READ",
	FamilyAtomic: "ATOMIC", FamilyFlush: "FLUSH", FamilyAtomicWrite: "ATOMIC WRITE", FamilyResync: "RESYNC",
	FamilyReadResponse: "RDMA READ response", FamilyAck: "ACK", FamilyAtomicAck: "ATOMIC ACK", FamilyCNP: "CNP"}

func (f Family) String() string {
	if int(f) < len(familyNames) {
		return familyNames[f]
	}
	return fmt.Sprintf("Family(%d)", uint8(f))
}

// Segmented reports whether a message of family f may span several packets
// (First, Middle, Last): SEND, RDMA WRITE and READ responses. Every other
// family is one Only packet.
func (f Family) Segmented() bool {
	return f == FamilySend || f == FamilyWrite || f == FamilyReadResponse
}

// MaxHeaders is the most extension headers any opcode carries
// (RD RDMA WRITE Only with Immediate: RDETH DETH RETH ImmDt).
const MaxHeaders = 4

// Info is everything the table knows about one opcode value.
type Info struct {
	Valid     bool
	Name      string // RC_SEND_ONLY, CNP, UNKNOWN_0x18, VENDOR_0xC0 ...
	Family    Family
	Direction Direction
	Position  Position
	// Payload: a payload may follow the headers. ATOMIC WRITE's 8 bytes count
	// as payload.
	Payload   bool
	headers   [MaxHeaders]Header
	nHeaders  uint8
	headerLen uint8
}

// Headers returns the extension headers after the BTH, in wire order. The
// slice points into the table and must not be modified.
func (i *Info) Headers() []Header { return i.headers[:i.nHeaders] }

// HeaderLen is the total size of the extension headers (BTH excluded).
func (i *Info) HeaderLen() int { return int(i.headerLen) }

// Has reports whether the opcode carries extension header h.
func (i *Info) Has(h Header) bool {
	for _, x := range i.headers[:i.nHeaders] {
		if x == h {
			return true
		}
	}
	return false
}

// Offset returns where header h starts, counted from the first byte after the
// BTH, or -1 if the opcode does not carry it.
func (i *Info) Offset(h Header) int {
	off := 0
	for _, x := range i.headers[:i.nHeaders] {
		if x == h {
			return off
		}
		off += x.Len()
	}
	return -1
}

var table [256]Info

// Lookup returns the table entry for o. It never fails: invalid opcodes have
// an entry with Valid false and a name.
func Lookup(o Opcode) *Info { return &table[o] }

// Info returns the table entry for o.
func (o Opcode) Info() *Info { return &table[o] }

// Valid reports whether o is defined for its transport.
func (o Opcode) Valid() bool { return table[o].Valid }

// Transport returns the transport prefix; 0xC0-0xFF all map to Vendor.
func (o Opcode) Transport() Transport {
	if o >= 0xC0 {
		return Vendor
	}
	return Transport(o & 0xE0)
}

// Operation returns the low five bits.
func (o Opcode) Operation() Operation { return Operation(o & 0x1F) }

// String returns the opcode's name, e.g. RC_SEND_ONLY.
func (o Opcode) String() string { return table[o].Name }

// Headers returns the extension headers after the BTH, in wire order.
func (o Opcode) Headers() []Header { return table[o].Headers() }

// HeaderLen is the total size of the extension headers after the BTH.
func (o Opcode) HeaderLen() int { return int(table[o].headerLen) }

// HasPayload reports whether a payload may follow the headers.
func (o Opcode) HasPayload() bool { return table[o].Payload }

// IsRequest reports whether o goes from requester to responder.
func (o Opcode) IsRequest() bool { return table[o].Direction == Request }

// IsResponse reports whether o goes from responder to requester.
func (o Opcode) IsResponse() bool { return table[o].Direction == Response }

// Family returns the operation family of o; FamilyNone if o is invalid.
func (o Opcode) Family() Family { return table[o].Family }

// Position returns the opcode's place in its message.
func (o Opcode) Position() Position { return table[o].Position }

// HasImmediate reports whether o carries an ImmDt header.
func (o Opcode) HasImmediate() bool { return table[o].Has(ImmDt) }

// HasInvalidate reports whether o carries an IETH (SEND with Invalidate).
func (o Opcode) HasInvalidate() bool { return table[o].Has(IETH) }

// HasDETH reports whether a DETH follows the BTH (after the RDETH on RD).
// The rule (ib-facts.md §2.3): DETH is present on UD SEND Only (with and
// without immediate) and on every RD request except FLUSH; never on RC, UC,
// XRC, CNP, or any RD response.
func (o Opcode) HasDETH() bool { return table[o].Has(DETH) }

// names of the operations, used with a transport prefix.
var opNames = map[Operation]string{
	SendFirst: "SEND_FIRST", SendMiddle: "SEND_MIDDLE", SendLast: "SEND_LAST",
	SendLastWithImmediate: "SEND_LAST_WITH_IMMEDIATE", SendOnly: "SEND_ONLY",
	SendOnlyWithImmediate: "SEND_ONLY_WITH_IMMEDIATE", RDMAWriteFirst: "RDMA_WRITE_FIRST",
	RDMAWriteMiddle: "RDMA_WRITE_MIDDLE", RDMAWriteLast: "RDMA_WRITE_LAST",
	RDMAWriteLastWithImmediate: "RDMA_WRITE_LAST_WITH_IMMEDIATE", RDMAWriteOnly: "RDMA_WRITE_ONLY",
	RDMAWriteOnlyWithImmediate: "RDMA_WRITE_ONLY_WITH_IMMEDIATE", RDMAReadRequest: "RDMA_READ_REQUEST",
	RDMAReadResponseFirst: "RDMA_READ_RESPONSE_FIRST", RDMAReadResponseMiddle: "RDMA_READ_RESPONSE_MIDDLE",
	RDMAReadResponseLast: "RDMA_READ_RESPONSE_LAST", RDMAReadResponseOnly: "RDMA_READ_RESPONSE_ONLY",
	Acknowledge: "ACKNOWLEDGE", AtomicAcknowledge: "ATOMIC_ACKNOWLEDGE", CompareSwap: "COMPARE_SWAP",
	FetchAdd: "FETCH_ADD", Resync: "RESYNC", SendLastWithInvalidate: "SEND_LAST_WITH_INVALIDATE",
	SendOnlyWithInvalidate: "SEND_ONLY_WITH_INVALIDATE", Flush: "FLUSH", AtomicWrite: "ATOMIC_WRITE",
}

func (op Operation) String() string {
	if n, ok := opNames[op]; ok {
		return n
	}
	return fmt.Sprintf("OPERATION_0x%02X", uint8(op))
}

// opFacts are the transport-independent facts of one operation: the headers
// an RC packet carries, payload, direction, position and family
// (ib-facts.md §2.2, "Headers: RC, UC" column).
type opFacts struct {
	headers []Header
	payload bool
	dir     Direction
	pos     Position
	fam     Family
}

var ops = map[Operation]opFacts{
	SendFirst:                  {nil, true, Request, First, FamilySend},
	SendMiddle:                 {nil, true, Request, Middle, FamilySend},
	SendLast:                   {nil, true, Request, Last, FamilySend},
	SendLastWithImmediate:      {[]Header{ImmDt}, true, Request, Last, FamilySend},
	SendOnly:                   {nil, true, Request, Only, FamilySend},
	SendOnlyWithImmediate:      {[]Header{ImmDt}, true, Request, Only, FamilySend},
	RDMAWriteFirst:             {[]Header{RETH}, true, Request, First, FamilyWrite},
	RDMAWriteMiddle:            {nil, true, Request, Middle, FamilyWrite},
	RDMAWriteLast:              {nil, true, Request, Last, FamilyWrite},
	RDMAWriteLastWithImmediate: {[]Header{ImmDt}, true, Request, Last, FamilyWrite},
	RDMAWriteOnly:              {[]Header{RETH}, true, Request, Only, FamilyWrite},
	RDMAWriteOnlyWithImmediate: {[]Header{RETH, ImmDt}, true, Request, Only, FamilyWrite},
	RDMAReadRequest:            {[]Header{RETH}, false, Request, Only, FamilyRead},
	RDMAReadResponseFirst:      {[]Header{AETH}, true, Response, First, FamilyReadResponse},
	RDMAReadResponseMiddle:     {nil, true, Response, Middle, FamilyReadResponse},
	RDMAReadResponseLast:       {[]Header{AETH}, true, Response, Last, FamilyReadResponse},
	RDMAReadResponseOnly:       {[]Header{AETH}, true, Response, Only, FamilyReadResponse},
	Acknowledge:                {[]Header{AETH}, false, Response, Only, FamilyAck},
	AtomicAcknowledge:          {[]Header{AETH, AtomicAckETH}, false, Response, Only, FamilyAtomicAck},
	CompareSwap:                {[]Header{AtomicETH}, false, Request, Only, FamilyAtomic},
	FetchAdd:                   {[]Header{AtomicETH}, false, Request, Only, FamilyAtomic},
	Resync:                     {nil, false, Request, Only, FamilyResync},
	SendLastWithInvalidate:     {[]Header{IETH}, true, Request, Last, FamilySend},
	SendOnlyWithInvalidate:     {[]Header{IETH}, true, Request, Only, FamilySend},
	Flush:                      {[]Header{FETH, RETH}, false, Request, Only, FamilyFlush},
	AtomicWrite:                {[]Header{RETH}, true, Request, Only, FamilyAtomicWrite},
}

// valid lists, per transport, the operations it defines (ib-facts.md §2.2
// "Valid opcode sets").
func opRange(lo, hi Operation) []Operation {
	var r []Operation
	for o := lo; o <= hi; o++ {
		r = append(r, o)
	}
	return r
}

var valid = map[Transport][]Operation{
	RC:  append(opRange(SendFirst, FetchAdd), SendLastWithInvalidate, SendOnlyWithInvalidate, Flush, AtomicWrite),
	UC:  opRange(SendFirst, RDMAWriteOnlyWithImmediate),
	RD:  append(opRange(SendFirst, Resync), Flush),
	UD:  {SendOnly, SendOnlyWithImmediate},
	XRC: append(opRange(SendFirst, FetchAdd), SendLastWithInvalidate, SendOnlyWithInvalidate),
}

// headersFor applies each transport's rule to the RC header list of an
// operation. This is the one place the DETH rule lives.
func headersFor(t Transport, op Operation, f opFacts) []Header {
	var h []Header
	switch t {
	case RD:
		// Every RD packet starts with RDETH; every RD request except FLUSH
		// then carries DETH (ib-facts.md §2.3).
		h = append(h, RDETH)
		if f.dir == Request && op != Flush {
			h = append(h, DETH)
		}
	case UD:
		h = append(h, DETH)
	case XRC:
		// XRC requests put XRCETH right after the BTH; responses use the RC
		// layout (ib-facts.md §2.2).
		if f.dir == Request {
			h = append(h, XRCETH)
		}
	}
	return append(h, f.headers...)
}

func init() {
	for i := range table {
		o := Opcode(i)
		const hex = "0123456789ABCDEF"
		name := "UNKNOWN_0x"
		if o >= 0xC0 {
			name = "VENDOR_0x"
		}
		table[i] = Info{Name: name + hex[i>>4:i>>4+1] + hex[i&15:i&15+1]}
	}
	for t, list := range valid {
		for _, op := range list {
			f := ops[op]
			set(Opcode(uint8(t)|uint8(op)), t.String()+"_"+op.String(), headersFor(t, op, f), f.payload, f.dir, f.pos, f.fam)
		}
	}
	// Congestion notification packets (ib-facts.md §1.6): 0x80 is the native
	// IB CNP of IBA annex A10 (BTH only), 0x81 the RoCEv2 CNP of annex A17
	// (BTH + 16 reserved bytes).
	set(0x80, "IB_CNP", nil, false, Notification, Only, FamilyCNP)
	set(0x81, "CNP", []Header{CNPBody}, false, Notification, Only, FamilyCNP)
}

func set(o Opcode, name string, hs []Header, payload bool, dir Direction, pos Position, fam Family) {
	in := Info{Valid: true, Name: name, Family: fam, Direction: dir, Payload: payload, Position: pos}
	if len(hs) > MaxHeaders {
		panic("opcode: table entry with too many headers: " + name)
	}
	n := 0
	for _, h := range hs {
		n += h.Len()
	}
	copy(in.headers[:], hs)
	in.nHeaders = uint8(len(hs))
	in.headerLen = uint8(n)
	table[o] = in
}

// byName maps every name, in upper case, to its opcode. It is made on
// first use, not at the start of every rocekit command.
var byName = sync.OnceValue(func() map[string]Opcode {
	m := make(map[string]Opcode, len(table))
	for i := range table {
		m[strings.ToUpper(table[i].Name)] = Opcode(i)
	}
	return m
})

// Parse turns a name (RC_SEND_ONLY, rc_send_only, CNP, UNKNOWN_0x18) or a
// number (0x04, 4) into an Opcode.
func Parse(s string) (Opcode, error) {
	if o, ok := byName()[strings.ToUpper(strings.TrimSpace(s))]; ok {
		return o, nil
	}
	if v, err := strconv.ParseUint(strings.TrimSpace(s), 0, 8); err == nil {
		return Opcode(v), nil
	}
	return 0, fmt.Errorf("opcode: unknown name %q", s)
}

// All returns every valid opcode in numeric order.
func All() []Opcode {
	var r []Opcode
	for i := range table {
		if table[i].Valid {
			r = append(r, Opcode(i))
		}
	}
	return r
}
