// Command folios reports how the page cache holds a file: how many of its
// 4 KiB pages sit in large folios (the kernel maps and unmaps those in
// batches) and how many in single pages. A mapped reader such as rocekit
// decode spends about twice the system time on a file held in single pages
// (BENCHMARKS.md), so bench/decode.sh prints this beside its figures.
//
//	go run ./bench/folios FILE
//
// It maps the file, touches every page, and looks each one up in
// /proc/self/pagemap and /proc/kpageflags, which need root (CAP_SYS_ADMIN).
package main

import (
	"encoding/binary"
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: folios FILE")
		os.Exit(2)
	}
	f, err := os.Open(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		fmt.Fprintln(os.Stderr, "folios: empty or unreadable file")
		os.Exit(1)
	}
	n := int(st.Size())
	b, err := syscall.Mmap(int(f.Fd()), 0, n, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	ps := os.Getpagesize()
	var sum byte
	for i := 0; i < n; i += ps {
		sum |= b[i]
	}
	sink = sum
	pm, err1 := os.Open("/proc/self/pagemap")
	kf, err2 := os.Open("/proc/kpageflags")
	if err1 != nil || err2 != nil {
		fmt.Println("page cache: unknown (reading /proc/kpageflags needs root)")
		return
	}
	base := uintptr(unsafe.Pointer(&b[0]))
	var e [8]byte
	var large, single, absent int
	for p := 0; p < (n+ps-1)/ps; p++ {
		va := base + uintptr(p*ps)
		if _, err := pm.ReadAt(e[:], int64(va/uintptr(ps)*8)); err != nil {
			fmt.Println("page cache: unknown:", err)
			return
		}
		v := binary.LittleEndian.Uint64(e[:])
		pfn := v & (1<<55 - 1)
		if v&(1<<63) == 0 || pfn == 0 {
			absent++
			continue
		}
		if _, err := kf.ReadAt(e[:], int64(pfn*8)); err != nil {
			fmt.Println("page cache: unknown:", err)
			return
		}
		const head, tail = 1 << 15, 1 << 16 // KPF_COMPOUND_HEAD, KPF_COMPOUND_TAIL
		if binary.LittleEndian.Uint64(e[:])&(head|tail) != 0 {
			large++
		} else {
			single++
		}
	}
	if absent == (n+ps-1)/ps {
		fmt.Println("page cache: unknown (page frames hidden: not root)")
		return
	}
	total := large + single
	fmt.Printf("page cache: %d of %d pages (%.0f%%) in large folios, %d single", large, total, 100*float64(large)/float64(max(total, 1)), single)
	if absent > 0 {
		fmt.Printf(", %d not mapped", absent)
	}
	fmt.Println()
}

// sink keeps the loads that map the pages.
var sink byte
