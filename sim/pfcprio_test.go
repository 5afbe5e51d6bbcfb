package sim_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/sim"
)

// wantPFC is the PFC frame a switch port sends for priority prio with
// quanta, from the switch's node number and port index: IEEE 802.1Qbb, MAC
// control opcode 0x0101, the class-enable vector at bytes 16-17 and eight
// 2-byte quanta from byte 18.
func wantPFC(node, index byte, prio int, quanta uint16) []byte {
	b := make([]byte, 60)
	copy(b, []byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01, 0x02, 0x00, 0x00, 0xFF, node, index})
	b[12], b[13] = 0x88, 0x08
	b[14], b[15] = 0x01, 0x01
	binary.BigEndian.PutUint16(b[16:], 1<<prio)
	binary.BigEndian.PutUint16(b[18+2*prio:], quanta)
	return b
}

// checkPFCFrames checks that pfc, sent by switch port 0, is pauses and
// resumes of priority prio in turn, at least one of each.
func checkPFCFrames(t *testing.T, pfc [][]byte, prio int) {
	t.Helper()
	require.NotEmpty(t, pfc)
	require.Zero(t, len(pfc)%2, "as many resumes as pauses")
	node := pfc[0][10]
	for i, fr := range pfc {
		quanta := uint16(0xFFFF)
		if i%2 == 1 {
			quanta = 0
		}
		require.Equal(t, wantPFC(node, 0, prio, quanta), fr, "PFC frame %d", i)
	}
}

// For each priority made lossless, the pause and resume frames carry that
// priority's bit in the class-enable vector and its quanta at 18+2*prio,
// and the sender's queue of that priority is the one paused.
func TestPFCFrameBytesPerPriority(t *testing.T) {
	for prio := 0; prio < sim.NumPriorities; prio++ {
		t.Run(fmt.Sprint(prio), func(t *testing.T) {
			fast := sim.LinkConfig{Bandwidth: 100e9, Delay: 100 * sim.Nanosecond}
			slow := sim.LinkConfig{Bandwidth: 10e9, Delay: 100 * sim.Nanosecond}
			s := newStar(2, sim.PortConfig{}, fast, slow)
			s.net.Classify = classify
			s.sw.SetPFC(sim.PFCConfig{XOff: 2500, XOn: 1000, Priorities: 1 << prio})
			var pfc [][]byte
			s.net.Tap = func(now sim.Time, link int, dir sim.Direction, frame []byte) {
				if link == 0 && dir == sim.BtoA {
					pfc = append(pfc, bytes.Clone(frame))
				}
			}
			paused := false
			for i := 0; i < 20; i++ {
				s.hosts[0].Send(1, prioFrame(uint32(i), uint8(prio), 1000))
			}
			for s.eng.Step() {
				paused = paused || s.hosts[0].Port().PausedPrio(prio)
				for q := 0; q < sim.NumPriorities; q++ {
					require.False(t, q != prio && s.hosts[0].Port().PausedPrio(q))
				}
			}
			assert.True(t, paused)
			checkPFCFrames(t, pfc, prio)
			assert.Equal(t, seq(20), s.sinks[1].seqs())
		})
	}
}

// Without Classify every frame is in one class, lossless, and the pause
// frames name the lowest priority of PFCConfig.Priorities (3 when it is 0).
func TestPFCWithoutClassifyNamesLowestPriority(t *testing.T) {
	for _, tc := range []struct {
		mask uint8
		prio int
	}{{0, 3}, {1 << 5, 5}, {1<<6 | 1<<2, 2}} {
		fast := sim.LinkConfig{Bandwidth: 100e9, Delay: 100 * sim.Nanosecond}
		slow := sim.LinkConfig{Bandwidth: 10e9, Delay: 100 * sim.Nanosecond}
		s := newStar(2, sim.PortConfig{}, fast, slow)
		s.sw.SetPFC(sim.PFCConfig{XOff: 2500, XOn: 1000, Priorities: tc.mask})
		var pfc [][]byte
		s.net.Tap = func(now sim.Time, link int, dir sim.Direction, frame []byte) {
			if link == 0 && dir == sim.BtoA {
				pfc = append(pfc, bytes.Clone(frame))
			}
		}
		for i := 0; i < 20; i++ {
			s.hosts[0].Send(1, numbered(uint32(i), 1000))
		}
		s.eng.Run(sim.MaxTime)
		checkPFCFrames(t, pfc, tc.prio)
		assert.Positive(t, s.hosts[0].Port().Stats().PausedTimePrio[0], "the one class is queue 0")
	}
}

