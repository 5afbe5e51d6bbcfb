package gen

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/stim"
)

// readStream reads back one stream written in format o.
func readStream(t *testing.T, o *Output, names []string) [][]byte {
	t.Helper()
	open := func(n string) *os.File {
		f, err := os.Open(n)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	switch o.Format {
	case "pcap", "pcapng":
		r, err := pcap.Open(names[0])
		require.NoError(t, err)
		defer r.Close()
		var frames [][]byte
		for {
			rec, err := r.Next()
			if err == io.EOF {
				return frames
			}
			require.NoError(t, err)
			frames = append(frames, bytes.Clone(rec.Data))
		}
	case "hex":
		fs, err := stim.ReadHex(open(names[0]))
		require.NoError(t, err)
		return fs
	case "axis":
		fs, err := stim.ReadAXIS(open(names[0]), o.Width, o.Order)
		require.NoError(t, err)
		return fs
	case "axismem":
		fs, err := stim.ReadAXISMem(open(names[0]), o.Width, o.Order)
		require.NoError(t, err)
		return fs
	case "memh":
		fs, err := stim.ReadMemh(open(names[0]), open(names[1]), o.Width, o.Order)
		require.NoError(t, err)
		return fs
	}
	t.Fatalf("format %s", o.Format)
	return nil
}

func datas(fs []Frame) [][]byte {
	r := make([][]byte, len(fs))
	for i := range fs {
		r[i] = fs[i].Data
	}
	return r
}

// Every format, width and byte order: the files read back with the stim
// readers (and the pcap reader) give the frames of both streams byte for
// byte, frames of every length included (most are no multiple of the beat
// width, some are shorter than one beat of 1024 bits).
func TestFormatsRoundTrip(t *testing.T) {
	src := mixSource(t)
	opt := Options{Seed: 2, Faults: []FaultSpec{{Kind: Truncate, Rate: 0.2, At: -1}, {Kind: Duplicate, Rate: 0.1, At: -1}}}
	g := collect(t, src, opt)
	odd := 0
	for _, f := range append(g.in, g.out...) {
		if len(f.Data)%128 != 0 {
			odd++
		}
	}
	require.Greater(t, odd, len(g.in)/2, "most frames end in a partial beat")
	dir := t.TempDir()
	type cfg struct {
		format string
		width  int
		order  stim.Order
	}
	var cfgs []cfg
	for _, f := range []string{"pcap", "pcapng", "hex"} {
		cfgs = append(cfgs, cfg{f, 0, stim.LE})
	}
	for _, f := range []string{"axis", "memh", "axismem"} {
		for _, w := range stim.Widths() {
			for _, o := range []stim.Order{stim.LE, stim.BE} {
				cfgs = append(cfgs, cfg{f, w, o})
			}
		}
	}
	for _, c := range cfgs {
		o := Output{Prefix: filepath.Join(dir, c.format+"-"+c.order.String()+"-"+string(rune('a'+c.width/64))), Format: c.format, Width: c.width, Order: c.order, FrameComments: c.width == 256}
		res, err := Write(src, opt, o)
		require.NoError(t, err, "%+v", c)
		assert.Equal(t, len(g.in), res.In)
		in, out, man := o.Files()
		assert.Equal(t, datas(g.in), readStream(t, &o, in), "%+v input", c)
		assert.Equal(t, datas(g.out), readStream(t, &o, out), "%+v output", c)
		_, err = os.Stat(man)
		require.NoError(t, err)
	}
}

// The pcap timestamps are the frame times (nanoseconds) and the link type
// follows the encapsulation.
func TestPcapTimesAndLinkType(t *testing.T) {
	for _, e := range []packet.Encap{packet.RoCEv2IPv4, packet.IBLocal} {
		src := mixSourceEncap(t, e)
		g := collect(t, src, Options{})
		o := Output{Prefix: filepath.Join(t.TempDir(), "t"), Format: "pcapng"}
		_, err := Write(src, Options{}, o)
		require.NoError(t, err)
		in, _, _ := o.Files()
		r, err := pcap.Open(in[0])
		require.NoError(t, err)
		for i := 0; ; i++ {
			rec, err := r.Next()
			if err == io.EOF {
				break
			}
			require.NoError(t, err)
			assert.Equal(t, LinkType(e), rec.LinkType)
			assert.Equal(t, int64(g.in[i].Time/sim.Nanosecond), rec.Time.UnixNano())
		}
		r.Close()
	}
}

// manifestJSON is the manifest as encoding/json reads it.
type manifestJSON struct {
	Source          string   `json:"source"`
	Seed            uint64   `json:"seed"`
	FaultsRequested []string `json:"faults_requested"`
	DUT             struct {
		Encap string `json:"encap"`
		QPs   []struct {
			QPN uint32 `json:"qpn"`
		} `json:"qps"`
		MRs []struct {
			Addr   uint64 `json:"addr"`
			RKey   uint32 `json:"rkey"`
			Length int    `json:"length"`
		} `json:"mrs"`
	} `json:"dut"`
	Frames []struct {
		Stream    string         `json:"stream"`
		Index     int            `json:"index"`
		TimeNS    float64        `json:"time_ns"`
		QP        *uint32        `json:"qp"`
		Opcode    *string        `json:"opcode"`
		OpcodeNum *int           `json:"opcode_num"`
		PSN       *uint32        `json:"psn"`
		Length    int            `json:"length"`
		Purpose   string         `json:"purpose"`
		Source    *int           `json:"source"`
		Fault     map[string]any `json:"fault"`
		Expect    string         `json:"expect"`
		Reason    string         `json:"reason"`
		Responses []int          `json:"responses"`
		Cause     *int           `json:"cause"`
	} `json:"frames"`
	Faults  []map[string]any `json:"faults"`
	Summary struct {
		In     int            `json:"in"`
		Out    int            `json:"out"`
		Faults int            `json:"faults"`
		Expect map[string]int `json:"expect"`
	} `json:"summary"`
}

// The manifest is valid JSON that lists every frame of both streams with
// what the generator said, and the DUT description a packet list can read
// back.
func TestManifest(t *testing.T) {
	src := mixSource(t)
	opt := Options{Seed: 4, Faults: []FaultSpec{{Kind: BadICRC, Rate: 0.1, At: -1}, {Kind: GhostACK, At: 10}, {Kind: Drop, At: 20}}}
	g := collect(t, src, opt)
	var buf bytes.Buffer
	o := Output{Format: "hex", Command: "rocekit gen \"quoted\"\n"}
	_, err := WriteTo(src, opt, o, []io.Writer{io.Discard}, []io.Writer{io.Discard}, &buf, nil, nil)
	require.NoError(t, err)
	var m manifestJSON
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m), buf.String()[:500])
	assert.Equal(t, uint64(4), m.Seed)
	assert.Equal(t, []string{"bad-icrc:0.1", "ghost-ack:@10", "drop:@20"}, m.FaultsRequested)
	require.Len(t, m.Frames, len(g.in)+len(g.out))
	assert.Equal(t, len(g.in), m.Summary.In)
	assert.Equal(t, len(g.out), m.Summary.Out)
	assert.Equal(t, len(g.res.Faults), m.Summary.Faults)
	assert.Len(t, m.Faults, len(g.res.Faults))
	nIn, nOut := 0, 0
	counts := map[string]int{}
	for _, f := range m.Frames {
		var want *Frame
		if f.Stream == "in" {
			want = &g.in[nIn]
			nIn++
			assert.Equal(t, want.Reaction.String(), f.Expect)
			counts[f.Expect]++
			assert.Equal(t, want.Fault != nil, f.Fault != nil)
			if want.Fault != nil {
				assert.Equal(t, want.Fault.Kind.String(), f.Fault["kind"])
			}
			assert.Len(t, f.Responses, want.NumOut)
			assert.NotEmpty(t, f.Purpose)
		} else {
			want = &g.out[nOut]
			nOut++
			require.NotNil(t, f.Cause)
			assert.Equal(t, want.Cause, *f.Cause)
			c := &g.in[*f.Cause]
			assert.True(t, c.FirstOut <= want.Index && want.Index < c.FirstOut+c.NumOut, "output %d among the responses of input %d", want.Index, *f.Cause)
		}
		assert.Equal(t, want.Index, f.Index)
		assert.Equal(t, len(want.Data), f.Length)
		assert.InDelta(t, want.Time.Nanoseconds(), f.TimeNS, 0.001)
		if want.HasBTH {
			require.NotNil(t, f.Opcode)
			assert.Equal(t, want.Opcode.String(), *f.Opcode)
			assert.Equal(t, want.PSN, *f.PSN)
		}
	}
	assert.Equal(t, counts, m.Summary.Expect)

	// The manifest's "dut" object is the packet list's: a list reusing it
	// describes the same DUT.
	var raw map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(buf.Bytes(), &raw))
	back, err := ParsePackets([]byte(`{"dut": ` + string(raw["dut"]) + `, "packets": []}`))
	require.NoError(t, err)
	assert.Equal(t, src.DUT, back.DUT)
}

