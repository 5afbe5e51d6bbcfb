package nt

import "unsafe"

const ok = true

// copy16 copies n 16-byte blocks from src to dst (16-byte aligned) with
// MOVNTDQ.
//
//go:noescape
func copy16(dst, src unsafe.Pointer, n int)

func sfence()