// chain is host h -- sw1 -- sw2 -- host d, 100 Gb/s except the last link
// at 10 Gb/s, 1 us each; both switches lossless on priority 3.
type chain struct {
	eng      *sim.Engine
	net      *sim.Network
	h, d     *sim.Host
	sw1, sw2 *sim.Switch
	sink     *sink
}

func newChain(pfc sim.PFCConfig) *chain {
	c := &chain{eng: sim.NewEngine(0), sink: &sink{}}
	c.net = sim.NewNetwork(c.eng, 1)
	c.net.Classify = classify
	c.h = c.net.NewHost("h", nil)
	c.d = c.net.NewHost("d", c.sink)
	c.sw1 = c.net.NewSwitch("sw1", 2, sim.PortConfig{})
	c.sw2 = c.net.NewSwitch("sw2", 2, sim.PortConfig{})
	fast := sim.LinkConfig{Bandwidth: 100e9, Delay: sim.Microsecond}
	slow := sim.LinkConfig{Bandwidth: 10e9, Delay: sim.Microsecond}
	c.net.Connect(c.h.Port(), c.sw1.Port(0), fast)
	c.net.Connect(c.sw1.Port(1), c.sw2.Port(0), fast)
	c.net.Connect(c.sw2.Port(1), c.d.Port(), slow)
	c.sw1.SetRoute(1, 1)
	c.sw2.SetRoute(1, 1)
	c.sw1.SetPFC(pfc)
	c.sw2.SetPFC(pfc)
	return c
}

// A congested egress on sw2 makes sw2 pause sw1's priority 3, sw1's queue
// for sw2 then fills and sw1 pauses the host's priority 3: the pause goes
// upstream hop by hop. The host's priority-0 flow on the same links is
// never paused: it is sent while priority 3 is held, and every frame of
// both arrives, in order within its priority, none lost.
func TestPFCPropagatesUpstreamPerPriority(t *testing.T) {
	c := newChain(sim.PFCConfig{XOff: 20000, XOn: 10000, Priorities: 1 << 3})
	hp := c.h.Port()
	var sentWhilePaused int
	var pfcPrios []byte
	c.net.Tap = func(now sim.Time, link int, dir sim.Direction, frame []byte) {
		if len(frame) == 60 && frame[12] == 0x88 && frame[13] == 0x08 {
			pfcPrios = append(pfcPrios, frame[17])
			return
		}
		if link == 0 && dir == sim.AtoB && frame[prioAt] == 0 && hp.PausedPrio(3) {
			sentWhilePaused++
		}
	}
	for i := 0; i < 200; i++ {
		c.h.Send(1, prioFrame(uint32(i), 3, 1000))
	}
	for i := 0; i < 100; i++ {
		c.h.Send(1, prioFrame(uint32(1000+i), 0, 1000))
	}
	c.eng.Run(sim.MaxTime)

	var p3, p0 []uint32
	for _, v := range c.sink.seqs() {
		if v < 1000 {
			p3 = append(p3, v)
		} else {
			p0 = append(p0, v-1000)
		}
	}
	assert.Equal(t, seq(200), p3)
	assert.Equal(t, seq(100), p0)
	assert.Positive(t, sentWhilePaused, "priority 0 goes on while priority 3 is paused")
	for _, b := range pfcPrios {
		require.Equal(t, byte(1<<3), b, "only priority 3 is ever paused")
	}

	sw2in := c.sw2.Port(0).Stats()
	sw1out := c.sw1.Port(1).Stats()
	sw1in := c.sw1.Port(0).Stats()
	host := hp.Stats()
	assert.Positive(t, sw2in.PauseSent, "sw2 paused sw1")
	assert.Equal(t, sw2in.PauseSent, sw1out.PauseReceived)
	assert.Equal(t, sw2in.ResumeSent, sw1out.ResumeReceived)
	assert.Positive(t, sw1out.PausedTimePrio[3])
	assert.Positive(t, sw1in.PauseSent, "sw1 paused the host in turn")
	assert.Equal(t, sw1in.PauseSent, host.PauseReceived)
	assert.Positive(t, host.PausedTimePrio[3])
	for _, st := range []sim.PortStats{sw1out, host} {
		assert.Zero(t, st.PausedTimePrio[0], "priority 0 never paused")
		assert.Equal(t, st.PausedTimePrio[3], st.PausedTime)
		assert.Equal(t, st.PauseReceived, st.ResumeReceived)
	}
	assert.Equal(t, uint64(300), host.SentFrames)
	assert.Equal(t, uint64(300*1000), host.SentBytes)
	for _, l := range c.net.Links() {
		for _, d := range []sim.Direction{sim.AtoB, sim.BtoA} {
			k := l.Counters(d)
			assert.Zero(t, k.QueueDrops+k.WireDrops())
		}
	}
	assert.False(t, hp.Paused())
	assert.Zero(t, c.sw1.BufferedBytes()+c.sw2.BufferedBytes())
}

