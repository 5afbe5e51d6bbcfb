package proptest

import (
	"github.com/rocekit/rocekit/immdt"
	"pgregory.net/rapid"
)

// ImmDtFields draws any ImmDt: any 32-bit immediate value.
func ImmDtFields() *rapid.Generator[immdt.Fields] {
	return rapid.Custom(func(t *rapid.T) immdt.Fields {
		return immdt.Fields{
			Imm: rapid.Uint32().Draw(t, "imm"),
		}
	})
}
