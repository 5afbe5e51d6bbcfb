//go:build !linux

package pcap

import "os"

func mapFile(f *os.File) ([]byte, func() error, bool) { return nil, nil, false }

func releaseBehind(data []byte, n int) {}
