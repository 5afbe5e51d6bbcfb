package gen

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// Options are the faults to inject and the seed that places them.
type Options struct {
	Faults []FaultSpec
	// Seed makes every random choice (which frames, which bit, which
	// value): the same source, faults and seed give the same streams.
	Seed uint64
}

// Stream is one of the two streams.
type Stream uint8

// Streams.
const (
	In  Stream = iota // the frames the DUT receives
	Out               // the frames a conforming DUT sends back
)

func (s Stream) String() string {
	if s == Out {
		return "out"
	}
	return "in"
}

// Frame is one frame of either stream, as Generate hands it to a Sink. The
// Frame and its Data are reused after the Sink returns.
type Frame struct {
	Stream Stream
	Index  int      // within its stream, from 0
	Time   sim.Time // input: first bit reaches the DUT; output: earliest the DUT may start sending it
	Data   []byte
	QP     int // index in DUT.QPs, -1 when the frame names no DUT QP
	HasBTH bool
	Opcode opcode.Opcode
	PSN    uint32

	// Input frames.
	Source      int    // source frame index; -1 for a frame a fault inserted
	Fault       *Fault // nil for a frame no fault touched
	Reaction    Reaction
	Reason      string          // why it was dropped, or what else the model says
	FirstOut    int             // the output frames it caused: FirstOut .. FirstOut+NumOut-1
	NumOut      int             //
	Completions []rc.Completion // the completions the DUT reports for it (receive queue and errors)

	// Output frames.
	Cause int // input index of the frame that caused it
	syn   aeth.Syndrome
	msn   uint32

	purpose string
	inf     *info
	stable  bool // Data stays valid after the Sink call (it is a source frame's)
}

// Purpose says what the frame is for: "RC_RDMA_WRITE_FIRST of WR 3",
// "ACK for PSN 7 (MSN 2)", ...
func (f *Frame) Purpose() string {
	if f.Stream == Out {
		return string(f.appendOutPurpose(nil))
	}
	if f.purpose != "" {
		return f.purpose
	}
	if f.inf != nil {
		return f.inf.purpose(f.Source)
	}
	return ""
}

func (f *Frame) appendOutPurpose(b []byte) []byte {
	p := strconv.AppendUint(nil, uint64(f.PSN), 10)
	switch {
	case f.Opcode == opcode.RCAcknowledge && f.syn.Kind() == aeth.ACK:
		b = append(b, "ACK for PSN "...)
		b = append(b, p...)
		b = append(b, " (MSN "...)
		b = strconv.AppendUint(b, uint64(f.msn), 10)
		b = append(b, ')')
	case f.Opcode == opcode.RCAcknowledge && f.syn.Kind() == aeth.NAK:
		b = append(b, "NAK "...)
		b = append(b, f.syn.NAKCode().String()...)
		b = append(b, " for PSN "...)
		b = append(b, p...)
	case f.Opcode == opcode.RCAcknowledge && f.syn.Kind() == aeth.RNRNAK:
		b = append(b, "RNR NAK for PSN "...)
		b = append(b, p...)
		b = append(b, " (timer code "...)
		b = strconv.AppendUint(b, uint64(f.syn.RNRTimer()), 10)
		b = append(b, ')')
	default:
		b = append(b, f.Opcode.String()...)
		b = append(b, " for PSN "...)
		b = append(b, p...)
	}
	return b
}

// Sink receives the frames of both streams in causal order: each input
// frame, then the output frames it caused.
type Sink interface {
	Frame(f *Frame) error
}

// SinkFunc adapts a function to Sink.
type SinkFunc func(f *Frame) error

// Frame calls s(f).
func (s SinkFunc) Frame(f *Frame) error { return s(f) }

// Result sums up a generation.
type Result struct {
	In, Out   int // frames in each stream
	Faults    []*Fault
	Reactions [numReactions]int // input frames by reaction
}

// Count returns the number of input frames with reaction r.
func (r *Result) Count(x Reaction) int { return r.Reactions[x] }

// InputError is an error found before anything is generated: an invalid
// DUT description, an output format or width that does not exist, or a
// fault that cannot be placed (no eligible frame for a fault asked for once
// or @N, bad-vcrc on RoCE). Write creates no file when it returns one.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// prepared is a source analysed and its faults placed.
type prepared struct {
	src  *Source
	inf  []info
	plan []Kind
	opt  Options
}

func prepare(src *Source, opt Options) (*prepared, error) {
	if err := src.DUT.Check(); err != nil {
		return nil, &InputError{err}
	}
	inf := analyse(src)
	plan, err := planFaults(src, inf, &opt)
	if err != nil {
		return nil, &InputError{err}
	}
	return &prepared{src: src, inf: inf, plan: plan, opt: opt}, nil
}

// Generate applies the faults of opt to the source frames, replays the
// result into the golden model of src.DUT and hands every frame of both
// streams to sink. It fails with an *InputError before handing out
// anything when the DUT is invalid or a fault cannot be placed.
func Generate(src *Source, opt Options, sink Sink) (*Result, error) {
	p, err := prepare(src, opt)
	if err != nil {
		return nil, err
	}
	return p.generate(sink)
}

