package stim_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/stim"
)

// TestReadErrors: every reader names the file, the line and what is wrong.
func TestReadErrors(t *testing.T) {
	const ok64 = "0706050403020100 ff 0\n"
	cases := []struct {
		name   string
		format stim.Format
		order  stim.Order
		in     string // for memh: mem and idx separated by "|"
		file   string
		line   int
		msg    string
	}{
		{"hex bad digit", stim.FormatHex, stim.LE, "0g\n", "hex", 1, `bad hex digit 'g' at column 2 of the frame`},
		{"hex odd", stim.FormatHex, stim.LE, "# c\n012\n", "hex", 2, "odd number of hex digits (3)"},
		{"hex separators", stim.FormatHex, stim.LE, "00\n\n# c\n00 11\n", "hex", 4, `bad hex digit ' ' at column 3`},
		{"hex header", stim.FormatHex, stim.LE, "# rocekit stimulus format=axis width=64 byte-order=le\n00\n", "hex", 1, "header says format=\"axis\", expected format=hex"},

		{"axis 2 fields", stim.FormatAXIS, stim.LE, "0706050403020100 ff\n", "axis", 1, "2 fields, want 3: tdata tkeep tlast"},
		{"axis 4 fields", stim.FormatAXIS, stim.LE, "0706050403020100 ff 0 0\n", "axis", 1, "4 fields, want 3"},
		{"axis short tdata", stim.FormatAXIS, stim.LE, "070605040302010 ff 1\n", "axis", 1, "tdata has 15 hex digits, width 64 needs 16"},
		{"axis long tdata", stim.FormatAXIS, stim.LE, ok64 + "00706050403020100 ff 1\n", "axis", 2, "tdata has 17 hex digits, width 64 needs 16"},
		{"axis bad tdata", stim.FormatAXIS, stim.LE, "070605040302010x ff 1\n", "axis", 1, `bad hex digit 'x' at column 16 of tdata`},
		{"axis short tkeep", stim.FormatAXIS, stim.LE, "0706050403020100 f 1\n", "axis", 1, "tkeep has 1 hex digits, width 64 needs 2"},
		{"axis bad tkeep", stim.FormatAXIS, stim.LE, "0706050403020100  fg 1\n", "axis", 1, `bad hex digit 'g' at column 20 of tkeep`},
		{"axis bad tlast", stim.FormatAXIS, stim.LE, "0706050403020100 ff 2\n", "axis", 1, `tlast "2", want 0 or 1`},
		{"axis tlast word", stim.FormatAXIS, stim.LE, "0706050403020100 ff true\n", "axis", 1, `tlast "true", want 0 or 1`},
		{"axis keep hole le", stim.FormatAXIS, stim.LE, "0706050403020100 05 1\n", "axis", 1, "tkeep 05 has holes: with byte-order le the kept bytes are the low tkeep bits, contiguous from tkeep[0]"},
		{"axis keep not from 0 le", stim.FormatAXIS, stim.LE, "0706050403020100 fe 1\n", "axis", 1, "tkeep fe has holes"},
		{"axis keep hole be", stim.FormatAXIS, stim.BE, "0706050403020100 03 1\n", "axis", 1, "tkeep 03 has holes: with byte-order be the kept bytes are the top tkeep bits, contiguous from tkeep[7]"},
		{"axis keep zero", stim.FormatAXIS, stim.LE, "0706050403020100 00 1\n", "axis", 1, "tkeep is 0"},
		{"axis partial no tlast", stim.FormatAXIS, stim.LE, "0706050403020100 0f 0\n", "axis", 1, "tkeep 0f keeps 4 of 8 bytes but tlast is 0: only a frame's last beat may be partial"},
		{"axis partial no tlast be", stim.FormatAXIS, stim.BE, "0706050403020100 f0 0\n", "axis", 1, "keeps 4 of 8 bytes but tlast is 0"},
		{"axis no tlast at eof", stim.FormatAXIS, stim.LE, "0706050403020100 ff 1\n" + ok64 + ok64 + "# end\n\n", "axis", 3, "input ends inside a frame: no beat with tlast 1 after the frame's first beat at line 2"},
		{"axis header width", stim.FormatAXIS, stim.LE, "# rocekit stimulus format=axis width=128 byte-order=le\n" + ok64, "axis", 1, `header says width="128", reading with width 64`},
		{"axis header order", stim.FormatAXIS, stim.LE, "#rocekit stimulus format=axis width=64 byte-order=be\n", "axis", 1, `header says byte-order="be", reading with byte order le`},
		{"axis header format", stim.FormatAXIS, stim.LE, "# rocekit stimulus format=hex\n", "axis", 1, `header says format="hex", expected format=axis`},

		{"axismem digits", stim.FormatAXISMem, stim.LE, "0ff070605040302010\n", "axismem", 1, "18 hex digits, width 64 needs 19 (1 tlast, 2 tkeep, 16 tdata)"},
		{"axismem bad hex", stim.FormatAXISMem, stim.LE, "0ff07060504030201z0 // x\n", "axismem", 1, `bad hex digit 'z' at column 18 of the beat`},
		{"axismem top bits", stim.FormatAXISMem, stim.LE, "2ff0706050403020100\n", "axismem", 1, "first digit '2': the top 3 bits must be 0"},
		{"axismem keep hole", stim.FormatAXISMem, stim.LE, "1f70706050403020100\n", "axismem", 1, "tkeep f7 has holes"},
		{"axismem partial", stim.FormatAXISMem, stim.LE, "0030706050403020100\n", "axismem", 1, "keeps 2 of 8 bytes but tlast is 0"},
		{"axismem end in frame", stim.FormatAXISMem, stim.LE, "0ff0706050403020100\n0000000000000000000\n", "axismem", 2, "end word (tkeep 0) inside the frame that starts at line 1"},
		{"axismem after end", stim.FormatAXISMem, stim.LE, "1ff0706050403020100\n0000000000000000000\n// c\n1ff0706050403020100\n", "axismem", 4, "data after the end word (tkeep 0) at line 2"},
		{"axismem eof in frame", stim.FormatAXISMem, stim.LE, "0ff0706050403020100\n", "axismem", 1, "input ends inside a frame"},
		{"axismem header", stim.FormatAXISMem, stim.LE, "// rocekit stimulus format=memh width=64 byte-order=le\n", "axismem", 1, `header says format="memh", expected format=axismem`},

		{"mem digits", stim.FormatMemh, stim.LE, "0706050403020100\n070605040302010\n|", "mem", 2, "word has 15 hex digits, width 64 needs 16"},
		{"mem two words", stim.FormatMemh, stim.LE, "07060504 03020100\n|", "mem", 1, "more than one word on the line"},
		{"mem address", stim.FormatMemh, stim.LE, "@0\n|", "mem", 1, "address directives (@...) are not supported"},
		{"mem bad hex", stim.FormatMemh, stim.LE, "07060504x3020100\n|", "mem", 1, `bad hex digit 'x' at column 9 of the word`},
		{"mem header", stim.FormatMemh, stim.BE, "// rocekit stimulus format=memh width=64 byte-order=le\n|", "mem", 1, `header says byte-order="le"`},
		{"idx header", stim.FormatMemh, stim.LE, "|// rocekit stimulus format=memh width=64 byte-order=le\n", "idx", 1, `header says format="memh", expected format=memh-idx`},
		{"idx digits", stim.FormatMemh, stim.LE, "0706050403020100\n|00000000000000008\n", "idx", 1, "entry has 17 hex digits, want 16: {start[31:0], len[31:0]}"},
		{"idx bad hex", stim.FormatMemh, stim.LE, "0706050403020100\n|000000000000000g\n", "idx", 1, `bad hex digit 'g' at column 16 of the entry`},
		{"idx end count", stim.FormatMemh, stim.LE, "0706050403020100\n|0000000000000008\n0000000200000000\n", "idx", 2, "end entry says 2 words, the mem file has 1"},
		{"idx beyond mem", stim.FormatMemh, stim.LE, "0706050403020100\n|0000000000000009\n", "idx", 1, "frame 0: 9 bytes from word 0 need words up to 1, the mem file has 1 words"},
		{"idx huge start", stim.FormatMemh, stim.LE, "0706050403020100\n|ffffffffffffffff\n", "idx", 1, "frame 0: 4294967295 bytes from word 4294967295"},
		{"idx overlap", stim.FormatMemh, stim.LE, "0706050403020100\n0706050403020100\n|0000000000000009\n0000000100000001\n", "idx", 2, "frame 1 starts at word 1, inside frame 0's words"},
		{"idx after end", stim.FormatMemh, stim.LE, "0706050403020100\n|0000000000000008\n0000000100000000\n0000000000000001\n", "idx", 3, "entry after the end entry (length 0) at line 2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			files := [][]byte{[]byte(tc.in)}
			if tc.format == stim.FormatMemh {
				mem, idx, _ := strings.Cut(tc.in, "|")
				files = [][]byte{[]byte(mem), []byte(idx)}
			}
			_, err := readStream(tc.format, 64, tc.order, files)
			require.Error(t, err)
			var se *stim.SyntaxError
			require.True(t, errors.As(err, &se), "%T %v", err, err)
			assert.Equal(t, tc.file, se.File)
			assert.Equal(t, tc.line, se.Line)
			assert.Contains(t, se.Msg, tc.msg)
			assert.Contains(t, err.Error(), "stim: "+tc.file+" line ")
		})
	}
}

