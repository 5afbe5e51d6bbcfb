package stim

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
)

// lines reads an input line by line, skipping blank lines and comments and
// checking a "rocekit stimulus" header comment against what the caller reads.
type lines struct {
	br   *bufio.Reader
	file string // name in errors
	cmt  string // "#": whole-line comments; "//": comments anywhere
	n    int    // number of the last line read
	buf  []byte

	format string // format the header must name
	geom   bool   // check width and byte-order too
	width  int
	order  Order
}

func newLines(r io.Reader, file, cmt, format string, geom bool, width int, order Order) *lines {
	return &lines{br: bufio.NewReaderSize(r, 16<<10), file: file, cmt: cmt, format: format, geom: geom, width: width, order: order}
}

func (l *lines) errorf(line int, format string, args ...any) error {
	return &SyntaxError{File: l.file, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// read returns the next raw line without its line ending, or io.EOF.
func (l *lines) read() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		chunk, more, err := l.br.ReadLine()
		if err != nil {
			if err == io.EOF {
				if len(l.buf) > 0 {
					l.n++
					return l.buf, nil
				}
				return nil, io.EOF
			}
			return nil, readErr(l.file, err)
		}
		if !more && len(l.buf) == 0 {
			l.n++
			return chunk, nil
		}
		l.buf = append(l.buf, chunk...)
		if !more {
			l.n++
			return l.buf, nil
		}
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f' }

func trim(b []byte) []byte {
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	return b
}

// next returns the next data line, trimmed and without comments, or io.EOF.
func (l *lines) next() ([]byte, error) {
	for {
		line, err := l.read()
		if err != nil {
			return nil, err
		}
		line = trim(line)
		var c []byte
		hasComment := false
		if l.cmt == "//" {
			if i := bytes.Index(line, []byte("//")); i >= 0 {
				c, hasComment = line[i+2:], true
				line = trim(line[:i])
			}
		} else if len(line) > 0 && line[0] == '#' {
			c, hasComment = line[1:], true
			line = nil
		}
		if hasComment && len(line) == 0 {
			if err := l.checkHeader(c); err != nil {
				return nil, err
			}
		}
		if len(line) > 0 {
			return line, nil
		}
	}
}

// checkHeader checks a "rocekit stimulus k=v ..." comment.
func (l *lines) checkHeader(c []byte) error {
	c = trim(c)
	rest, ok := bytes.CutPrefix(c, []byte("rocekit stimulus"))
	if !ok || (len(rest) > 0 && !isSpace(rest[0])) {
		return nil
	}
	for _, kv := range bytes.Fields(rest) {
		k, v, _ := bytes.Cut(kv, []byte("="))
		switch string(k) {
		case "format":
			if string(v) != l.format {
				return l.errorf(l.n, "header says format=%s, expected format=%s", clip(v), l.format)
			}
		case "width":
			if l.geom && string(v) != strconv.Itoa(l.width) {
				return l.errorf(l.n, "header says width=%s, reading with width %d", clip(v), l.width)
			}
		case "byte-order":
			if l.geom && string(v) != l.order.String() {
				return l.errorf(l.n, "header says byte-order=%s, reading with byte order %v", clip(v), l.order)
			}
		}
	}
	return nil
}

// clip quotes b for an error message, shortened to 40 bytes.
func clip(b []byte) string {
	if len(b) > 40 {
		return strconv.Quote(string(b[:40])) + "..."
	}
	return strconv.Quote(string(b))
}

// hexVal maps a hex digit (either case) to its value and anything else to
// 0xFF.
var hexVal = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xFF
	}
	for i, c := range []byte("0123456789abcdef") {
		t[c] = byte(i)
	}
	for i, c := range []byte("ABCDEF") {
		t[c] = byte(10 + i)
	}
	return t
}()

func unhex(c byte) (byte, bool) {
	v := hexVal[c]
	return v, v != 0xFF
}

// badHex returns the index of the first byte of s that is not a hex digit,
// or -1.
func badHex(s []byte) int {
	for i, c := range s {
		if _, ok := unhex(c); !ok {
			return i
		}
	}
	return -1
}

