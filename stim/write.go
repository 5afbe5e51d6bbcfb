package stim

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
)

const hexDigits = "0123456789abcdef"

// base is what the writers share: a buffered output, the options, the
// frame count and a scratch line grown to the longest frame.
type base struct {
	bw     *bufio.Writer
	o      Options
	nb     int    // bytes per beat or word
	cmt    string // comment marker: "#" or "//"
	frames int
	closed bool
	line   []byte
}

func newBase(w io.Writer, o Options, f Format, cmt string) (base, error) {
	if err := o.check(f); err != nil {
		return base{}, err
	}
	o.Comments = append([]string(nil), o.Comments...)
	return base{bw: bufio.NewWriterSize(w, 64<<10), o: o, nb: o.Width / 8, cmt: cmt}, nil
}

// Frames is the number of frames written so far.
func (b *base) Frames() int { return b.frames }

func (b *base) start(frame []byte) error {
	if b.closed {
		return ErrClosed
	}
	if len(frame) == 0 {
		return ErrEmptyFrame
	}
	return nil
}

// header writes the format line, the extra comments and the description
// lines to bw, unless NoHeader.
func (b *base) header(bw *bufio.Writer, format string, withGeometry bool, desc ...string) {
	if b.o.NoHeader {
		return
	}
	l := append(b.line[:0], b.cmt...)
	l = append(l, " rocekit stimulus format="...)
	l = append(l, format...)
	if withGeometry {
		l = append(l, " width="...)
		l = strconv.AppendInt(l, int64(b.o.Width), 10)
		l = append(l, " byte-order="...)
		l = append(l, b.o.Order.String()...)
	}
	l = append(l, '\n')
	for _, c := range b.o.Comments {
		l = b.comment(l, c)
	}
	for _, c := range desc {
		l = b.comment(l, c)
	}
	bw.Write(l)
	b.line = l[:0]
}

func (b *base) comment(l []byte, c string) []byte {
	l = append(l, b.cmt...)
	if c != "" {
		l = append(l, ' ')
		l = append(l, c...)
	}
	return append(l, '\n')
}

// frameComment appends "# frame N len L\n" to l when FrameComments is set.
func (b *base) frameComment(l []byte, n int) []byte {
	if !b.o.FrameComments {
		return l
	}
	l = append(l, b.cmt...)
	l = append(l, " frame "...)
	l = strconv.AppendInt(l, int64(b.frames), 10)
	l = append(l, " len "...)
	l = strconv.AppendInt(l, int64(n), 10)
	return append(l, '\n')
}

// trailer appends "# end frames=N" and the given count to l, unless NoHeader.
func (b *base) trailer(l []byte, unit string, count int) []byte {
	if b.o.NoHeader {
		return l
	}
	l = append(l, b.cmt...)
	l = append(l, " end frames="...)
	l = strconv.AppendInt(l, int64(b.frames), 10)
	if unit != "" {
		l = append(l, ' ')
		l = append(l, unit...)
		l = append(l, '=')
		l = strconv.AppendInt(l, int64(count), 10)
	}
	return append(l, '\n')
}

// appendData appends the nb-byte word holding beat (1..nb bytes, the rest
// zero) as 2*nb hex digits, most significant first.
func appendData(l, beat []byte, nb int, o Order) []byte {
	if o == BE {
		for _, c := range beat {
			l = append(l, hexDigits[c>>4], hexDigits[c&15])
		}
		for range nb - len(beat) {
			l = append(l, '0', '0')
		}
		return l
	}
	for range nb - len(beat) {
		l = append(l, '0', '0')
	}
	for k := len(beat) - 1; k >= 0; k-- {
		c := beat[k]
		l = append(l, hexDigits[c>>4], hexDigits[c&15])
	}
	return l
}

// appendKeep appends the nb-bit tkeep of a beat of n bytes as nb/4 hex
// digits, most significant first.
func appendKeep(l []byte, n, nb int, o Order) []byte {
	for lo := nb - 4; lo >= 0; lo -= 4 {
		var d byte
		for t := 0; t < 4; t++ {
			j := lo + t
			if (o == LE && j < n) || (o == BE && j >= nb-n) {
				d |= 1 << t
			}
		}
		l = append(l, hexDigits[d])
	}
	return l
}

