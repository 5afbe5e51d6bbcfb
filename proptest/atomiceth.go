package proptest

import (
	"github.com/rocekit/rocekit/atomiceth"
	"pgregory.net/rapid"
)

// AtomicETHFields draws any AtomicETH: any VA (8-byte aligned or not), R_Key,
// swap/add and compare data.
func AtomicETHFields() *rapid.Generator[atomiceth.Fields] {
	return rapid.Custom(func(t *rapid.T) atomiceth.Fields {
		return atomiceth.Fields{
			VA:      rapid.Uint64().Draw(t, "va"),
			RKey:    rapid.Uint32().Draw(t, "rkey"),
			SwapAdd: rapid.Uint64().Draw(t, "swapdt"),
			Compare: rapid.Uint64().Draw(t, "cmpdt"),
		}
	})
}
