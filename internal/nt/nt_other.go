//go:build !amd64

package nt

import "unsafe"

const ok = false

func copy16(dst, src unsafe.Pointer, n int) {}

func sfence() {}
