package sim_test

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/sim"
)

// star is n hosts, each on its own port of one switch, host i reachable as
// destination i.
type star struct {
	eng   *sim.Engine
	net   *sim.Network
	sw    *sim.Switch
	hosts []*sim.Host
	sinks []*sink
}

func newStar(n int, port sim.PortConfig, links ...sim.LinkConfig) *star {
	s := &star{eng: sim.NewEngine(0)}
	s.net = sim.NewNetwork(s.eng, 1)
	s.sw = s.net.NewSwitch("sw", n, port)
	for i := 0; i < n; i++ {
		k := &sink{}
		h := s.net.NewHost(fmt.Sprintf("h%d", i), k)
		s.net.Connect(h.Port(), s.sw.Port(i), links[i])
		s.sw.SetRoute(i, i)
		s.hosts = append(s.hosts, h)
		s.sinks = append(s.sinks, k)
	}
	return s
}

// markCE is a MarkCE hook for the tests: it sets the last byte of the frame
// and records the queue occupancy seen at the time.
type markCE struct {
	port *sim.Port
	seen []int
}

func (m *markCE) mark(frame []byte) bool {
	frame[len(frame)-1] = 0xce
	m.seen = append(m.seen, m.port.QueuedBytes())
	return true
}

// A switch forwards a frame once it has fully arrived: two serialisations
// and two propagation delays.
func TestSwitchStoreAndForwardTiming(t *testing.T) {
	l := sim.LinkConfig{Bandwidth: 100e9, Delay: 200 * sim.Nanosecond}
	s := newStar(2, sim.PortConfig{}, l, l)
	s.hosts[0].Send(1, numbered(7, 1024))
	s.eng.Run(sim.MaxTime)
	require.Len(t, s.sinks[1].got, 1)
	assert.Equal(t, 2*(81920+200*sim.Nanosecond), s.sinks[1].got[0].at)
	assert.Equal(t, numbered(7, 1024), s.sinks[1].got[0].frame)
	assert.Empty(t, s.sinks[0].got)
}

// One sender at 100 Gb/s into a 10 Gb/s port: the queue fills one frame per
// 80 ns while the first frame takes 800 ns to leave, so the drop-tail and
// ECN decisions can be worked out exactly.
func TestSwitchDropTailAndECNExact(t *testing.T) {
	fast := sim.LinkConfig{Bandwidth: 100e9}
	slow := sim.LinkConfig{Bandwidth: 10e9}
	s := newStar(2, sim.PortConfig{QueueLimit: 4500, ECNThreshold: 2500}, fast, slow)
	out := s.sw.Port(1)
	m := &markCE{port: out}
	s.net.MarkCE = m.mark
	var drops []uint32
	s.net.OnDrop = func(now sim.Time, link int, dir sim.Direction, cause sim.DropCause, frame []byte) {
		require.Equal(t, sim.DropQueue, cause)
		require.Equal(t, out.Link().ID(), link)
		require.Equal(t, out.Direction(), dir)
		drops = append(drops, binary.BigEndian.Uint32(frame))
	}
	for i := 0; i < 10; i++ {
		s.hosts[0].Send(1, numbered(uint32(i), 1000))
	}
	s.eng.Run(sim.MaxTime)
	// Frame 0 arrives at 80 ns and leaves at once; frames 1-4 queue (4000
	// bytes); frames 5-9 would take the queue past 4500 and are dropped.
	// Frame 4 is the only one to join a queue holding more than 2500 bytes.
	assert.Equal(t, []uint32{5, 6, 7, 8, 9}, drops)
	assert.Equal(t, []int{3000}, m.seen)
	got := s.sinks[1]
	require.Equal(t, []uint32{0, 1, 2, 3, 4}, got.seqs())
	for i, a := range got.got {
		assert.Equal(t, sim.Time(80000+800000*(i+1)), a.at, "frame %d", i)
		assert.Equal(t, i == 4, a.frame[999] == 0xce, "frame %d marked", i)
	}
	c := out.Link().Counters(out.Direction())
	assert.Equal(t, uint64(5), c.QueueDrops)
	assert.Equal(t, uint64(5000), c.QueueDropBytes)
	assert.Equal(t, uint64(1), c.ECNMarked)
	assert.Equal(t, uint64(5), c.SentFrames)
	assert.Equal(t, 4000, out.PeakQueuedBytes())
}

