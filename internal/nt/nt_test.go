package nt

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

type line2 struct {
	a, b uint64
	c    [14]uint64
}

type odd struct {
	a uint64
	b uint32
}

// Store copies every byte, whether it takes the non-temporal path (a
// 128-byte value, aligned) or not (an odd size, a misaligned destination),
// and leaves the neighbours of the destination alone.
func TestStore(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var src line2
		src.a, src.b = rapid.Uint64().Draw(rt, "a"), rapid.Uint64().Draw(rt, "b")
		for i := range src.c {
			src.c[i] = rapid.Uint64().Draw(rt, "c")
		}
		// A destination 16-byte aligned (the fast path) and one 8 bytes
		// off (the assignment), in a buffer whose words around it must
		// stay zero.
		for _, off := range []uintptr{0, 8} {
			buf := make([]uint64, 2+16+2+2)
			k := 2
			if (uintptr(unsafe.Pointer(&buf[k]))+off)%16 != 0 {
				k++
			}
			dst := (*line2)(unsafe.Pointer(&buf[k]))
			Store(dst, &src)
			Fence()
			require.Equal(rt, src, *dst, "offset %d", off)
			for i, w := range buf {
				if i < k || i >= k+16 {
					require.Zero(rt, w, "offset %d, word %d", off, i)
				}
			}
		}

		o := odd{rapid.Uint64().Draw(rt, "oa"), rapid.Uint32().Draw(rt, "ob")}
		ods := make([]odd, 3)
		Store(&ods[1], &o)
		require.Equal(rt, o, ods[1])
		require.Zero(rt, ods[0])
		require.Zero(rt, ods[2])

	})
}

func BenchmarkStore128(b *testing.B) {
	dst := make([]line2, 1024)
	var src line2
	for i := 0; b.Loop(); i++ {
		src.a = uint64(i)
		Store(&dst[i%len(dst)], &src)
	}
	Fence()
}
