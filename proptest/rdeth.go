package proptest

import (
	"github.com/rocekit/rocekit/rdeth"
	"pgregory.net/rapid"
)

// RDETHFields draws any RDETH whose fields fit their widths, reserved byte
// included.
func RDETHFields() *rapid.Generator[rdeth.Fields] {
	return rapid.Custom(func(t *rapid.T) rdeth.Fields {
		return rdeth.Fields{
			Resv8:     rapid.Uint8().Draw(t, "resv8"),
			EEContext: Uint24().Draw(t, "eecnxt"),
		}
	})
}
