package analysis

// Warning names one anomaly found in one frame. The values are stable
// strings: they appear in rocekit's text and JSON output.
type Warning string

// Warnings Observe appends, one per anomaly of the frame.
const (
	// PSNGap: a request (or a READ response) PSN later than the next one
	// expected; the PSNs between were not seen.
	PSNGap Warning = "psn_gap"
	// DuplicatePSN: a request PSN earlier than the next expected one that the
	// responder had already acknowledged (or any repeat on UC, which never
	// retransmits), or a READ response repeated without a new READ request.
	DuplicatePSN Warning = "duplicate_psn"
	// Retransmission: an RC request PSN earlier than the next expected one
	// and not yet acknowledged: the requester went back (after a NAK, an RNR
	// NAK or a timeout). Every packet of the go-back run is flagged.
	Retransmission Warning = "retransmission"
	// NAKs by code (AETH syndrome 0x60-0x64), RNR NAK (0x20-0x3F).
	NAKPSNSequenceError       Warning = "nak_psn_sequence_error"
	NAKInvalidRequest         Warning = "nak_invalid_request"
	NAKRemoteAccessError      Warning = "nak_remote_access_error"
	NAKRemoteOperationalError Warning = "nak_remote_operational_error"
	NAKInvalidRDRequest       Warning = "nak_invalid_rd_request"
	RNRNAK                    Warning = "rnr_nak"
	// ICRCBad, VCRCBad: the frame's ICRC (VCRC) does not match its bytes.
	ICRCBad Warning = "icrc_bad"
	VCRCBad Warning = "vcrc_bad"
	// UnexpectedOpcodeSequence: a Middle or Last packet without a First, a
	// First or Only while a message is still open, a packet of another
	// operation inside a message, or a READ response whose position (first,
	// middle, last, only) does not fit its place in the READ's PSN range.
	UnexpectedOpcodeSequence Warning = "unexpected_opcode_sequence"
	// ReadResponseUnmatched: a READ response whose PSN falls in no
	// outstanding READ request of the connection.
	ReadResponseUnmatched Warning = "read_response_unmatched"
	// ECNCE: the IP (or GRH) header carries ECN Congestion Experienced.
	ECNCE Warning = "ecn_ce"
	// CNP: a congestion notification packet.
	CNP Warning = "cnp"
)

// wk indexes the warning kinds in Warnings order.
type wk uint8

const (
	wPSNGap wk = iota
	wDuplicatePSN
	wRetransmission
	wNAKPSNSequenceError
	wNAKInvalidRequest
	wNAKRemoteAccessError
	wNAKRemoteOperationalError
	wNAKInvalidRDRequest
	wRNRNAK
	wICRCBad
	wVCRCBad
	wUnexpectedOpcodeSequence
	wReadResponseUnmatched
	wECNCE
	wCNP
	numWarnings
)

// Warnings lists every warning kind in a fixed order (the order of the
// summary's warning counts).
var Warnings = [numWarnings]Warning{
	PSNGap, DuplicatePSN, Retransmission,
	NAKPSNSequenceError, NAKInvalidRequest, NAKRemoteAccessError, NAKRemoteOperationalError, NAKInvalidRDRequest,
	RNRNAK, ICRCBad, VCRCBad, UnexpectedOpcodeSequence, ReadResponseUnmatched, ECNCE, CNP,
}

// nakWarnings maps NAK codes 0-4 to their warning.
var nakWarnings = [5]wk{wNAKPSNSequenceError, wNAKInvalidRequest, wNAKRemoteAccessError, wNAKRemoteOperationalError, wNAKInvalidRDRequest}
