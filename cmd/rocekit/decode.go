package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/decode"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

const decodeUsage = `usage: rocekit decode [flags] FILE...

Decode capture files (pcap, pcapng, either gzip-compressed; "-" is standard
input): one line per frame like tcpdump, every field with -v like tshark -V,
or one JSON object per frame with --format json. ICRC (and VCRC on native
InfiniBand) is checked on every frame.

Times are in UTC, whatever the local time zone. A text line gives the time
of day; --time gives the date and time, epoch seconds, the time since the
first line or since the previous one instead (tcpdump's -tttt, -tt,
-ttttt, -ttt), or none (-t). -v and JSON give the date and time in RFC 3339
form (2023-11-14T22:13:20.000000001Z).

Exit status: 0 when every file was read to the end, 1 when a file could not
be opened or is damaged (after printing what could be read), 2 for usage
errors.

flags:
`

func init() {
	register("decode", "decode capture files (pcap, pcapng, gzip; Ethernet, raw IP, SLL, ERF, InfiniBand)", runDecode)
}

// decodeConfig holds the decode command's flags.
type decodeConfig struct {
	verbose bool
	format  string
	summary bool
	qps     map[uint32]bool
	opcodes *[256]bool
	trans   map[opcode.Transport]bool
	first   int
	last    int // 0: no upper bound
	ports   []uint16
	pmtu    int
	time    timeFormat // of the one-line text output
}

func runDecode(args []string, stdout, stderr io.Writer) int {
	var cfg decodeConfig
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.BoolVar(&cfg.verbose, "v", false, "print every field of every header (like tshark -V)")
	fs.StringVar(&cfg.format, "format", "text", "output format: text or json (one object per frame, NDJSON)")
	fs.BoolVar(&cfg.summary, "summary", false, "print a per-connection summary instead of frames")
	qp := fs.String("qp", "", "only frames to or from these QPs (BTH DestQP or DETH SrcQP), comma-separated, decimal or 0x hex (default: every QP)")
	ops := fs.String("opcode", "", "only these opcodes, comma-separated names (RC_SEND_ONLY) or numbers (0x04) (default: every opcode)")
	tr := fs.String("transport", "", "only these transports, comma-separated: RC, UC, RD, UD, CNP, XRC (default: every transport)")
	frames := fs.String("frames", "", "only this frame range: N, N-M, N- or -M (1-based; default: every frame)")
	fs.IntVar(&cfg.pmtu, "pmtu", 0, "path MTU to assume for READ response matching until CM or full-size packets say (0: infer)")
	ports := fs.String("port", "", "extra UDP destination ports to decode as RoCEv2, comma-separated (4791 always is; default: none)")
	stamp := fs.String("time", "abs", "time of each text line, in UTC: abs (time of day), date (and time), epoch (seconds), rel (since the first line), delta (since the previous line) or none")
	files, code, ok := parseArgs(fs, decodeUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	var known bool
	if cfg.time, known = parseTimeFormat(*stamp); !known {
		return usageError(stderr, "decode", "--time %q: want abs, date, epoch, rel, delta or none", *stamp)
	}
	if cfg.time != timeAbs && (cfg.verbose || cfg.format == "json" || cfg.summary) {
		return usageError(stderr, "decode", "--time applies to the one-line text output, not to -v, --format json or --summary")
	}
	if err := cfg.parse(*qp, *ops, *tr, *frames, *ports); err != nil {
		return usageError(stderr, "decode", "%v", err)
	}
	if cfg.format != "text" && cfg.format != "json" {
		return usageError(stderr, "decode", "--format %q: want text or json", cfg.format)
	}
	if len(files) == 0 {
		return usageError(stderr, "decode", "no capture file given")
	}
	out := bufio.NewWriterSize(stdout, 1<<16)
	defer out.Flush()
	d, label := newDecoder(&cfg, out)
	status := 0
	for _, name := range files {
		if len(files) > 1 {
			*label = name
		}
		if err := d.File(name); err != nil {
			out.Flush()
			fmt.Fprintf(stderr, "rocekit decode: %s: %v\n", name, err)
			status = 1
		}
	}
	if cfg.summary {
		s := d.Summary()
		if cfg.format == "json" {
			out.Write(append(s.AppendJSON(nil), '\n'))
		} else {
			s.WriteText(out)
		}
	}
	return status
}

// newDecoder returns a decoder that writes to out what cfg asks for, and
// the label its text lines give the file being decoded ("" for none).
func newDecoder(cfg *decodeConfig, out io.Writer) (*decode.Decoder, *string) {
	label := new(string)
	o := decode.Options{Ports: cfg.ports, PMTU: cfg.pmtu, Last: cfg.last, SummaryOnly: cfg.summary, Out: out}
	o.Workers = min(runtime.GOMAXPROCS(0), 4)
	stamp := &stamper{format: cfg.time}
	// Each line's time depends on the line before: format in order.
	o.Ordered = stamp.sequential()
	// Every worker writes its frameInfo for every frame: 128 bytes between
	// two workers' keep them off each other's cache lines (sharing one made
	// --format json 6-9% slower on two cores).
	fis := make([]struct {
		frameInfo
		_ [128]byte
	}, o.Workers)
	for i := range fis {
		fis[i].stamp = stamp
		if cfg.format == "json" {
			fis[i].jc = new(jsonCache)
		}
	}
	o.Append = func(w int, b []byte, f *decode.Frame) []byte {
		if !cfg.selected(f) {
			return b
		}
		fi := &fis[w].frameInfo
		fi.Frame, fi.f, fi.file = f, f.Packet, *label
		return cfg.render(b, fi)
	}
	return decode.New(o), label
}

func (c *decodeConfig) parse(qp, ops, tr, frames, ports string) error {
	for _, s := range splitList(qp) {
		v, err := strconv.ParseUint(s, 0, 32)
		if err != nil || v > 0xFFFFFF {
			return fmt.Errorf("--qp %q: want a 24-bit QP number", s)
		}
		if c.qps == nil {
			c.qps = map[uint32]bool{}
		}
		c.qps[uint32(v)] = true
	}
	for _, s := range splitList(ops) {
		o, err := opcode.Parse(s)
		if err != nil {
			return fmt.Errorf("--opcode %q: %v", s, err)
		}
		if c.opcodes == nil {
			c.opcodes = new([256]bool)
		}
		c.opcodes[o] = true
	}
	for _, s := range splitList(tr) {
		t, ok := transportByName[strings.ToUpper(s)]
		if !ok {
			return fmt.Errorf("--transport %q: want RC, UC, RD, UD, CNP or XRC", s)
		}
		if c.trans == nil {
			c.trans = map[opcode.Transport]bool{}
		}
		c.trans[t] = true
	}
	if frames != "" {
		lo, hi, ok := strings.Cut(frames, "-")
		if !ok {
			hi = lo
		}
		var err error
		if lo != "" {
			if c.first, err = strconv.Atoi(lo); err != nil || c.first < 1 {
				return fmt.Errorf("--frames %q: want N, N-M, N- or -M with N, M >= 1", frames)
			}
		}
		if hi != "" {
			if c.last, err = strconv.Atoi(hi); err != nil || c.last < 1 || c.last < c.first {
				return fmt.Errorf("--frames %q: want N, N-M, N- or -M with N <= M", frames)
			}
		}
	}
	var err error
	c.ports, err = parsePorts(ports)
	return err
}

// parsePorts parses a --port list of UDP port numbers.
func parsePorts(s string) ([]uint16, error) {
	var ports []uint16
	for _, x := range splitList(s) {
		v, err := strconv.ParseUint(x, 0, 16)
		if err != nil {
			return nil, fmt.Errorf("--port %q: want a UDP port number", x)
		}
		ports = append(ports, uint16(v))
	}
	return ports, nil
}

var transportByName = map[string]opcode.Transport{
	"RC": opcode.RC, "UC": opcode.UC, "RD": opcode.RD, "UD": opcode.UD, "CNP": opcode.CNPT, "XRC": opcode.XRC,
}

func splitList(s string) []string {
	var r []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			r = append(r, x)
		}
	}
	return r
}