// TestReadErrorsKeepFrames: on error the frames before the bad line are
// returned.
func TestReadErrorsKeepFrames(t *testing.T) {
	frames, err := stim.ReadAXIS(strings.NewReader("0706050403020100 01 1\nzz\n"), 64, stim.LE)
	assert.Error(t, err)
	assert.Equal(t, [][]byte{{0x00}}, frames)
	frames, err = stim.ReadHex(strings.NewReader("ab\ncd\nx\n"))
	assert.Error(t, err)
	assert.Equal(t, [][]byte{{0xab}, {0xcd}}, frames)
}

// TestReadGeometry: a bad width or order is an error, not a panic.
func TestReadGeometry(t *testing.T) {
	_, err := stim.ReadAXIS(strings.NewReader(""), 96, stim.LE)
	assert.ErrorContains(t, err, "width 96")
	_, err = stim.ReadAXISMem(strings.NewReader(""), 0, stim.LE)
	assert.ErrorContains(t, err, "width 0")
	_, err = stim.ReadMemh(strings.NewReader(""), strings.NewReader(""), 64, 3)
	assert.ErrorContains(t, err, "byte order 3")
}

// TestReadLenient: upper case, CRLF, tabs, spaces, blank lines, comments
// after $readmemh words, long lines and a missing end marker are all fine.
func TestReadLenient(t *testing.T) {
	frames, err := stim.ReadHex(strings.NewReader("\r\n  # comment\r\n\tA0B1c2\r\n\n  00  \n# rocekit stimulus format=hex width=999\nff"))
	require.NoError(t, err)
	assert.Equal(t, [][]byte{{0xa0, 0xb1, 0xc2}, {0}, {0xff}}, frames)

	frames, err = stim.ReadAXIS(strings.NewReader("# x\r\n 0706050403020100\tFF   0 \r\n\n0000000000000908 03 1"), 64, stim.LE)
	require.NoError(t, err)
	assert.Equal(t, goldenFrames[:1], frames)

	frames, err = stim.ReadMemh(
		strings.NewReader("0706050403020100 // word 0\n/\x2f comment\n0000000000000908\n"),
		strings.NewReader("000000000000000A // frame 0\n"), 64, stim.LE)
	require.NoError(t, err)
	assert.Equal(t, goldenFrames[:1], frames)

	// Gaps between frames in the mem file are allowed.
	frames, err = stim.ReadMemh(
		strings.NewReader("0706050403020100\n0000000000000908\nffffffffffffffff\na7a6a5a4a3a2a1a0\n"),
		strings.NewReader("000000000000000a\n0000000300000008\n0000000400000000\n"), 64, stim.LE)
	require.NoError(t, err)
	assert.Equal(t, goldenFrames, frames)

	frames, err = stim.ReadAXISMem(strings.NewReader("0FF0706050403020100\n1030000000000000908 // last\n"), 64, stim.LE)
	require.NoError(t, err)
	assert.Equal(t, goldenFrames[:1], frames)

	// Lines far longer than the read buffer.
	big := randomBytes(3, 200_000)
	files := writeStream(t, stim.FormatHex, stim.Options{}, [][]byte{big, {1}})
	frames, err = stim.ReadHex(bytes.NewReader(files[0]))
	require.NoError(t, err)
	assert.Equal(t, [][]byte{big, {1}}, frames)

	frames, err = stim.ReadHex(strings.NewReader(""))
	require.NoError(t, err)
	assert.Empty(t, frames)
}

// TestReadIOError: a failing io.Reader is reported as such.
func TestReadIOError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("00\n"), errReader{})
	_, err := stim.ReadHex(r)
	assert.ErrorIs(t, err, io.ErrUnexpectedEOF)
	assert.ErrorContains(t, err, "stim: reading hex")
	_, err = stim.ReadMemh(strings.NewReader(""), errReader{}, 64, stim.LE)
	assert.ErrorContains(t, err, "stim: reading idx")
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, io.ErrUnexpectedEOF }