// hexError describes the first non-hex byte of field (which starts at
// column col of the line, 1-based).
func (l *lines) hexError(field string, s []byte, col int) error {
	i := badHex(s)
	return l.errorf(l.n, "bad hex digit %q at column %d of %s", s[i], col+i, field)
}

// decodeWord decodes 2*nb hex digits (already checked) into beat, in frame
// byte order.
func decodeWord(beat, s []byte, o Order) {
	nb := len(beat)
	if o == BE {
		for p := range nb {
			beat[p] = hexVal[s[2*p]]<<4 | hexVal[s[2*p+1]]
		}
		return
	}
	for p := range nb {
		beat[nb-1-p] = hexVal[s[2*p]]<<4 | hexVal[s[2*p+1]]
	}
}

// keepCount decodes nb/4 hex digits of tkeep (already checked) and returns
// how many bytes it keeps, or an error text if they are not contiguous from
// frame byte 0.
func keepCount(s []byte, nb int, o Order) (int, string) {
	bit := func(j int) bool { // tkeep[j]
		d, _ := unhex(s[(nb-1-j)/4])
		return d>>(j%4)&1 == 1
	}
	n := 0
	for n < nb && ((o == LE && bit(n)) || (o == BE && bit(nb-1-n))) {
		n++
	}
	for k := n; k < nb; k++ {
		j := k
		if o == BE {
			j = nb - 1 - k
		}
		if bit(j) {
			if o == BE {
				return 0, fmt.Sprintf("tkeep %s has holes: with byte-order be the kept bytes are the top tkeep bits, contiguous from tkeep[%d]", s, nb-1)
			}
			return 0, fmt.Sprintf("tkeep %s has holes: with byte-order le the kept bytes are the low tkeep bits, contiguous from tkeep[0]", s)
		}
	}
	return n, ""
}

func checkGeometry(width int, order Order) error {
	if err := CheckWidth(width); err != nil {
		return err
	}
	if !order.valid() {
		return fmt.Errorf("stim: byte order %d: want LE or BE", uint8(order))
	}
	return nil
}

// ReadHex reads the hex format: one frame per line as hex digits (either
// case, no separators); "#" comment lines and blank lines are skipped. On
// error it returns the frames before the bad line.
func ReadHex(r io.Reader) ([][]byte, error) {
	l := newLines(r, "hex", "#", "hex", false, 0, LE)
	var frames [][]byte
	for {
		line, err := l.next()
		if err == io.EOF {
			return frames, nil
		}
		if err != nil {
			return frames, err
		}
		if i := badHex(line); i >= 0 {
			return frames, l.hexError("the frame", line, 1)
		}
		if len(line)%2 != 0 {
			return frames, l.errorf(l.n, "odd number of hex digits (%d): a byte needs two", len(line))
		}
		f := make([]byte, len(line)/2)
		decodeWord(f, line, BE)
		frames = append(frames, f)
	}
}

// frameAsm collects the beats of the frame being read.
type frameAsm struct {
	frames [][]byte
	cur    []byte
	open   bool // a beat without tlast was read
	first  int  // line of the current frame's first beat
	last   int  // line of the last beat
}

func (a *frameAsm) add(beat []byte, tlast bool, line int) {
	if !a.open {
		a.first = line
		a.open = true
	}
	a.last = line
	a.cur = append(a.cur, beat...)
	if tlast {
		f := make([]byte, len(a.cur))
		copy(f, a.cur)
		a.frames = append(a.frames, f)
		a.cur = a.cur[:0]
		a.open = false
	}
}

// fields splits line at runs of spaces and tabs into at most len(dst)
// fields and returns how many there were (possibly more than len(dst)) and
// the column of each.
func fields(line []byte, dst [][]byte, cols []int) int {
	n := 0
	for i := 0; i < len(line); {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i == len(line) {
			break
		}
		j := i
		for j < len(line) && !isSpace(line[j]) {
			j++
		}
		if n < len(dst) {
			dst[n], cols[n] = line[i:j], i+1
		}
		n++
		i = j
	}
	return n
}

