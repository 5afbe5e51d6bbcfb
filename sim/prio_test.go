package sim_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/sim"
)

// prioAt is the byte of a test frame that carries its priority.
const prioAt = 4

// classify is a Network.Classify hook for the tests: the priority is the
// frame's byte prioAt.
func classify(frame []byte) uint8 { return frame[prioAt] }

// prioFrame returns numbered(seq, size) carrying priority prio.
func prioFrame(seq uint32, prio uint8, size int) []byte {
	f := numbered(seq, size)
	f[prioAt] = prio
	return f
}

// A port serves its queues in strict priority, FIFO within a priority: the
// frame being sent finishes, then the highest priority goes first.
func TestStrictPriorityOrder(t *testing.T) {
	p := newPair(1, 10e9, 0)
	p.net.Classify = classify
	a := p.a.Port()
	sends := []struct {
		seq  uint32
		prio uint8
	}{{0, 0}, {1, 0}, {2, 0}, {3, 5}, {4, 5}, {5, 2}, {6, 7}, {7, 2}}
	for _, s := range sends {
		require.True(t, p.a.Send(0, prioFrame(s.seq, s.prio, 1000)))
	}
	// Frame 0 is on the wire; the others wait, by priority.
	assert.Equal(t, 2000, a.QueuedBytesPrio(0))
	assert.Equal(t, 0, a.QueuedBytesPrio(1))
	assert.Equal(t, 2000, a.QueuedBytesPrio(2))
	assert.Equal(t, 2000, a.QueuedBytesPrio(5))
	assert.Equal(t, 1000, a.QueuedBytesPrio(7))
	assert.Equal(t, 0, a.QueuedBytesPrio(8))
	assert.Equal(t, 7000, a.QueuedBytes())
	assert.Equal(t, 7, a.QueuedFrames())
	p.eng.Run(sim.MaxTime)
	assert.Equal(t, []uint32{0, 6, 3, 4, 5, 7, 1, 2}, p.sb.seqs())
	for i, g := range p.sb.got { // back to back at 800 ns a frame
		assert.Equal(t, sim.Time(800*(i+1))*sim.Nanosecond, g.at)
	}
}

func TestClassifyOutOfRangePanics(t *testing.T) {
	p := newPair(1, 10e9, 0)
	p.net.Classify = func([]byte) uint8 { return 8 }
	assert.PanicsWithValue(t, "sim: Network.Classify returned priority 8, want 0-7", func() { p.a.Send(0, make([]byte, 64)) })
}

// steadyQueue keeps one priority's queue of a host port at a fixed level: it
// sends a frame each time the port finishes one, so every probe frame finds
// the queue holding (frames-1)*size bytes, and counts the marks.
type steadyQueue struct {
	host          *sim.Host
	size, left    int
	probes, marks int
	probing       bool
}

func (s *steadyQueue) Receive(sim.Time, []byte) {}
func (s *steadyQueue) TxDone(sim.Time) {
	if s.left == 0 {
		return
	}
	s.left--
	s.probing = true
	s.probes++
	s.host.Send(0, make([]byte, s.size))
}

// markRatio runs n probes against a queue held at q bytes (q a multiple of
// 1000) with RED r on priority 0 and returns the fraction marked.
func markRatio(t *testing.T, r sim.RED, q, n int, seed uint64) float64 {
	eng := sim.NewEngine(0)
	net := sim.NewNetwork(eng, seed)
	s := &steadyQueue{size: 1000, left: n}
	s.host = net.NewHost("a", s)
	b := net.NewHost("b", nil)
	net.Connect(s.host.Port(), b.Port(), sim.LinkConfig{Bandwidth: 100e9})
	s.host.Port().SetRED(0, r)
	net.MarkCE = func(frame []byte) bool {
		if s.probing {
			require.Equal(t, q, s.host.Port().QueuedBytesPrio(0))
			s.marks++
		}
		return true
	}
	for i := 0; i <= q/1000+1; i++ { // one on the wire, q/1000+1 waiting
		s.host.Send(0, make([]byte, 1000))
	}
	eng.Run(sim.MaxTime)
	require.Equal(t, n, s.probes)
	return float64(s.marks) / float64(n)
}

