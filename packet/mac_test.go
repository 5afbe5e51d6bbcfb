package packet_test

import (
	"net"
	"testing"

	"github.com/rocekit/rocekit/packet"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// ParseMAC accepts exactly the strings net.ParseMAC parses to 6 bytes, and
// gives the same bytes.
func TestParseMACAsNet(t *testing.T) {
	for _, s := range []string{
		"00:00:5e:00:53:01", "00-00-5E-00-53-01", "0000.5e00.5301", "ff:FF:fF:00:aB:9c",
		"", "00:00:5e:00:53", "00:00:5e:00:53:01:02", "00:00:5e-00:53:01", "0:00:5e:00:53:01",
		"00:00:5e:00:53:0g", "0000.5e00.530", "0000:5e00:5301", "00.00.5e.00.53.01",
		"00:00:5e:00:53:01:00:00", "0000.5e00.5301.0000", " 00:00:5e:00:53:01", "00005e005301",
	} {
		checkParseMAC(t, s)
	}
	rapid.Check(t, func(t *rapid.T) {
		// Strings of the accepted shapes, with any character anywhere.
		shape := rapid.SampledFrom([]string{"xx:xx:xx:xx:xx:xx", "xx-xx-xx-xx-xx-xx", "xxxx.xxxx.xxxx", "xxxxxxxxxxxx"}).Draw(t, "shape")
		b := []byte(shape)
		for i := range b {
			if b[i] == 'x' || rapid.IntRange(0, 9).Draw(t, "sep") == 0 {
				b[i] = rapid.SampledFrom([]byte("0123456789abcdefABCDEFgG:-. ")).Draw(t, "c")
			}
		}
		checkParseMAC(t, string(b))
	})
}

func checkParseMAC(t require.TestingT, s string) {
	want, err := net.ParseMAC(s)
	got, gotErr := packet.ParseMAC(s)
	if err != nil || len(want) != 6 {
		require.ErrorIs(t, gotErr, packet.ErrMAC, "%q", s)
		return
	}
	require.NoError(t, gotErr, "%q", s)
	require.Equal(t, [6]byte(want), got, "%q", s)
}