// ReadAXIS reads the axis format at the given width and byte order: one
// "tdata tkeep tlast" beat per line (fields separated by spaces or tabs),
// "#" comment lines and blank lines skipped. It fails on bad hex, a wrong
// digit count, a tkeep of 0 or with holes, a partial beat without tlast,
// and input ending inside a frame. On error it returns the frames complete
// before the bad line.
func ReadAXIS(r io.Reader, width int, order Order) ([][]byte, error) {
	if err := checkGeometry(width, order); err != nil {
		return nil, err
	}
	nb := width / 8
	l := newLines(r, "axis", "#", "axis", true, width, order)
	var a frameAsm
	beat := make([]byte, nb)
	var f [3][]byte
	var cols [3]int
	for {
		line, err := l.next()
		if err == io.EOF {
			if a.open {
				return a.frames, l.errorf(a.last, "input ends inside a frame: no beat with tlast 1 after the frame's first beat at line %d", a.first)
			}
			return a.frames, nil
		}
		if err != nil {
			return a.frames, err
		}
		if n := fields(line, f[:], cols[:]); n != 3 {
			return a.frames, l.errorf(l.n, "%d fields, want 3: tdata tkeep tlast", n)
		}
		if len(f[0]) != 2*nb {
			return a.frames, l.errorf(l.n, "tdata has %d hex digits, width %d needs %d", len(f[0]), width, 2*nb)
		}
		if badHex(f[0]) >= 0 {
			return a.frames, l.hexError("tdata", f[0], cols[0])
		}
		if len(f[1]) != nb/4 {
			return a.frames, l.errorf(l.n, "tkeep has %d hex digits, width %d needs %d", len(f[1]), width, nb/4)
		}
		if badHex(f[1]) >= 0 {
			return a.frames, l.hexError("tkeep", f[1], cols[1])
		}
		if len(f[2]) != 1 || (f[2][0] != '0' && f[2][0] != '1') {
			return a.frames, l.errorf(l.n, "tlast %s, want 0 or 1", clip(f[2]))
		}
		tlast := f[2][0] == '1'
		if err := beatInto(l, &a, beat, f[0], f[1], tlast, order); err != nil {
			return a.frames, err
		}
	}
}

// beatInto checks tkeep and adds the beat to the frame being assembled.
func beatInto(l *lines, a *frameAsm, beat, data, keep []byte, tlast bool, order Order) error {
	nb := len(beat)
	n, msg := keepCount(keep, nb, order)
	if msg != "" {
		return l.errorf(l.n, "%s", msg)
	}
	if n == 0 {
		return l.errorf(l.n, "tkeep is 0: a beat carries at least one byte")
	}
	if n < nb && !tlast {
		return l.errorf(l.n, "tkeep %s keeps %d of %d bytes but tlast is 0: only a frame's last beat may be partial", keep, n, nb)
	}
	decodeWord(beat, data, order)
	a.add(beat[:n], tlast, l.n)
	return nil
}

// ReadAXISMem reads the axismem format at the given width and byte order:
// one {3'b000, tlast, tkeep, tdata} word per line (1+W/32+W/4 hex digits),
// "//" comments and blank lines skipped, ended by a word with tkeep 0 (or by
// the end of input after a complete frame). It fails like ReadAXIS and on
// data after the end word.
func ReadAXISMem(r io.Reader, width int, order Order) ([][]byte, error) {
	if err := checkGeometry(width, order); err != nil {
		return nil, err
	}
	nb := width / 8
	l := newLines(r, "axismem", "//", "axismem", true, width, order)
	var a frameAsm
	beat := make([]byte, nb)
	digits := 1 + nb/4 + 2*nb
	end := 0 // line of the end word
	for {
		line, err := l.next()
		if err == io.EOF {
			if a.open {
				return a.frames, l.errorf(a.last, "input ends inside a frame: no beat with tlast 1 after the frame's first beat at line %d", a.first)
			}
			return a.frames, nil
		}
		if err != nil {
			return a.frames, err
		}
		if end > 0 {
			return a.frames, l.errorf(l.n, "data after the end word (tkeep 0) at line %d", end)
		}
		if len(line) != digits {
			return a.frames, l.errorf(l.n, "%d hex digits, width %d needs %d (1 tlast, %d tkeep, %d tdata)", len(line), width, digits, nb/4, 2*nb)
		}
		if badHex(line) >= 0 {
			return a.frames, l.hexError("the beat", line, 1)
		}
		if line[0] != '0' && line[0] != '1' {
			return a.frames, l.errorf(l.n, "first digit %q: the top 3 bits must be 0 and bit 0 is tlast, so it must be 0 or 1", line[0])
		}
		tlast := line[0] == '1'
		keep, data := line[1:1+nb/4], line[1+nb/4:]
		if n, msg := keepCount(keep, nb, order); msg == "" && n == 0 {
			if a.open {
				return a.frames, l.errorf(l.n, "end word (tkeep 0) inside the frame that starts at line %d", a.first)
			}
			end = l.n
			continue
		}
		if err := beatInto(l, &a, beat, data, keep, tlast, order); err != nil {
			return a.frames, err
		}
	}
}