// The RED curve (fabric-facts §3), measured: at each queue level, n probe
// frames; the marked fraction must be within 4.5 standard deviations of a
// binomial(n, p) proportion of the curve's p (a false failure has odds of
// about 7 in a million per level), and exactly 0 and 1 outside
// (KMin, KMax].
func TestREDMarkingCurve(t *testing.T) {
	r := sim.RED{KMin: 10000, KMax: 50000, PMax: 0.5}
	const n = 20000
	for _, tc := range []struct {
		q int
		p float64
	}{
		{0, 0}, {10000, 0}, {11000, 0.5 * 1 / 40}, {20000, 0.125}, {30000, 0.25},
		{40000, 0.375}, {50000, 0.5}, {51000, 1}, {80000, 1},
	} {
		got := markRatio(t, r, tc.q, n, 7)
		tol := 4.5 * math.Sqrt(tc.p*(1-tc.p)/n)
		assert.InDelta(t, tc.p, got, tol, "q=%d", tc.q)
	}
}

// The draws come from the port's own stream, and only between KMin and
// KMax: the marks of priority 0 (q from 0 to 400 KB, between its KMin and
// KMax from 3000 bytes) are the same whether or not frames of priority 1,
// whose queue stays at or below its KMin, and of priority 2, whose queue
// is above its KMax (always marked), are sent in between; another port's
// draws do not change them either; another seed does.
func TestREDDrawsOnlyBetweenThresholds(t *testing.T) {
	marks := func(seed uint64, between, other bool) (got []uint32, always int) {
		eng := sim.NewEngine(0)
		net := sim.NewNetwork(eng, seed)
		net.Classify = classify
		if other { // another marking port, created first, sending too
			x := net.NewHost("x", nil)
			net.Connect(x.Port(), net.NewHost("y", nil).Port(), sim.LinkConfig{Bandwidth: 1e9})
			x.Port().SetRED(0, sim.RED{KMin: 0, KMax: 500000, PMax: 1})
			for i := 0; i < 100; i++ {
				x.Send(0, prioFrame(1<<20, 0, 1000))
			}
		}
		a := net.NewHost("a", nil)
		b := net.NewHost("b", nil)
		net.Connect(a.Port(), b.Port(), sim.LinkConfig{Bandwidth: 1e9})
		a.Port().SetRED(0, sim.RED{KMin: 2000, KMax: 500000, PMax: 0.5})
		a.Port().SetRED(1, sim.RED{KMin: 1 << 20, KMax: 2 << 20, PMax: 1})
		a.Port().SetRED(2, sim.RED{KMin: 500, KMax: 500, PMax: 1})
		net.MarkCE = func(frame []byte) bool {
			switch v := binary.BigEndian.Uint32(frame); {
			case frame[prioAt] == 2:
				always++
			case v < 1<<20:
				got = append(got, v)
			}
			return true
		}
		a.Send(0, prioFrame(0, 0, 1000)) // on the wire; the rest wait for seconds
		for i := 0; i < 402; i++ {
			a.Send(0, prioFrame(uint32(1+i), 0, 1000))
			if between {
				a.Send(0, prioFrame(uint32(1000+i), 1, 1000))
				a.Send(0, prioFrame(uint32(2000+i), 2, 1000))
			}
		}
		return got, always
	}
	base, _ := marks(3, false, false)
	require.NotEmpty(t, base)
	with, always := marks(3, true, false)
	assert.Equal(t, base, with, "no draws outside (KMin, KMax]")
	assert.Equal(t, 402-1, always, "priority 2 marked from its second frame, q = 1000 > 500")
	other, _ := marks(3, false, true)
	assert.Equal(t, base, other, "another port's draws change nothing")
	reseeded, _ := marks(4, false, false)
	assert.NotEqual(t, base, reseeded)
}

