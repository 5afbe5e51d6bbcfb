package hugepage

import "syscall"

const madvHugepage = 14 // MADV_HUGEPAGE

func advise(start, n uintptr) {
	// Errors (no transparent huge pages in this kernel) leave the hint
	// untaken, which is all it can mean.
	syscall.Syscall(syscall.SYS_MADVISE, start, n, madvHugepage)
}
