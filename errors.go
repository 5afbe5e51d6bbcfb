// Package rocekit holds what every rocekit package shares: the error type that
// names the header and field a decoder rejected, and its sentinel causes.
//
// The work is done in the sub-packages: opcode (the table of opcode facts),
// one package per IBA header (bth, deth, reth, aeth, ...), icrc (ICRC and
// VCRC), packet (whole transport packets and frames), pcap, sim and the
// rocekit command.
package rocekit

import (
	"errors"
	"fmt"
)

// Sentinel causes. Every error a rocekit decoder returns wraps one of these,
// so callers can test with errors.Is.
var (
	// ErrTruncated: fewer bytes than the header or field needs.
	ErrTruncated = errors.New("truncated")
	// ErrInvalid: a field holds a value the specification does not allow
	// (TVer not 0, PadCnt larger than the payload, an IP version other than 4 ...).
	ErrInvalid = errors.New("invalid")
	// ErrUnknownOpcode: a reserved, vendor-specific or otherwise undefined BTH
	// OpCode. The BTH itself is still readable.
	ErrUnknownOpcode = errors.New("unknown opcode")
	// ErrLength: two length fields, or a length field and the bytes present,
	// disagree (IPv4 total length, UDP length, LRH PktLen, GRH PayLen ...).
	ErrLength = errors.New("length mismatch")
	// ErrUnexpected: bytes present where the opcode allows none (a payload after
	// an Acknowledge, for example).
	ErrUnexpected = errors.New("unexpected data")
)

// HeaderError says which header, and which field of it, a decoder rejected
// and why. Err is one of the sentinels above.
type HeaderError struct {
	Header string // "bth", "reth", "ipv4", "udp", "frame" ...
	Field  string // field name, or "" when the whole header is concerned
	Err    error  // sentinel cause
	Need   int    // bytes needed, for ErrTruncated and ErrLength
	Have   int    // bytes present, for ErrTruncated and ErrLength
	Detail string // what was found, in words
}

func (e *HeaderError) Error() string {
	where := e.Header
	if e.Field != "" {
		where += "." + e.Field
	}
	switch {
	case e.Err == ErrTruncated:
		if e.Detail != "" {
			return fmt.Sprintf("%s: truncated: need %d bytes, have %d (%s)", where, e.Need, e.Have, e.Detail)
		}
		return fmt.Sprintf("%s: truncated: need %d bytes, have %d", where, e.Need, e.Have)
	case e.Detail != "":
		return fmt.Sprintf("%s: %v: %s", where, e.Err, e.Detail)
	default:
		return fmt.Sprintf("%s: %v", where, e.Err)
	}
}

// Unwrap returns the sentinel cause.
func (e *HeaderError) Unwrap() error { return e.Err }

// Truncated returns the error for a header that needs need bytes and got have.
func Truncated(header string, need, have int) error {
	return &HeaderError{Header: header, Err: ErrTruncated, Need: need, Have: have}
}

// Invalid returns the error for a field holding a value that is not allowed.
func Invalid(header, field, format string, args ...any) error {
	return &HeaderError{Header: header, Field: field, Err: ErrInvalid, Detail: fmt.Sprintf(format, args...)}
}

// BadLength returns the error for a length field that disagrees with the bytes
// present or with another length field.
func BadLength(header, field string, need, have int, format string, args ...any) error {
	return &HeaderError{Header: header, Field: field, Err: ErrLength, Need: need, Have: have, Detail: fmt.Sprintf(format, args...)}
}
