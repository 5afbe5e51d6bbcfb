package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/rocekit/rocekit/gen"
	"github.com/rocekit/rocekit/internal/plural"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/roce"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/stim"
)

const genUsage = `usage: rocekit gen [--scenario FILE | --packets FILE] [--format F] [--width BITS]
                   [--fault KIND[:RATE]]... [--seed N] -o PREFIX

Generate hardware-verification stimulus for an RC responder (the device
under test, DUT), with the RC model (package rc) as the golden model:

  PREFIX.in.EXT         the frames the DUT receives, in order, timed
  PREFIX.out.EXT        the frames a conforming DUT sends back, in order, timed
  PREFIX.manifest.json  the DUT's configuration (QPs, memory regions, receive
                        queues) and every frame of both streams: time, opcode,
                        PSN, length, purpose, injected fault, expected reaction
                        (accept, silent drop, NAK ..., RNR NAK, duplicate ...)
                        and, for output frames, the input frame that caused them

The input is the requester side of a simulator scenario (--scenario, the
format of rocekit sim; without it the simulator's default run shortened to 16
RDMA WRITEs of 1 MiB), run on fault-free links, or a packet list (--packets,
a JSON array of packets with any opcode and field values; see the gen package
documentation). Faults (--fault, repeatable; --list-faults lists them) change
that stream, deterministically from --seed; the golden model then computes
every reaction: frames with a bad ICRC, VCRC, TVer, P_Key or a reserved opcode
are dropped before or by the QP, as hardware does.

EXT is pcap, pcapng, hex, axis, mem + idx.mem (memh) or axis.mem (axismem);
the stim formats are described in the stim package documentation.

Exit status: 0 when the files were written, 1 when writing failed, 2 for
usage, scenario, packet-list and fault-placement errors.

flags:
`

func init() {
	register("gen", "generate RC responder verification stimulus with fault injection and expected responses", runGen)
}

// faultFlags collects repeated --fault flags.
type faultFlags []gen.FaultSpec

func (f *faultFlags) String() string {
	s := make([]string, len(*f))
	for i, x := range *f {
		s[i] = x.String()
	}
	return strings.Join(s, ",")
}

func (f *faultFlags) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		fs, err := gen.ParseFault(strings.TrimSpace(p))
		if err != nil {
			return err
		}
		*f = append(*f, fs)
	}
	return nil
}

