//go:build !linux

package hugepage

func advise(start, n uintptr) {}
