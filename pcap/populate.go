package pcap

import (
	"os"
	"sync/atomic"
)

// faultAround is the stride at which populate reads the mapping: Linux's
// fault-around (fault_around_bytes, 64 KiB unless changed in debugfs) maps,
// on a read fault in a file mapping, every page of the aligned 64 KiB block
// around the faulting one that the page cache holds.
const faultAround = 64 << 10

// populated keeps populate's loads from being optimised away.
var populated atomic.Uint32

// populate maps data[from:to] ahead of the reader by reading one byte every
// faultAround bytes: one page fault maps a whole block, where
// MADV_POPULATE_READ walks the range a page at a time and took twice the
// system time (21.9 against 11.9 ms a run of decode --summary on the
// benchmark file, alternated with bench/alternate.py). Consecutive reads
// faultAround apart land in consecutive aligned blocks, and a last read at
// to-1 takes the block that ends the range, so it is covered whatever its
// alignment. A page left unmapped (a smaller fault_around_bytes, or a page
// still being read from disk) is mapped when the decoder first reads it.
func populate(data []byte, from, to int) {
	from &^= os.Getpagesize() - 1
	var s byte
	for i := from; i < to; i += faultAround {
		s |= data[i]
	}
	if from < to {
		s |= data[to-1]
	}
	populated.Store(uint32(s))
}
