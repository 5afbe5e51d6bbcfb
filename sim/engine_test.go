package sim_test

import (
	"cmp"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/sim"
)

// recorder is a handler that records the A argument of every event it
// handles, with the time.
type recorder struct {
	eng  *sim.Engine
	ids  []uint64
	when []sim.Time
}

func (r *recorder) Handle(ev sim.Event) {
	if ev.At != r.eng.Now() {
		panic("event time is not Now()")
	}
	r.ids = append(r.ids, ev.A)
	r.when = append(r.when, ev.At)
}

// drawTime draws a time offset that exercises ties, nearby times and the
// high radix buckets alike.
func drawTime(t *rapid.T, label string) sim.Time {
	switch rapid.IntRange(0, 3).Draw(t, label+"-scale") {
	case 0:
		return sim.Time(rapid.Int64Range(0, 3).Draw(t, label))
	case 1:
		return sim.Time(rapid.Int64Range(0, 1000).Draw(t, label))
	case 2:
		return sim.Time(rapid.Int64Range(0, 1<<40).Draw(t, label))
	default:
		return sim.Time(rapid.Int64Range(0, 1<<62).Draw(t, label))
	}
}

// Events scheduled up front run in order of time, and in scheduling order
// among equal times: a stable sort of the schedule by time.
func TestEngineOrderMatchesStableSort(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		eng := sim.NewEngine(0)
		r := &recorder{eng: eng}
		n := rapid.IntRange(0, 300).Draw(t, "n")
		type ev struct {
			at sim.Time
			id uint64
		}
		var ref []ev
		for i := 0; i < n; i++ {
			at := drawTime(t, "at")
			eng.Schedule(at, r, 0, uint64(i))
			ref = append(ref, ev{at, uint64(i)})
		}
		slices.SortStableFunc(ref, func(a, b ev) int { return cmp.Compare(a.at, b.at) })
		eng.Run(sim.MaxTime)
		require.Len(t, r.ids, n)
		for i := range ref {
			require.Equal(t, ref[i].id, r.ids[i], "position %d", i)
			require.Equal(t, ref[i].at, r.when[i], "position %d", i)
		}
		require.Equal(t, uint64(n), eng.Events())
		require.Equal(t, 0, eng.Pending())
	})
}

// Interleaving schedules (relative to the moving clock, including at exactly
// now) with steps gives the same order as a reference that pops the minimum
// (time, sequence) pair. Schedules outnumber steps by a drawn factor: at
// one to one the number pending wanders up and down across the size of the
// engine's ring (smallCap), so that events move from the ring to the radix
// heap and back; at two or three to one it mostly grows.
func TestEngineOrderInterleaved(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		const maxOps = 400
		eng := sim.NewEngine(maxOps) // never more than maxOps pending
		chunks := sim.Chunks(eng)
		r := &recorder{eng: eng}
		type ev struct {
			at  sim.Time
			seq uint64
		}
		var ref []ev // pending in the reference
		var seq uint64
		ops := rapid.IntRange(1, maxOps).Draw(t, "ops")
		bias := rapid.IntRange(1, 3).Draw(t, "schedules per step")
		for i := 0; i < ops; i++ {
			if rapid.IntRange(0, bias).Draw(t, "op") > 0 {
				at := eng.Now() + drawTime(t, "dt")
				if at < 0 { // overflow past MaxTime
					at = sim.MaxTime
				}
				eng.Schedule(at, r, 0, seq)
				ref = append(ref, ev{at, seq})
				seq++
				continue
			}
			ok := eng.Step()
			require.Equal(t, len(ref) > 0, ok)
			if !ok {
				continue
			}
			m := 0
			for j := range ref {
				if ref[j].at < ref[m].at || (ref[j].at == ref[m].at && ref[j].seq < ref[m].seq) {
					m = j
				}
			}
			require.Equal(t, ref[m].seq, r.ids[len(r.ids)-1])
			require.Equal(t, ref[m].at, eng.Now())
			ref = slices.Delete(ref, m, m+1)
			require.Equal(t, len(ref), eng.Pending())
			if len(ref) > 0 {
				next, ok := eng.Next()
				require.True(t, ok)
				lo := ref[0].at
				for _, x := range ref {
					lo = min(lo, x.at)
				}
				require.Equal(t, lo, next)
			}
		}
		require.Equal(t, chunks, sim.Chunks(eng), "NewEngine(hint) bound exceeded")
	})
}

