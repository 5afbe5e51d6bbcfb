package gen

import (
	"bufio"
	"errors"
	"fmt"
	"github.com/rocekit/rocekit/internal/jsonw"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/stim"
)

// Formats lists the stream formats: pcap and pcapng (classic pcap and
// pcapng, nanosecond timestamps = frame times) and the four stim formats.
var Formats = []string{"pcap", "pcapng", "hex", "axis", "memh", "axismem"}

// Output says where and how Write writes the two streams and the manifest.
type Output struct {
	// Prefix names the files: PREFIX.in.EXT, PREFIX.out.EXT and
	// PREFIX.manifest.json (see Files).
	Prefix string
	// Format is one of Formats.
	Format string
	// Width (bits) and Order apply to axis, memh and axismem.
	Width int
	Order stim.Order
	// FrameComments writes a "frame N len L" comment before each frame of
	// the stim formats.
	FrameComments bool
	// NoManifest skips the manifest.
	NoManifest bool
	// Command is recorded in the manifest and the stim file headers.
	Command string
}

// Check reports a bad format or width.
func (o *Output) Check() error {
	switch o.Format {
	case "pcap", "pcapng", "hex":
		return nil
	case "axis", "memh", "axismem":
		return stim.CheckWidth(o.Width)
	}
	return fmt.Errorf("format %q: want %s", o.Format, strings.Join(Formats, ", "))
}

// Files returns the names Write creates for the input stream, the output
// stream, and the manifest ("" with NoManifest): PREFIX.in.pcap,
// PREFIX.in.pcapng, PREFIX.in.hex, PREFIX.in.axis, PREFIX.in.mem +
// PREFIX.in.idx.mem, or PREFIX.in.axis.mem, the same with .out, and
// PREFIX.manifest.json.
func (o *Output) Files() (in, out []string, manifest string) {
	names := func(p string) []string {
		switch o.Format {
		case "pcap", "pcapng":
			return []string{p + "." + o.Format}
		}
		f, err := stim.ParseFormat(o.Format)
		if err != nil {
			return nil
		}
		return stim.Files(f, p)
	}
	in, out = names(o.Prefix+".in"), names(o.Prefix+".out")
	if !o.NoManifest {
		manifest = o.Prefix + ".manifest.json"
	}
	return in, out, manifest
}

// streamWriter writes one stream in one format.
type streamWriter interface {
	write(f *Frame) error
	close() error
}

type pcapStream struct {
	w   *pcap.Writer
	rec pcap.Record
	c   []io.Closer
}

func (s *pcapStream) write(f *Frame) error {
	s.rec.Time = time.Unix(0, int64(f.Time/sim.Nanosecond))
	s.rec.Data, s.rec.OrigLen = f.Data, len(f.Data)
	err := s.w.WriteRecord(&s.rec)
	s.rec.Data = nil
	return err
}

func (s *pcapStream) close() error {
	err := s.w.Flush()
	return errors.Join(err, closeAll(s.c))
}

func closeAll(c []io.Closer) error {
	var errs []error
	for _, x := range c {
		errs = append(errs, x.Close())
	}
	return errors.Join(errs...)
}

type stimStream struct {
	w stim.Writer
	c []io.Closer
}

func (s *stimStream) write(f *Frame) error { return s.w.WriteFrame(f.Data) }
func (s *stimStream) close() error         { return errors.Join(s.w.Close(), closeAll(s.c)) }

