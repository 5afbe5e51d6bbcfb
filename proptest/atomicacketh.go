package proptest

import (
	"github.com/rocekit/rocekit/atomicacketh"
	"pgregory.net/rapid"
)

// AtomicAckETHFields draws any AtomicAckETH: any original remote data.
func AtomicAckETHFields() *rapid.Generator[atomicacketh.Fields] {
	return rapid.Custom(func(t *rapid.T) atomicacketh.Fields {
		return atomicacketh.Fields{
			OrigRemDt: rapid.Uint64().Draw(t, "origremdt"),
		}
	})
}
