//go:build !amd64

package icrc

const kernel = kernelNone

func fold512(b []byte, s *shape) (crc uint32) { panic("icrc: no vector kernel") }

func fold256(b []byte, s *shape) (crc uint32) { panic("icrc: no vector kernel") }

func fold128(b []byte, s *shape) (crc uint32) { panic("icrc: no vector kernel") }

func haveSSEKernel() bool { return false }
