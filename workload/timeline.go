package workload

import (
	"errors"
	"fmt"

	"github.com/rocekit/rocekit/sim"
)

// CollTiming is one collective of a step on the communication stream,
// its times counted from the step's start: Issued when the compute before
// it was done, Start when the stream was free (the collectives before it
// finished), End = Start + its duration.
type CollTiming struct {
	Item               int // its index in the workload's Items
	Issued, Start, End sim.Time
}

// Step is one training step's figures.
type Step struct {
	// Start is when the step began, counted from the first step's start.
	Start sim.Time
	// Time is the step time: when both streams were done.
	Time sim.Time
	// Compute is the compute stream's busy time, the sum of the compute
	// stretches.
	Compute sim.Time
	// Comm is the communication stream's busy time, the sum of the
	// collectives' durations.
	Comm sim.Time
	// Exposed is the exposed communication: the time the compute stream
	// spent waiting on the network (a waited-for collective, a barrier,
	// and the step's end after the last compute). Time = Compute +
	// Exposed; the hidden communication is Comm - Exposed.
	Exposed sim.Time
}

// ExposedShare is the share of the step time spent waiting on the
// network, Exposed / Time (0 for an empty step).
func (s Step) ExposedShare() float64 {
	if s.Time == 0 {
		return 0
	}
	return float64(s.Exposed) / float64(s.Time)
}

// Timeline is a workload's schedule: the collectives of a step, which is
// the same every step, and every step's figures.
type Timeline struct {
	Colls []CollTiming
	Steps []Step
	// Total is the workload's time, the sum of the step times.
	Total sim.Time
}

// Schedule lays the workload out on its two streams given each
// collective's duration, a pure function of its arguments. The rules,
// those of a framework over NCCL with one communicator:
//
//   - The compute stream runs the compute stretches in list order.
//   - A collective is issued when everything on the compute stream before
//     it in the list is done, and runs on the communication stream, which
//     runs one collective at a time in the order they were issued (NCCL
//     runs a communicator's collectives one after another on its stream),
//     so the network carries one collective at a time.
//   - A collective with Wait holds the compute stream until it ends; a
//     Barrier holds it until every collective issued before it has ended.
//   - The step ends when both streams are done; the next starts then, so
//     every step is the same.
//
// The exposed communication is the time the compute stream spends held:
// at a Wait, at a Barrier, and from the end of the last compute to the
// step's end. Missing durations, negative ones, and a workload whose time
// does not fit in sim.Time are errors.
func Schedule(w *Workload, dur map[Coll]sim.Time) (*Timeline, error) {
	if w.Steps < 1 || w.Steps > MaxSteps {
		return nil, fmt.Errorf("workload: %d steps: want 1 to %d", w.Steps, MaxSteps)
	}
	var (
		tl         Timeline
		st         Step
		cf, mf     sim.Time // when the compute and the communication stream are free
		overflowed bool
	)
	add := func(a, b sim.Time) sim.Time {
		if b > sim.MaxTime-a {
			overflowed = true
			return sim.MaxTime
		}
		return a + b
	}
	hold := func(until sim.Time) { // the compute stream waits until until
		if until > cf {
			st.Exposed += until - cf
			cf = until
		}
	}
	for i, it := range w.Items {
		switch it.Kind {
		case Compute:
			if it.Compute < 0 {
				return nil, fmt.Errorf("workload: %s: negative compute time %v", it.Where, it.Compute)
			}
			cf = add(cf, it.Compute)
			st.Compute += it.Compute
		case Collective:
			d, ok := dur[it.Coll]
			if !ok {
				return nil, fmt.Errorf("workload: %s: no duration for %s", it.Where, it.Coll)
			}
			if d < 0 {
				return nil, fmt.Errorf("workload: %s: negative duration %v for %s", it.Where, d, it.Coll)
			}
			ct := CollTiming{Item: i, Issued: cf, Start: max(cf, mf)}
			ct.End = add(ct.Start, d)
			mf = ct.End
			st.Comm = add(st.Comm, d)
			tl.Colls = append(tl.Colls, ct)
			if it.Wait {
				hold(ct.End)
			}
		case Barrier:
			hold(mf)
		default:
			return nil, fmt.Errorf("workload: %s: unknown item kind %v", it.Where, it.Kind)
		}
	}
	hold(mf)
	st.Time = max(cf, mf)
	if overflowed || st.Time > sim.MaxTime/sim.Time(w.Steps) {
		return nil, errors.New("workload: the workload's time is beyond what sim.Time holds (about 106 days)")
	}
	tl.Steps = make([]Step, w.Steps)
	for k := range tl.Steps {
		st.Start = sim.Time(k) * st.Time
		tl.Steps[k] = st
	}
	tl.Total = sim.Time(w.Steps) * st.Time
	return &tl, nil
}