// newStream returns a writer of one stream in format o.Format to ws (two
// writers, words and index, for memh; one for the others). The closers are
// closed by close.
func newStream(o *Output, ws []io.Writer, lt pcap.LinkType, closers []io.Closer) (streamWriter, error) {
	switch o.Format {
	case "pcap", "pcapng":
		ff := pcap.FormatPcap
		if o.Format == "pcapng" {
			ff = pcap.FormatPcapng
		}
		w, err := pcap.NewWriter(ws[0], ff, lt)
		if err != nil {
			return nil, err
		}
		return &pcapStream{w: w, rec: pcap.Record{LinkType: lt}, c: closers}, nil
	}
	so := stim.Options{Width: o.Width, Order: o.Order, FrameComments: o.FrameComments}
	if o.Command != "" {
		so.Comments = []string{"made by: " + oneLine(o.Command)}
	}
	var w stim.Writer
	var err error
	switch o.Format {
	case "hex":
		w, err = stim.NewHexWriter(ws[0], so)
	case "axis":
		w, err = stim.NewAXISWriter(ws[0], so)
	case "axismem":
		w, err = stim.NewAXISMemWriter(ws[0], so)
	case "memh":
		w, err = stim.NewMemhWriter(ws[0], ws[1], so)
	default:
		err = fmt.Errorf("format %q", o.Format)
	}
	if err != nil {
		return nil, err
	}
	return &stimStream{w: w, c: closers}, nil
}

// baseNames strips the directories: the manifest sits beside the streams.
func baseNames(ns []string) []string {
	r := make([]string, len(ns))
	for i, n := range ns {
		r[i] = filepath.Base(n)
	}
	return r
}

func oneLine(s string) string { return strings.NewReplacer("\n", " ", "\r", " ").Replace(s) }

// Write generates the streams (Generate) and writes them and the manifest
// to the files Files names.
func Write(src *Source, opt Options, o Output) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, &InputError{err}
	}
	p, err := prepare(src, opt)
	if err != nil {
		return nil, err
	}
	inNames, outNames, manName := o.Files()
	var files []*os.File
	fail := func(err error) (*Result, error) {
		for _, f := range files {
			f.Close()
		}
		return nil, err
	}
	open := func(names []string) ([]io.Writer, []io.Closer, error) {
		var ws []io.Writer
		var cs []io.Closer
		for _, n := range names {
			f, err := os.Create(n)
			if err != nil {
				return nil, nil, err
			}
			files = append(files, f)
			ws, cs = append(ws, f), append(cs, f)
		}
		return ws, cs, nil
	}
	inW, inC, err := open(inNames)
	if err != nil {
		return fail(err)
	}
	outW, outC, err := open(outNames)
	if err != nil {
		return fail(err)
	}
	var manW io.Writer
	if manName != "" {
		ws, _, err := open([]string{manName})
		if err != nil {
			return fail(err)
		}
		manW = ws[0]
	}
	res, err := p.writeTo(&o, inW, outW, manW, inC, outC)
	if manName != "" {
		err = errors.Join(err, files[len(files)-1].Close())
	}
	return res, err
}

// WriteTo is Write to writers instead of files: inW and outW are the
// stream's writers (two, words then index, for memh; one for the other
// formats), manW the manifest's (nil for none). The closers are closed at
// the end.
func WriteTo(src *Source, opt Options, o Output, inW, outW []io.Writer, manW io.Writer, inC, outC []io.Closer) (*Result, error) {
	if err := o.Check(); err != nil {
		return nil, &InputError{err}
	}
	p, err := prepare(src, opt)
	if err != nil {
		return nil, err
	}
	return p.writeTo(&o, inW, outW, manW, inC, outC)
}

func (p *prepared) writeTo(o *Output, inW, outW []io.Writer, manW io.Writer, inC, outC []io.Closer) (*Result, error) {
	lt := LinkType(p.src.DUT.Encap)
	in, err := newStream(o, inW, lt, inC)
	if err != nil {
		return nil, err
	}
	out, err := newStream(o, outW, lt, outC)
	if err != nil {
		in.close()
		return nil, err
	}
	var man *ManifestWriter
	if manW != nil {
		man = NewManifestWriter(manW)
		inF, outF, _ := o.Files()
		man.Begin(p.src, &p.opt, o, baseNames(inF), baseNames(outF))
	}
	sink := SinkFunc(func(f *Frame) error {
		var err error
		if f.Stream == In {
			err = in.write(f)
		} else {
			err = out.write(f)
		}
		if err == nil && man != nil {
			err = man.Frame(f)
		}
		return err
	})
	as := newAsyncSink(sink)
	res, gerr := p.generate(as)
	errs := []error{gerr, as.close(), in.close(), out.close()}
	if man != nil && gerr == nil {
		errs = append(errs, man.End(res))
	}
	return res, errors.Join(errs...)
}