// Two senders at line rate into one port of the same rate: the queue grows
// by a frame every frame time until drop-tail holds it at the limit; frames
// are ECN-marked exactly while it holds more than K.
func TestSwitchTwoSendersBottleneck(t *testing.T) {
	const n, size = 200, 1000
	const limit, k = 20000, 8000
	l := sim.LinkConfig{Bandwidth: 100e9, Delay: 100 * sim.Nanosecond}
	s := newStar(3, sim.PortConfig{QueueLimit: limit, ECNThreshold: k}, l, l, l)
	out := s.sw.Port(2)
	m := &markCE{port: out}
	s.net.MarkCE = m.mark
	tx := sim.TxTime(size, 100e9)
	for src := 0; src < 2; src++ {
		(&pacer{eng: s.eng, host: s.hosts[src], dst: 2, n: n, size: size, interval: tx}).start()
	}
	s.eng.Run(sim.MaxTime)

	c := out.Link().Counters(out.Direction())
	delivered := uint64(len(s.sinks[2].got))
	assert.Equal(t, uint64(2*n), delivered+c.QueueDrops, "every frame is delivered or dropped at the queue")
	assert.Equal(t, c.SentFrames, delivered)
	assert.LessOrEqual(t, out.PeakQueuedBytes(), limit)
	assert.Greater(t, out.PeakQueuedBytes(), limit-size, "the queue fills up")
	// The bottleneck sends back to back from the first arrival to the last
	// departure: n frame times of input at twice its rate, plus the drain of
	// a full queue, is about n + limit/size frames.
	assert.InDelta(t, n+limit/size, float64(delivered), 2)
	assert.Greater(t, c.QueueDrops, uint64(n/2))
	// MarkCE was called only for frames joining more than K queued bytes,
	// and every call counted.
	require.NotEmpty(t, m.seen)
	for _, q := range m.seen {
		assert.Greater(t, q, k)
	}
	assert.Equal(t, uint64(len(m.seen)), c.ECNMarked)
	marked := 0
	for _, a := range s.sinks[2].got {
		if a.frame[size-1] == 0xce {
			marked++
		}
	}
	assert.Equal(t, int(c.ECNMarked), marked, "marked frames are delivered, not dropped")
	// Nothing queues, drops or marks on the input ports.
	for i := 0; i < 2; i++ {
		assert.Zero(t, s.sw.Port(i).PeakQueuedBytes())
		in := s.sw.Port(i).Link().Counters(s.sw.Port(i).Direction())
		assert.Zero(t, in.QueueDrops+in.ECNMarked)
	}
	// With the threshold above the limit nothing is ever marked.
	s2 := newStar(3, sim.PortConfig{QueueLimit: limit, ECNThreshold: limit}, l, l, l)
	m2 := &markCE{port: s2.sw.Port(2)}
	s2.net.MarkCE = m2.mark
	for src := 0; src < 2; src++ {
		(&pacer{eng: s2.eng, host: s2.hosts[src], dst: 2, n: n, size: size, interval: tx}).start()
	}
	s2.eng.Run(sim.MaxTime)
	assert.Empty(t, m2.seen)
}

