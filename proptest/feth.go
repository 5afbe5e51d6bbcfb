package proptest

import (
	"github.com/rocekit/rocekit/feth"
	"pgregory.net/rapid"
)

// FETHFields draws any FETH whose fields fit their widths: any SEL (the
// reserved 2 and 3 included), any PLT bits, any reserved bits.
func FETHFields() *rapid.Generator[feth.Fields] {
	return rapid.Custom(func(t *rapid.T) feth.Fields {
		return feth.Fields{
			Resv: rapid.Uint32Range(0, 0x3FFFFFF).Draw(t, "resv"),
			SEL:  Bits(2).Draw(t, "sel"),
			PLT:  Bits(4).Draw(t, "plt"),
		}
	})
}
