package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/roce"
	"github.com/rocekit/rocekit/sim"
)

func star4() *roce.Scenario {
	return &roce.Scenario{Seed: 3, Topology: "star:hosts=4", Traffic: "incast:n=1,size=1KB", HostGbps: 100}
}

// Run simulates each distinct collective once, with the durations
// RunCollective gives for it alone, and schedules the step with them: 1.5
// million floats in 4 MB buckets are a 4 MB and a 2 MB all-reduce.
func TestRun(t *testing.T) {
	w, err := DDP("ddp:params=1.5e6,bucket=4MB,fwd_us=100,bwd_us=200,opt_us=10,algo=ring")
	require.NoError(t, err)
	w.Ranks = 4
	res, err := Run(w, star4(), roce.NodeSpec{}, roce.Options{})
	require.NoError(t, err)
	require.Equal(t, []Coll{{Op: coll.AllReduce, Bytes: 4e6, Algo: coll.Ring}, {Op: coll.AllReduce, Bytes: 2e6, Algo: coll.Ring}}, res.Colls)
	assert.True(t, res.Complete())
	assert.Equal(t, 0, res.Wrong())
	dur := map[Coll]sim.Time{}
	for _, c := range res.Colls {
		n, err := c.Count(4)
		require.NoError(t, err)
		alone, err := roce.RunCollective(star4(), roce.CollConfig{Ranks: 4, Op: coll.AllReduce, Algo: coll.Ring, Count: n}, roce.Options{})
		require.NoError(t, err)
		assert.Equal(t, alone.Time, res.Runs[c].Time, "%s", c)
		dur[c] = alone.Time
	}
	// A ring all-reduce of 4 MB over 4 ranks moves 2 x 3/4 x 4 MB per rank
	// on a 12.5 GB/s link: at least 480 us, more than the 200 us of
	// backward, so part of it is exposed.
	assert.Greater(t, dur[res.Colls[0]], 480*sim.Microsecond)
	want, err := Schedule(w, dur)
	require.NoError(t, err)
	assert.Equal(t, want, res.Timeline)
	st := res.Timeline.Steps[0]
	assert.Equal(t, 310*sim.Microsecond, st.Compute)
	assert.Equal(t, dur[res.Colls[0]]+dur[res.Colls[1]], st.Comm)
	// The 4 MB bucket is issued at 100 + 200 x 4/6 us; the 2 MB one
	// queues behind it; the barrier waits for it.
	c1 := res.Timeline.Colls[1]
	assert.Equal(t, res.Timeline.Colls[0].End, c1.Start)
	assert.Equal(t, c1.End+10*sim.Microsecond, st.Time)
	assert.Equal(t, st.Time, st.Compute+st.Exposed)
}

func TestRunErrors(t *testing.T) {
	w, err := Parse([]byte("{\"items\": [{\"compute_us\": 1},\n  {\"op\": \"allgather\", \"bytes\": 64}]}"))
	require.NoError(t, err)
	w.Ranks = 3
	_, err = Run(w, star4(), roce.NodeSpec{}, roce.Options{})
	assert.EqualError(t, err, "workload: items[1] at line 2 column 3: allgather 64 auto float: 64 bytes is not a whole number of 12-byte blocks (3 ranks x 4-byte float) for allgather")
	w.Ranks = 4
	_, err = Run(w, star4(), roce.NodeSpec{}, roce.Options{MaxMemoryBytes: 100})
	assert.EqualError(t, err, "workload: items[1] at line 2 column 3: allgather 64 auto float: roce: the collective needs about 768 B of buffers (4 ranks x 3 x 64 B), more than the 100 B limit; lower the size or the ranks")
	w.Ranks = 1
	_, err = Run(w, star4(), roce.NodeSpec{}, roce.Options{})
	assert.EqualError(t, err, "workload: ranks 1: want 2 or more")
}