// ManifestWriter writes the manifest JSON (see the package documentation
// for its format) as the frames go by: Begin, Frame for each frame, End.
type ManifestWriter struct {
	qpNum [][]byte // each DUT QP's number, formatted
	w     *bufio.Writer
	b     []byte
	dut   *DUT
	first bool
	err   error
}

// opcodeJSON holds `,"opcode":"NAME","opcode_num":N` of every opcode, made
// on first use (not at the start of every rocekit command).
var opcodeJSON = sync.OnceValue(func() (t *[256][]byte) {
	t = new([256][]byte)
	for i := range t {
		o := opcode.Opcode(i)
		t[i] = fmt.Appendf(nil, ",\"opcode\":\"%s\",\"opcode_num\":%d", o, i)
	}
	return t
})

// NewManifestWriter returns a manifest writer to w.
func NewManifestWriter(w io.Writer) *ManifestWriter {
	return &ManifestWriter{w: bufio.NewWriterSize(w, 1<<20), first: true}
}

// Begin writes everything before the frames: the source, seed, faults
// asked for, format, files and the DUT description.
func (m *ManifestWriter) Begin(src *Source, opt *Options, o *Output, inFiles, outFiles []string) {
	m.dut = &src.DUT
	m.qpNum = nil
	for _, q := range src.DUT.QPs {
		m.qpNum = append(m.qpNum, strconv.AppendUint(nil, uint64(q.QPN), 10))
	}
	b := m.b[:0]
	b = append(b, "{\n  \"rocekit_gen_manifest\": 1,\n"...)
	if o != nil && o.Command != "" {
		b = append(b, "  \"command\": "...)
		b = jsonw.AppendString(b, o.Command)
		b = append(b, ",\n"...)
	}
	b = append(b, "  \"source\": "...)
	b = jsonw.AppendString(b, src.Name)
	b = append(b, ",\n  \"seed\": "...)
	b = strconv.AppendUint(b, opt.Seed, 10)
	b = append(b, ",\n  \"faults_requested\": ["...)
	for i, f := range opt.Faults {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = jsonw.AppendString(b, f.String())
	}
	b = append(b, "],\n"...)
	if o != nil {
		b = append(b, "  \"format\": {\"stream\": "...)
		b = jsonw.AppendString(b, o.Format)
		switch o.Format {
		case "axis", "memh", "axismem":
			b = append(b, ", \"width\": "...)
			b = strconv.AppendInt(b, int64(o.Width), 10)
			b = append(b, ", \"byte_order\": "...)
			b = jsonw.AppendString(b, o.Order.String())
		}
		b = append(b, "},\n  \"files\": {\"in\": "...)
		b = appendStrings(b, inFiles)
		b = append(b, ", \"out\": "...)
		b = appendStrings(b, outFiles)
		b = append(b, "},\n"...)
	}
	b = append(b, "  \"dut\": "...)
	b = appendDUT(b, &src.DUT)
	b = append(b, ",\n  \"frames\": [\n"...)
	m.b = b
	m.flush()
}

func (m *ManifestWriter) flush() {
	if m.err == nil {
		_, m.err = m.w.Write(m.b)
	}
	m.b = m.b[:0]
}