func runGen(args []string, stdout, stderr io.Writer) int {
	// gen holds the whole source in memory and allocates little after;
	// collecting less often saves a fifth of a large run's time.
	defer debug.SetGCPercent(debug.SetGCPercent(400))
	fs := flag.NewFlagSet("gen", flag.ContinueOnError)
	scenario := fs.String("scenario", "", "simulator scenario JSON `file` whose requester traffic becomes the stimulus (default: the built-in one)")
	packets := fs.String("packets", "", "packet list JSON `file` (\"-\" for standard input) for directed tests (default: none, the scenario is used)")
	messages := fs.Int64("messages", 0, "with a scenario: work requests per QP entry (`n`; default: the scenario's, 16 for the default run)")
	format := fs.String("format", "pcap", "stream format: "+strings.Join(gen.Formats, ", "))
	width := fs.Int("width", 64, "axis/memh/axismem data width in `bits`: 64, 128, 256, 512 or 1024")
	order := fs.String("byte-order", "le", "axis/memh/axismem byte order: le (AXI) or be")
	var faults faultFlags
	fs.Var(&faults, "fault", "inject a fault: `KIND[:RATE]` (RATE a probability per eligible frame, or @N for source frame N; none: one frame); repeatable (default: no fault)")
	seed := fs.Uint64("seed", 1, "seed of every fault decision")
	encap := fs.String("encap", "rocev2", "with a scenario: rocev2, rocev2-ipv6, rocev1, ib or ib-global (native InfiniBand with VCRC)")
	latency := fs.Float64("latency", 0, "DUT processing time in `ns` between an input frame's end and its first response")
	memInit := fs.String("mem-init", "pattern", "initial content of the DUT's memory regions: pattern or zero")
	comments := fs.Bool("frame-comments", false, "stim formats: a \"frame N len L\" comment before each frame")
	noManifest := fs.Bool("no-manifest", false, "do not write PREFIX.manifest.json")
	listFaults := fs.Bool("list-faults", false, "list the fault kinds and exit")
	prefix := fs.String("o", "", "output `PREFIX` (required; no default)")
	rest, code, ok := parseArgs(fs, genUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if *listFaults {
		for _, k := range gen.Kinds() {
			fmt.Fprintf(stdout, "%-21s %s\n", k, k.Description())
		}
		return 0
	}
	usageErr := func(format string, a ...any) int { return usageError(stderr, "gen", format, a...) }
	if len(rest) > 0 {
		return usageErr("unexpected argument %q", rest[0])
	}
	if *prefix == "" {
		return usageErr("no output prefix: give -o PREFIX")
	}
	if *scenario != "" && *packets != "" {
		return usageErr("--scenario and --packets exclude each other")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	out := gen.Output{Prefix: *prefix, Format: strings.ToLower(*format), Width: *width, FrameComments: *comments,
		NoManifest: *noManifest, Command: "rocekit gen " + strings.Join(args, " ")}
	var err error
	if out.Order, err = stim.ParseOrder(*order); err != nil {
		return usageErr("--byte-order: %v", err)
	}
	if err := out.Check(); err != nil {
		return usageErr("--format/--width: %v", err)
	}
	mi, err := gen.ParseMemInit(*memInit)
	if err != nil {
		return usageErr("--mem-init: %v", err)
	}
	if !(*latency >= 0) {
		return usageErr("--latency %v: want 0 or more", *latency)
	}
	if *messages < 0 {
		return usageErr("--messages %d: negative", *messages)
	}
	e, err := gen.ParseEncap(*encap)
	if err != nil {
		return usageErr("--encap: %v", err)
	}
	var src *gen.Source
	if *packets != "" {
		if set["encap"] || set["messages"] {
			return usageErr("--encap and --messages apply to scenarios; a packet list sets its encapsulation in \"dut\": {\"encap\": ...}")
		}
		if src, err = gen.LoadPackets(*packets); err != nil {
			return usageErr("%v", err)
		}
		if set["mem-init"] {
			for i := range src.DUT.MRs {
				src.DUT.MRs[i].Init = mi
			}
		}
		if set["latency"] {
			src.DUT.Latency = sim.FromSeconds(*latency * 1e-9)
		}
	} else {
		var sc *roce.Scenario
		name := "default scenario (roce.DefaultScenario, 16 messages)"
		if *scenario != "" {
			if sc, err = roce.LoadScenario(*scenario); err != nil {
				return usageErr("%v", err)
			}
			name = "scenario " + *scenario
		} else {
			sc = gen.DefaultScenario()
		}
		opt := gen.ScenarioOptions{Messages: *messages, Encap: e, MemInit: mi, Latency: sim.FromSeconds(*latency * 1e-9)}
		if e == packet.RoCEv2IPv4 {
			opt.Encap = 0
		}
		if src, err = gen.FromScenario(sc, opt); err != nil {
			return usageErr("%v", err)
		}
		src.Name = name
	}
	opt := gen.Options{Faults: faults, Seed: *seed}
	res, err := gen.Write(src, opt, out)
	if err != nil {
		var ie *gen.InputError
		if errors.As(err, &ie) {
			return usageErr("%v", err)
		}
		fmt.Fprintf(stderr, "rocekit gen: %v\n", err)
		return 1
	}
	in, outFiles, man := out.Files()
	files := append(append(in, outFiles...), man)
	if man == "" {
		files = files[:len(files)-1]
	}
	fmt.Fprintf(stdout, "%s, %s, %s injected; wrote %s\n", plural.Count(res.In, "input frame"), plural.Count(res.Out, "output frame"),
		plural.Count(len(res.Faults), "fault"), strings.Join(files, " "))
	var parts []string
	for _, r := range gen.Reactions() {
		if n := res.Count(r); n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", r, n))
		}
	}
	fmt.Fprintf(stdout, "expected reactions: %s\n", strings.Join(parts, ", "))
	return 0
}
