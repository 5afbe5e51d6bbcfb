package proptest

import (
	"github.com/rocekit/rocekit/grh"
	"pgregory.net/rapid"
)

// GRHFields draws any GRH whose fields fit their widths: any IPVer and NxtHdr
// (valid or not), any traffic class, flow label, lengths and GIDs.
func GRHFields() *rapid.Generator[grh.Fields] {
	return rapid.Custom(func(t *rapid.T) grh.Fields {
		return grh.Fields{
			IPVer:     Bits(4).Draw(t, "ipver"),
			TClass:    rapid.Uint8().Draw(t, "tclass"),
			FlowLabel: rapid.Uint32Range(0, 0xFFFFF).Draw(t, "flowlabel"),
			PayLen:    rapid.Uint16().Draw(t, "paylen"),
			NxtHdr:    rapid.Uint8().Draw(t, "nxthdr"),
			HopLmt:    rapid.Uint8().Draw(t, "hoplmt"),
			SGID:      grhGID().Draw(t, "sgid"),
			DGID:      grhGID().Draw(t, "dgid"),
		}
	})
}

func grhGID() *rapid.Generator[[16]byte] {
	return rapid.Map(rapid.SliceOfN(rapid.Byte(), 16, 16), func(b []byte) [16]byte { return [16]byte(b) })
}
