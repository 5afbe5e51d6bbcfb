package hugepage

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

func anonHugeKB(t *testing.T) int {
	b, err := os.ReadFile("/proc/self/smaps_rollup")
	if err != nil {
		t.Skip("no /proc/self/smaps_rollup")
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "AnonHugePages:" {
			n, _ := strconv.Atoi(f[1])
			return n
		}
	}
	t.Skip("no AnonHugePages line")
	return 0
}

// Where the kernel does transparent huge pages on request, advised memory
// gets them.
func TestAdvise(t *testing.T) {
	Advise(nil, 0)
	Bytes(nil)
	Bytes(make([]byte, 100)) // less than a huge page: nothing to do
	// Fresh anonymous memory, never touched (heap memory may have been
	// used with small pages already, which only a background scan merges).
	b, err := syscall.Mmap(-1, 0, 16<<20, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(b)
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		Bytes(b)
		t.Skip("transparent huge pages are off in this kernel")
	}
	before := anonHugeKB(t)
	Bytes(b)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after := anonHugeKB(t)
	// 16 MiB holds at least 7 whole huge pages; with defrag "madvise" or
	// "always" the kernel compacts memory to grant them at the first touch.
	defrag, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/defrag")
	if !strings.Contains(string(defrag), "[madvise]") && !strings.Contains(string(defrag), "[always]") {
		t.Skipf("huge pages are granted only in the background here (defrag: %s)", strings.TrimSpace(string(defrag)))
	}
	if after-before < 2048 {
		t.Fatalf("AnonHugePages %d -> %d kB: the advised 16 MiB got no huge page", before, after)
	}
}
