package prefetch

import (
	"testing"
	"unsafe"
)

// Lines is only a hint: any count, nil, and lines past the end of what p
// points to (a prefetch never faults) are all fine, and memory is left as
// it was.
func TestLinesEdgeCases(t *testing.T) {
	for name, f := range map[string]func(unsafe.Pointer, int){"Lines": Lines, "LinesL2": LinesL2} {
		b := make([]byte, 4096)
		for i := range b {
			b[i] = byte(i)
		}
		for _, n := range []int{-5, -1, 0, 1, 2, 63, 64, 65} {
			f(unsafe.Pointer(&b[0]), n)
			f(unsafe.Pointer(&b[len(b)-1]), n)
			f(nil, n)
		}
		for i := range b {
			if b[i] != byte(i) {
				t.Fatalf("%s: byte %d changed", name, i)
			}
		}
	}
}

func BenchmarkLines21(b *testing.B) {
	buf := make([]byte, 21*64)
	for i := 0; i < b.N; i++ {
		Lines(unsafe.Pointer(&buf[0]), 21)
	}
}
