package roce

import (
	"errors"
	"math"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tiny is n connections of one 1-byte WRITE each, one outstanding: their
// state is almost all of their memory.
func tiny(n int) *Scenario {
	return twoHosts(false, nil, QPSpec{Count: n, Outstanding: 1, Work: WorkSpec{Count: 1, Size: 1}})
}

// The most connections a scenario may have, with tiny messages, need about
// 50 GiB for their state although their buffers take 0.5 GiB: New refuses
// them before allocating anything, naming the estimate and the key to lower.
func TestMemoryEstimateCountsConnections(t *testing.T) {
	sc := tiny(maxQPs)
	m := sc.MemoryEstimate()
	assert.Less(t, m.Buffers, int64(1<<30))
	assert.Greater(t, m.Total, int64(40<<30))
	assert.Equal(t, int64(maxQPs), m.Connections)
	assert.Equal(t, "qps[0].count", m.Key)

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := New(sc, Options{})
	runtime.ReadMemStats(&after)
	var me *MemoryError
	require.True(t, errors.As(err, &me), "%v", err)
	assert.Equal(t, m, me.Estimate)
	assert.Equal(t, int64(DefaultMemoryLimit), me.Limit)
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(1<<20), "refused before allocating")
	assert.Regexp(t, `^scenario: the scenario needs about \d+\.\d+ GiB \(8388599 connections x [56]\.\d+ KiB \+ buffers 5\d\d(\.\d+)? MiB \+ frames \d.* \+ runtime 8 MiB\), more than the 8 GiB limit; lower qps\[0\]\.count$`, err.Error())
}

// Options.MaxMemoryBytes (and CheckMemory's argument) is the limit: a
// scenario whose estimate is exactly the limit runs, one byte less refuses
// it.
func TestMemoryLimitOption(t *testing.T) {
	sc := tiny(100)
	m := sc.MemoryEstimate()
	s, err := New(sc, Options{MaxMemoryBytes: m.Total})
	require.NoError(t, err)
	sum, err := s.Run()
	require.NoError(t, err)
	assert.Equal(t, uint64(100), sum.WRCompleted["SUCCESS"])

	assert.NoError(t, sc.CheckMemory(m.Total))
	assert.Error(t, sc.CheckMemory(m.Total-1))
	assert.NoError(t, sc.CheckMemory(0), "the default limit")
	_, err = New(sc, Options{MaxMemoryBytes: m.Total - 1})
	var me *MemoryError
	require.True(t, errors.As(err, &me), "%v", err)
	assert.Equal(t, m.Total-1, me.Limit)
	assert.Contains(t, err.Error(), "100 connections x ")
}

// The estimate names the value most of the memory follows.
func TestMemoryEstimateKey(t *testing.T) {
	for _, c := range []struct {
		q    QPSpec
		want string
	}{
		{QPSpec{Count: 1000, Work: WorkSpec{Size: 64}}, "qps[1].count"},
		{QPSpec{Count: 10, Outstanding: 16, Work: WorkSpec{Size: 1 << 20}}, "qps[1].outstanding"},
		{QPSpec{Count: 10, Outstanding: 1, Work: WorkSpec{Size: 1 << 20}}, "qps[1].work.size"},
		{QPSpec{Count: 10, Outstanding: 1, Work: WorkSpec{Size: 1, SizeMax: 1 << 20}}, "qps[1].work.size_max"},
		{QPSpec{Count: 10, Outstanding: 1, Work: WorkSpec{WRs: []WRSpec{{Op: "write", Size: 8}, {Op: "read", Size: 1 << 20}, {Op: "write", Size: 1}}}}, "qps[1].work.wrs[1].size"},
		{QPSpec{Count: 10, Outstanding: 2, RecvDepth: 64, Work: WorkSpec{Op: "send", Size: 1 << 20}}, "qps[1].recv_depth"},
	} {
		sc := twoHosts(false, nil, QPSpec{Work: WorkSpec{Count: 1, Size: 1}})
		c.q.From, c.q.To = "a", "b"
		sc.QPs = append(sc.QPs, c.q)
		require.NoError(t, sc.Validate())
		assert.Equal(t, c.want, sc.MemoryEstimate().Key, "%+v", c.q)
	}
}

// Buffers count each connection's slots (READs twice, receive buffers on
// top) and the data pattern; frames are bounded by the network when it
// holds less than the connections can have outstanding.
func TestMemoryEstimateParts(t *testing.T) {
	sc := twoHosts(false, nil, QPSpec{Count: 3, Outstanding: 4, Work: WorkSpec{Op: "read", Size: 1000}})
	m := sc.MemoryEstimate()
	slot := int64(1024) // 1000 bytes in whole cache lines
	assert.Equal(t, 3*2*4*slot+1000+patSpan, m.Buffers)
	assert.Equal(t, int64(3), m.Connections)
	assert.Equal(t, m.Base+m.State+m.Buffers+m.Frames, m.Total)

	// 1000 connections with a megabyte outstanding each would fill a
	// switch whose queues are unlimited; a 256 KiB queue holds little.
	sc = twoHosts(true, nil, QPSpec{Count: 1000, Outstanding: 1, Work: WorkSpec{Size: 1 << 20}})
	bounded := sc.MemoryEstimate().Frames
	sc.Switch.QueueBytes = 0
	unbounded := sc.MemoryEstimate().Frames
	assert.Greater(t, unbounded, int64(1000<<20), "every connection's message in flight")
	assert.Less(t, bounded, int64(64<<20))
}

// The estimate holds for the Go heap: after building and running 20,000
// connections the heap holds what the estimate says without its fixed part,
// within 10% (it counts objects as the allocator sizes them).
func TestMemoryEstimateMatchesHeap(t *testing.T) {
	sc := tiny(20000)
	m := sc.MemoryEstimate()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := New(sc, Options{})
	require.NoError(t, err)
	_, err = s.Run()
	require.NoError(t, err)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(s)
	heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
	est := float64(m.Total - m.Base)
	t.Logf("heap %.1f MiB, estimated %.1f MiB without the fixed part", heap/(1<<20), est/(1<<20))
	assert.InDelta(t, 1, heap/est, 0.1)
}

// An invalid scenario still gets an estimate, at once: values far out of
// range saturate rather than overflow, loop or divide by zero.
func TestMemoryEstimateInvalid(t *testing.T) {
	big, neg := math.MaxInt, -7
	sc := twoHosts(false, nil, QPSpec{Count: big, Outstanding: big, RecvDepth: big, MTU: -1, IRD: &big,
		Work: WorkSpec{Op: "send", Size: big, SizeMax: neg}})
	sc.QPs = append(sc.QPs, QPSpec{Count: neg, Outstanding: neg, IRD: &neg, Work: WorkSpec{Op: "nope", Size: neg}})
	m := sc.MemoryEstimate()
	assert.Equal(t, int64(math.MaxInt64), m.Total)
	assert.Error(t, sc.CheckMemory(0))
	assert.Positive(t, (&Scenario{}).MemoryEstimate().Total, "the base")
}
