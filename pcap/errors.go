package pcap

import (
	"fmt"

	"github.com/rocekit/rocekit"
)

// cause is a sentinel that also wraps the rocekit sentinel it refines.
type cause struct {
	msg  string
	base error
}

func (c *cause) Error() string { return c.msg }
func (c *cause) Unwrap() error { return c.base }

// Sentinel causes carried by FileError.Err. Each wraps a rocekit sentinel.
var (
	// ErrBadMagic: the file starts with neither a pcap nor a pcapng (nor a
	// gzip) magic number, or a pcapng byte-order magic is wrong.
	ErrBadMagic error = &cause{"bad magic", rocekit.ErrInvalid}
	// ErrUnsupportedVersion: a pcap major version other than 2 or a pcapng
	// major version other than 1.
	ErrUnsupportedVersion error = &cause{"unsupported version", rocekit.ErrInvalid}
	// ErrTruncatedHeader: the file ends inside the file header (classic pcap)
	// or the first section header block (pcapng).
	ErrTruncatedHeader error = &cause{"file header cut short", rocekit.ErrTruncated}
	// ErrTruncatedRecord: the file ends inside a record or block.
	ErrTruncatedRecord error = &cause{"record cut short", rocekit.ErrTruncated}
	// ErrRecordTooLong: a captured length larger than the snap length or
	// MaxRecordLen.
	ErrRecordTooLong error = &cause{"record too long", rocekit.ErrLength}
	// ErrUnknownLinkType: a link type this package does not know (see LinkType).
	ErrUnknownLinkType error = &cause{"unknown link type", rocekit.ErrInvalid}
	// ErrBadBlock: a malformed pcapng block: a total length below the minimum,
	// not a multiple of 4, disagreeing with the trailing copy or too small for
	// its contents; an option overrunning its block; a packet naming an
	// interface the section has not described.
	ErrBadBlock error = &cause{"malformed block", rocekit.ErrLength}
)

// FileError reports damage in a capture file. Record is the 1-based number of
// the record being read (the number the next packet would have had when the
// damage is in a pcapng block that is not a packet), or 0 for the file
// header. Offset is the byte offset, in the decompressed file, of the record
// header or pcapng block where the damage was found. Err is one of the
// sentinels above, or an underlying I/O or decompression error.
type FileError struct {
	Record int
	Offset int64
	Err    error
	Detail string
}

func (e *FileError) Error() string {
	var where string
	if e.Record == 0 {
		where = fmt.Sprintf("file header at offset %d", e.Offset)
	} else {
		where = fmt.Sprintf("record %d at offset %d", e.Record, e.Offset)
	}
	if e.Detail == "" {
		return fmt.Sprintf("%s: %v", where, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", where, e.Err, e.Detail)
}

// Unwrap returns the cause.
func (e *FileError) Unwrap() error { return e.Err }
