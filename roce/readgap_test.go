package roce

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// 4 MiB of 1 MiB READs at MTU 256 over a link that loses 1% of frames: a
// gap in the READ responses is re-requested at once and the responder drops
// the responses it still had queued past the gap, so the wire carries less
// than three times the data (the lossless minimum, headers included, is
// 1.23 times) and no gap waits for the local ACK timer. Recovering by
// timeout, with every stale response still sent, put 635 MB on the wire.
func TestReadGapWireBytes(t *testing.T) {
	const data = 4 << 20
	sc := twoHosts(false, &FaultSpec{Loss: 0.01}, QPSpec{MTU: 256, Timeout: u8(6), Outstanding: 4,
		Work: WorkSpec{Op: "read", Count: 4, Size: 1 << 20}})
	sum := run(t, sc, Options{})
	assert.Equal(t, map[string]uint64{"SUCCESS": 4}, sum.WRCompleted)
	assert.True(t, sum.DataIntegrityOK)
	assert.EqualValues(t, data, sum.BytesDelivered)
	assert.Less(t, sum.Network.BytesOnWire, uint64(3*data))
	assert.Zero(t, sum.Timeouts)
	assert.Positive(t, sum.Network.Drops["loss"], "the link did lose frames")
}
