//go:build linux

// Command membw measures how fast this machine streams a file's pages from
// memory: it maps the file, then reads one byte of every 64-byte cache line,
// on one thread and then on two, three times each. It is the floor under any
// pass over a capture (bench/decode.sh): no decoder reads the file faster.
// Then it measures what making those pages visible costs the kernel, on one
// thread, three times each way: mapping every page of the file by reading
// one byte every 64 KiB (a fault maps a 64 KiB block; rocekit's reader maps
// pages this way) and by MADV_POPULATE_READ, 1 MiB at a time (for
// comparison), and unmapping them again (MADV_DONTNEED, which rocekit does
// behind the reader; exit or munmap would do the same work). Streaming a
// mapped file costs at least the sum.
//
// Then the two ways rocekit's reader can bring a file in, each on one
// thread and on two (the file split between them in 128 KiB chunks taken
// in turn), three times each: through a fresh mapping (the pages mapped 64
// KiB at a time as above, then every cache line read), and through copies
// (pread of each chunk into one of four reused buffers, then every line of
// it read), as package pcap compares them (internal/pcapfast); and what the first
// touch of a page costs once the kernel has mapped it (MADV_POPULATE_READ),
// 32 pages at a time at six places in a fresh mapping (on a VM whose
// hypervisor shadows page tables, the touch traps). Last, the round trip
// of a cache line between two threads spinning on two cores (a flag
// written by one, seen by the other, answered): what handing work between
// cores costs at least.
//
//	go run ./bench/membw bench/out/mixed.pcap
//
// With -folios it only reports how the page cache holds the file: how many
// of its pages sit in large folios (which the kernel maps and unmaps in
// batches) and how many in single 4 KiB pages, from /proc/self/pagemap and
// /proc/kpageflags (root only). A mapped reader spends about twice the
// system time on a file held in single pages (BENCHMARKS.md, "How to read
// these figures"), so bench/decode.sh prints this beside its figures.
//
//	go run ./bench/membw -folios bench/out/mixed.pcap
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/rocekit/rocekit/internal/pcapfast"
)

func main() {
	args := os.Args[1:]
	folios := len(args) == 2 && args[0] == "-folios"
	if folios {
		args = args[1:]
	}
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: membw [-folios] FILE")
		os.Exit(2)
	}
	f, err := os.Open(args[0])
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
	if folios {
		fmt.Println(folioState(b))
		return
	}
	sums := make([]byte, 2*64) // one cache line per thread
	defer roundTrip()
	defer firstTouch(f, int(st.Size()))
	defer readWays(f, int(st.Size()))
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

// mapCost times mapping the pages of a fresh mapping of f (size bytes),
// both ways, and unmapping them, three times.
func mapCost(f *os.File, size int) {
	const piece = 1 << 20 // populateChunk in pcap/reader.go
	for rep := 0; rep < 3; rep++ {
		for _, way := range []string{"by reads 64 KiB apart", "by MADV_POPULATE_READ"} {
			b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			start := time.Now()
			if way == "by MADV_POPULATE_READ" {
				for off := 0; off < size; off += piece {
					_ = syscall.Madvise(b[off:min(off+piece, size)], 22) // MADV_POPULATE_READ
				}
			} else {
				var x byte
				for off := 0; off < size; off += 64 << 10 {
					x |= b[off]
				}
				sink = x | b[size-1]
			}
			populate := time.Since(start)
			start = time.Now()
			_ = syscall.Madvise(b, syscall.MADV_DONTNEED)
			release := time.Since(start)
			syscall.Munmap(b)
			fmt.Printf("kernel, 1 thread: %v to map %d MB of pages %s, %v to unmap them\n",
				populate.Round(time.Microsecond), size>>20, way, release.Round(time.Microsecond))
		}
	}
}

// sink keeps the loads that map pages.
var sink byte