func TestSwitchRoutingAndForwardFunc(t *testing.T) {
	l := sim.LinkConfig{Bandwidth: 100e9}
	s := newStar(3, sim.PortConfig{}, l, l, l)
	var causes []sim.DropCause
	s.net.OnDrop = func(now sim.Time, link int, dir sim.Direction, cause sim.DropCause, frame []byte) {
		assert.Equal(t, s.hosts[0].Port().Link().ID(), link, "a no-route drop names the link it came in by")
		causes = append(causes, cause)
	}
	s.sw.SetRoute(1, -1)
	assert.Equal(t, -1, s.sw.Route(1))
	assert.Equal(t, 2, s.sw.Route(2))
	assert.Equal(t, -1, s.sw.Route(99))
	s.hosts[0].Send(1, numbered(1, 64))  // route removed
	s.hosts[0].Send(99, numbered(2, 64)) // never routed
	s.hosts[0].Send(2, numbered(3, 64))
	s.eng.Run(sim.MaxTime)
	assert.Equal(t, []sim.DropCause{sim.DropNoRoute, sim.DropNoRoute}, causes)
	assert.Equal(t, uint64(2), s.sw.NoRouteDrops())
	assert.Equal(t, []uint32{3}, s.sinks[2].seqs())

	// A forwarding function that reads the frame overrides the table.
	s.sw.Forward = func(inPort, dst int, frame []byte) int {
		assert.Equal(t, 0, inPort)
		return int(frame[4]) // "destination address" inside the frame
	}
	f := numbered(4, 64)
	f[4] = 1
	s.hosts[0].Send(2, f)
	s.eng.Run(sim.MaxTime)
	assert.Equal(t, []uint32{4}, s.sinks[1].seqs())
	assert.Equal(t, 3, s.sw.NumPorts())
	assert.Equal(t, "sw/1", s.sw.Port(1).Name())
	assert.Panics(t, func() { s.sw.SetRoute(0, 3) })
	assert.Panics(t, func() { s.sw.SetRoute(-1, 0) })
}

// The frame pool stops growing once it holds as many frames as are ever in
// flight, and a network in steady state allocates nothing.
func TestPoolReuse(t *testing.T) {
	l := sim.LinkConfig{Bandwidth: 100e9, Delay: sim.Microsecond}
	s := newStar(3, sim.PortConfig{QueueLimit: 16000, ECNThreshold: 8000}, l, l, l)
	s.net.MarkCE = func(frame []byte) bool { return false }
	for i := range s.sinks { // receive without keeping copies
		s.hosts[i].SetEndpoint(sim.EndpointFunc(func(sim.Time, []byte) {}))
	}
	frame := numbered(0, 1024)
	tx := sim.TxTime(1024, 100e9)
	var send sim.HandlerFunc
	send = func(ev sim.Event) {
		for src := 0; src < 2; src++ { // two senders, one bottleneck: drops too
			s.hosts[src].Send(2, frame)
		}
		s.eng.After(tx, send, 0, 0)
	}
	s.eng.Schedule(0, send, 0, 0)
	s.eng.Run(100 * sim.Microsecond)
	warm := s.net.PoolStats()
	allocs := testing.AllocsPerRun(10, func() {
		s.eng.Run(s.eng.Now() + 100*sim.Microsecond)
	})
	assert.Zero(t, allocs)
	st := s.net.PoolStats()
	assert.Equal(t, warm.Frames, st.Frames, "no new frames in steady state")
	assert.Zero(t, st.Grows)
	assert.Less(t, st.Frames, 100, "frames in flight, not frames sent")
	c := s.sw.Port(2).Link().Counters(sim.BtoA)
	assert.Greater(t, c.DeliveredFrames, uint64(10000))
	assert.Greater(t, c.QueueDrops, uint64(10000))
	assert.Equal(t, st.InUse, inFlight(s))
}

// inFlight counts frames held by the star: queued at the ports, on the wire
// or propagating, from the link counters.
func inFlight(s *star) int {
	n := 0
	for i := 0; i < s.sw.NumPorts(); i++ {
		l := s.sw.Port(i).Link()
		for _, d := range []sim.Direction{sim.AtoB, sim.BtoA} {
			c := l.Counters(d)
			n += int(c.SentFrames + c.Duplicated - c.DeliveredFrames - c.WireDrops())
		}
		n += s.sw.Port(i).QueuedFrames() + s.hosts[i].Port().QueuedFrames()
	}
	return n
}
