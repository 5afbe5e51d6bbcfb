package stim_test

import (
	"bytes"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/stim"
)

// TestRoundTripProperty: any frames (1..3000 bytes), any width, either byte
// order, any options -> every format -> its reader -> the same frames.
func TestRoundTripProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		width := rapid.SampledFrom(stim.Widths()).Draw(t, "width")
		order := rapid.SampledFrom([]stim.Order{stim.LE, stim.BE}).Draw(t, "order")
		o := stim.Options{
			Width: width, Order: order,
			FrameComments: rapid.Bool().Draw(t, "frameComments"),
			NoHeader:      rapid.Bool().Draw(t, "noHeader"),
		}
		n := rapid.IntRange(1, 6).Draw(t, "frames")
		frames := make([][]byte, n)
		for i := range frames {
			// Lengths around the beat boundaries are the interesting ones;
			// draw those often, any length up to 3000 otherwise.
			var l int
			if rapid.Bool().Draw(t, "nearBeat") {
				l = max(1, rapid.IntRange(1, 3000/(width/8)).Draw(t, "beats")*(width/8)+rapid.IntRange(-1, 1).Draw(t, "delta"))
			} else {
				l = rapid.IntRange(1, 3000).Draw(t, "len")
			}
			frames[i] = randomBytes(rapid.Uint64().Draw(t, "seed"), l)
		}
		for _, f := range allFormats {
			files := writeStream(t, f, o, frames)
			got, err := readStream(f, width, order, files)
			if err != nil {
				t.Fatalf("%v: %v", f, err)
			}
			if !equalFrames(frames, got) {
				t.Fatalf("%v width %d %v: frames differ", f, width, order)
			}
		}
	})
}

