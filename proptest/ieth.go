package proptest

import (
	"github.com/rocekit/rocekit/ieth"
	"pgregory.net/rapid"
)

// IETHFields draws any IETH: any R_Key.
func IETHFields() *rapid.Generator[ieth.Fields] {
	return rapid.Custom(func(t *rapid.T) ieth.Fields {
		return ieth.Fields{
			RKey: rapid.Uint32().Draw(t, "rkey"),
		}
	})
}