// PortConfig.ECNThreshold and SetECNThreshold keep their meaning: a step
// at K on every priority, RED{K, K, 1}, decided on the joining frame's own
// priority queue.
func TestECNThresholdIsStepOnEveryPriority(t *testing.T) {
	p := newPair(1, 10e9, 0)
	p.net.Classify = classify
	a := p.a.Port()
	a.SetECNThreshold(2500)
	for i := 0; i < sim.NumPriorities; i++ {
		assert.Equal(t, sim.RED{KMin: 2500, KMax: 2500, PMax: 1}, a.RED(i))
	}
	var marked []uint32
	p.net.MarkCE = func(frame []byte) bool {
		marked = append(marked, binary.BigEndian.Uint32(frame))
		return true
	}
	// Frame 0 goes on the wire. Priority 0 frames 1-6 find 0, 1000, ...,
	// 5000 bytes in their queue; priority 4 frames 11-16 the same in
	// theirs. Above 2500 bytes: frames 4, 5, 6 and 14, 15, 16.
	p.a.Send(0, prioFrame(0, 0, 1000))
	for i := 1; i <= 6; i++ {
		p.a.Send(0, prioFrame(uint32(i), 0, 1000))
		p.a.Send(0, prioFrame(uint32(10+i), 4, 1000))
	}
	assert.Equal(t, []uint32{4, 14, 5, 15, 6, 16}, marked)
	assert.Equal(t, uint64(6), p.net.Links()[0].Counters(sim.AtoB).ECNMarked)
	a.SetECNThreshold(0)
	assert.Equal(t, sim.RED{KMin: 0, KMax: 0, PMax: 1}, a.RED(3))
	p.a.Send(0, prioFrame(20, 0, 1000))
	assert.Len(t, marked, 6, "0 disables marking")
}

func TestSetREDRejectsBadSettings(t *testing.T) {
	p := newPair(1, 10e9, 0)
	a := p.a.Port()
	assert.Panics(t, func() { a.SetRED(8, sim.RED{KMax: 1}) })
	assert.Panics(t, func() { a.SetRED(-1, sim.RED{KMax: 1}) })
	assert.Panics(t, func() { a.SetRED(0, sim.RED{KMin: 2, KMax: 1}) })
	assert.Panics(t, func() { a.SetRED(0, sim.RED{KMin: -1, KMax: 1}) })
	assert.Panics(t, func() { a.SetRED(0, sim.RED{KMax: 1, PMax: 1.5}) })
	assert.Panics(t, func() { a.SetRED(0, sim.RED{KMax: 1, PMax: math.NaN()}) })
	assert.EqualError(t, sim.RED{KMin: 2, KMax: 1}.Validate(), "sim: RED thresholds KMin 2, KMax 1: need 0 <= KMin <= KMax")
}

// slowEgress is a switch whose port 1 runs at 1 Mb/s (8 ms a 1000-byte
// frame), fed at 100 Gb/s by host 0: every frame host 0 sends at once
// arrives before the first has left.
func slowEgress() *star {
	fast := sim.LinkConfig{Bandwidth: 100e9}
	slow := sim.LinkConfig{Bandwidth: 1e6}
	return newStar(2, sim.PortConfig{}, fast, slow)
}

