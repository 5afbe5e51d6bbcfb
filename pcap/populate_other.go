//go:build !linux

package pcap

// populate does nothing: pages are mapped on first touch.
func populate(data []byte, from, to int) {}
