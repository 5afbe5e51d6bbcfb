package decode

import (
	"unsafe"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/internal/obs"
	"github.com/rocekit/rocekit/internal/prefetch"
)

// convTracker follows each QP's conversation across frames (package
// analysis) and gives each frame its anomaly warnings. It is split into
// shards by pairs of endpoints (analysis.Shards): each shard observes its
// frames in order, and different shards at once.
type convTracker struct {
	s *analysis.Shards
	w []shardWarnings
}

// shardWarnings is one shard's reused warnings slice, on a cache line of
// its own: the workers observe different shards at once, and each writes
// its slice back for every frame.
type shardWarnings struct {
	w []analysis.Warning
	_ [64 - unsafe.Sizeof([]analysis.Warning{})]byte
}

func newConvTracker(pmtu, shards int) convTracker {
	s := analysis.NewShards(shards, analysis.Options{PMTU: pmtu})
	return convTracker{s: s, w: make([]shardWarnings, s.Len())}
}

// check is c as the analysis takes it.
func (c CRC) check() analysis.Check {
	switch {
	case !c.Checked:
		return analysis.NotChecked
	case c.OK:
		return analysis.CheckOK
	}
	return analysis.CheckBad
}

// observe feeds one frame's observation to its shard's tracker (in that
// shard's turn) and appends its warnings.
func (c *convTracker) observe(shard int, o *obs.Obs, w []string) []string {
	sw := &c.w[shard]
	sw.w = observations.Observe(c.s, shard, o, sw.w[:0])
	for _, x := range sw.w {
		w = append(w, string(x))
	}
	return w
}

// count feeds obs[i] for each i of idx to shard's tracker, in order, for
// the summary alone: their warnings are only counted. It prefetches each
// observation obsAhead ahead of its turn: they were written to memory
// (SummaryOnly writes them with non-temporal stores), not to a cache.
func (c *convTracker) count(shard int, observed []obs.Obs, idx []int32) {
	w := c.w[shard].w
	for j, i := range idx {
		if j+obsAhead < len(idx) {
			prefetch.Lines(unsafe.Pointer(&observed[idx[j+obsAhead]]), 2)
		}
		w = observations.Observe(c.s, shard, &observed[i], w[:0])
	}
	c.w[shard].w = w
}

// observations are package analysis's functions on observations
// (internal/obs).
var observations = obs.Get[*analysis.Shards, analysis.Check, analysis.Warning]()

// obsAhead is how many observations ahead count prefetches.
const obsAhead = 16