// Frame writes one frame's entry (one line of compact JSON).
func (m *ManifestWriter) Frame(f *Frame) error {
	b := m.b[:0]
	if !m.first {
		b = append(b, ",\n"...)
	}
	m.first = false
	b = append(b, "{\"stream\":\""...)
	b = append(b, f.Stream.String()...)
	b = append(b, "\",\"index\":"...)
	b = strconv.AppendInt(b, int64(f.Index), 10)
	b = append(b, ",\"time_ns\":"...)
	b = appendTime(b, f.Time)
	b = append(b, ",\"qp\":"...)
	if f.QP >= 0 {
		b = append(b, m.qpNum[f.QP]...)
	} else {
		b = append(b, "null"...)
	}
	if f.HasBTH {
		b = append(b, opcodeJSON()[f.Opcode]...)
		b = append(b, ",\"psn\":"...)
		b = strconv.AppendUint(b, uint64(f.PSN), 10)
	} else {
		b = append(b, ",\"opcode\":null,\"opcode_num\":null,\"psn\":null"...)
	}
	b = append(b, ",\"length\":"...)
	b = strconv.AppendInt(b, int64(len(f.Data)), 10)
	b = append(b, ",\"purpose\":"...)
	if f.Stream == Out {
		b = append(b, '"')
		b = f.appendOutPurpose(b)
		b = append(b, "\",\"cause\":"...)
		b = strconv.AppendInt(b, int64(f.Cause), 10)
		b = append(b, '}')
		m.b = b
		m.flush()
		return m.err
	}
	switch {
	case f.purpose != "":
		b = jsonw.AppendString(b, f.purpose)
	case f.inf != nil:
		b = append(b, '"')
		b = f.inf.appendPurpose(b, f.Source)
		b = append(b, '"')
	default:
		b = append(b, `""`...)
	}
	b = append(b, ",\"source\":"...)
	if f.Source >= 0 {
		b = strconv.AppendInt(b, int64(f.Source), 10)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, ",\"fault\":"...)
	b = appendFault(b, f.Fault)
	b = append(b, ",\"expect\":\""...)
	b = append(b, f.Reaction.String()...)
	b = append(b, '"')
	if f.Reason != "" {
		b = append(b, ",\"reason\":"...)
		b = jsonw.AppendString(b, f.Reason)
	}
	b = append(b, ",\"responses\":["...)
	for i := 0; i < f.NumOut; i++ {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, int64(f.FirstOut+i), 10)
	}
	b = append(b, ']')
	if len(f.Completions) > 0 {
		b = append(b, ",\"completions\":["...)
		for i, c := range f.Completions {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendCompletion(b, &c)
		}
		b = append(b, ']')
	}
	b = append(b, '}')
	m.b = b
	m.flush()
	return m.err
}

// End writes the faults and the summary and flushes.
func (m *ManifestWriter) End(r *Result) error {
	b := m.b[:0]
	b = append(b, "\n  ],\n  \"faults\": ["...)
	for i, f := range r.Faults {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    "...)
		b = appendFault(b, f)
	}
	if len(r.Faults) > 0 {
		b = append(b, "\n  "...)
	}
	b = append(b, "],\n  \"summary\": {\"in\": "...)
	b = strconv.AppendInt(b, int64(r.In), 10)
	b = append(b, ", \"out\": "...)
	b = strconv.AppendInt(b, int64(r.Out), 10)
	b = append(b, ", \"faults\": "...)
	b = strconv.AppendInt(b, int64(len(r.Faults)), 10)
	b = append(b, ", \"expect\": {"...)
	n := 0
	for x, c := range r.Reactions {
		if c == 0 {
			continue
		}
		if n > 0 {
			b = append(b, ", "...)
		}
		n++
		b = append(b, '"')
		b = append(b, Reaction(x).String()...)
		b = append(b, "\": "...)
		b = strconv.AppendInt(b, int64(c), 10)
	}
	b = append(b, "}}\n}\n"...)
	m.b = b
	m.flush()
	if m.err == nil {
		m.err = m.w.Flush()
	}
	return m.err
}

func appendStrings(b []byte, ss []string) []byte {
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = jsonw.AppendString(b, s)
	}
	return append(b, ']')
}

