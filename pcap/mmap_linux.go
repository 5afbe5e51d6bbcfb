//go:build linux

package pcap

import (
	"os"
	"syscall"
)

// mapFile maps a regular, uncompressed capture file into memory so records
// are read in place, without a copy through a read buffer. Only on Linux:
// the reader relies on its madvise semantics (MADV_DONTNEED drops the pages
// behind it, keeping memory constant) and page fault-around; elsewhere
// files are read as streams. Compressed files,
// pipes and empty or huge files are read as streams instead.
//
// A mapped file must not be truncated by another process while it is read
// (the reader would fault); capture files being written are only appended
// to, and the mapping covers the size the file had when it was opened.
func mapFile(f *os.File) (data []byte, unmap func() error, ok bool) {
	data, unmap, ok = mapWhole(f)
	return
}

// releaseBehind tells the kernel the pages of data[:n] are not needed any
// more, so a long file does not accumulate in the process's resident set.
// The mapping is shared and file-backed: the bytes stay readable (a later
// access faults them back in from the page cache), so views handed out
// earlier remain valid.
func releaseBehind(data []byte, n int) {
	n &^= os.Getpagesize() - 1
	if n > 0 {
		_ = syscall.Madvise(data[:n], syscall.MADV_DONTNEED)
	}
}

func mapWhole(f *os.File) (data []byte, unmap func() error, ok bool) {
	if os.Getenv("ROCEKIT_NO_MMAP") != "" {
		return nil, nil, false
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < 24 || st.Size() > 1<<40 || int64(int(st.Size())) != st.Size() {
		return nil, nil, false
	}
	var magic [2]byte
	if n, _ := f.ReadAt(magic[:], 0); n != 2 || (magic[0] == 0x1F && magic[1] == 0x8B) {
		return nil, nil, false
	}
	data, err = syscall.Mmap(int(f.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, nil, false
	}
	_ = syscall.Madvise(data, syscall.MADV_SEQUENTIAL)
	return data, func() error { return syscall.Munmap(data) }, true
}
