//go:build linux

package pcap

import (
	"os"
	"syscall"
)

// madvPopulateRead is MADV_POPULATE_READ (Linux 5.14): map the pages of a
// range now, reading them in if needed.
const madvPopulateRead = 22

// populate maps data[from:to] (page-aligned outward) in one call, so the
// reader does not take a page fault every few pages. Kernels without
// MADV_POPULATE_READ refuse it; the pages are then mapped on first touch as
// usual.
func populate(data []byte, from, to int) {
	from &^= os.Getpagesize() - 1
	if from < to {
		_ = syscall.Madvise(data[from:to], madvPopulateRead)
	}
}
