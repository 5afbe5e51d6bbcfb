package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/sim"
)

const us = sim.Microsecond

func compute(d sim.Time) Item { return Item{Kind: Compute, Compute: d} }

func op(c Coll, wait bool) Item { return Item{Kind: Collective, Coll: c, Wait: wait} }

var (
	collA = Coll{Op: coll.AllReduce, Bytes: 1 << 20}
	collB = Coll{Op: coll.AllReduce, Bytes: 2 << 20}
	collG = Coll{Op: coll.AllGather, Bytes: 4 << 20}
)

// times is a CollTiming's (issued, start, end) in microseconds.
func times(c CollTiming) [3]sim.Time { return [3]sim.Time{c.Issued / us, c.Start / us, c.End / us} }

// Communication fully hidden: the all-reduce (30 us) runs under the 100 us
// of compute after it, and the barrier finds it done.
func TestScheduleHidden(t *testing.T) {
	w := &Workload{Steps: 1, Items: []Item{compute(100 * us), op(collA, false), compute(100 * us), {Kind: Barrier}}}
	tl, err := Schedule(w, map[Coll]sim.Time{collA: 30 * us})
	require.NoError(t, err)
	require.Len(t, tl.Colls, 1)
	assert.Equal(t, [3]sim.Time{100, 100, 130}, times(tl.Colls[0]))
	assert.Equal(t, 1, tl.Colls[0].Item)
	assert.Equal(t, Step{Time: 200 * us, Compute: 200 * us, Comm: 30 * us, Exposed: 0}, tl.Steps[0])
	assert.Equal(t, 0.0, tl.Steps[0].ExposedShare())
}

// Communication fully exposed: with no compute after them the two
// collectives (40 and 60 us) run back to back after the 50 us of compute,
// and the step waits for both: 50 + 40 + 60 = 150 us, 100 of them exposed.
// With no compute at all, the share is 1.
func TestScheduleExposed(t *testing.T) {
	dur := map[Coll]sim.Time{collA: 40 * us, collB: 60 * us}
	w := &Workload{Steps: 1, Items: []Item{compute(50 * us), op(collA, false), op(collB, false)}}
	tl, err := Schedule(w, dur)
	require.NoError(t, err)
	assert.Equal(t, [3]sim.Time{50, 50, 90}, times(tl.Colls[0]))
	assert.Equal(t, [3]sim.Time{50, 90, 150}, times(tl.Colls[1]))
	assert.Equal(t, Step{Time: 150 * us, Compute: 50 * us, Comm: 100 * us, Exposed: 100 * us}, tl.Steps[0])
	assert.InDelta(t, 100.0/150, tl.Steps[0].ExposedShare(), 1e-15)

	w.Items = w.Items[1:]
	tl, err = Schedule(w, dur)
	require.NoError(t, err)
	assert.Equal(t, Step{Time: 100 * us, Compute: 0, Comm: 100 * us, Exposed: 100 * us}, tl.Steps[0])
	assert.Equal(t, 1.0, tl.Steps[0].ExposedShare())
}

// A wait item: the forward pass waits for the all-gather (10..50 us: 40
// exposed), the all-reduce issued at 150 us (30 us) is awaited by the
// barrier (30 exposed), then 20 us of optimizer: the step is 200 us, 130
// of compute and 70 exposed, and no communication is hidden.
func TestScheduleWait(t *testing.T) {
	w := &Workload{Steps: 3, Items: []Item{compute(10 * us), op(collG, true), compute(100 * us), op(collA, false),
		{Kind: Barrier}, compute(20 * us)}}
	tl, err := Schedule(w, map[Coll]sim.Time{collA: 30 * us, collG: 40 * us})
	require.NoError(t, err)
	assert.Equal(t, [3]sim.Time{10, 10, 50}, times(tl.Colls[0]))
	assert.Equal(t, [3]sim.Time{150, 150, 180}, times(tl.Colls[1]))
	want := Step{Time: 200 * us, Compute: 130 * us, Comm: 70 * us, Exposed: 70 * us}
	require.Len(t, tl.Steps, 3)
	for k, st := range tl.Steps {
		want.Start = sim.Time(k) * 200 * us
		assert.Equal(t, want, st, "step %d", k)
	}
	assert.Equal(t, 600*us, tl.Total)
	assert.Equal(t, 0.35, tl.Steps[0].ExposedShare())

	// Without the wait, the all-gather hides under the 100 us of compute:
	// only the all-reduce's 30 us is exposed.
	w.Items[1].Wait = false
	tl, err = Schedule(w, map[Coll]sim.Time{collA: 30 * us, collG: 40 * us})
	require.NoError(t, err)
	assert.Equal(t, Step{Time: 160 * us, Compute: 130 * us, Comm: 70 * us, Exposed: 30 * us}, tl.Steps[0])
}

// The communication stream runs one collective at a time: the second
// all-reduce, issued at 30 us, starts when the first ends at 60 us, and
// the step waits from the end of compute (30 us) to its end (110 us).
func TestScheduleQueued(t *testing.T) {
	w := &Workload{Steps: 1, Items: []Item{compute(10 * us), op(collA, false), compute(20 * us), op(collB, false)}}
	tl, err := Schedule(w, map[Coll]sim.Time{collA: 50 * us, collB: 50 * us})
	require.NoError(t, err)
	assert.Equal(t, [3]sim.Time{10, 10, 60}, times(tl.Colls[0]))
	assert.Equal(t, [3]sim.Time{30, 60, 110}, times(tl.Colls[1]))
	assert.Equal(t, Step{Time: 110 * us, Compute: 30 * us, Comm: 100 * us, Exposed: 80 * us}, tl.Steps[0])
}

func TestScheduleErrors(t *testing.T) {
	w := &Workload{Steps: 1, Items: []Item{{Kind: Collective, Coll: collA, Where: "items[0] at line 1 column 12"}}}
	_, err := Schedule(w, nil)
	assert.EqualError(t, err, "workload: items[0] at line 1 column 12: no duration for allreduce 1MiB auto float")
	_, err = Schedule(w, map[Coll]sim.Time{collA: -1})
	assert.EqualError(t, err, "workload: items[0] at line 1 column 12: negative duration -1ps for allreduce 1MiB auto float")
	w = &Workload{Steps: 1000, Items: []Item{compute(sim.MaxTime / 10)}}
	_, err = Schedule(w, nil)
	assert.EqualError(t, err, "workload: the workload's time is beyond what sim.Time holds (about 106 days)")
	w = &Workload{Steps: 1, Items: []Item{{Kind: 7, Where: "x"}}}
	_, err = Schedule(w, nil)
	assert.EqualError(t, err, "workload: x: unknown item kind Kind(7)")
	assert.Equal(t, []string{"compute", "collective", "barrier"}, []string{Compute.String(), Collective.String(), Barrier.String()})
	w = &Workload{Steps: 0, Items: []Item{compute(1)}}
	_, err = Schedule(w, nil)
	assert.EqualError(t, err, "workload: 0 steps: want 1 to 10000")
}