func describeOrder(o Order, w int, word bool) string {
	switch {
	case o == BE && word:
		return fmt.Sprintf("byte-order be: frame byte 0 is word[%d:%d]; the hex reads in wire order", w-1, w-8)
	case o == BE:
		return fmt.Sprintf("byte-order be: frame byte 0 is tdata[%d:%d] and tkeep[%d]; the hex reads in wire order", w-1, w-8, w/8-1)
	case word:
		return "byte-order le: frame byte 0 is word[7:0], the last two hex digits"
	}
	return "byte-order le: frame byte 0 is tdata[7:0] and tkeep[0]; tdata shows it as the last two hex digits"
}

// HexWriter writes the hex format: one frame per line.
type HexWriter struct{ base }

// NewHexWriter writes the header (unless o.NoHeader) and returns a writer of
// the hex format to w. Width and Order are ignored.
func NewHexWriter(w io.Writer, o Options) (*HexWriter, error) {
	b, err := newBase(w, o, FormatHex, "#")
	if err != nil {
		return nil, err
	}
	hw := &HexWriter{b}
	hw.header(hw.bw, "hex", false, "one frame per line: its bytes as lower-case hex, first byte first")
	return hw, nil
}

// WriteFrame writes frame as one line.
func (w *HexWriter) WriteFrame(frame []byte) error {
	if err := w.start(frame); err != nil {
		return err
	}
	l := w.frameComment(w.line[:0], len(frame))
	for _, c := range frame {
		l = append(l, hexDigits[c>>4], hexDigits[c&15])
	}
	l = append(l, '\n')
	w.frames++
	_, err := w.bw.Write(l)
	w.line = l[:0]
	return err
}

// Close writes the trailer and flushes.
func (w *HexWriter) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	w.bw.Write(w.trailer(w.line[:0], "", 0))
	return w.bw.Flush()
}

// AXISWriter writes the axis format: one "tdata tkeep tlast" beat per line.
type AXISWriter struct {
	base
	beats int
}

// NewAXISWriter writes the header (unless o.NoHeader) and returns a writer
// of the axis format to w.
func NewAXISWriter(w io.Writer, o Options) (*AXISWriter, error) {
	b, err := newBase(w, o, FormatAXIS, "#")
	if err != nil {
		return nil, err
	}
	aw := &AXISWriter{base: b}
	aw.header(aw.bw, "axis", true,
		fmt.Sprintf("one AXI-Stream beat per line: tdata[%d:0] tkeep[%d:0] tlast, in hex", o.Width-1, o.Width/8-1),
		describeOrder(o.Order, o.Width, false),
		"only the last beat of a frame (tlast 1) may be partial: unused bytes 0, their tkeep bits 0")
	return aw, nil
}

// Beats is the number of beats written so far.
func (w *AXISWriter) Beats() int { return w.beats }

// WriteFrame writes frame as ceil(len/NB) beats.
func (w *AXISWriter) WriteFrame(frame []byte) error {
	if err := w.start(frame); err != nil {
		return err
	}
	l := w.frameComment(w.line[:0], len(frame))
	for off := 0; off < len(frame); off += w.nb {
		beat := frame[off:min(off+w.nb, len(frame))]
		l = appendData(l, beat, w.nb, w.o.Order)
		l = append(l, ' ')
		l = appendKeep(l, len(beat), w.nb, w.o.Order)
		if off+w.nb >= len(frame) {
			l = append(l, " 1\n"...)
		} else {
			l = append(l, " 0\n"...)
		}
		w.beats++
	}
	w.frames++
	_, err := w.bw.Write(l)
	w.line = l[:0]
	return err
}

// Close writes the trailer and flushes.
func (w *AXISWriter) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	w.bw.Write(w.trailer(w.line[:0], "beats", w.beats))
	return w.bw.Flush()
}

// MemhWriter writes the memh format: the words to one writer, the
// {start, len} index to another.
type MemhWriter struct {
	base
	idx   *bufio.Writer
	words int
}

// maxIndex is the largest start or length an index entry holds.
const maxIndex = 1<<32 - 1

// NewMemhWriter writes the headers (unless o.NoHeader) and returns a writer
// of the memh format: words to mem (PREFIX.mem), the index to idx
// (PREFIX.idx.mem).
func NewMemhWriter(mem, idx io.Writer, o Options) (*MemhWriter, error) {
	b, err := newBase(mem, o, FormatMemh, "//")
	if err != nil {
		return nil, err
	}
	mw := &MemhWriter{base: b, idx: bufio.NewWriterSize(idx, 4<<10)}
	mw.header(mw.bw, "memh", true,
		fmt.Sprintf("one %d-bit word per line for $readmemh; every frame starts on a new word", o.Width),
		describeOrder(o.Order, o.Width, true)+"; unused bytes of a last word are 0",
		"frame table in the .idx.mem file")
	mw.header(mw.idx, "memh-idx", true,
		"one 64-bit entry per frame for $readmemh: {start word[31:0], length in bytes[31:0]}",
		"an entry of length 0 ends the table; its start is the number of words")
	return mw, nil
}

