package proptest

import (
	"github.com/rocekit/rocekit/aeth"
	"pgregory.net/rapid"
)

// AETHFields draws any AETH whose fields fit their widths: any syndrome byte
// (valid or not, reserved bit 7 included), any MSN.
func AETHFields() *rapid.Generator[aeth.Fields] {
	return rapid.Custom(func(t *rapid.T) aeth.Fields {
		return aeth.Fields{
			Syndrome: aeth.Syndrome(rapid.Uint8().Draw(t, "syndrome")),
			MSN:      Uint24().Draw(t, "msn"),
		}
	})
}

// ValidSyndrome draws only syndromes a receiver accepts: an ACK with any
// credit code (Unlimited included), an RNR NAK with any timer code, or a NAK
// with a defined code (0-4).
func ValidSyndrome() *rapid.Generator[aeth.Syndrome] {
	return rapid.OneOf(
		rapid.Map(Bits(5), aeth.ACKSyndrome),
		rapid.Map(Bits(5), aeth.RNRNAKSyndrome),
		rapid.Map(rapid.Uint8Range(0, uint8(aeth.InvalidRDRequest)), func(c uint8) aeth.Syndrome { return aeth.NAKSyndrome(aeth.NAKCode(c)) }),
	)
}
