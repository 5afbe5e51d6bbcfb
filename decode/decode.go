// Package decode decodes capture files in parallel: every frame is read,
// decoded as far as its headers go (package packet), its ICRC (and VCRC on
// native InfiniBand) checked, and fed to the per-connection analysis
// (package analysis), on one worker per core; the frames' output is
// written in file order and the analysis ends in a summary.
//
// Decode is the simple way in: it calls a function for every frame, in
// order. A Decoder does more: several files in one analysis, output
// formatted by every worker at once (Options.Append) and written in order,
// or the summary alone (Options.SummaryOnly), the fastest. Walk reads a
// file the same way without decoding it, for timing the reading alone.
package decode

import (
	"io"
	"sync"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// Options say what a Decoder does with each frame.
type Options struct {
	// Workers is how many goroutines decode at once; 0 means one per core
	// (GOMAXPROCS), at most 4.
	Workers int
	// Ports are UDP destination ports to decode as RoCEv2 besides 4791.
	Ports []uint16
	// PMTU is the path MTU the analysis assumes for READ response matching
	// until CM or full-size packets say (0: infer).
	PMTU int
	// Last, if positive, is the index (1-based) of the last record decoded
	// and analysed: the records after it are still read, so that damage is
	// reported, but nothing else.
	Last int
	// SummaryOnly has every frame analysed for the summary and nothing
	// else: Append is never called.
	SummaryOnly bool
	// Append is called for each frame decoded and analysed, unless
	// SummaryOnly, to append the frame's output to b; the output is written
	// to Out in file order. The calls run on the workers at once: w
	// (0 <= w < Workers, or the number 0 chose) says which, one worker's
	// calls never overlap, and each worker's frames come in file order. f
	// and what it points to are valid until the call returns. Nil: nothing
	// is appended.
	Append func(w int, b []byte, f *Frame) []byte
	// Ordered has the Append calls made one at a time, in file order (for
	// output that depends on the frames before).
	Ordered bool
	// Out receives what Append appends; nil discards it.
	Out io.Writer
}

// Frame is one frame of a capture, decoded and checked.
type Frame struct {
	// Record is the capture record; its Data is valid as long as f is.
	Record pcap.Record
	// Packet is the decoded frame, as far as its headers go.
	Packet *packet.Frame
	// Err says why the frame did not decode to its end (a link layer that
	// could not be stripped, a header cut short, an unknown opcode); nil
	// when it did.
	Err error
	// ReadErr is set when the record could not be read at all (the file
	// changed while it was read in place): Packet is then empty.
	ReadErr error
	// ICRC and VCRC are the results of the frame's CRC checks.
	ICRC, VCRC CRC
	// Warnings are the anomalies the analysis found at this frame.
	Warnings []string
}

// CRC is the result of one CRC check of a frame.
type CRC struct {
	Checked   bool   // the frame has this CRC and it was computed
	OK        bool   // it matched
	Want, Got uint32 // the computed value, and the frame's
}

// Decoder decodes capture files, one after the other, into one analysis.
// Its methods must not be called concurrently.
type Decoder struct {
	p *pipeline
}

// New returns a Decoder that does what o says.
func New(o Options) *Decoder {
	return &Decoder{p: newPipeline(o)}
}

// File decodes the capture file at path ("-" for standard input; pcap,
// pcapng, either gzip-compressed). It returns once every frame's output has
// been written, with the error that stopped it (nil at a clean end of
// file): a file that could not be opened, or damage met after every frame
// before it was decoded.
func (d *Decoder) File(path string) error {
	return d.p.file(path)
}

// Summary returns the summary of the analysis of every frame decoded so far.
func (d *Decoder) Summary() *analysis.Summary {
	return d.p.conv.s.Summary()
}

// Decode decodes the capture file at path with o (o.Append, o.Ordered
// and o.Out are ignored) and calls each for every frame, in file order,
// one call at a time, unless o.SummaryOnly. Once each returns an error it
// is not called again, and Decode returns that error once the file is
// read. It returns the summary of the analysis and the error that
// stopped the file (see Decoder.File).
func Decode(path string, o Options, each func(*Frame) error) (*analysis.Summary, error) {
	var eachErr error
	o.Ordered, o.Out = true, nil
	o.Append = func(_ int, b []byte, f *Frame) []byte {
		if eachErr == nil {
			eachErr = each(f)
		}
		return b
	}
	d := New(o)
	err := d.File(path)
	if eachErr != nil {
		err = eachErr
	}
	return d.Summary(), err
}

// Walk reads the capture file at path the way a Decoder with SummaryOnly
// does, on workers goroutines (0: as a Decoder's Workers), and calls
// each(w, rec) for every record, on worker w (0 <= w < workers): one
// worker's records in file order, different workers' calls at once. rec
// and its Data are valid until each returns. Nothing is decoded. Walk
// returns the first error met (a damaged record, after every record
// before it was handed over, or one that changed after it was located;
// nil at a clean end) and whether a memory-mapped file was read through
// copies of its chunks rather than through the mapping: the faster way
// on some machines (virtual machines with shadow page tables).
func Walk(path string, workers int, each func(w int, rec *pcap.Record)) (copied bool, err error) {
	p := newPipeline(Options{Workers: workers, SummaryOnly: true})
	p.raw = each
	err = p.file(path)
	p.rawMu.Lock()
	defer p.rawMu.Unlock()
	if err == nil {
		err = p.rawErr
	}
	return p.copied, err
}

// walkState is what a Walk's pipeline keeps besides a Decoder's.
type walkState struct {
	raw    func(w int, rec *pcap.Record) // each record goes there, undecoded
	rawMu  sync.Mutex
	rawErr error // the first record that could not be read
	copied bool  // the last file was read through copies
}

func (w *walkState) fail(err error) {
	w.rawMu.Lock()
	if w.rawErr == nil {
		w.rawErr = err
	}
	w.rawMu.Unlock()
}

// decodeFrame decodes fr.Record into f, and clears fr's results.
func decodeFrame(fr *Frame, f *packet.Frame, ports []uint16) {
	fr.ReadErr = nil
	fr.ICRC, fr.VCRC = CRC{}, CRC{}
	f.Ports = ports
	fr.Err = f.DecodeRecord(&fr.Record) // a link-layer error too: both print alike
}

// checkFrame fills in the ICRC and VCRC results of a decoded frame. The
// ICRC is checked whenever the encapsulation bounds the transport packet,
// even one whose headers did not decode (an unknown opcode, a header cut
// short by the packet's own length).
func checkFrame(fr *Frame, f *packet.Frame) {
	if f.Network() != nil {
		if ok, want, got, err := f.CheckICRC(); err == nil {
			fr.ICRC = CRC{true, ok, want, got}
		}
	}
	if f.VCRC != nil {
		if ok, want, got, err := f.CheckVCRC(); err == nil {
			fr.VCRC = CRC{true, ok, uint32(want), uint32(got)}
		}
	}
}

// DecodeRecord decodes rec into pf and checks its CRCs, as a Decoder does
// each frame before the analysis, and sets fr to the result: fr.Record is
// *rec, fr.Packet is pf, fr.Warnings is empty. pf.Ports says which UDP
// ports besides 4791 carry RoCEv2.
func (fr *Frame) DecodeRecord(rec *pcap.Record, pf *packet.Frame) {
	fr.Record, fr.Packet, fr.Warnings = *rec, pf, nil
	decodeFrame(fr, pf, pf.Ports)
	checkFrame(fr, pf)
}