func (p *prepared) generate(sink Sink) (*Result, error) {
	m, err := newModel(&p.src.DUT)
	if err != nil {
		return nil, err
	}
	g := &generator{src: p.src, inf: p.inf, opt: &p.opt, m: m, sink: sink, res: &Result{}}
	g.fa.dut = &p.src.DUT
	if err := g.run(p.plan); err != nil {
		return nil, err
	}
	return g.res, nil
}

// Check reports (as an *InputError) whether Generate can place the faults
// of opt on src and whether the DUT description is valid, without
// generating anything.
func Check(src *Source, opt Options) error {
	_, err := prepare(src, opt)
	return err
}

// detailRNG is the random source of the details of fault k on source frame
// i: it depends on (seed, k, i) only, so a frame's fault is the same
// whatever other faults are asked for.
func detailRNG(seed uint64, k Kind, i int) *rand.Rand {
	return rand.New(rand.NewPCG(seed^0x9E3779B97F4A7C15*uint64(k), uint64(i)))
}

// planFaults decides which source frames each fault hits: plan[i] is the
// kind hitting frame i (0: none). A frame takes one fault at most; reorder
// takes the frame after it too.
func planFaults(src *Source, inf []info, opt *Options) ([]Kind, error) {
	n := len(src.Frames)
	plan := make([]Kind, n)
	if len(opt.Faults) == 0 {
		return plan, nil
	}
	taken := make([]bool, n)
	later := make([]bool, n) // a later frame goes to the same QP
	seen := map[int32]bool{}
	for i := n - 1; i >= 0; i-- {
		if q := inf[i].qp; q >= 0 {
			later[i] = seen[q]
			seen[q] = true
		}
	}
	var fr, next packet.Frame
	ok := func(k Kind, i int) bool {
		if i >= n || taken[i] {
			return false
		}
		data := src.Frames[i].Data
		decode(&fr, src.DUT.Encap, data)
		if !eligible(k, &fr, data, &inf[i], &src.DUT, later[i]) {
			return false
		}
		if k == Reorder {
			if i+1 >= n || taken[i+1] {
				return false
			}
			decode(&next, src.DUT.Encap, src.Frames[i+1].Data)
			_, okNext := frameLayout(&next)
			return okNext
		}
		return true
	}
	for si, fs := range opt.Faults {
		k := fs.Kind
		if k == 0 || k >= numKinds {
			return nil, fmt.Errorf("fault %d: unknown kind", si)
		}
		if k == BadVCRC && !isIB(src.DUT.Encap) {
			return nil, fmt.Errorf("bad-vcrc: RoCE frames carry no VCRC (ib-facts.md §1.1, §3.3); generate native InfiniBand frames with --encap ib (or ib-global)")
		}
		hit := func(i int) {
			plan[i] = k
			taken[i] = true
			if k == Reorder {
				taken[i+1] = true
			}
		}
		switch {
		case fs.At >= 0:
			if fs.At >= n {
				return nil, fmt.Errorf("fault %s: the source has %d frames (0..%d)", fs, n, n-1)
			}
			if !ok(k, fs.At) {
				why := "not eligible: " + k.Description()
				if taken[fs.At] {
					why = "already taken by another fault"
				}
				return nil, fmt.Errorf("fault %s: source frame %d (%s) is %s", fs, fs.At, inf[fs.At].op, why)
			}
			hit(fs.At)
		case fs.Rate > 0:
			rng := rand.New(rand.NewPCG(opt.Seed, uint64(k)<<32|uint64(si)+1))
			for i := 0; i < n; i++ {
				if ok(k, i) && rng.Float64() < fs.Rate {
					hit(i)
				}
			}
		default:
			var cand []int
			for i := 0; i < n; i++ {
				if ok(k, i) {
					cand = append(cand, i)
				}
			}
			if len(cand) == 0 {
				msg := fmt.Sprintf("fault %s: no eligible frame among the %d source frames (%s)", k, n, k.Description())
				if k == WrongQKey {
					msg += "; an RC stream has no DETH: add UD packets with --packets"
				}
				return nil, fmt.Errorf("%s", msg)
			}
			rng := rand.New(rand.NewPCG(opt.Seed, uint64(k)<<32|uint64(si)+1))
			hit(cand[rng.IntN(len(cand))])
		}
	}
	return plan, nil
}

// generator runs the faulted input stream through the model.
type generator struct {
	src  *Source
	inf  []info
	opt  *Options
	m    *model
	fa   faulter
	sink Sink
	res  *Result

	fr      packet.Frame
	in, out Frame
	prevEnd sim.Time
	nIn     int
	nOut    int
	scratch []byte
}