// appendTime writes picoseconds as nanoseconds with up to three decimals.
func appendTime(b []byte, t sim.Time) []byte {
	ps := t.Picoseconds()
	if ps < 0 {
		b = append(b, '-')
		ps = -ps
	}
	b = strconv.AppendInt(b, ps/1000, 10)
	if f := ps % 1000; f != 0 {
		b = append(b, '.', byte('0'+f/100), byte('0'+f/10%10), byte('0'+f%10))
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
	}
	return b
}

func appendFault(b []byte, f *Fault) []byte {
	if f == nil {
		return append(b, "null"...)
	}
	optInt := func(b []byte, v int) []byte {
		if v < 0 {
			return append(b, "null"...)
		}
		return strconv.AppendInt(b, int64(v), 10)
	}
	b = append(b, "{\"kind\":\""...)
	b = append(b, f.Kind.String()...)
	b = append(b, "\",\"source\":"...)
	b = strconv.AppendInt(b, int64(f.Source), 10)
	b = append(b, ",\"frame\":"...)
	b = optInt(b, f.Frame)
	b = append(b, ",\"other\":"...)
	b = optInt(b, f.Other)
	if f.Field != "" || f.Kind == Truncate {
		if f.Field != "" {
			b = append(b, ",\"field\":\""...)
			b = append(b, f.Field...)
			b = append(b, "\",\"offset\":"...)
			b = strconv.AppendInt(b, int64(f.Offset), 10)
			b = append(b, ",\"size\":"...)
			b = strconv.AppendInt(b, int64(f.Size), 10)
			b = append(b, ",\"bit\":"...)
			b = optInt(b, f.Bit)
		}
		b = append(b, ",\"old\":"...)
		b = strconv.AppendUint(b, f.Old, 10)
		b = append(b, ",\"new\":"...)
		b = strconv.AppendUint(b, f.New, 10)
	}
	b = append(b, ",\"icrc\":\""...)
	b = append(b, f.ICRC.String()...)
	b = append(b, "\",\"vcrc_recomputed\":"...)
	b = strconv.AppendBool(b, f.VCRC)
	b = append(b, ",\"ipv4_checksum_recomputed\":"...)
	b = strconv.AppendBool(b, f.IPChecksum)
	b = append(b, ",\"detail\":"...)
	b = jsonw.AppendString(b, f.Detail)
	return append(b, '}')
}

func appendCompletion(b []byte, c *rc.Completion) []byte {
	b = append(b, "{\"wr_id\":"...)
	b = strconv.AppendUint(b, c.WRID, 10)
	b = append(b, ",\"status\":\""...)
	b = append(b, c.Status.String()...)
	b = append(b, "\",\"opcode\":\""...)
	b = append(b, c.Opcode.String()...)
	b = append(b, "\",\"byte_len\":"...)
	b = strconv.AppendUint(b, uint64(c.ByteLen), 10)
	if c.Flags&rc.WithImm != 0 {
		b = append(b, ",\"imm\":"...)
		b = strconv.AppendUint(b, uint64(c.Imm), 10)
	}
	if c.Flags&rc.WithInv != 0 {
		b = append(b, ",\"inv_rkey\":"...)
		b = strconv.AppendUint(b, uint64(c.InvRKey), 10)
	}
	return append(b, '}')
}

// accessNames are the access rights as the DUT JSON writes them.
var accessNames = []struct {
	name string
	a    rc.Access
}{
	{"local_write", rc.LocalWrite}, {"remote_write", rc.RemoteWrite}, {"remote_read", rc.RemoteRead},
	{"remote_atomic", rc.RemoteAtomic}, {"flush_global", rc.FlushGlobal}, {"flush_persistent", rc.FlushPersistent},
}

func appendAccess(b []byte, a rc.Access) []byte {
	b = append(b, '[')
	n := 0
	for _, x := range accessNames {
		if a&x.a != 0 {
			if n > 0 {
				b = append(b, ", "...)
			}
			n++
			b = append(b, '"')
			b = append(b, x.name...)
			b = append(b, '"')
		}
	}
	return append(b, ']')
}

