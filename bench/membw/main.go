//go:build unix

// Command membw measures how fast this machine streams a file's pages from
// memory: it maps the file, then reads one byte of every 64-byte cache line,
// on one thread and then on two, three times each. It is the floor under any
// pass over a capture (bench/decode.sh): no decoder reads the file faster.
// Then it measures what making those pages visible costs the kernel, on one
// thread, three times: mapping every page of the file (MADV_POPULATE_READ,
// 1 MiB at a time, as rocekit's reader does) and unmapping them again
// (MADV_DONTNEED, which rocekit does behind the reader; exit or munmap would
// do the same work). Streaming a mapped file costs at least the sum.
//
//	go run ./bench/membw bench/out/mixed.pcap
package main

import (
	"fmt"
	"os"
	"sync"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: membw FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		fmt.Fprintln(os.Stderr, "membw: empty or unreadable file")
		os.Exit(1)
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sums := make([]byte, 2*64) // one cache line per thread
	defer mapCost(f, int(st.Size()))
	for _, threads := range []int{1, 2} {
		for rep := 0; rep < 3; rep++ {
			start := time.Now()
			var wg sync.WaitGroup
			chunk := len(b) / threads
			for t := 0; t < threads; t++ {
				wg.Add(1)
				go func(p []byte, out *byte) {
					defer wg.Done()
					var x byte
					for i := 0; i < len(p); i += 64 {
						x |= p[i]
					}
					*out = x
				}(b[t*chunk:(t+1)*chunk], &sums[t*64])
			}
			wg.Wait()
			d := time.Since(start)
			fmt.Printf("%d thread(s): %v for %d MB, %.1f GB/s\n", threads, d.Round(time.Microsecond), len(b)>>20, float64(len(b))/d.Seconds()/1e9)
		}
	}
}

// mapCost times mapping the pages of a fresh mapping of f (size bytes) and
// unmapping them, three times.
func mapCost(f *os.File, size int) {
	const piece = 1 << 20 // populateChunk in pcap/reader.go
	for rep := 0; rep < 3; rep++ {
		b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		start := time.Now()
		for off := 0; off < size; off += piece {
			_ = syscall.Madvise(b[off:min(off+piece, size)], 22) // MADV_POPULATE_READ
		}
		populate := time.Since(start)
		start = time.Now()
		_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
		release := time.Since(start)
		syscall.Munmap(b)
		fmt.Printf("kernel, 1 thread: %v to map %d MB of pages, %v to unmap them\n",
			populate.Round(time.Microsecond), size>>20, release.Round(time.Microsecond))
	}
}
