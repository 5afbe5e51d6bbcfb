package roce

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// wrLine is the text summary's work-request line.
func wrLine(t *testing.T, sum *Summary) string {
	t.Helper()
	var b strings.Builder
	require.NoError(t, sum.WriteText(&b))
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "  work requests ") {
			return strings.Join(strings.Fields(strings.TrimPrefix(l, "  work requests ")), " ")
		}
	}
	t.Fatalf("no work requests line in\n%s", b.String())
	return ""
}

// The text summary says "all completed" only when every work request
// completed with SUCCESS; otherwise it leads with the failures by status,
// then what did not complete, then the successes. AllSucceeded and Failed
// say the same.
func TestSummaryWorkRequestLine(t *testing.T) {
	t.Run("all succeeded", func(t *testing.T) {
		sum := run(t, twoHosts(false, nil, QPSpec{Work: WorkSpec{Op: "write", Count: 10, Size: 5000}}), Options{})
		assert.Equal(t, "10 posted, all completed: SUCCESS 10", wrLine(t, sum))
		assert.True(t, sum.AllSucceeded())
		assert.Zero(t, sum.Failed())
	})
	t.Run("failed", func(t *testing.T) {
		// A dead link: the first WR fails after one timeout, the rest flush.
		sc := twoHosts(false, nil, QPSpec{Timeout: u8(5), RetryCnt: u8(0), Outstanding: 4,
			Work: WorkSpec{Op: "write", Count: 10, Size: 5000}})
		sc.Links[0].Dead = []DeadSpec{{FromNS: 0}}
		sum := run(t, sc, Options{})
		require.True(t, sum.Complete)
		assert.Equal(t, "10 posted, 10 FAILED: RETRY_EXC_ERR 1, WR_FLUSH_ERR 9; SUCCESS 0", wrLine(t, sum))
		assert.False(t, sum.AllSucceeded())
		assert.Equal(t, uint64(10), sum.Failed())
	})
	t.Run("some failed", func(t *testing.T) {
		// The link dies at 50 us, after some WRITEs have completed.
		sc := twoHosts(false, nil, QPSpec{Timeout: u8(6), RetryCnt: u8(2), Outstanding: 2,
			Work: WorkSpec{Op: "write", Count: 50, Size: 64 << 10}})
		sc.Links[0].Dead = []DeadSpec{{FromNS: 50e3}}
		sum := run(t, sc, Options{})
		require.True(t, sum.Complete)
		ok := sum.WRCompleted["SUCCESS"]
		require.NotZero(t, ok)
		assert.Equal(t, fmt.Sprintf("50 posted, %d FAILED: RETRY_EXC_ERR 1, WR_FLUSH_ERR %d; SUCCESS %d", 50-ok, 49-ok, ok), wrLine(t, sum))
		assert.False(t, sum.AllSucceeded())
		assert.Equal(t, 50-ok, sum.Failed())
	})
	t.Run("stopped", func(t *testing.T) {
		sc := twoHosts(false, nil, QPSpec{Outstanding: 1, Work: WorkSpec{Op: "write", Count: 10, Size: 5000}})
		sc.StopNS = 5000 // one WRITE takes 2 us and its ACK 1 us more
		sum := run(t, sc, Options{})
		require.False(t, sum.Complete)
		ok := sum.WRCompleted["SUCCESS"]
		require.NotZero(t, ok)
		assert.Equal(t, fmt.Sprintf("%d posted, %d of 10 not completed (stopped or stalled); SUCCESS %d", sum.WRPosted, 10-ok, ok), wrLine(t, sum))
		assert.False(t, sum.AllSucceeded())
		assert.Zero(t, sum.Failed())
	})
}
