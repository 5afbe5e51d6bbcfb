// Command floor does the least that `rocekit decode --summary` must do to
// a capture, and nothing else, as a whole process: start, read every byte
// of the file the way decode does (decode.Walk: one worker per core,
// through copies or the mapping as package pcap decides, record
// headers walked in file order), and check the ICRC of every RoCEv2 frame
// over IPv4 on Ethernet (all of bench/mkcap's). No headers are decoded, no
// flows tracked, no summary made. bench/decode.sh times it beside decode
// and tshark: it shows how much of decode's time is the floor that
// starting, reading the file and checksumming it set on the machine, and
// so whether a speed target is within reach of a decoder that reads the
// file this way (the fastest way found on each machine so far:
// BENCHMARKS.md, "Decode") and checks every ICRC.
//
//	go build -o bench/out/floor ./bench/floor
//	bench/out/floor bench/out/mixed.pcap
//
// It prints the number of frames, how many of them it checked and how many
// had a bad ICRC, and whether the file was read through copies.
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"

	"github.com/rocekit/rocekit/decode"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/pcap"
)

// count is what the walk found, or one worker's part of it, padded so
// that workers write no cache line in common.
type count struct {
	frames, checked, bad uint64
	_                    [64]byte
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: floor FILE.pcap")
		os.Exit(2)
	}
	t, copied, err := check(os.Args[1])
	fmt.Printf("%d frames, %d ICRCs checked, %d bad; read through copies: %v\n", t.frames, t.checked, t.bad, copied)
	if err != nil {
		fmt.Fprintf(os.Stderr, "floor: %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

// check walks the file and checks the ICRC of each RoCEv2 frame over IPv4
// on Ethernet.
func check(path string) (count, bool, error) {
	cs := make([]count, runtime.GOMAXPROCS(0))
	copied, err := decode.Walk(path, len(cs), func(w int, rec *pcap.Record) {
		c := &cs[w]
		c.frames++
		d := rec.Data
		// Ethernet, IPv4 (14 + 20 bytes at least), UDP to port 4791, and
		// room for a BTH and the ICRC.
		if len(d) < 14+20+8+12+4 || binary.BigEndian.Uint16(d[12:]) != 0x0800 {
			return
		}
		ip := d[14:]
		hl := int(ip[0]&0x0F) * 4
		if ip[9] != 17 || len(ip) < hl+8+12+4 || binary.BigEndian.Uint16(ip[hl+2:]) != 4791 {
			return
		}
		v, err := icrc.IPv4(ip[:len(ip)-4])
		c.checked++
		if err != nil || v != icrc.Get(ip[len(ip)-4:]) {
			c.bad++
		}
	})
	var t count
	for _, c := range cs {
		t.frames += c.frames
		t.checked += c.checked
		t.bad += c.bad
	}
	return t, copied, err
}
