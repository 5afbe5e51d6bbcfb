// Package heapsize tells how much of the Go heap an allocation takes: the
// allocator rounds a small object up to its size class, puts an 8-byte
// header before one of more than 512 bytes that holds pointers, and gives a
// large object whole pages. Memory estimates use it so that they count what
// the heap takes, not only what the types need.
package heapsize

import "math"

// classes are the Go runtime's size classes for small objects
// (internal/runtime/gc.SizeClassToSize).
var classes = [...]int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
	288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792,
	2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240,
	10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

const (
	maxSmall     = 32 << 10 // larger objects get pages of their own
	page         = 8 << 10
	headerAbove  = 512 // on 64-bit platforms: 64 pointer-sized words
	mallocHeader = 8
)

// Alloc returns the bytes of heap an allocation of n bytes takes; pointers
// says whether its type holds pointers. It is 0 for n <= 0.
func Alloc(n int64, pointers bool) int64 {
	if n <= 0 {
		return 0
	}
	if pointers && n > headerAbove && n+mallocHeader <= maxSmall {
		n += mallocHeader
	}
	if n > maxSmall {
		return (min(n, math.MaxInt64-page) + page - 1) &^ (page - 1)
	}
	lo, hi := 0, len(classes)-1 // the first class >= n
	for lo < hi {
		m := (lo + hi) / 2
		if classes[m] < n {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return classes[lo]
}
