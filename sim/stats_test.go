package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/rocekit/rocekit/sim"
)

// The time-weighted mean queue on a schedule worked by hand, 1000-byte
// frames at 10 Gb/s (800 ns each): three sent at 0 leave 2000 bytes
// waiting over [0, 800) ns and 1000 over [800, 1600); two sent at 3000 ns
// leave 1000 waiting over [3000, 3800). The integral is 2.4e6 byte-ns by
// 1600 ns, 2.8e6 at 3400 ns (mid-way through the last wait) and 3.2e6 from
// 3800 ns on.
func TestMeanQueueIntegral(t *testing.T) {
	p := newPair(1, 10e9, 0)
	a := p.a.Port()
	p.sendN(3, 1000)
	assert.Zero(t, a.Stats().MeanQueueBytes, "no time has passed")
	p.eng.Run(3000 * sim.Nanosecond)
	st := a.Stats()
	assert.InDelta(t, 2.4e6/3000, st.MeanQueueBytes, 1e-9)
	assert.Equal(t, 3000*sim.Nanosecond, st.Elapsed)
	assert.Equal(t, 2000, st.MaxQueueBytes)
	p.sendN(2, 1000)
	p.eng.Run(3400 * sim.Nanosecond)
	assert.InDelta(t, 2.8e6/3400, a.Stats().MeanQueueBytes, 1e-9)
	p.eng.Run(5000 * sim.Nanosecond)
	st = a.Stats()
	assert.InDelta(t, 640, st.MeanQueueBytes, 1e-9)
	assert.Equal(t, uint64(5), st.SentFrames)
	assert.Equal(t, uint64(5000), st.SentBytes)
	assert.Zero(t, st.QueueDrops+st.BufferDrops+st.NoRouteDrops+st.UnconnectedDrops)
}

// A pause still in force counts toward the time paused when Stats is
// asked; Link counters count it from its resume.
func TestStatsCountPauseInForce(t *testing.T) {
	c := newChain(sim.PFCConfig{XOff: 2000, XOn: 1000, Priorities: 1 << 3})
	for i := 0; i < 50; i++ {
		c.h.Send(1, prioFrame(uint32(i), 3, 1000))
	}
	var at sim.Time
	for c.eng.Step() {
		if c.h.Port().PausedPrio(3) {
			at = c.eng.Now()
			break
		}
	}
	c.eng.Run(at + 100*sim.Nanosecond)
	st := c.h.Port().Stats()
	if assert.True(t, c.h.Port().PausedPrio(3)) {
		assert.Equal(t, 100*sim.Nanosecond, st.PausedTimePrio[3])
		assert.Equal(t, st.PausedTimePrio[3], st.PausedTime)
		assert.Zero(t, c.net.Links()[0].Counters(sim.AtoB).PausedTime)
	}
	assert.Equal(t, uint64(1), st.PauseReceived)
	assert.Zero(t, st.ResumeReceived)
}

// Frames that a switch cannot route, or a host sends with no link, are
// counted on the port.
func TestStatsCountNoRouteAndUnconnected(t *testing.T) {
	l := sim.LinkConfig{Bandwidth: 10e9}
	s := newStar(2, sim.PortConfig{}, l, l)
	s.hosts[0].Send(7, make([]byte, 100))
	s.eng.Run(sim.MaxTime)
	assert.Equal(t, uint64(1), s.sw.Port(0).Stats().NoRouteDrops)
	lone := s.net.NewHost("lone", nil)
	assert.False(t, lone.Send(0, make([]byte, 100)))
	assert.Equal(t, uint64(1), lone.Port().Stats().UnconnectedDrops)
}

// In steady state a switch with several priorities, RED marking, PFC and a
// shared buffer allocates nothing per frame: two senders keep 64 frames of
// four priorities in flight into a port of half their rate, each delivery
// releasing one send.
func TestNoAllocsPerFrameWithPriorities(t *testing.T) {
	r := newPriorityRig()
	eng, sw, out, delivered := r.eng, r.sw, r.sw.Port(2), &r.delivered
	allocs := testing.AllocsPerRun(10, func() {
		for target := *delivered + 1000; *delivered < target; {
			eng.Step()
		}
	})
	assert.Zero(t, allocs)
	st := out.Stats()
	assert.Positive(t, st.ECNMarked)
	assert.Positive(t, sw.Port(0).Stats().PauseSent+sw.Port(1).Stats().PauseSent)
	assert.Zero(t, st.QueueDrops+st.BufferDrops)
}