func appendAddr(b []byte, a *Addr) []byte {
	b = append(b, "{\"mac\": \""...)
	for i, x := range a.MAC {
		if i > 0 {
			b = append(b, ':')
		}
		b = append(b, "0123456789abcdef"[x>>4], "0123456789abcdef"[x&15])
	}
	b = append(b, "\", \"ipv4\": \""...)
	b = netip.AddrFrom4(a.IPv4).AppendTo(b)
	b = append(b, "\", \"ipv6\": \""...)
	b = netip.AddrFrom16(a.IPv6).AppendTo(b)
	b = append(b, "\", \"lid\": "...)
	b = strconv.AppendUint(b, uint64(a.LID), 10)
	return append(b, '}')
}

// appendDUT writes the DUT description in the form the packet list's "dut"
// object reads.
func appendDUT(b []byte, d *DUT) []byte {
	b = append(b, "{\n    \"encap\": \""...)
	b = append(b, EncapName(d.Encap)...)
	b = append(b, "\",\n    \"self\": "...)
	b = appendAddr(b, &d.Self)
	b = append(b, ",\n    \"link_gbps\": "...)
	b = strconv.AppendFloat(b, d.Gbps, 'g', -1, 64)
	b = append(b, ",\n    \"latency_ns\": "...)
	b = appendTime(b, d.Latency)
	b = append(b, ",\n    \"qps\": ["...)
	for i := range d.QPs {
		q := &d.QPs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n      {\"qpn\": "...)
		b = strconv.AppendUint(b, uint64(q.QPN), 10)
		b = append(b, ", \"dest_qpn\": "...)
		b = strconv.AppendUint(b, uint64(q.DestQPN), 10)
		b = append(b, ", \"rq_psn\": "...)
		b = strconv.AppendUint(b, uint64(q.RQPSN), 10)
		b = append(b, ", \"sq_psn\": "...)
		b = strconv.AppendUint(b, uint64(q.SQPSN), 10)
		b = append(b, ", \"mtu\": "...)
		b = strconv.AppendInt(b, int64(q.MTU), 10)
		b = append(b, ", \"pkey\": "...)
		b = strconv.AppendUint(b, uint64(q.pkey()), 10)
		b = append(b, ", \"ird\": "...)
		b = strconv.AppendInt(b, int64(q.IRD), 10)
		b = append(b, ", \"min_rnr_timer\": "...)
		b = strconv.AppendUint(b, uint64(q.MinRNRTimer), 10)
		b = append(b, ", \"access\": "...)
		b = appendAccess(b, q.Access)
		b = append(b, ",\n       \"recv_wqes\": "...)
		b = strconv.AppendInt(b, int64(q.RecvWQEs), 10)
		b = append(b, ", \"recv_bytes\": "...)
		b = strconv.AppendInt(b, int64(q.RecvBytes), 10)
		b = append(b, ", \"recv_repost\": "...)
		b = strconv.AppendBool(b, q.RecvRepost)
		b = append(b, ", \"peer\": "...)
		b = appendAddr(b, &q.Peer)
		b = append(b, '}')
	}
	b = append(b, "\n    ],\n    \"mrs\": ["...)
	for i := range d.MRs {
		r := &d.MRs[i]
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n      {\"addr\": "...)
		b = strconv.AppendUint(b, r.Addr, 10)
		b = append(b, ", \"rkey\": "...)
		b = strconv.AppendUint(b, uint64(r.RKey), 10)
		b = append(b, ", \"length\": "...)
		b = strconv.AppendInt(b, int64(r.Length), 10)
		b = append(b, ", \"access\": "...)
		b = appendAccess(b, r.Access)
		b = append(b, ", \"init\": \""...)
		b = append(b, r.Init.String()...)
		b = append(b, "\"}"...)
	}
	if len(d.MRs) > 0 {
		b = append(b, "\n    "...)
	}
	return append(b, "]\n  }"...)
}
