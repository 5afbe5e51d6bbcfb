package cc

import (
	"errors"

	"github.com/rocekit/rocekit/sim"
)

// NP is DCQCN's notification point for one QP, at the receiving NIC
// (fabric-facts §4): it decides whether a CE-marked packet arriving for
// the QP is answered with a CNP, at most one per Interval.
//
// A CNP is sent for the first CE-marked packet, and afterwards for a
// CE-marked packet arriving at least Interval after the last CNP sent: one
// at exactly last+Interval is answered. With Interval 0 every CE-marked
// packet is answered (HPCC ns-3 flags every ACK of a marked packet). A
// time before the last CNP is never answered.
type NP struct {
	interval sim.Time
	last     sim.Time
	sent     bool
}

// NewNP returns a notification point with the given CNP interval.
func NewNP(interval sim.Time) (NP, error) {
	if interval < 0 {
		return NP{}, errors.New("cc: negative CNP interval")
	}
	return NP{interval: interval}, nil
}

// OnCE reports a CE-marked packet for the QP arriving at now, and answers
// whether to send a CNP now.
func (n *NP) OnCE(now sim.Time) bool {
	if n.sent && now-n.last < n.interval {
		return false
	}
	n.sent, n.last = true, now
	return true
}

// Interval returns the CNP interval.
func (n *NP) Interval() sim.Time { return n.interval }
