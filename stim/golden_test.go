package stim_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/stim"
)

// goldenFrames is the 2-frame stream of the golden files: 10 bytes (a full
// beat and a partial one at width 64) and 8 bytes (one full beat).
var goldenFrames = [][]byte{
	{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09},
	{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7},
}

// The golden files below are typed out by hand from the byte-order rules of
// the package doc; they pin the conventions, header text included.

const goldenHex = `# rocekit stimulus format=hex
# one frame per line: its bytes as lower-case hex, first byte first
00010203040506070809
a0a1a2a3a4a5a6a7
# end frames=2
`

const goldenHexComments = `# rocekit stimulus format=hex
# one frame per line: its bytes as lower-case hex, first byte first
# frame 0 len 10
00010203040506070809
# frame 1 len 8
a0a1a2a3a4a5a6a7
# end frames=2
`

// le: byte 0 is tdata[7:0] (the last two digits) and tkeep[0].
const goldenAXISLE = `# rocekit stimulus format=axis width=64 byte-order=le
# one AXI-Stream beat per line: tdata[63:0] tkeep[7:0] tlast, in hex
# byte-order le: frame byte 0 is tdata[7:0] and tkeep[0]; tdata shows it as the last two hex digits
# only the last beat of a frame (tlast 1) may be partial: unused bytes 0, their tkeep bits 0
0706050403020100 ff 0
0000000000000908 03 1
a7a6a5a4a3a2a1a0 ff 1
# end frames=2 beats=3
`

// be: byte 0 is tdata[63:56] (the first two digits) and tkeep[7].
const goldenAXISBE = `# rocekit stimulus format=axis width=64 byte-order=be
# one AXI-Stream beat per line: tdata[63:0] tkeep[7:0] tlast, in hex
# byte-order be: frame byte 0 is tdata[63:56] and tkeep[7]; the hex reads in wire order
# only the last beat of a frame (tlast 1) may be partial: unused bytes 0, their tkeep bits 0
# frame 0 len 10
0001020304050607 ff 0
0809000000000000 c0 1
# frame 1 len 8
a0a1a2a3a4a5a6a7 ff 1
# end frames=2 beats=3
`

const goldenMemLE = `// rocekit stimulus format=memh width=64 byte-order=le
// one 64-bit word per line for $readmemh; every frame starts on a new word
// byte-order le: frame byte 0 is word[7:0], the last two hex digits; unused bytes of a last word are 0
// frame table in the .idx.mem file
0706050403020100
0000000000000908
a7a6a5a4a3a2a1a0
// end frames=2 words=3
`

const goldenMemBE = `// rocekit stimulus format=memh width=64 byte-order=be
// one 64-bit word per line for $readmemh; every frame starts on a new word
// byte-order be: frame byte 0 is word[63:56]; the hex reads in wire order; unused bytes of a last word are 0
// frame table in the .idx.mem file
// frame 0 len 10
0001020304050607
0809000000000000
// frame 1 len 8
a0a1a2a3a4a5a6a7
// end frames=2 words=3
`

// {start[31:0], len[31:0]}: frame 0 at word 0, 10 bytes; frame 1 at word 2,
// 8 bytes; end entry: 3 words, length 0.
const goldenIdx = `// rocekit stimulus format=memh-idx width=64 byte-order=%s
// one 64-bit entry per frame for $readmemh: {start word[31:0], length in bytes[31:0]}
// an entry of length 0 ends the table; its start is the number of words
000000000000000a
0000000200000008
0000000300000000
// end frames=2 words=3
`

// {3'b000, tlast, tkeep, tdata}, then the all-zero end word.
const goldenAXISMemLE = `// rocekit stimulus format=axismem width=64 byte-order=le
// one AXI-Stream beat per line for $readmemh into reg [75:0]: {3'b000, tlast, tkeep[7:0], tdata[63:0]}
// byte-order le: frame byte 0 is tdata[7:0] and tkeep[0]; tdata shows it as the last two hex digits
// only the last beat of a frame (tlast 1) may be partial; a word with tkeep 0 ends the stream
0ff0706050403020100
1030000000000000908
1ffa7a6a5a4a3a2a1a0
0000000000000000000
// end frames=2 beats=3
`

const goldenAXISMemBE = `// rocekit stimulus format=axismem width=64 byte-order=be
// one AXI-Stream beat per line for $readmemh into reg [75:0]: {3'b000, tlast, tkeep[7:0], tdata[63:0]}
// byte-order be: frame byte 0 is tdata[63:56] and tkeep[7]; the hex reads in wire order
// only the last beat of a frame (tlast 1) may be partial; a word with tkeep 0 ends the stream
// frame 0 len 10
0ff0001020304050607
1c00809000000000000
// frame 1 len 8
1ffa0a1a2a3a4a5a6a7
0000000000000000000
// end frames=2 beats=3
`

// tb is what testing.T and rapid.T share.
type tb interface {
	require.TestingT
	Helper()
}

