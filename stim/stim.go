package stim

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Order is where a beat's bytes go in tdata and tkeep; see the package doc.
type Order uint8

const (
	LE Order = iota // frame byte k is tdata[8k+7:8k], tkeep[k] (AXI convention; default)
	BE              // frame byte k is tdata[W-1-8k:W-8-8k], tkeep[NB-1-k]
)

func (o Order) String() string {
	switch o {
	case LE:
		return "le"
	case BE:
		return "be"
	}
	return fmt.Sprintf("Order(%d)", uint8(o))
}

// ParseOrder parses "le" or "be" (any case).
func ParseOrder(s string) (Order, error) {
	switch strings.ToLower(s) {
	case "le":
		return LE, nil
	case "be":
		return BE, nil
	}
	return 0, fmt.Errorf("stim: byte order %q: want le or be", s)
}

func (o Order) valid() bool { return o == LE || o == BE }

// Format is a stimulus file format.
type Format uint8

const (
	FormatHex     Format = iota + 1 // one frame per line as hex
	FormatAXIS                      // one "tdata tkeep tlast" beat per line
	FormatMemh                      // $readmemh words plus a {start, len} index
	FormatAXISMem                   // $readmemh words {tlast, tkeep, tdata}, one per beat
)

var formatNames = [...]string{FormatHex: "hex", FormatAXIS: "axis", FormatMemh: "memh", FormatAXISMem: "axismem"}

func (f Format) String() string {
	if int(f) < len(formatNames) && formatNames[f] != "" {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", uint8(f))
}

// ParseFormat parses "hex", "axis", "memh" or "axismem" (any case).
func ParseFormat(s string) (Format, error) {
	for f, n := range formatNames {
		if n != "" && strings.EqualFold(s, n) {
			return Format(f), nil
		}
	}
	return 0, fmt.Errorf("stim: format %q: want hex, axis, memh or axismem", s)
}

// Widths returns the supported data widths in bits.
func Widths() []int { return []int{64, 128, 256, 512, 1024} }

// CheckWidth returns an error unless w is one of Widths.
func CheckWidth(w int) error {
	switch w {
	case 64, 128, 256, 512, 1024:
		return nil
	}
	return fmt.Errorf("stim: width %d: want 64, 128, 256, 512 or 1024 bits", w)
}

// Files returns the names Create writes for format f: PREFIX.hex,
// PREFIX.axis, PREFIX.mem and PREFIX.idx.mem, or PREFIX.axis.mem.
func Files(f Format, prefix string) []string {
	switch f {
	case FormatHex:
		return []string{prefix + ".hex"}
	case FormatAXIS:
		return []string{prefix + ".axis"}
	case FormatMemh:
		return []string{prefix + ".mem", prefix + ".idx.mem"}
	case FormatAXISMem:
		return []string{prefix + ".axis.mem"}
	}
	return nil
}

// Options configure a writer. The zero value is little-endian with headers
// but no width, which only the hex format accepts.
type Options struct {
	// Width is the data width in bits (64, 128, 256, 512 or 1024). The hex
	// format ignores it.
	Width int
	// Order is the byte order of beats and words. The hex format ignores it.
	Order Order
	// FrameComments writes a comment "frame N len L" before each frame
	// (N from 0, L in bytes); in memh it goes to the .mem file.
	FrameComments bool
	// NoHeader leaves out the header and trailer comments: the files hold
	// data lines only (and the end markers of memh and axismem, which are
	// data).
	NoHeader bool
	// Comments are extra header lines written after the format line, such
	// as the command that made the file. They must not contain line breaks.
	Comments []string
}

func (o *Options) check(f Format) error {
	if f != FormatHex {
		if err := CheckWidth(o.Width); err != nil {
			return err
		}
		if !o.Order.valid() {
			return fmt.Errorf("stim: byte order %d: want LE or BE", uint8(o.Order))
		}
	}
	for _, c := range o.Comments {
		if strings.ContainsAny(c, "\r\n") {
			return fmt.Errorf("stim: comment %q contains a line break", c)
		}
	}
	return nil
}

// Writer is what every format's writer does.
type Writer interface {
	// WriteFrame appends one frame (at least one byte) to the stream.
	WriteFrame(frame []byte) error
	// Close writes the end marker and trailer and flushes. The writer
	// takes no more frames.
	Close() error
	// Frames is the number of frames written so far.
	Frames() int
}

// ErrEmptyFrame is returned by WriteFrame for a frame of no bytes, which
// none of the formats can hold.
var ErrEmptyFrame = errors.New("stim: empty frame")

// ErrClosed is returned by WriteFrame and Close after Close.
var ErrClosed = errors.New("stim: writer closed")

// Create creates the files of format f (see Files) and returns a Writer to
// them; its Close finishes the stream and closes the files.
func Create(f Format, prefix string, o Options) (Writer, error) {
	names := Files(f, prefix)
	if names == nil {
		return nil, fmt.Errorf("stim: unknown format %v", f)
	}
	if err := o.check(f); err != nil {
		return nil, err
	}
	var files []*os.File
	closeAll := func() {
		for _, fl := range files {
			fl.Close()
		}
	}
	for _, n := range names {
		fl, err := os.Create(n)
		if err != nil {
			closeAll()
			return nil, err
		}
		files = append(files, fl)
	}
	var w Writer
	var err error
	switch f {
	case FormatHex:
		w, err = NewHexWriter(files[0], o)
	case FormatAXIS:
		w, err = NewAXISWriter(files[0], o)
	case FormatMemh:
		w, err = NewMemhWriter(files[0], files[1], o)
	case FormatAXISMem:
		w, err = NewAXISMemWriter(files[0], o)
	}
	if err != nil {
		closeAll()
		return nil, err
	}
	return &fileWriter{Writer: w, files: files}, nil
}

type fileWriter struct {
	Writer
	files []*os.File
}

func (w *fileWriter) Close() error {
	err := w.Writer.Close()
	for _, f := range w.files {
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// SyntaxError is a reader's complaint about its input.
type SyntaxError struct {
	File string // "hex", "axis", "mem", "idx" or "axismem"
	Line int    // 1-based line number; for input ending inside a frame, the line of its last beat
	Msg  string // what is wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("stim: %s line %d: %s", e.File, e.Line, e.Msg)
}

// readErr wraps a failure of the underlying io.Reader.
func readErr(file string, err error) error {
	return fmt.Errorf("stim: reading %s: %w", file, err)
}