// The dynamic threshold drops a lossy frame at the queue length worked out
// by hand. Frame i (1000 bytes, i = 0, 1, ...) arrives with U = 1000i bytes
// in the switch (frame 0 on the wire, frames 1..i-1 waiting) and finds
// q = 1000(i-1) bytes in its queue; it is dropped when
// q + 1000 > Alpha x (Bytes - U), that is 1000i > Alpha(100000 - 1000i):
// for Alpha 1, from i = 51 (the queue holds 50 frames); for Alpha 2, from
// i = 67 (66 frames); for Alpha 0.5, 1500i > 50000, from i = 34.
func TestDynamicThresholdDrops(t *testing.T) {
	for _, tc := range []struct {
		alpha float64
		kept  int
	}{{1, 51}, {2, 67}, {0.5, 34}} {
		t.Run(fmt.Sprint(tc.alpha), func(t *testing.T) {
			s := slowEgress()
			s.sw.SetBuffer(sim.BufferConfig{Bytes: 100000, Alpha: tc.alpha})
			var dropped []uint32
			s.net.OnDrop = func(now sim.Time, link int, dir sim.Direction, cause sim.DropCause, frame []byte) {
				require.Equal(t, sim.DropQueue, cause)
				dropped = append(dropped, binary.BigEndian.Uint32(frame))
			}
			for i := 0; i < 100; i++ {
				s.hosts[0].Send(1, numbered(uint32(i), 1000))
			}
			s.eng.Run(100 * sim.Microsecond)
			require.NotEmpty(t, dropped)
			assert.Equal(t, uint32(tc.kept), dropped[0], "first frame dropped")
			assert.Len(t, dropped, 100-tc.kept)
			out := s.sw.Port(1)
			assert.Equal(t, 1000*(tc.kept-1), out.QueuedBytes())
			assert.Equal(t, 1000*tc.kept, s.sw.BufferedBytes())
			assert.Equal(t, uint64(100-tc.kept), out.Stats().QueueDrops)
			s.eng.Run(sim.MaxTime)
			assert.Equal(t, seq(tc.kept), s.sinks[1].seqs())
			assert.Zero(t, s.sw.BufferedBytes())
			assert.Equal(t, 1000*tc.kept, s.sw.PeakBufferedBytes())
		})
	}
}

// A lossless priority is not held to the dynamic threshold, but a frame
// that finds the shared buffer full is dropped, with cause DropBuffer and
// counted. XOff is out of reach, so nothing is paused: frames 0..99 fill
// the 100000 bytes, the rest are dropped; a lossy frame of priority 0 sent
// after them is dropped for the same reason.
func TestSharedBufferFullDropsLossless(t *testing.T) {
	s := slowEgress()
	s.net.Classify = classify
	s.sw.SetBuffer(sim.BufferConfig{Bytes: 100000, Alpha: 1})
	s.sw.SetPFC(sim.PFCConfig{XOff: 1 << 30, XOn: 1 << 29, Priorities: 1 << 3})
	causes := map[sim.DropCause]int{}
	var first uint32
	s.net.OnDrop = func(now sim.Time, link int, dir sim.Direction, cause sim.DropCause, frame []byte) {
		if causes[cause] == 0 {
			first = binary.BigEndian.Uint32(frame)
		}
		causes[cause]++
		assert.Equal(t, s.sw.Port(1).Link().ID(), link)
		assert.Equal(t, s.sw.Port(1).Direction(), dir)
	}
	for i := 0; i < 120; i++ {
		s.hosts[0].Send(1, prioFrame(uint32(i), 3, 1000))
	}
	s.hosts[0].Send(1, prioFrame(500, 0, 1000))
	s.eng.Run(100 * sim.Microsecond)
	assert.Equal(t, map[sim.DropCause]int{sim.DropBuffer: 21}, causes)
	assert.Equal(t, uint32(100), first)
	st := s.sw.Port(1).Stats()
	assert.Equal(t, uint64(21), st.BufferDrops)
	assert.Zero(t, st.QueueDrops)
	assert.Equal(t, 100000, s.sw.BufferedBytes())
	assert.Equal(t, "buffer", sim.DropBuffer.String())
}

func TestSetBufferRejectsBadSettings(t *testing.T) {
	s := slowEgress()
	assert.Panics(t, func() { s.sw.SetBuffer(sim.BufferConfig{Bytes: -1, Alpha: 1}) })
	assert.Panics(t, func() { s.sw.SetBuffer(sim.BufferConfig{Bytes: 1, Alpha: 0}) })
	assert.Panics(t, func() { s.sw.SetBuffer(sim.BufferConfig{Bytes: 1, Alpha: math.Inf(1)}) })
	assert.Panics(t, func() { s.sw.SetBuffer(sim.BufferConfig{Bytes: 1, Alpha: math.NaN()}) })
	s.sw.SetBuffer(sim.BufferConfig{Bytes: 1, Alpha: 2})
	assert.Equal(t, sim.BufferConfig{Bytes: 1, Alpha: 2}, s.sw.Buffer())
}
