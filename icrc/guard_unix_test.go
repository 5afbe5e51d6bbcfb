//go:build linux || darwin

package icrc_test

import (
	"syscall"
	"testing"

	"github.com/rocekit/rocekit/icrc"
	"github.com/stretchr/testify/require"
)

// Packets that start at a page's first byte or end at its last, with no
// access to the pages either side: the vector kernels must not touch them
// (a fault would kill the test): AVX-512's masked loads skip them, and
// AVX2's whole aligned blocks never cross a page.
func TestNoReadOutsidePacket(t *testing.T) {
	ps := syscall.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 3*ps, syscall.PROT_NONE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	require.NoError(t, err)
	defer syscall.Munmap(mem)
	page := mem[ps : 2*ps]
	require.NoError(t, syscall.Mprotect(page, syscall.PROT_READ|syscall.PROT_WRITE))
	for i := range page {
		page[i] = byte(i * 7)
	}
	for n := 60; n <= 600; n++ {
		for _, b := range [][]byte{page[:n], page[ps-n:]} {
			g, vs := icrc.Paths("ipv6", b)
			for i, v := range vs {
				require.Equal(t, g, v, "%s, len %d", icrc.Kernels()[i], n)
			}
		}
	}
}
