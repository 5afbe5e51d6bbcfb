package analysis

import (
	"time"

	"github.com/rocekit/rocekit/packet"
)

// Shards is a Tracker split by pairs of endpoints, so that several
// goroutines can observe one capture at once. A flow only ever deals with
// flows between the same two addresses: its reverse direction (pairing by
// PSN or by CM), the CM exchange that names it, the CNPs about its
// traffic. So the frames between one pair of endpoints can be observed by
// one shard's Tracker, in frame order, while the other shards observe the
// frames of other pairs; the merged Summary, and every frame's warnings,
// are exactly what one Tracker observing every frame in order gives.
//
// A capture between two hosts has one pair, and gains nothing; one of many
// clients talking to a server spreads over the shards.
type Shards struct {
	ts []*Tracker
}

// NewShards returns n (at least 1) empty shards with the given options.
func NewShards(n int, opts Options) *Shards {
	s := &Shards{ts: make([]*Tracker, max(n, 1))}
	for i := range s.ts {
		s.ts[i] = New(opts)
	}
	return s
}

// Len returns the number of shards.
func (s *Shards) Len() int { return len(s.ts) }

// ObserveChecked is Tracker.ObserveChecked for shard i, which must be
// given, in order, every frame Of assigns to it. seq is the frame's
// position in everything observed (by every shard, across files: frame
// numbers start again with each file), increasing from frame to frame:
// the Summary numbers connections by it.
func (s *Shards) ObserveChecked(i int, seq uint64, frameNo int, ts time.Time, f *packet.Frame, icrc, vcrc Check, warnings []Warning) []Warning {
	return s.ts[i].observe(seq, frameNo, ts, f, icrc, vcrc, warnings)
}

// Of returns the shard that must observe decoded frame f: one chosen by
// the unordered pair of its endpoint addresses (the addresses flows are
// keyed by), the same for both directions. The shard is the sum of the
// two addresses' low 32 bits (LIDs: the LIDs) modulo the number of shards:
// hosts of a cluster are usually numbered consecutively, so the pairs of
// many clients with one server fall on the shards in turn. Frames that
// carry no complete IB transport packet go to shard 0.
func (s *Shards) Of(f *packet.Frame) int {
	if len(s.ts) == 1 || !f.IsRoCE() || f.Transport.BTH == nil || !f.Transport.Framed() {
		return 0
	}
	src, dst := FrameAddrs(f)
	return shardOf(&src, &dst, len(s.ts))
}

// ofObs is Of for the frame o was set from.
func (s *Shards) ofObs(o *obs) int {
	if len(s.ts) == 1 || o.state != obsDecoded {
		return 0
	}
	return shardOf(&o.key.Src, &o.key.Dst, len(s.ts))
}

// Summary merges what every shard learnt, as one Tracker's Summary.
func (s *Shards) Summary() *Summary { return summarize(s.ts) }
