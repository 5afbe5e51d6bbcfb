package sim

import "math/bits"

// PortStats is what a fabric summary needs of one port: what it sent, what
// was dropped there, its ECN marks and PFC frames, how long it was paused,
// and its queue, from the port's creation to the time Port.Stats was
// called.
type PortStats struct {
	SentFrames, SentBytes uint64 // put on the wire by this port (PFC frames not counted)

	// Frames dropped at this port: at its output queues (QueueDrops:
	// drop-tail, static or dynamic threshold; BufferDrops: its switch's
	// shared buffer was full), on the link direction it sends on
	// (LossDrops, BurstDrops, DeadDrops), after arriving by it for want of
	// a route (NoRouteDrops), or sent while it had no link
	// (UnconnectedDrops).
	QueueDrops, BufferDrops          uint64
	LossDrops, BurstDrops, DeadDrops uint64
	NoRouteDrops, UnconnectedDrops   uint64
	ECNMarked                        uint64              // frames for which MarkCE reported a mark
	PauseSent, ResumeSent            uint64              // PFC frames this (switch) port sent its peer
	PauseReceived, ResumeReceived    uint64              // PFC frames the peer sent this port
	PausedTime                       Time                // time its peer had it paused, summed over the priorities
	PausedTimePrio                   [NumPriorities]Time // the same per priority
	INTOverflows                     uint64              // frames collecting INT that already had MaxINTHops records (Switch.SetINT)
	MaxQueueBytes                    int                 // largest QueuedBytes seen
	MeanQueueBytes                   float64             // QueuedBytes averaged over time
	Elapsed                          Time                // time since the port was created
}

// Stats returns the port's statistics at the engine's current time. The
// time paused includes pauses still in force; MeanQueueBytes is the
// integral of the queued bytes (all priorities, not counting the frame
// being serialised) over time since the port was created, divided by that
// time (0 before any time has passed).
func (p *Port) Stats() PortStats {
	now := p.net.eng.now
	st := PortStats{
		NoRouteDrops:     p.noRoute,
		BufferDrops:      p.bufferDrops,
		UnconnectedDrops: p.unconnected,
		INTOverflows:     p.intOverflows,
		PausedTimePrio:   p.pausedTime,
		MaxQueueBytes:    p.peak,
		Elapsed:          now - p.created,
	}
	if l := p.link; l != nil {
		c := &l.dir[p.dir].c
		st.SentFrames, st.SentBytes = c.SentFrames, c.SentBytes
		st.QueueDrops = c.QueueDrops
		st.LossDrops, st.BurstDrops, st.DeadDrops = c.LossDrops, c.BurstDrops, c.DeadDrops
		st.ECNMarked = c.ECNMarked
		st.PauseSent, st.ResumeSent = c.PauseFrames, c.ResumeFrames
		r := &l.dir[p.dir.Reverse()].c
		st.PauseReceived, st.ResumeReceived = r.PauseFrames, r.ResumeFrames
	}
	for i := range st.PausedTimePrio {
		if p.paused&(1<<i) != 0 {
			st.PausedTimePrio[i] += now - p.pausedAt[i]
		}
		st.PausedTime += st.PausedTimePrio[i]
	}
	if st.Elapsed > 0 {
		// The frames still waiting count up to now; the integral is not
		// negative, so the 128-bit sum reads as unsigned.
		h, l := bits.Mul64(uint64(p.qb), uint64(now))
		lo, c := bits.Add64(p.qiLo, l, 0)
		hi := p.qiHi + h + c
		st.MeanQueueBytes = (float64(hi)*0x1p64 + float64(lo)) / float64(st.Elapsed)
	}
	return st
}