// chainer schedules, from each event, the events of a fixed plan: handlers
// that schedule work exercise the queue while it is being drained.
type chainer struct {
	eng   *sim.Engine
	trace []uint64
	x     uint64
}

func (c *chainer) Handle(ev sim.Event) {
	c.trace = append(c.trace, uint64(ev.At), ev.A)
	if ev.A >= 5000 {
		return
	}
	c.x = c.x*6364136223846793005 + 1442695040888963407
	for i := uint64(0); i < 1+c.x>>62; i++ {
		c.x = c.x*6364136223846793005 + 1442695040888963407
		c.eng.After(sim.Time(c.x>>40)%500, c, 0, ev.A*3+i+1)
	}
}

// The same schedule gives the same execution, event for event.
func TestEngineDeterministic(t *testing.T) {
	run := func() []uint64 {
		eng := sim.NewEngine(0)
		c := &chainer{eng: eng, x: 42}
		for i := 0; i < 10; i++ {
			eng.Schedule(sim.Time(i%3), c, 0, uint64(i))
		}
		eng.Run(sim.MaxTime)
		return c.trace
	}
	a, b := run(), run()
	require.NotEmpty(t, a)
	require.Equal(t, a, b)
}

func TestEngineRunUntil(t *testing.T) {
	eng := sim.NewEngine(0)
	r := &recorder{eng: eng}
	for _, at := range []sim.Time{10, 20, 20, 30} {
		eng.Schedule(at, r, 0, uint64(at))
	}
	eng.Run(20)
	assert.Equal(t, []uint64{10, 20, 20}, r.ids, "events at exactly until run")
	assert.Equal(t, sim.Time(20), eng.Now())
	eng.Run(25)
	assert.Equal(t, sim.Time(25), eng.Now(), "clock advances to until")
	next, ok := eng.Next()
	assert.True(t, ok)
	assert.Equal(t, sim.Time(30), next)
	assert.Panics(t, func() { eng.Schedule(24, r, 0, 0) }, "scheduling in the past")
	eng.After(1, r, 0, 26)
	eng.Run(sim.MaxTime)
	assert.Equal(t, []uint64{10, 20, 20, 26, 30}, r.ids)
	assert.Equal(t, sim.Time(30), eng.Now(), "Run(MaxTime) leaves the clock at the last event")
	_, ok = eng.Next()
	assert.False(t, ok)
	assert.False(t, eng.Step())
	assert.Equal(t, uint64(5), eng.Events())
	assert.Panics(t, func() { eng.Schedule(40, nil, 0, 0) }, "nil handler")
}

func TestEngineStop(t *testing.T) {
	eng := sim.NewEngine(0)
	var seen []uint64
	h := sim.HandlerFunc(func(ev sim.Event) {
		seen = append(seen, ev.A)
		if ev.A == 2 {
			eng.Stop()
		}
	})
	for i := uint64(1); i <= 4; i++ {
		eng.Schedule(sim.Time(i), h, 0, i)
	}
	eng.Run(100)
	assert.True(t, eng.Stopped())
	assert.Equal(t, []uint64{1, 2}, seen)
	assert.Equal(t, sim.Time(2), eng.Now(), "a stopped Run does not advance the clock")
	assert.Equal(t, 2, eng.Pending())
	eng.Run(100)
	assert.False(t, eng.Stopped())
	assert.Equal(t, []uint64{1, 2, 3, 4}, seen)
	assert.Equal(t, sim.Time(100), eng.Now())
}

