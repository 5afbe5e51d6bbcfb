// Package pcapfast holds what the parallel capture decode (package decode)
// and the benchmarks that time its parts share about reading a memory-mapped
// capture fast: the size of the chunks a batch covers.
package pcapfast

// A batch is the records that start in one chunk of the file; a copy
// reaches Slack past its chunk, so that the record that starts last in
// the chunk is usually read from the copy too.
//
// ReadChunk is the chunk of a file read through its mapping: each worker
// streams it into its core's cache before its turn to walk the records.
// CopyChunk is the chunk of a file read through copies: a worker's copies
// (four batch buffers with a summary) then fit a 1 MiB L2 cache; 256 KiB
// chunks took 1.18x the time of 128 KiB ones on the AMD EPYC VM
// (BENCHMARKS.md, "Decode").
const (
	ReadChunk = 256 << 10
	CopyChunk = 128 << 10
	Slack     = 16 << 10
)