// Same source, faults and seed: byte-identical files; another seed places
// the faults elsewhere.
func TestDeterminism(t *testing.T) {
	src := mixSource(t)
	opt := Options{Seed: 11, Faults: []FaultSpec{{Kind: FlipCovered, Rate: 0.1, At: -1}, {Kind: Reorder, Rate: 0.1, At: -1},
		{Kind: Truncate, At: -1}, {Kind: WrongPadCnt, Rate: 0.2, At: -1}, {Kind: FlipMasked, Rate: 0.3, At: -1}}}
	read := func(o Output) map[string][]byte {
		in, out, man := o.Files()
		files := map[string][]byte{}
		for _, n := range append(append(in, out...), man) {
			b, err := os.ReadFile(n)
			require.NoError(t, err)
			files[filepath.Base(n)] = b
		}
		return files
	}
	for _, format := range []string{"pcap", "axismem"} {
		a := Output{Prefix: filepath.Join(t.TempDir(), "s"), Format: format, Width: 512}
		b := a
		b.Prefix = filepath.Join(t.TempDir(), "s")
		_, err := Write(src, opt, a)
		require.NoError(t, err)
		_, err = Write(src, opt, b)
		require.NoError(t, err)
		ra, rb := read(a), read(b)
		require.Len(t, rb, len(ra))
		for n, x := range ra {
			assert.True(t, bytes.Equal(x, rb[n]), "%s: %s differs between two runs", format, n)
		}
	}
	g1 := collect(t, src, opt)
	opt.Seed = 12
	g2 := collect(t, src, opt)
	assert.NotEqual(t, datas(g1.in), datas(g2.in))
}

