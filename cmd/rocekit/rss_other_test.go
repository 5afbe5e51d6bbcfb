//go:build !linux

package main

import "os"

// peakRSS is not known here (other systems report it in other units, or
// not at all).
func peakRSS(*os.ProcessState) (int64, bool) { return 0, false }
