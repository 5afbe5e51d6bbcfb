package proptest

import (
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/opcode"
	"pgregory.net/rapid"
)

// BTHFields draws any BTH whose fields fit their widths: any opcode (valid or
// not), any TVer, any reserved bits.
func BTHFields() *rapid.Generator[bth.Fields] {
	return rapid.Custom(func(t *rapid.T) bth.Fields {
		return bth.Fields{
			Opcode: opcode.Opcode(rapid.Uint8().Draw(t, "opcode")),
			SE:     rapid.Bool().Draw(t, "se"),
			MigReq: rapid.Bool().Draw(t, "m"),
			PadCnt: Bits(2).Draw(t, "padcnt"),
			TVer:   Bits(4).Draw(t, "tver"),
			PKey:   rapid.Uint16().Draw(t, "pkey"),
			FECN:   rapid.Bool().Draw(t, "fecn"),
			BECN:   rapid.Bool().Draw(t, "becn"),
			Resv6:  Bits(6).Draw(t, "resv6"),
			DestQP: Uint24().Draw(t, "destqp"),
			AckReq: rapid.Bool().Draw(t, "a"),
			Resv7:  Bits(7).Draw(t, "resv7"),
			PSN:    Uint24().Draw(t, "psn"),
		}
	})
}