func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func equalFrames(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// TestRoundTripAllLengths: one stream holding every frame length 1..300
// (up to more than two 1024-bit beats, so every partial-beat size of every
// width) and every 7th length up to 3000, in every format, width and byte
// order.
func TestRoundTripAllLengths(t *testing.T) {
	var frames [][]byte
	for l := 1; l <= 3000; l++ {
		if l <= 300 || l%7 == 0 || l == 3000 {
			frames = append(frames, randomBytes(uint64(l), l))
		}
	}
	for _, width := range stim.Widths() {
		for _, order := range []stim.Order{stim.LE, stim.BE} {
			for _, f := range allFormats {
				if f == stim.FormatHex && (width != 64 || order != stim.LE) {
					continue // width and order do not apply
				}
				t.Run(f.String()+"/"+order.String()+"/"+itoa(width), func(t *testing.T) {
					files := writeStream(t, f, stim.Options{Width: width, Order: order, FrameComments: true}, frames)
					got, err := readStream(f, width, order, files)
					require.NoError(t, err)
					require.True(t, equalFrames(frames, got), "frames differ")
				})
			}
		}
	}
}

func itoa(i int) string {
	b := []byte{}
	for ; i > 0; i /= 10 {
		b = append([]byte{byte('0' + i%10)}, b...)
	}
	return string(b)
}

// TestCounts: the writers count frames, beats and words.
func TestCounts(t *testing.T) {
	frames := [][]byte{make([]byte, 1), make([]byte, 32), make([]byte, 33), make([]byte, 100)}
	o := stim.Options{Width: 256}
	a, err := stim.NewAXISWriter(io.Discard, o)
	require.NoError(t, err)
	m, err := stim.NewMemhWriter(io.Discard, io.Discard, o)
	require.NoError(t, err)
	x, err := stim.NewAXISMemWriter(io.Discard, o)
	require.NoError(t, err)
	for _, f := range frames {
		require.NoError(t, a.WriteFrame(f))
		require.NoError(t, m.WriteFrame(f))
		require.NoError(t, x.WriteFrame(f))
	}
	// 1 + 1 + 2 + 4 beats of 32 bytes.
	assert.Equal(t, 8, a.Beats())
	assert.Equal(t, 8, m.Words())
	assert.Equal(t, 8, x.Beats())
	assert.Equal(t, 4, m.Frames())
}

// TestCreate writes every format to files and reads them back.
func TestCreate(t *testing.T) {
	dir := t.TempDir()
	for _, f := range allFormats {
		prefix := filepath.Join(dir, "s-"+f.String())
		w, err := stim.Create(f, prefix, stim.Options{Width: 512, Order: stim.BE})
		require.NoError(t, err)
		for _, fr := range goldenFrames {
			require.NoError(t, w.WriteFrame(fr))
		}
		require.NoError(t, w.Close())
		var files [][]byte
		for _, name := range stim.Files(f, prefix) {
			b, err := os.ReadFile(name)
			require.NoError(t, err)
			files = append(files, b)
		}
		got, err := readStream(f, 512, stim.BE, files)
		require.NoError(t, err)
		assert.Equal(t, goldenFrames, got)
	}
	assert.Equal(t, []string{"p.hex"}, stim.Files(stim.FormatHex, "p"))
	assert.Equal(t, []string{"p.axis"}, stim.Files(stim.FormatAXIS, "p"))
	assert.Equal(t, []string{"p.mem", "p.idx.mem"}, stim.Files(stim.FormatMemh, "p"))
	assert.Equal(t, []string{"p.axis.mem"}, stim.Files(stim.FormatAXISMem, "p"))
	assert.Nil(t, stim.Files(0, "p"))

	_, err := stim.Create(stim.FormatAXIS, filepath.Join(dir, "x"), stim.Options{Width: 96})
	assert.ErrorContains(t, err, "width 96")
	_, err = stim.Create(stim.FormatHex, filepath.Join(dir, "no", "such", "dir"), stim.Options{})
	assert.Error(t, err)
	_, err = stim.Create(0, filepath.Join(dir, "y"), stim.Options{})
	assert.ErrorContains(t, err, "unknown format")
}

// TestWriterAllocs: after the first frame, writing a frame allocates
// nothing.
func TestWriterAllocs(t *testing.T) {
	frame := randomBytes(7, 1500)
	small := frame[:61]
	o := stim.Options{Width: 512, FrameComments: true}
	h, _ := stim.NewHexWriter(io.Discard, o)
	a, _ := stim.NewAXISWriter(io.Discard, o)
	m, _ := stim.NewMemhWriter(io.Discard, io.Discard, o)
	x, _ := stim.NewAXISMemWriter(io.Discard, o)
	for _, w := range []stim.Writer{h, a, m, x} {
		require.NoError(t, w.WriteFrame(frame)) // warm-up
		allocs := testing.AllocsPerRun(100, func() {
			_ = w.WriteFrame(frame)
			_ = w.WriteFrame(small)
		})
		assert.Zero(t, allocs, "%T", w)
	}
}

func TestWriterErrors(t *testing.T) {
	for _, f := range allFormats {
		var w stim.Writer
		o := stim.Options{Width: 64}
		switch f {
		case stim.FormatHex:
			w, _ = stim.NewHexWriter(io.Discard, o)
		case stim.FormatAXIS:
			w, _ = stim.NewAXISWriter(io.Discard, o)
		case stim.FormatMemh:
			w, _ = stim.NewMemhWriter(io.Discard, io.Discard, o)
		case stim.FormatAXISMem:
			w, _ = stim.NewAXISMemWriter(io.Discard, o)
		}
		assert.ErrorIs(t, w.WriteFrame(nil), stim.ErrEmptyFrame, f.String())
		assert.Zero(t, w.Frames())
		require.NoError(t, w.Close())
		assert.ErrorIs(t, w.WriteFrame([]byte{1}), stim.ErrClosed)
		assert.ErrorIs(t, w.Close(), stim.ErrClosed)
	}

	for _, o := range []stim.Options{{Width: 0}, {Width: 32}, {Width: 2048}, {Width: 64, Order: 2}, {Width: 64, Comments: []string{"a\nb"}}} {
		_, err := stim.NewAXISWriter(io.Discard, o)
		assert.Error(t, err, "%+v", o)
		_, err = stim.NewMemhWriter(io.Discard, io.Discard, o)
		assert.Error(t, err, "%+v", o)
		_, err = stim.NewAXISMemWriter(io.Discard, o)
		assert.Error(t, err, "%+v", o)
	}
	// hex ignores width and order, not bad comments.
	_, err := stim.NewHexWriter(io.Discard, stim.Options{})
	assert.NoError(t, err)
	_, err = stim.NewHexWriter(io.Discard, stim.Options{Comments: []string{"a\rb"}})
	assert.ErrorContains(t, err, "line break")

	// A failing io.Writer surfaces at the latest in Close.
	w, _ := stim.NewAXISWriter(failWriter{}, stim.Options{Width: 64})
	_ = w.WriteFrame([]byte{1})
	assert.ErrorIs(t, w.Close(), errFail)
	m, _ := stim.NewMemhWriter(io.Discard, failWriter{}, stim.Options{Width: 64})
	_ = m.WriteFrame([]byte{1})
	assert.ErrorIs(t, m.Close(), errFail)
}

type failWriter struct{}

var errFail = io.ErrShortWrite

func (failWriter) Write([]byte) (int, error) { return 0, errFail }

func TestParse(t *testing.T) {
	for _, f := range allFormats {
		g, err := stim.ParseFormat(f.String())
		require.NoError(t, err)
		assert.Equal(t, f, g)
	}
	g, err := stim.ParseFormat("AXISMEM")
	require.NoError(t, err)
	assert.Equal(t, stim.FormatAXISMem, g)
	_, err = stim.ParseFormat("vcd")
	assert.ErrorContains(t, err, `format "vcd"`)
	assert.Equal(t, "Format(9)", stim.Format(9).String())

	o, err := stim.ParseOrder("BE")
	require.NoError(t, err)
	assert.Equal(t, stim.BE, o)
	o, err = stim.ParseOrder("le")
	require.NoError(t, err)
	assert.Equal(t, stim.LE, o)
	_, err = stim.ParseOrder("network")
	assert.Error(t, err)
	assert.Equal(t, "Order(7)", stim.Order(7).String())

	for _, w := range stim.Widths() {
		assert.NoError(t, stim.CheckWidth(w))
	}
	assert.Error(t, stim.CheckWidth(8))
}

func BenchmarkWriteAXIS512(b *testing.B) {
	frame := randomBytes(1, 1024)
	w, _ := stim.NewAXISWriter(io.Discard, stim.Options{Width: 512})
	b.SetBytes(int64(len(frame)))
	b.ReportAllocs()
	for b.Loop() {
		_ = w.WriteFrame(frame)
	}
}
