package workload

import (
	"errors"
	"fmt"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/roce"
	"github.com/rocekit/rocekit/sim"
)

// Result is a simulated workload.
type Result struct {
	// Colls are the workload's distinct collectives in the order of
	// their first appearance, and Runs their simulations.
	Colls []Coll
	Runs  map[Coll]*roce.CollResult
	// Timeline is the schedule from the simulated durations; nil when a
	// collective did not complete (it has no duration).
	Timeline *Timeline
}

// Wrong is the wrong elements over every collective run (nccl-tests'
// #wrong), a collective counted once however often the step issues it.
func (r *Result) Wrong() int {
	n := 0
	for _, c := range r.Colls {
		n += r.Runs[c].Wrong
	}
	return n
}

// Complete reports whether every collective completed.
func (r *Result) Complete() bool {
	for _, c := range r.Colls {
		if !r.Runs[c].Complete {
			return false
		}
	}
	return true
}

// Run simulates the workload over w.Ranks ranks on the fabric scenario sc,
// node.GPUs of them per host (roce.CollConfig.Node), and lays it out with
// Schedule. Each distinct collective (operation,
// size, algorithm, element type) is simulated once, with
// roce.RunCollective (real frames, real data, checked), on the idle
// fabric, rank r on host r (or r / node.GPUs), the element-wise sum of each rank's seeded
// data: collectives are simulated one at a time, never side by side.
// This is exact for one communicator, whose collectives do not overlap
// each other on the network (Schedule runs them one after another), as
// long as the compute does not load the network; it does not model two
// communicators (tensor and data parallelism, say) sharing links. Errors
// name the first item of the collective that failed; a collective that
// does not complete is no error, but leaves Timeline nil.
func Run(w *Workload, sc *roce.Scenario, node roce.NodeSpec, opt roce.Options) (*Result, error) {
	if w.Ranks < 2 {
		return nil, fmt.Errorf("workload: ranks %d: want 2 or more", w.Ranks)
	}
	if err := w.Check(w.Ranks); err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	res := &Result{Colls: w.Colls(), Runs: map[Coll]*roce.CollResult{}}
	for _, c := range res.Colls {
		count, err := c.Count(w.Ranks)
		if err != nil {
			return nil, errors.New("workload: " + c.String() + ": " + err.Error()) // Check has refused it already
		}
		r, err := roce.RunCollective(sc, roce.CollConfig{Ranks: w.Ranks, Op: c.Op, Algo: c.Algo, Sharp: c.Sharp,
			DType: c.DType, RedOp: coll.Sum, Count: count, Node: node}, opt)
		if err != nil {
			return nil, fmt.Errorf("workload: %s: %s: %w", firstWhere(w, c), c, err)
		}
		res.Runs[c] = r
	}
	if !res.Complete() {
		return res, nil
	}
	dur := make(map[Coll]sim.Time, len(res.Colls))
	for c, r := range res.Runs {
		dur[c] = r.Time
	}
	tl, err := Schedule(w, dur)
	if err != nil {
		return nil, err
	}
	res.Timeline = tl
	return res, nil
}

// firstWhere is where the workload first issues collective c.
func firstWhere(w *Workload, c Coll) string {
	for _, it := range w.Items {
		if it.Kind == Collective && it.Coll == c {
			return it.Where
		}
	}
	return "?"
}