func TestEngineEventArgs(t *testing.T) {
	eng := sim.NewEngine(0)
	var got sim.Event
	eng.Schedule(5, sim.HandlerFunc(func(ev sim.Event) { got = ev }), 7, 1<<63)
	eng.Run(sim.MaxTime)
	assert.Equal(t, sim.Event{At: 5, Kind: 7, A: 1 << 63}, got)
}

// A long chain of events at a single instant runs in FIFO order and does not
// make the queue grow.
func TestEngineSameInstantChain(t *testing.T) {
	eng := sim.NewEngine(0)
	var seen []uint64
	var h sim.HandlerFunc
	h = func(ev sim.Event) {
		seen = append(seen, ev.A)
		if ev.A < 100000 {
			eng.Schedule(eng.Now(), h, 0, ev.A+2)
		}
	}
	eng.Schedule(7, h, 0, 0)
	eng.Schedule(7, h, 0, 1)
	eng.Run(sim.MaxTime)
	require.Len(t, seen, 100002)
	for i, a := range seen {
		require.Equal(t, uint64(i), a)
	}
	assert.Equal(t, sim.Time(7), eng.Now())
	assert.LessOrEqual(t, sim.Chunks(eng), 2)
}

// An engine made with NewEngine(hint) allocates nothing while at most hint
// events are pending; here events reschedule themselves at random.
func TestEngineNoAllocsWithinHint(t *testing.T) {
	for _, pending := range []int{1, 1000, 20000} {
		eng := newSteadyQueue(pending)
		chunks := sim.Chunks(eng)
		allocs := testing.AllocsPerRun(20, func() {
			for i := 0; i < 5000; i++ {
				eng.Step()
			}
		})
		assert.Zero(t, allocs, "pending=%d", pending)
		assert.Equal(t, chunks, sim.Chunks(eng), "pending=%d: no chunk allocated", pending)
		assert.Equal(t, pending, eng.Pending())
	}
}

// The zero Engine allocates as it grows, then reuses its chunks: memory
// follows the number of pending events, not the number ever scheduled.
func TestEngineMemoryFollowsPending(t *testing.T) {
	var eng sim.Engine
	r := &rescheduler{eng: &eng, x: 7, span: 1_000_000}
	const pending = 5000
	for i := 0; i < pending; i++ {
		eng.Schedule(r.next(), r, 0, 0)
	}
	for i := 0; i < 200*pending; i++ {
		eng.Step()
	}
	// The guarantee is pending/32 + one partial chunk per bucket (257) + 2;
	// in practice far fewer buckets are ever non-empty at once.
	assert.LessOrEqual(t, sim.Chunks(&eng), pending/32+64)
	assert.Equal(t, pending, eng.Pending())
}

// StepUntil runs the next event only if it is due by until, and leaves the
// queue able to take events before the one it refused.
func TestStepUntil(t *testing.T) {
	eng := sim.NewEngine(0)
	var got []sim.Time
	h := sim.HandlerFunc(func(ev sim.Event) { got = append(got, ev.At) })
	eng.Schedule(100, h, 0, 0)
	eng.Schedule(300, h, 0, 0)
	assert.True(t, eng.StepUntil(100))
	assert.False(t, eng.StepUntil(299))
	assert.Equal(t, sim.Time(100), eng.Now())
	eng.Schedule(200, h, 0, 0) // before the refused one
	assert.True(t, eng.StepUntil(299))
	assert.False(t, eng.StepUntil(299))
	assert.True(t, eng.StepUntil(sim.MaxTime))
	assert.False(t, eng.StepUntil(sim.MaxTime))
	assert.Equal(t, []sim.Time{100, 200, 300}, got)
	assert.Equal(t, uint64(3), eng.Events())
}
