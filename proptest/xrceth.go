package proptest

import (
	"github.com/rocekit/rocekit/xrceth"
	"pgregory.net/rapid"
)

// XRCETHFields draws any XRCETH whose fields fit their widths, reserved byte
// included.
func XRCETHFields() *rapid.Generator[xrceth.Fields] {
	return rapid.Custom(func(t *rapid.T) xrceth.Fields {
		return xrceth.Fields{
			Resv8:  rapid.Uint8().Draw(t, "resv8"),
			XRCSRQ: Uint24().Draw(t, "xrcsrq"),
		}
	})
}