// writeStream writes frames in format f and returns the file contents (two
// for memh: .mem and .idx.mem).
func writeStream(t tb, f stim.Format, o stim.Options, frames [][]byte) [][]byte {
	t.Helper()
	var a, b bytes.Buffer
	var w stim.Writer
	var err error
	switch f {
	case stim.FormatHex:
		w, err = stim.NewHexWriter(&a, o)
	case stim.FormatAXIS:
		w, err = stim.NewAXISWriter(&a, o)
	case stim.FormatMemh:
		w, err = stim.NewMemhWriter(&a, &b, o)
	case stim.FormatAXISMem:
		w, err = stim.NewAXISMemWriter(&a, o)
	}
	require.NoError(t, err)
	for _, fr := range frames {
		require.NoError(t, w.WriteFrame(fr))
	}
	require.Equal(t, len(frames), w.Frames())
	require.NoError(t, w.Close())
	if f == stim.FormatMemh {
		return [][]byte{a.Bytes(), b.Bytes()}
	}
	return [][]byte{a.Bytes()}
}

// readStream reads files written by writeStream.
func readStream(f stim.Format, width int, o stim.Order, files [][]byte) ([][]byte, error) {
	switch f {
	case stim.FormatHex:
		return stim.ReadHex(bytes.NewReader(files[0]))
	case stim.FormatAXIS:
		return stim.ReadAXIS(bytes.NewReader(files[0]), width, o)
	case stim.FormatMemh:
		return stim.ReadMemh(bytes.NewReader(files[0]), bytes.NewReader(files[1]), width, o)
	case stim.FormatAXISMem:
		return stim.ReadAXISMem(bytes.NewReader(files[0]), width, o)
	}
	panic("format")
}

var allFormats = []stim.Format{stim.FormatHex, stim.FormatAXIS, stim.FormatMemh, stim.FormatAXISMem}

func TestGoldenW64(t *testing.T) {
	cases := []struct {
		order    stim.Order
		comments bool // FrameComments
		want     map[stim.Format][]string
	}{
		{stim.LE, false, map[stim.Format][]string{
			stim.FormatHex:     {goldenHex},
			stim.FormatAXIS:    {goldenAXISLE},
			stim.FormatMemh:    {goldenMemLE, strings.Replace(goldenIdx, "%s", "le", 1)},
			stim.FormatAXISMem: {goldenAXISMemLE},
		}},
		{stim.BE, true, map[stim.Format][]string{
			stim.FormatHex:     {goldenHexComments},
			stim.FormatAXIS:    {goldenAXISBE},
			stim.FormatMemh:    {goldenMemBE, strings.Replace(goldenIdx, "%s", "be", 1)},
			stim.FormatAXISMem: {goldenAXISMemBE},
		}},
	}
	for _, tc := range cases {
		for _, f := range allFormats {
			t.Run(tc.order.String()+"/"+f.String(), func(t *testing.T) {
				o := stim.Options{Width: 64, Order: tc.order, FrameComments: tc.comments}
				got := writeStream(t, f, o, goldenFrames)
				require.Len(t, got, len(tc.want[f]))
				for i := range got {
					assert.Equal(t, tc.want[f][i], string(got[i]))
				}
				// The hand-typed files read back to the frames.
				files := make([][]byte, len(tc.want[f]))
				for i, s := range tc.want[f] {
					files[i] = []byte(s)
				}
				frames, err := readStream(f, 64, tc.order, files)
				require.NoError(t, err)
				assert.Equal(t, goldenFrames, frames)
			})
		}
	}
}

// TestGoldenNoHeader: NoHeader leaves data lines and end markers only; the
// hex format is then exactly scapy's bytes(p).hex(), one per line.
func TestGoldenNoHeader(t *testing.T) {
	o := stim.Options{Width: 64, Order: stim.LE, NoHeader: true}
	want := map[stim.Format][]string{
		stim.FormatHex:     {"00010203040506070809\na0a1a2a3a4a5a6a7\n"},
		stim.FormatAXIS:    {"0706050403020100 ff 0\n0000000000000908 03 1\na7a6a5a4a3a2a1a0 ff 1\n"},
		stim.FormatMemh:    {"0706050403020100\n0000000000000908\na7a6a5a4a3a2a1a0\n", "000000000000000a\n0000000200000008\n0000000300000000\n"},
		stim.FormatAXISMem: {"0ff0706050403020100\n1030000000000000908\n1ffa7a6a5a4a3a2a1a0\n0000000000000000000\n"},
	}
	for _, f := range allFormats {
		got := writeStream(t, f, o, goldenFrames)
		for i := range got {
			assert.Equal(t, want[f][i], string(got[i]), f.String())
		}
	}
}

// TestGoldenComments: extra header comments follow the format line.
func TestGoldenComments(t *testing.T) {
	o := stim.Options{Width: 128, Order: stim.BE, Comments: []string{"rocekit gen -w 128", ""}}
	got := writeStream(t, stim.FormatAXIS, o, [][]byte{{1, 2, 3}})
	assert.Equal(t, `# rocekit stimulus format=axis width=128 byte-order=be
# rocekit gen -w 128
#
# one AXI-Stream beat per line: tdata[127:0] tkeep[15:0] tlast, in hex
# byte-order be: frame byte 0 is tdata[127:120] and tkeep[15]; the hex reads in wire order
# only the last beat of a frame (tlast 1) may be partial: unused bytes 0, their tkeep bits 0
01020300000000000000000000000000 e000 1
# end frames=1 beats=1
`, string(got[0]))
}
