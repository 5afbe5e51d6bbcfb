package roce

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A window below rxe's 128 PSNs must not stall until the local ACK timer
// (the responder ACKs only AckReq packets, ib-facts §5.2): on a lossless
// link 20 WRITEs of 5,000 bytes at MTU 1024 with retry_cnt 0 all succeed
// without a timeout, whatever the window.
func TestSmallWindowNoTimeout(t *testing.T) {
	for _, w := range []uint32{1, 2, 3, 7, 63, 64, 65, 128} {
		t.Run(fmt.Sprint(w), func(t *testing.T) {
			sc := twoHosts(false, nil, QPSpec{MTU: 1024, Timeout: u8(6), Window: w, RetryCnt: u8(0), Outstanding: 4,
				Work: WorkSpec{Op: "write", Count: 20, Size: 5000}})
			sum := run(t, sc, Options{})
			assert.Equal(t, map[string]uint64{"SUCCESS": 20}, sum.WRCompleted)
			assert.Zero(t, sum.Timeouts)
			assert.Zero(t, sum.Retries)
			assert.True(t, sum.DataIntegrityOK)
		})
	}
}

// Window 63 and window 64 move 1 MiB WRITEs at about the same rate: the
// window that is one short of rxe's AckReq interval does not wait for the
// timer once per window.
func TestWindow63Throughput(t *testing.T) {
	goodput := func(w uint32) float64 {
		sc := twoHosts(false, nil, QPSpec{Timeout: u8(6), Window: w, Outstanding: 4,
			Work: WorkSpec{Op: "write", Count: 20, Size: 1 << 20}})
		sum := run(t, sc, Options{})
		require.Equal(t, map[string]uint64{"SUCCESS": 20}, sum.WRCompleted)
		assert.Zero(t, sum.Timeouts, "window %d", w)
		return sum.GoodputGbps
	}
	g63, g64 := goodput(63), goodput(64)
	assert.Greater(t, g63, 0.8*g64, "window 63: %.1f Gb/s, window 64: %.1f Gb/s", g63, g64)
	assert.Greater(t, g64, 90.0, "window 64 on a 100 Gb/s link")
}