func (g *generator) run(plan []Kind) error {
	src := g.src
	for i := 0; i < len(src.Frames); i++ {
		sf := &src.Frames[i]
		k := plan[i]
		switch {
		case k == 0:
			if err := g.emit(sf.Data, true, sf.Time, i, nil, ""); err != nil {
				return err
			}
		case k.removes():
			f := &Fault{Kind: k, Source: i, Frame: -1, Other: -1, Bit: -1,
				Detail: "removed " + g.inf[i].purpose(i) + " PSN " + strconv.FormatUint(uint64(g.inf[i].psn), 10)}
			g.res.Faults = append(g.res.Faults, f)
		case k == Duplicate:
			orig := g.nIn
			if err := g.emit(sf.Data, true, sf.Time, i, nil, ""); err != nil {
				return err
			}
			f := &Fault{Kind: k, Source: i, Frame: g.nIn, Other: orig, Bit: -1, Detail: "copy of input frame " + strconv.Itoa(orig)}
			g.res.Faults = append(g.res.Faults, f)
			if err := g.emit(sf.Data, true, sf.Time, i, f, "duplicate of input "+strconv.Itoa(orig)+": "+g.purposeOf(i)); err != nil {
				return err
			}
		case k == Reorder:
			nx := &src.Frames[i+1]
			f := &Fault{Kind: k, Source: i, Frame: g.nIn + 1, Other: g.nIn, Bit: -1,
				Detail: fmt.Sprintf("source frames %d and %d swapped", i, i+1)}
			g.res.Faults = append(g.res.Faults, f)
			if err := g.emit(nx.Data, true, sf.Time, i+1, f, ""); err != nil {
				return err
			}
			if err := g.emit(sf.Data, true, nx.Time, i, f, ""); err != nil {
				return err
			}
			i++
		case k == GhostACK:
			if err := g.emit(sf.Data, true, sf.Time, i, nil, ""); err != nil {
				return err
			}
			data, f, err := g.fa.ghostACK(int(g.inf[i].qp), g.scratch)
			if err != nil {
				return err
			}
			g.scratch = data
			f.Source, f.Frame = i, g.nIn
			fp := &f
			g.res.Faults = append(g.res.Faults, fp)
			if err := g.emit(data, false, sf.Time, -1, fp, fmt.Sprintf("ghost ACK for PSN %d (fault, after input %d)", g.src.DUT.QPs[g.inf[i].qp].SQPSN, g.nIn-1)); err != nil {
				return err
			}
		default:
			data := append(g.scratch[:0], sf.Data...)
			decode(&g.fr, src.DUT.Encap, data)
			data, f, err := g.fa.apply(k, data, &g.fr, detailRNG(g.opt.Seed, k, i))
			if err != nil {
				return fmt.Errorf("source frame %d: %v", i, err)
			}
			g.scratch = data[:0]
			f.Source, f.Frame = i, g.nIn
			fp := &f
			g.res.Faults = append(g.res.Faults, fp)
			if err := g.emit(data, false, sf.Time, i, fp, ""); err != nil {
				return err
			}
		}
	}
	g.res.In, g.res.Out = g.nIn, g.nOut
	return nil
}

func (g *generator) purposeOf(i int) string {
	if p := g.src.Frames[i].Purpose; p != "" {
		return p
	}
	return g.inf[i].purpose(i)
}

// emit times one input frame, runs it through the model and hands it and
// its outputs to the sink. base is the time it would have had in the
// source; frames never overlap on the wire.
func (g *generator) emit(data []byte, stable bool, base sim.Time, srcIdx int, f *Fault, purpose string) error {
	d := &g.src.DUT
	t := max(base, g.prevEnd)
	g.prevEnd = t + d.txTime(len(data))
	v := g.m.receive(t, data)
	in := &g.in
	*in = Frame{Stream: In, Index: g.nIn, Time: t, Data: data, QP: v.qp, Source: srcIdx, Fault: f,
		Reaction: v.reaction, Reason: v.reason, FirstOut: g.nOut, NumOut: len(g.m.outs), Completions: v.comps, purpose: purpose,
		stable: stable}
	if bt := g.m.fr.Transport.BTH; bt != nil && g.m.fr.IsRoCE() {
		in.HasBTH, in.Opcode, in.PSN = true, bt.Opcode(), bt.PSN()
	}
	if in.QP < 0 && in.HasBTH {
		in.QP = d.qpIndex(g.m.fr.Transport.BTH.DestQP())
	}
	if srcIdx >= 0 && purpose == "" {
		in.purpose = g.src.Frames[srcIdx].Purpose
		in.inf = &g.inf[srcIdx]
	}
	g.res.Reactions[v.reaction]++
	if err := g.sink.Frame(in); err != nil {
		return err
	}
	for i := range g.m.outs {
		o := &g.m.outs[i]
		out := &g.out
		*out = Frame{Stream: Out, Index: g.nOut, Time: o.t, Data: o.data, QP: o.qp, HasBTH: true, Opcode: o.op, PSN: o.psn,
			Source: -1, Cause: g.nIn, syn: o.syn, msn: o.msn}
		g.nOut++
		if err := g.sink.Frame(out); err != nil {
			return err
		}
	}
	g.nIn++
	return nil
}
