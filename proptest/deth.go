package proptest

import (
	"github.com/rocekit/rocekit/deth"
	"pgregory.net/rapid"
)

// DETHFields draws any DETH whose fields fit their widths: any Q_Key (the GSI
// one included), any reserved byte.
func DETHFields() *rapid.Generator[deth.Fields] {
	return rapid.Custom(func(t *rapid.T) deth.Fields {
		return deth.Fields{
			QKey:  rapid.OneOf(rapid.Uint32(), rapid.Just(uint32(deth.GSIQKey))).Draw(t, "qkey"),
			Resv8: rapid.Uint8().Draw(t, "resv8"),
			SrcQP: Uint24().Draw(t, "srcqp"),
		}
	})
}
