package proptest

import (
	"github.com/rocekit/rocekit/cnp"
	"pgregory.net/rapid"
)

// CNPFields draws any CNP body: arbitrary reserved bytes, zero or not (a
// valid CNP has them all zero: cnp.Fields{}).
func CNPFields() *rapid.Generator[cnp.Fields] {
	return rapid.Custom(func(t *rapid.T) cnp.Fields {
		var f cnp.Fields
		copy(f.Reserved[:], rapid.SliceOfN(rapid.Byte(), cnp.Len, cnp.Len).Draw(t, "reserved"))
		return f
	})
}
