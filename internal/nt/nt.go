// Package nt writes values with non-temporal stores, which go to memory
// without taking the cache line into the writing core's cache first.
//
// rocekit decode --summary hands each frame's observation (internal/obs)
// from the core that decoded the frame to the core that tracks its
// connection. With ordinary stores, each line of a reused observation
// buffer is first fetched back from the other core's cache, where the
// previous reading left it; on a VM whose cores are far apart (a cache
// line took about 0.5 us to cross) that made the decoding core wait more
// than it worked. Non-temporal stores skip the fetch; the reading core then
// gets the lines from memory, and prefetches them.
package nt

import "unsafe"

// Store copies *src to *dst with non-temporal stores when T's size is a
// multiple of 16 bytes and dst is 16-byte aligned, and with an ordinary
// assignment otherwise (or where the CPU has no such stores). T must hold
// no pointers: the stores bypass the garbage collector's write barrier.
// Call Fence before publishing what Store wrote to another goroutine.
func Store[T any](dst, src *T) {
	n := unsafe.Sizeof(*src)
	if !ok || n%16 != 0 || uintptr(unsafe.Pointer(dst))%16 != 0 {
		*dst = *src
		return
	}
	copy16(unsafe.Pointer(dst), unsafe.Pointer(src), int(n/16))
}

// Fence orders every non-temporal store before it ahead of every store
// after it (SFENCE): the atomic store that publishes the data must come
// after a Fence.
func Fence() {
	if ok {
		sfence()
	}
}