// incast sends frames frames of 1000 bytes from each of 16 hosts to a 17th
// through one switch at 100 Gb/s, 1 us links, all priority 3.
func incast(t *testing.T, setup func(*sim.Switch), frames int) (*star, map[sim.DropCause]int) {
	l := sim.LinkConfig{Bandwidth: 100e9, Delay: sim.Microsecond}
	links := make([]sim.LinkConfig, 17)
	for i := range links {
		links[i] = l
	}
	s := newStar(17, sim.PortConfig{}, links...)
	s.net.Classify = classify
	setup(s.sw)
	drops := map[sim.DropCause]int{}
	s.net.OnDrop = func(now sim.Time, link int, dir sim.Direction, cause sim.DropCause, frame []byte) {
		drops[cause]++
	}
	for i := 0; i < frames; i++ {
		for h := 0; h < 16; h++ {
			s.hosts[h].Send(16, prioFrame(uint32(h<<16|i), 3, 1000))
		}
	}
	s.eng.Run(sim.MaxTime)
	return s, drops
}

// A 16:1 incast through a lossless switch whose buffer holds XOff plus the
// headroom of PFCHeadroom on every input port loses nothing: every frame
// of every sender arrives, in order.
func TestLosslessIncast16to1(t *testing.T) {
	const xoff = 20000
	head := sim.PFCHeadroom(100e9, sim.Microsecond, 1000)
	s, drops := incast(t, func(sw *sim.Switch) {
		sw.SetPFC(sim.PFCConfig{XOff: xoff, XOn: xoff / 2, Priorities: 1 << 3})
		sw.SetBuffer(sim.BufferConfig{Bytes: 16 * (xoff + head), Alpha: 1})
	}, 300)
	assert.Empty(t, drops)
	per := make([][]uint32, 16)
	for _, v := range s.sinks[16].seqs() {
		per[v>>16] = append(per[v>>16], v&0xFFFF)
	}
	for h := range per {
		assert.Equal(t, seq(300), per[h], "sender %d", h)
		st := s.sw.Port(h).Stats()
		assert.Positive(t, st.PauseSent, "sender %d paused", h)
	}
	assert.LessOrEqual(t, s.sw.PeakBufferedBytes(), 16*(xoff+head))
	out := s.sw.Port(16).Stats()
	assert.Equal(t, uint64(16*300), out.SentFrames)
	assert.Positive(t, out.MeanQueueBytes)
	assert.LessOrEqual(t, out.MeanQueueBytes, float64(out.MaxQueueBytes))
}

// The same incast without PFC, into a 100 KB shared buffer, drops frames:
// some to the dynamic threshold, and only those (the threshold keeps the
// queue below the buffer: q <= Bytes - U with Alpha 1).
func TestLossyIncastSmallBufferDrops(t *testing.T) {
	s, drops := incast(t, func(sw *sim.Switch) {
		sw.SetBuffer(sim.BufferConfig{Bytes: 100000, Alpha: 1})
	}, 300)
	assert.Positive(t, drops[sim.DropQueue])
	assert.Equal(t, map[sim.DropCause]int{sim.DropQueue: drops[sim.DropQueue]}, drops)
	got := len(s.sinks[16].got)
	assert.Equal(t, 16*300, got+drops[sim.DropQueue], "every frame delivered or dropped")
	assert.Equal(t, uint64(drops[sim.DropQueue]), s.sw.Port(16).Stats().QueueDrops)
	assert.LessOrEqual(t, s.sw.PeakBufferedBytes(), 100000)
}

// PFCHeadroom's formula on worked values: 2 x 1 us at 100 Gb/s is 25000
// bytes, plus two 4096-byte frames and the 60-byte PFC frame; a delay whose
// bytes are not whole rounds up.
func TestPFCHeadroom(t *testing.T) {
	assert.Equal(t, 25000+2*4096+60, sim.PFCHeadroom(100e9, sim.Microsecond, 4096))
	assert.Equal(t, 3+2*1500+60, sim.PFCHeadroom(10e9, 1000, 1500)) // 2 ns at 10 Gb/s: 2.5 bytes
	assert.Equal(t, 60, sim.PFCHeadroom(0, 0, 0))
	assert.Equal(t, int(^uint(0)>>1), sim.PFCHeadroom(1<<62, sim.MaxTime, 0))
	assert.Panics(t, func() { sim.PFCHeadroom(-1, 0, 0) })
}
