// Package pcapfast is the door to the speed machinery of package pcap's
// Reader, which pcap keeps out of its API: the ways a memory-mapped
// classic pcap file is read by several workers at once, used by package
// decode (and the fuzz tests of that machinery). It also holds the size
// of the chunks decode reads such a file in, which bench/membw copies
// the file in too.
//
// Each way is here because it measured faster (BENCHMARKS.md, "Decode",
// and the alternated comparisons each item gives):
//
//   - Workers read their chunks of the mapping ahead of their turn
//     (Methods.ReadAhead, Methods.Ahead), in parallel; only locating the
//     records takes turns (Methods.SkimFrom), and each record is filled in
//     on the worker that decodes it (Methods.RecordFrom). Pages are mapped
//     by reading one byte every 64 KiB ahead of the reader:
//     MADV_POPULATE_READ instead took 1.04-1.09x the time.
//   - Where each first touch of a mapped page traps to the hypervisor
//     (virtual machines with shadow page tables), chunks are copied with
//     pread instead (Methods.CopyAt into a Copy, Methods.CopyIsFaster
//     decides once per process): decode's floor took 37.2-52.6 ms through
//     copies against 46.8-76.3 ms through the mapping on machine D; where
//     mapping is cheap, copies took 1.07-1.12x the time (machine A).
package pcapfast

// A batch is the records that start in one chunk of the file; a copy
// reaches Slack past its chunk, so that the record that starts last in
// the chunk is usually read from the copy too.
//
// ReadChunk is the chunk of a file read through its mapping: chunks of
// 128, 512 or 1024 KiB took 1.03-1.09x, 1.14-1.18x and 1.43-1.47x the
// time of 256 KiB ones (machine C). CopyChunk is the chunk of a file read
// through copies: a worker's copies (four batch buffers with a summary)
// then fit a 1 MiB L2 cache; copied chunks of 64 or 512 KiB took 0.885x
// and 1.24x the time of 256 KiB ones, 128 KiB 0.849x (machine D).
const (
	ReadChunk = 256 << 10
	CopyChunk = 128 << 10
	Slack     = 16 << 10
)

// A Copy holds a copy of part of a mapped file, made with Methods.CopyAt:
// the bytes at file offsets [Off, Off+len(Data)). SkimFrom and RecordFrom
// read the records it covers from it instead of from the mapping, so a
// file can be read without touching its mapping at all. Records read from
// a Copy point into it: they are valid until the Copy is filled again.
type Copy struct {
	Off  int64
	Data []byte
	buf  []byte
}

// Buffer returns c's buffer grown to n bytes (reallocated only when n
// exceeds every earlier size), for CopyAt to read into.
func (c *Copy) Buffer(n int) []byte {
	if cap(c.buf) < n {
		c.buf = make([]byte, n)
	}
	return c.buf[:n]
}

// At returns the bytes of c from file offset off on, and whether c holds
// at least need of them; nil and false for a nil c.
func (c *Copy) At(off int64, need int) ([]byte, bool) {
	if c == nil || off < c.Off || off-c.Off > int64(len(c.Data)) {
		return nil, false
	}
	b := c.Data[off-c.Off:]
	return b, len(b) >= need
}

// Methods are the speed methods of a *pcap.Reader (R) filling a
// *pcap.Record (Rec), as package pcap documents them (its unexported
// methods of the same names). Package pcap provides them at
// initialisation (Set); Get returns them.
type Methods[R, Rec any] struct {
	// CopyIsFaster reports whether r's file is better read through Copies
	// than through its mapping (false for a Reader that is not Mapped).
	CopyIsFaster func(r R) bool
	// CallerReadsAhead has r leave reading ahead to its caller.
	CallerReadsAhead func(r R)
	// ReadAhead brings the file's bytes [from, to) into the calling
	// core's cache; Ahead only has them mapped and returns them.
	ReadAhead func(r R, from, to int64)
	Ahead     func(r R, from, to int64) []byte
	// CopyAt fills c with the file's bytes [from, to).
	CopyAt func(r R, c *Copy, from, to int64)
	// SkimFrom locates the records that start before offset to (from c
	// where it covers them), appending their offsets to offs, and returns
	// offs and the Index of the first one.
	SkimFrom func(r R, c *Copy, to int64, offs []int64) ([]int64, int)
	// RecordFrom fills rec with the record SkimFrom located at off.
	RecordFrom func(r R, c *Copy, off int64, index int, rec Rec) error
}

var methods any

// Set is called by package pcap, once, at initialisation.
func Set[R, Rec any](m Methods[R, Rec]) { methods = m }

// Get returns the methods package pcap set for R and Rec (*pcap.Reader and
// *pcap.Record); the zero Methods for other types.
func Get[R, Rec any]() Methods[R, Rec] {
	m, _ := methods.(Methods[R, Rec])
	return m
}
