package proptest

import (
	"github.com/rocekit/rocekit/lrh"
	"pgregory.net/rapid"
)

// LRHFields draws any LRH whose fields fit their widths: any VL, LVer, LNH
// and reserved bits, any LIDs and PktLen.
func LRHFields() *rapid.Generator[lrh.Fields] {
	return rapid.Custom(func(t *rapid.T) lrh.Fields {
		return lrh.Fields{
			VL:     Bits(4).Draw(t, "vl"),
			LVer:   Bits(4).Draw(t, "lver"),
			SL:     Bits(4).Draw(t, "sl"),
			Resv2:  Bits(2).Draw(t, "resv2"),
			LNH:    Bits(2).Draw(t, "lnh"),
			DLID:   rapid.Uint16().Draw(t, "dlid"),
			Resv5:  Bits(5).Draw(t, "resv5"),
			PktLen: rapid.Uint16Range(0, 0x7FF).Draw(t, "pktlen"),
			SLID:   rapid.Uint16().Draw(t, "slid"),
		}
	})
}
