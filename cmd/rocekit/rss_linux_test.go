package main

import (
	"os"
	"syscall"
)

// peakRSS returns the peak resident memory of an exited child in bytes
// (Linux reports it in KiB).
func peakRSS(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	return ru.Maxrss << 10, true
}
