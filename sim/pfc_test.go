package sim_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/sim"
)

// One sender at 100 Gb/s into a 10 Gb/s port, 20 frames of 1000 bytes sent
// at once, XOFF 2500 and XON 1000 bytes, 100 ns links. Worked by hand:
// frame k leaves the sender over [80k, 80k+80) ns and reaches the switch at
// 80k+180. Frame 2 arrives at 340 ns with frames 0 and 1 still in the switch
// (3000 > 2500): the pause leaves at once and reaches the sender after its
// own 4.8 ns and the 100 ns delay, at 444.8 ns, during frame 5, which
// finishes. The 10 Gb/s port never idles: XON leaves time for the next frame
// to arrive before the port runs dry, so the last frame is delivered at
// 180 + 20*800 + 100 ns, as without PFC, and the switch never held more
// than six frames.
func TestPFCPausesSenderWithoutSlowingBottleneck(t *testing.T) {
	fast := sim.LinkConfig{Bandwidth: 100e9, Delay: 100 * sim.Nanosecond}
	slow := sim.LinkConfig{Bandwidth: 10e9, Delay: 100 * sim.Nanosecond}
	s := newStar(2, sim.PortConfig{}, fast, slow)
	s.sw.SetPFC(sim.PFCConfig{XOff: 2500, XOn: 1000})
	var sentAt []sim.Time
	var pfc [][]byte
	peakIn := 0
	s.net.Tap = func(now sim.Time, link int, dir sim.Direction, frame []byte) {
		if link == 0 && dir == sim.AtoB {
			sentAt = append(sentAt, now)
		}
		if link == 0 && dir == sim.BtoA {
			pfc = append(pfc, bytes.Clone(frame))
		}
		peakIn = max(peakIn, s.sw.Port(0).IngressBytes())
	}
	for i := 0; i < 20; i++ {
		require.True(t, s.hosts[0].Send(1, numbered(uint32(i), 1000)))
	}
	s.eng.Run(sim.MaxTime)

	require.Equal(t, seq(20), s.sinks[1].seqs(), "every frame, in order")
	assert.Equal(t, sim.Time(180+20*800+100)*sim.Nanosecond, s.sinks[1].got[19].at)
	require.Len(t, sentAt, 20)
	for k := 0; k < 6; k++ {
		assert.Equal(t, sim.Time(80*k)*sim.Nanosecond, sentAt[k], "frame %d before the pause", k)
	}
	assert.Greater(t, sentAt[6], sim.Time(480)*sim.Nanosecond, "frame 6 waits for the resume")
	assert.LessOrEqual(t, peakIn, 6000)

	c := s.net.Links()[0].Counters(sim.BtoA)
	assert.Equal(t, c.PauseFrames, c.ResumeFrames)
	assert.Positive(t, c.PauseFrames)
	assert.Equal(t, int(c.PauseFrames+c.ResumeFrames), len(pfc))
	assert.Positive(t, s.net.Links()[0].Counters(sim.AtoB).PausedTime)
	assert.False(t, s.hosts[0].Port().Paused())
	assert.Zero(t, s.sw.Port(0).IngressBytes(), "every frame has left the switch")

	// The PFC frames as a capture shows them: 802.1Qbb, priority 3.
	want := make([]byte, 60)
	copy(want, []byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0xFF})
	want[11] = 0 // switch port 0
	want[12], want[13], want[14], want[15], want[17] = 0x88, 0x08, 0x01, 0x01, 0x08
	pause := bytes.Clone(want)
	pause[24], pause[25] = 0xFF, 0xFF
	pause[10], want[10] = pfc[0][10], pfc[0][10] // the switch's node number
	assert.Equal(t, pause, pfc[0])
	assert.Equal(t, want, pfc[1])
}

func seq(n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = uint32(i)
	}
	return out
}

// Two senders into one port of the same rate with a small drop-tail queue:
// without PFC the queue overflows; with PFC (XOFF plus headroom below the
// queue limit) nothing is lost and both senders' frames all arrive in order.
func TestPFCMakesIncastLossless(t *testing.T) {
	for _, pfc := range []bool{false, true} {
		l := sim.LinkConfig{Bandwidth: 100e9, Delay: 500 * sim.Nanosecond}
		s := newStar(3, sim.PortConfig{QueueLimit: 64 << 10}, l, l, l)
		if pfc {
			s.sw.SetPFC(sim.PFCConfig{XOff: 16 << 10, XOn: 8 << 10})
		}
		for i := 0; i < 200; i++ {
			s.hosts[0].Send(2, numbered(uint32(i), 4096))
			s.hosts[1].Send(2, numbered(uint32(1000+i), 4096))
		}
		s.eng.Run(sim.MaxTime)
		drops := s.net.Links()[2].Counters(sim.BtoA).QueueDrops
		if !pfc {
			assert.Positive(t, drops, "without PFC the incast overflows the queue")
			continue
		}
		assert.Zero(t, drops)
		require.Len(t, s.sinks[2].got, 400)
		var a, b []uint32
		for _, v := range s.sinks[2].seqs() {
			if v < 1000 {
				a = append(a, v)
			} else {
				b = append(b, v-1000)
			}
		}
		assert.Equal(t, seq(200), a)
		assert.Equal(t, seq(200), b)
		for i := 0; i < 2; i++ {
			assert.Positive(t, s.net.Links()[i].Counters(sim.BtoA).PauseFrames, "sender %d paused", i)
		}
		assert.LessOrEqual(t, s.sw.Port(2).PeakQueuedBytes(), 64<<10)
	}
}

func TestSetPFCRejectsBadThresholds(t *testing.T) {
	s := newStar(1, sim.PortConfig{}, sim.LinkConfig{Bandwidth: 1e9})
	assert.Panics(t, func() { s.sw.SetPFC(sim.PFCConfig{XOff: 10, XOn: 20}) })
	assert.Panics(t, func() { s.sw.SetPFC(sim.PFCConfig{XOff: -1}) })
	s.sw.SetPFC(sim.PFCConfig{XOff: 10, XOn: 5})
	assert.Equal(t, sim.PFCConfig{XOff: 10, XOn: 5}, s.sw.PFC())
}
