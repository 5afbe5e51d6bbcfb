package proptest

import (
	"github.com/rocekit/rocekit/reth"
	"pgregory.net/rapid"
)

// RETHFields draws any RETH: any VA, R_Key and DMA length (lengths above the
// IBA limit of 2^31 included).
func RETHFields() *rapid.Generator[reth.Fields] {
	return rapid.Custom(func(t *rapid.T) reth.Fields {
		return reth.Fields{
			VA:     rapid.Uint64().Draw(t, "va"),
			RKey:   rapid.Uint32().Draw(t, "rkey"),
			DMALen: rapid.Uint32().Draw(t, "dmalen"),
		}
	})
}
