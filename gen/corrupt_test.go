package gen

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// Corrupt applies a byte-changing fault to one frame of a live stream:
// bad-icrc leaves a frame whose ICRC no longer matches, the same (seed,
// index) gives the same bytes, a fault that cannot hit the frame leaves it
// alone, and a fault that is no byte change is refused.
func TestCorrupt(t *testing.T) {
	f := packet.DefaultFrame(packet.RoCEv2IPv4)
	f.Transport.BTH.Opcode = opcode.RCAcknowledge
	f.Transport.BTH.PSN = 9
	frame := make([]byte, f.Len())
	_, err := f.Encode(frame)
	require.NoError(t, err)

	a := append([]byte(nil), frame...)
	out, rec, ok, err := Corrupt(BadICRC, packet.RoCEv2IPv4, a, 1, 3)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, ICRCCorrupted, rec.ICRC)
	assert.Equal(t, 3, rec.Source)
	assert.Equal(t, frame[:len(frame)-4], out[:len(out)-4], "only the ICRC changed")
	assert.NotEqual(t, frame[len(frame)-4:], out[len(out)-4:])
	var fr packet.Frame
	require.NoError(t, fr.DecodeEthernet(out))
	good, _, _, err := fr.CheckICRC()
	require.NoError(t, err)
	assert.False(t, good)

	b := append([]byte(nil), frame...)
	out2, _, _, _ := Corrupt(BadICRC, packet.RoCEv2IPv4, b, 1, 3)
	assert.Equal(t, out, out2, "same seed and index, same bytes")

	c := append([]byte(nil), frame...)
	out3, _, ok, err := Corrupt(WrongPadCnt, packet.RoCEv2IPv4, c, 1, 3)
	require.NoError(t, err)
	assert.False(t, ok, "an ACK has no payload to change the pad of")
	assert.Equal(t, frame, out3)

	_, _, _, err = Corrupt(Drop, packet.RoCEv2IPv4, c, 1, 3)
	assert.Error(t, err)
}
