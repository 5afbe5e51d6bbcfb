package hugepage

import (
	"testing"
	"unsafe"
)

type line struct {
	p *int
	_ [56]byte
}

// Slice gives n elements of an array of at least 32 KiB that starts on a
// page, so that 64-byte elements start cache lines.
func TestSlice(t *testing.T) {
	for _, n := range []int{0, 1, 3, 512, 513, 5000} {
		s := Slice[line](n)
		if len(s) != n {
			t.Fatalf("n=%d: len %d", n, len(s))
		}
		if c := cap(s) * int(unsafe.Sizeof(line{})); c < 32<<10 {
			t.Fatalf("n=%d: %d bytes, want at least 32 KiB", n, c)
		}
		if a := uintptr(unsafe.Pointer(unsafe.SliceData(s))) % 4096; a != 0 {
			t.Fatalf("n=%d: array at offset %d in its page", n, a)
		}
	}
	if s := Slice[struct{}](3); len(s) != 3 {
		t.Fatalf("zero-size elements: len %d", len(s))
	}
	if s := Slice[int](-1); len(s) != 0 {
		t.Fatalf("n=-1: len %d", len(s))
	}
}
