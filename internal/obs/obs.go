// Package obs is the door to package analysis's observations, which
// analysis keeps out of its API: what its Tracker needs to know of one
// frame, taken from the decoded frame (Set) on one core and observed later,
// in order, on another (Observe), so that package decode can decode frames
// on every worker and track each shard of connections on one.
//
// An Obs is 128 bytes, two cache lines, and holds no pointer, so that
// decode can move it with non-temporal stores (internal/nt), which the
// garbage collector does not see: with plain stores, each line of a reused
// buffer of observations was first fetched back from the core that had
// read it, and a summary took 1/0.83x the time on machine D (non-temporal
// stores for all observations: 0.83x the time, alternated).
package obs

import (
	"time"

	"github.com/rocekit/rocekit/packet"
)

// Obs is one frame's observation, opaque outside package analysis.
type Obs struct{ _ [16]uint64 }

// Methods are package analysis's functions on observations, for its
// *Shards (S), Check (C) and Warning (W): Set fills o in from the decoded
// frame f (the frame at position seq of everything observed, number
// frameNo of its capture, taken at ts, with its ICRC and VCRC checks); Of
// returns the shard that observes it; Observe has shard i observe it and
// appends its warnings. Package analysis provides them at initialisation
// (Provide); Get returns them.
type Methods[S, C, W any] struct {
	Set     func(o *Obs, seq uint64, frameNo int, ts time.Time, f *packet.Frame, icrc, vcrc C)
	Of      func(s S, o *Obs) int
	Observe func(s S, i int, o *Obs, warnings []W) []W
}

var methods any

// Provide is called by package analysis, once, at initialisation.
func Provide[S, C, W any](m Methods[S, C, W]) { methods = m }

// Get returns the methods package analysis provided for S, C and W
// (*analysis.Shards, analysis.Check, analysis.Warning); the zero Methods
// for other types.
func Get[S, C, W any]() Methods[S, C, W] {
	m, _ := methods.(Methods[S, C, W])
	return m
}
