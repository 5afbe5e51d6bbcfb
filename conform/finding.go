package conform

import (
	"github.com/rocekit/rocekit/internal/jsonw"
	"strconv"
)

// Kind names one kind of departure from the spec. The values are stable
// strings: they appear in rocekit check's text and JSON output and in
// manifests of expected reactions, so they must not change.
type Kind string

// Finding kinds, each with the ib-facts.md section it cites (Kind.Rule).
const (
	// BadICRC: the ICRC does not match the frame's bytes (§3). The receiver
	// would drop the packet; the checker still follows it (it may equally
	// have been damaged after the capture point).
	BadICRC Kind = "bad_icrc"
	// BadVCRC: a native InfiniBand packet's VCRC does not match (§3.3).
	BadVCRC Kind = "bad_vcrc"
	// Malformed: an InfiniBand transport packet that does not decode: a
	// truncated header, a PadCnt larger than the packet, a payload on an
	// opcode that carries none (§1).
	Malformed Kind = "malformed"
	// TVer: BTH.TVer is not 0 (§5.11).
	TVer Kind = "tver"
	// PKeyMismatch: a packet's P_Key does not match the connection's (the
	// CM REQ's, else the first packet's) under the P_Key rule (§5.11).
	PKeyMismatch Kind = "pkey_mismatch"
	// OpcodeSequence: a Middle or Last without its First, a First or Only
	// while a message is still open, or a packet of another operation
	// inside a message, judged in PSN order (§5.6, class C).
	OpcodeSequence Kind = "opcode_sequence"
	// PayloadSize: a First or Middle request not exactly PMTU bytes, a Last
	// of 0 or more than PMTU bytes, an Only larger than the PMTU, a WRITE
	// whose packets do not add up to its RETH DMA length, a first packet that
	// is no path MTU size (§5.2).
	PayloadSize Kind = "payload_size"
	// PadCount: payload plus pad not a multiple of 4, pad on a First or
	// Middle packet, or a PadCnt that makes a WRITE's payload differ from
	// its RETH length (§5.2: pad = (-len) mod 4, only Last/Only pad).
	PadCount Kind = "pad_count"
	// PSNReuse: a request at an outstanding (or acknowledged) PSN whose
	// opcode, length, RETH or payload differ from the packet first sent with
	// that PSN: a new message reusing PSNs (§5.3).
	PSNReuse Kind = "psn_reuse"
	// ReadPSNReservation: a request inside the N PSNs a READ reserved
	// (other than the READ re-requesting its own tail), or the next new
	// request after a READ earlier than READ PSN + N (§5.3).
	ReadPSNReservation Kind = "read_psn_reservation"
	// BadRetransmission: a go-back-N retransmission that starts after the
	// PSN the responder's last NAK or ACK left unacknowledged, a PSN the
	// requester then never sends again (§5.5). Decided at Finish (see the
	// package documentation for when the capture can prove it).
	BadRetransmission Kind = "bad_retransmission"
	// NAKCode: a NAK whose code is impossible here: a reserved or RD-only
	// code, a code other than PSN sequence error for a PSN that never
	// reached the responder, an RNR NAK for a request that needs no receive
	// WQE, or an ACK accepting a request the responder had to NAK as invalid
	// (§5.6).
	NAKCode Kind = "nak_code"
	// NAKPSN: a NAK PSN that cannot be the responder's expected PSN: before
	// a PSN it already acknowledged, past a PSN that never reached it, inside
	// a READ's reserved PSNs, or a PSN sequence error when nothing after that
	// PSN was sent (§5.4).
	NAKPSN Kind = "nak_psn"
	// ACKPSN: an ACK (or ATOMIC ACK) whose PSN the responder cannot have
	// reached, or that goes back before a PSN already acknowledged (§5.3).
	ACKPSN Kind = "ack_psn"
	// MissingACK: a READ (FLUSH, ATOMIC WRITE) or atomic, which always gets
	// its own response (§5.2), that the responder passed without answering:
	// it answered a later PSN, which it does only after answering this one
	// (§5.4), yet the request's responses never passed the capture point,
	// and the capture is known to sit at the responder, so no loss before it
	// explains that. A later ACK covers an earlier SEND or WRITE (ACK
	// coalescing, §5.3) but never a READ or atomic. A request still awaiting
	// its answer when the capture ends is no finding: Channel.Outstanding
	// counts it. Decided at Finish.
	MissingACK Kind = "missing_ack"
	// ReadResponse: READ responses that do not match their request: wrong
	// position (First/Middle/Last/Only) for the PSN, more or fewer responses
	// than the READ reserved, sizes other than PMTU (First/Middle) or the
	// rest (Last), an AETH syndrome that is not an ACK, a response for a PSN
	// no outstanding READ reserved (§5.3).
	ReadResponse Kind = "read_response"
	// MSN: an AETH MSN other than the number of messages the responder had
	// completed by the acknowledged PSN (§5.9).
	MSN Kind = "msn"
)