// readWays times bringing the whole file in through a fresh mapping and
// through copies, on one and on two threads, three times each.
func readWays(f *os.File, size int) {
	const chunk = pcapfast.CopyChunk // decode's chunk when it copies
	nchunks := (size + chunk - 1) / chunk
	for rep := 0; rep < 3; rep++ {
		for _, threads := range []int{1, 2} {
			for _, way := range []string{"through a fresh mapping", "through copies"} {
				var b []byte
				if way == "through a fresh mapping" {
					var err error
					b, err = syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
					if err != nil {
						fmt.Fprintln(os.Stderr, err)
						os.Exit(1)
					}
				}
				// The copy buffers are made and written before the clock
				// starts, as a reader's are in use long before most copies.
				bufs := make([][][]byte, threads)
				for t := range bufs {
					for range 4 {
						buf := make([]byte, chunk)
						for i := range buf {
							buf[i] = 1
						}
						bufs[t] = append(bufs[t], buf)
					}
				}
				sums := make([]byte, threads*64)
				start := time.Now()
				var wg sync.WaitGroup
				for t := 0; t < threads; t++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var x byte
						for c, k := t, 0; c < nchunks; c, k = c+threads, k+1 {
							lo, hi := c*chunk, min((c+1)*chunk, size)
							var p []byte
							if b != nil {
								for off := lo; off < hi; off += 64 << 10 {
									x |= b[off]
								}
								p = b[lo:hi]
							} else {
								buf := bufs[t][k%4][:hi-lo]
								if _, err := f.ReadAt(buf, int64(lo)); err != nil {
									fmt.Fprintln(os.Stderr, err)
									os.Exit(1)
								}
								p = buf
							}
							for i := 0; i < len(p); i += 64 {
								x |= p[i]
							}
						}
						sums[t*64] = x
					}()
				}
				wg.Wait()
				d := time.Since(start)
				if b != nil {
					syscall.Munmap(b)
				}
				fmt.Printf("%d thread(s): %v to read %d MB %s\n", threads, d.Round(time.Microsecond), size>>20, way)
			}
		}
	}
}

// firstTouch times reading one byte of each of 32 pages of a fresh mapping
// of f that MADV_POPULATE_READ has just mapped, at six places 8 MiB apart
// (as far as the file goes), and prints the time per page.
func firstTouch(f *os.File, size int) {
	const pages, page = 32, 4096
	var per []string
	for k := 0; k < 6; k++ {
		lo := (1 << 20) + k*(8<<20)
		if lo+pages*page > size {
			break
		}
		b, err := syscall.Mmap(int(f.Fd()), 0, size, syscall.PROT_READ, syscall.MAP_SHARED)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		w := b[lo : lo+pages*page]
		if err := syscall.Madvise(w, 22); err != nil { // MADV_POPULATE_READ
			fmt.Println("first touch: MADV_POPULATE_READ:", err)
			syscall.Munmap(b)
			return
		}
		var x byte
		start := time.Now()
		for i := 0; i < len(w); i += page {
			x |= w[i]
		}
		per = append(per, (time.Since(start) / pages).Round(time.Nanosecond).String())
		sink = x
		syscall.Munmap(b)
	}
	fmt.Println("first touch of a mapped page, per page:", per)
}

// roundTrip times a cache line's round trip between two threads: each
// waits for the other's write before writing back, 200,000 times.
func roundTrip() {
	var flags [2]struct {
		v atomic.Int64
		_ [56]byte
	}
	const n = 200000
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		for i := int64(1); i <= n; i++ {
			for flags[0].v.Load() != i {
			}
			flags[1].v.Store(i)
		}
		close(done)
	}()
	runtime.LockOSThread()
	start := time.Now()
	for i := int64(1); i <= n; i++ {
		flags[0].v.Store(i)
		for flags[1].v.Load() != i {
		}
	}
	d := time.Since(start)
	<-done
	runtime.UnlockOSThread()
	fmt.Printf("a cache line's round trip between two threads: %v\n", (d / n).Round(time.Nanosecond))
}

// folioState reads, for each page of the mapping b (already mapped), whether
// its page frame is part of a large folio (a compound page).
func folioState(b []byte) string {
	pm, err1 := os.Open("/proc/self/pagemap")
	kf, err2 := os.Open("/proc/kpageflags")
	if err1 != nil || err2 != nil {
		return "page cache: unknown (reading /proc/kpageflags needs root)"
	}
	ps := os.Getpagesize()
	base := uintptr(unsafe.Pointer(&b[0]))
	var e [8]byte
	var large, single, absent int
	pages := (len(b) + ps - 1) / ps
	for p := 0; p < pages; p++ {
		va := base + uintptr(p*ps)
		if _, err := pm.ReadAt(e[:], int64(va/uintptr(ps)*8)); err != nil {
			return "page cache: unknown: " + err.Error()
		}
		v := binary.LittleEndian.Uint64(e[:])
		pfn := v & (1<<55 - 1)
		if v&(1<<63) == 0 || pfn == 0 {
			absent++
			continue
		}
		if _, err := kf.ReadAt(e[:], int64(pfn*8)); err != nil {
			return "page cache: unknown: " + err.Error()
		}
		const head, tail = 1 << 15, 1 << 16 // KPF_COMPOUND_HEAD, KPF_COMPOUND_TAIL
		if binary.LittleEndian.Uint64(e[:])&(head|tail) != 0 {
			large++
		} else {
			single++
		}
	}
	if absent == pages {
		return "page cache: unknown (page frames hidden: not root)"
	}
	total := large + single
	r := fmt.Sprintf("page cache: %d of %d pages (%.0f%%) in large folios, %d single",
		large, total, 100*float64(large)/float64(max(total, 1)), single)
	if absent > 0 {
		r += fmt.Sprintf(", %d not mapped", absent)
	}
	return r
}