// An empty packet list gives empty streams and a valid manifest.
func TestEmptySource(t *testing.T) {
	src, err := ParsePackets([]byte(`[]`))
	require.NoError(t, err)
	for _, f := range Formats {
		o := Output{Prefix: filepath.Join(t.TempDir(), "e"), Format: f, Width: 256}
		res, err := Write(src, Options{}, o)
		require.NoError(t, err, f)
		assert.Zero(t, res.In+res.Out)
		in, out, man := o.Files()
		assert.Empty(t, readStream(t, &o, in))
		assert.Empty(t, readStream(t, &o, out))
		b, err := os.ReadFile(man)
		require.NoError(t, err)
		var m manifestJSON
		require.NoError(t, json.Unmarshal(b, &m), string(b))
		assert.Empty(t, m.Frames)
	}
	_, err = Write(src, Options{Faults: []FaultSpec{{Kind: Drop, At: -1}}}, Output{Prefix: filepath.Join(t.TempDir(), "e"), Format: "pcap"})
	var ie *InputError
	assert.ErrorAs(t, err, &ie, "no frame to drop")
}

// failAfter fails every write once n bytes went through.
type failAfter struct{ n int }

func (w *failAfter) Write(p []byte) (int, error) {
	if w.n < len(p) {
		return 0, errDiskFull
	}
	w.n -= len(p)
	return len(p), nil
}

var errDiskFull = errors.New("disk full")

// A writer that fails stops the generation with its error, whichever
// stream or the manifest it is.
func TestWriteErrors(t *testing.T) {
	src := mixSource(t)
	for i := 0; i < 3; i++ {
		ws := []io.Writer{io.Discard, io.Discard, io.Discard}
		ws[i] = &failAfter{n: 5000}
		_, err := WriteTo(src, Options{}, Output{Format: "hex"}, ws[:1], ws[1:2], ws[2], nil, nil)
		assert.ErrorIs(t, err, errDiskFull, "writer %d", i)
	}
}