// frameInfo is what the formatters see of one frame: the frame, its
// decoded headers, the file label, and each worker's caches. A worker
// reuses one.
type frameInfo struct {
	*decode.Frame
	f     *packet.Frame
	file  string
	clock clockCache
	stamp *stamper   // the text lines' times
	jc    *jsonCache // nil: render every field afresh
}

// selected reports whether the flags select f for output.
func (c *decodeConfig) selected(f *decode.Frame) bool {
	if f.Record.Index < c.first || (c.last > 0 && f.Record.Index > c.last) {
		return false
	}
	if c.qps == nil && c.opcodes == nil && c.trans == nil {
		return true
	}
	t := &f.Packet.Transport
	if t.BTH == nil {
		return false
	}
	op := t.BTH.Opcode()
	if c.opcodes != nil && !c.opcodes[op] {
		return false
	}
	if c.trans != nil && !c.trans[op.Transport()] {
		return false
	}
	if c.qps != nil && !c.qps[t.BTH.DestQP()] && (t.DETH == nil || !c.qps[t.DETH.SrcQP()]) {
		return false
	}
	return true
}

// render appends the selected output form of one frame.
func (c *decodeConfig) render(b []byte, fi *frameInfo) []byte {
	switch {
	case c.format == "json":
		return appendJSON(b, fi)
	case c.verbose:
		return appendVerbose(b, fi)
	}
	return appendLine(b, fi)
}
