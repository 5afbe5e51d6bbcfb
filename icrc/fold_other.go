//go:build !amd64

package icrc

const haveFold = false

func fold512(b []byte, s *shape) (v uint64) { panic("icrc: no vector kernel") }