// Words is the number of words written so far.
func (w *MemhWriter) Words() int { return w.words }

// WriteFrame writes frame as ceil(len/NB) words and one index entry.
func (w *MemhWriter) WriteFrame(frame []byte) error {
	if err := w.start(frame); err != nil {
		return err
	}
	n := (len(frame) + w.nb - 1) / w.nb
	if int64(len(frame)) > maxIndex || int64(w.words+n) > maxIndex {
		return fmt.Errorf("stim: memh: frame %d of %d bytes at word %d does not fit the 32-bit index", w.frames, len(frame), w.words)
	}
	l := w.frameComment(w.line[:0], len(frame))
	for off := 0; off < len(frame); off += w.nb {
		l = appendData(l, frame[off:min(off+w.nb, len(frame))], w.nb, w.o.Order)
		l = append(l, '\n')
	}
	_, err := w.bw.Write(l)
	l = appendIndex(l[:0], w.words, len(frame))
	if _, ierr := w.idx.Write(l); err == nil {
		err = ierr
	}
	w.line = l[:0]
	w.words += n
	w.frames++
	return err
}

func appendIndex(l []byte, start, n int) []byte {
	v := uint64(start)<<32 | uint64(n)
	for s := 60; s >= 0; s -= 4 {
		l = append(l, hexDigits[v>>s&15])
	}
	return append(l, '\n')
}

// Close writes the index's end entry and the trailers, and flushes both.
func (w *MemhWriter) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	l := appendIndex(w.line[:0], w.words, 0)
	l = w.trailer(l, "words", w.words)
	w.idx.Write(l)
	w.bw.Write(w.trailer(l[:0], "words", w.words))
	err := w.bw.Flush()
	if ierr := w.idx.Flush(); err == nil {
		err = ierr
	}
	return err
}

// AXISMemWriter writes the axismem format: one {3'b000, tlast, tkeep,
// tdata} word per beat, ended by a zero word.
type AXISMemWriter struct {
	base
	beats int
}

// NewAXISMemWriter writes the header (unless o.NoHeader) and returns a
// writer of the axismem format to w.
func NewAXISMemWriter(w io.Writer, o Options) (*AXISMemWriter, error) {
	b, err := newBase(w, o, FormatAXISMem, "//")
	if err != nil {
		return nil, err
	}
	aw := &AXISMemWriter{base: b}
	nb := o.Width / 8
	aw.header(aw.bw, "axismem", true,
		fmt.Sprintf("one AXI-Stream beat per line for $readmemh into reg [%d:0]: {3'b000, tlast, tkeep[%d:0], tdata[%d:0]}", o.Width+nb+3, nb-1, o.Width-1),
		describeOrder(o.Order, o.Width, false),
		"only the last beat of a frame (tlast 1) may be partial; a word with tkeep 0 ends the stream")
	return aw, nil
}

// Beats is the number of beats written so far (the end word excluded).
func (w *AXISMemWriter) Beats() int { return w.beats }

// WriteFrame writes frame as ceil(len/NB) words.
func (w *AXISMemWriter) WriteFrame(frame []byte) error {
	if err := w.start(frame); err != nil {
		return err
	}
	l := w.frameComment(w.line[:0], len(frame))
	for off := 0; off < len(frame); off += w.nb {
		beat := frame[off:min(off+w.nb, len(frame))]
		if off+w.nb >= len(frame) {
			l = append(l, '1')
		} else {
			l = append(l, '0')
		}
		l = appendKeep(l, len(beat), w.nb, w.o.Order)
		l = appendData(l, beat, w.nb, w.o.Order)
		l = append(l, '\n')
		w.beats++
	}
	w.frames++
	_, err := w.bw.Write(l)
	w.line = l[:0]
	return err
}

// Close writes the end word and the trailer, and flushes.
func (w *AXISMemWriter) Close() error {
	if w.closed {
		return ErrClosed
	}
	w.closed = true
	l := w.line[:0]
	for range 1 + w.nb/4 + w.nb*2 {
		l = append(l, '0')
	}
	l = append(l, '\n')
	w.bw.Write(w.trailer(l, "beats", w.beats))
	return w.bw.Flush()
}