// Kinds lists every finding kind in a fixed order (the order of the
// summary's counts).
var Kinds = []Kind{
	BadICRC, BadVCRC, Malformed, TVer, PKeyMismatch,
	OpcodeSequence, PayloadSize, PadCount, PSNReuse, ReadPSNReservation, BadRetransmission,
	NAKCode, NAKPSN, ACKPSN, MissingACK, ReadResponse, MSN,
}

var kindRules = map[Kind]string{
	BadICRC: "§3", BadVCRC: "§3.3", Malformed: "§1", TVer: "§5.11", PKeyMismatch: "§5.11",
	OpcodeSequence: "§5.6", PayloadSize: "§5.2", PadCount: "§5.2", PSNReuse: "§5.3",
	ReadPSNReservation: "§5.3", BadRetransmission: "§5.5", NAKCode: "§5.6", NAKPSN: "§5.4",
	ACKPSN: "§5.3", MissingACK: "§5.2", ReadResponse: "§5.3", MSN: "§5.9",
}

// Rule returns the ib-facts.md section a finding of kind k cites, such as
// "§5.4"; "" for an unknown kind.
func (k Kind) Rule() string { return kindRules[k] }

// Finding is one departure from the spec.
type Finding struct {
	Frame    int    // frame number in the capture (1-based)
	Rule     string // ib-facts.md section, e.g. "§5.4"
	Kind     Kind
	Message  string // what happened, in words
	Expected string // what the rule expects instead
	Got      string // what the capture shows
	// Conn is the connection's number in Summary.Connections (1-based), 0
	// for findings outside any RC connection.
	Conn int
}

// String formats f as rocekit check prints it:
//
//	frame 12: §5.4 nak_psn: responder NAKed ...; expected ...
func (f Finding) String() string { return string(f.AppendText(nil)) }

// AppendText appends the String form (without a newline) to b.
func (f Finding) AppendText(b []byte) []byte {
	b = append(b, "frame "...)
	b = strconv.AppendInt(b, int64(f.Frame), 10)
	b = append(b, ": "...)
	b = append(b, f.Rule...)
	b = append(b, ' ')
	b = append(b, f.Kind...)
	b = append(b, ": "...)
	b = append(b, f.Message...)
	if f.Expected != "" {
		b = append(b, "; expected "...)
		b = append(b, f.Expected...)
	}
	return b
}

// AppendJSON appends f as one JSON object with the keys, in this order:
// "type" ("finding"), "frame", "rule", "kind", "message", "expected",
// "got", "connection".
func (f Finding) AppendJSON(b []byte) []byte {
	b = append(b, `{"type":"finding","frame":`...)
	b = strconv.AppendInt(b, int64(f.Frame), 10)
	b = append(b, `,"rule":`...)
	b = jsonw.AppendString(b, f.Rule)
	b = append(b, `,"kind":`...)
	b = jsonw.AppendString(b, string(f.Kind))
	b = append(b, `,"message":`...)
	b = jsonw.AppendString(b, f.Message)
	b = append(b, `,"expected":`...)
	b = jsonw.AppendString(b, f.Expected)
	b = append(b, `,"got":`...)
	b = jsonw.AppendString(b, f.Got)
	b = append(b, `,"connection":`...)
	b = strconv.AppendInt(b, int64(f.Conn), 10)
	return append(b, '}')
}
