package sim_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/rocekit/rocekit/sim"
)

// rescheduler is a handler that, each time it runs, schedules one new event
// at a pseudo-random time up to span after now, keeping the number of
// pending events constant.
type rescheduler struct {
	eng  *sim.Engine
	x    uint64 // xorshift state
	span uint64
}

func (r *rescheduler) next() sim.Time {
	r.x ^= r.x << 13
	r.x ^= r.x >> 7
	r.x ^= r.x << 17
	return sim.Time(1 + r.x%r.span)
}

func (r *rescheduler) Handle(ev sim.Event) {
	r.eng.Schedule(ev.At+r.next(), r, ev.Kind, ev.A+1, nil)
}

// newSteadyQueue returns an engine holding pending events, each of which
// reschedules itself, run long enough for its buffers to reach steady size.
func newSteadyQueue(pending int) *sim.Engine {
	eng := sim.NewEngine(pending)
	r := &rescheduler{eng: eng, x: 0x9e3779b97f4a7c15, span: 1_000_000}
	for i := 0; i < pending; i++ {
		eng.Schedule(r.next(), r, 0, 0, nil)
	}
	for i := 0; i < 20*pending; i++ {
		eng.Step()
	}
	return eng
}

// BenchmarkEventQueue processes events from a queue holding a steady number
// of pending events (1,000 or 100,000); each event schedules one new event
// at a uniformly random time 1 ps to 1 us later. One op is one event.
func BenchmarkEventQueue(b *testing.B) {
	for _, pending := range []int{1000, 100000} {
		eng := newSteadyQueue(pending)
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				eng.Step()
			}
			el := time.Since(start)
			b.StopTimer()
			if eng.Pending() != pending {
				b.Fatalf("pending %d, want %d", eng.Pending(), pending)
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
		})
	}
}