// ReadMemh reads the memh format at the given width and byte order: the
// words from mem (PREFIX.mem, one W/4-digit word per line) and the frame
// table from idx (PREFIX.idx.mem, one 16-digit {start, len} entry per line,
// ended by an entry of length 0 whose start must be the number of words, or
// by the end of input). "//" comments and blank lines are skipped. Entries
// must be in increasing word order and must not overlap. On error it
// returns the frames of the entries before the bad one.
func ReadMemh(mem, idx io.Reader, width int, order Order) ([][]byte, error) {
	if err := checkGeometry(width, order); err != nil {
		return nil, err
	}
	nb := width / 8
	lm := newLines(mem, "mem", "//", "memh", true, width, order)
	var words []byte // nb bytes per word, in frame byte order
	for {
		line, err := lm.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if line[0] == '@' {
			return nil, lm.errorf(lm.n, "address directives (@...) are not supported: the words run from address 0")
		}
		if len(line) != 2*nb {
			if fields(line, nil, nil) > 1 {
				return nil, lm.errorf(lm.n, "more than one word on the line: write one word per line")
			}
			return nil, lm.errorf(lm.n, "word has %d hex digits, width %d needs %d", len(line), width, 2*nb)
		}
		if badHex(line) >= 0 {
			return nil, lm.hexError("the word", line, 1)
		}
		words = append(words, make([]byte, nb)...)
		decodeWord(words[len(words)-nb:], line, order)
	}
	nwords := uint64(len(words) / nb)

	li := newLines(idx, "idx", "//", "memh-idx", true, width, order)
	var frames [][]byte
	var next uint64 // first word not yet used by a frame
	end := 0        // line of the end entry
	for {
		line, err := li.next()
		if err == io.EOF {
			return frames, nil
		}
		if err != nil {
			return frames, err
		}
		if end > 0 {
			return frames, li.errorf(li.n, "entry after the end entry (length 0) at line %d", end)
		}
		if len(line) != 16 {
			return frames, li.errorf(li.n, "entry has %d hex digits, want 16: {start[31:0], len[31:0]}", len(line))
		}
		if badHex(line) >= 0 {
			return frames, li.hexError("the entry", line, 1)
		}
		var v uint64
		for _, c := range line {
			d, _ := unhex(c)
			v = v<<4 | uint64(d)
		}
		start, n := v>>32, v&maxIndex
		if n == 0 {
			if start != nwords {
				return frames, li.errorf(li.n, "end entry says %d words, the mem file has %d", start, nwords)
			}
			end = li.n
			continue
		}
		need := (n + uint64(nb) - 1) / uint64(nb)
		if start < next {
			return frames, li.errorf(li.n, "frame %d starts at word %d, inside frame %d's words (entries must be in order and not overlap)", len(frames), start, len(frames)-1)
		}
		if start+need > nwords {
			return frames, li.errorf(li.n, "frame %d: %d bytes from word %d need words up to %d, the mem file has %d words", len(frames), n, start, start+need-1, nwords)
		}
		f := make([]byte, n)
		copy(f, words[start*uint64(nb):])
		frames = append(frames, f)
		next = start + need
	}
}
