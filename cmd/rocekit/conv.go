package main

import (
	"github.com/rocekit/rocekit/analysis"
)

// convTracker follows each QP's conversation across frames (package
// analysis) and gives each frame its anomaly warnings.
type convTracker struct {
	t *analysis.Tracker
	w []analysis.Warning
}

func newConvTracker(pmtu int) convTracker {
	return convTracker{t: analysis.New(analysis.Options{PMTU: pmtu})}
}

func check(c crcResult) analysis.Check {
	switch {
	case !c.checked:
		return analysis.NotChecked
	case c.ok:
		return analysis.CheckOK
	}
	return analysis.CheckBad
}

// observe feeds one decoded frame to the tracker and appends its warnings.
func (c *convTracker) observe(fi *frameInfo, w []string) []string {
	c.w = c.t.ObserveChecked(fi.rec.Index, fi.rec.Time, fi.f, check(fi.icrc), check(fi.vcrc), c.w[:0])
	for _, x := range c.w {
		w = append(w, string(x))
	}
	return w
}

func (c *convTracker) appendSummary(b []byte, json bool) []byte {
	s := c.t.Summary()
	if json {
		return append(s.AppendJSON(b), '\n')
	}
	var buf bytesWriter
	buf.b = b
	s.WriteText(&buf)
	return buf.b
}

type bytesWriter struct{ b []byte }

func (w *bytesWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }
