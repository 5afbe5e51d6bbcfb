package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/sim"
)

// intGot is one frame as an INTEndpoint received it.
type intGot struct {
	at    sim.Time
	frame []byte
	hops  []sim.INTHop // nil when ReceiveINT got none
}

// intSink is an INTEndpoint that keeps copies of what it receives and may
// answer each frame through reply. Receive must never be called on it.
type intSink struct {
	t     *testing.T
	got   []intGot
	reply func(now sim.Time, frame []byte, hops []sim.INTHop)
}

func (s *intSink) Receive(now sim.Time, frame []byte) {
	s.t.Errorf("Receive called at %v on an INTEndpoint", now)
}

func (s *intSink) ReceiveINT(now sim.Time, frame []byte, hops []sim.INTHop) {
	g := intGot{at: now, frame: append([]byte(nil), frame...)}
	if len(hops) > 0 {
		g.hops = append([]sim.INTHop(nil), hops...)
	}
	s.got = append(s.got, g)
	if s.reply != nil {
		s.reply(now, frame, hops)
	}
}

// intChain is host a -> sw1 -> sw2 -> host b, a reachable as destination 0
// and b as 1. a--sw1 and sw1--sw2 run at 100 Gb/s (80 ps a byte) with 1 us
// and 2 us of delay; sw2--b at 25 Gb/s (320 ps a byte) with 500 ns, so a
// queue builds at sw2's port 1 when a sends faster than 25 Gb/s.
type intChain struct {
	eng      *sim.Engine
	net      *sim.Network
	a, b     *sim.Host
	sw1, sw2 *sim.Switch
	ka, kb   *intSink
}

func newINTChain(t *testing.T) *intChain {
	c := &intChain{eng: sim.NewEngine(0)}
	c.net = sim.NewNetwork(c.eng, 1)
	c.ka, c.kb = &intSink{t: t}, &intSink{t: t}
	c.a = c.net.NewHost("a", c.ka)
	c.b = c.net.NewHost("b", c.kb)
	c.sw1 = c.net.NewSwitch("sw1", 2, sim.PortConfig{})
	c.sw2 = c.net.NewSwitch("sw2", 2, sim.PortConfig{})
	c.net.Connect(c.a.Port(), c.sw1.Port(0), sim.LinkConfig{Bandwidth: 100e9, Delay: sim.Microsecond})
	c.net.Connect(c.sw1.Port(1), c.sw2.Port(0), sim.LinkConfig{Bandwidth: 100e9, Delay: 2 * sim.Microsecond})
	c.net.Connect(c.sw2.Port(1), c.b.Port(), sim.LinkConfig{Bandwidth: 25e9, Delay: 500 * sim.Nanosecond})
	c.sw1.SetRoute(0, 0)
	c.sw1.SetRoute(1, 1)
	c.sw2.SetRoute(0, 0)
	c.sw2.SetRoute(1, 1)
	c.sw1.SetINT(true)
	c.sw2.SetINT(true)
	return c
}

// send sends a frame of size bytes, its first byte tag, from h to dst,
// collecting INT if collect.
func (c *intChain) send(h *sim.Host, dst, size int, tag byte, collect bool) {
	f := c.net.AllocFrame(size)
	clear(f.Data)
	f.Data[0] = tag
	f.SetCollectINT(collect)
	h.SendFrame(dst, f)
}

// Four frames of 1000, 500, 1500 and 800 bytes, sent back to back by a at
// time 0, queue at sw2's 25 Gb/s port. Worked out by hand (times in ps):
//
//	a:       starts 0, 80000, 120000, 240000 (ends 80000, 120000, 240000, 304000)
//	sw1 in:  +1us: 1080000, 1120000, 1240000, 1304000
//	sw1 out: f1 starts 1080000 (ends 1160000); f2 queued, starts 1160000
//	         (ends 1200000); f3 starts 1240000 (ends 1360000); f4 queued,
//	         starts 1360000 (ends 1424000). No frame waits behind another.
//	sw2 in:  +2us: 3160000, 3200000, 3360000, 3424000
//	sw2 out: f1 starts 3160000 (ends 3480000); f2, f3, f4 wait (500 + 1500 +
//	         800 bytes); f2 starts 3480000 with 2300 bytes behind it (ends
//	         3640000), f3 at 3640000 with 800 (ends 4120000), f4 at 4120000
//	         with none (ends 4376000).
//	b:       +500ns: 3980000, 4140000, 4620000, 4876000
//
// TxBytes counts each port's bytes so far: 1000, 1500, 3000, 3800 at both.
func TestINTChainRecords(t *testing.T) {
	c := newINTChain(t)
	for i, size := range []int{1000, 500, 1500, 800} {
		c.send(c.a, 1, size, byte(i+1), true)
	}
	c.eng.Run(sim.MaxTime)

	hop1 := func(ts sim.Time, tx uint64) sim.INTHop {
		return sim.INTHop{TS: ts, QLen: 0, TxBytes: tx, RateBps: 100e9}
	}
	hop2 := func(ts sim.Time, q int, tx uint64) sim.INTHop {
		return sim.INTHop{TS: ts, QLen: q, TxBytes: tx, RateBps: 25e9}
	}
	want := []intGot{
		{at: 3980000, hops: []sim.INTHop{hop1(1080000, 1000), hop2(3160000, 0, 1000)}},
		{at: 4140000, hops: []sim.INTHop{hop1(1160000, 1500), hop2(3480000, 2300, 1500)}},
		{at: 4620000, hops: []sim.INTHop{hop1(1240000, 3000), hop2(3640000, 800, 3000)}},
		{at: 4876000, hops: []sim.INTHop{hop1(1360000, 3800), hop2(4120000, 0, 3800)}},
	}
	require.Len(t, c.kb.got, len(want))
	for i, w := range want {
		g := c.kb.got[i]
		assert.Equal(t, byte(i+1), g.frame[0], "frame %d", i)
		assert.Equal(t, w.at, g.at, "frame %d arrival", i)
		assert.Equal(t, w.hops, g.hops, "frame %d records", i)
	}
	assert.Zero(t, c.sw1.INTOverflows())
	assert.Zero(t, c.sw2.INTOverflows())
	// 2800 bytes waited at sw2 just before f2 left: f2's own 500 are not in
	// its record.
	assert.Equal(t, 2800, c.sw2.Port(1).PeakQueuedBytes())
}

// The receiver echoes each frame's records in a reply (SetINT); the sender
// sees them unchanged, since the reply does not collect; the first reply
// also collects, and gains sw2's and sw1's records of the way back after
// the echoed ones.
func TestINTEcho(t *testing.T) {
	c := newINTChain(t)
	c.kb.reply = func(now sim.Time, frame []byte, hops []sim.INTHop) {
		r := c.net.AllocFrame(64)
		clear(r.Data)
		r.Data[0] = frame[0]
		r.SetINT(hops)
		r.SetCollectINT(frame[0] == 1)
		c.b.SendFrame(0, r)
	}
	for i, size := range []int{1000, 500, 1500, 800} {
		c.send(c.a, 1, size, byte(i+1), true)
	}
	c.eng.Run(sim.MaxTime)
	require.Len(t, c.kb.got, 4)
	require.Len(t, c.ka.got, 4)
	for i, g := range c.ka.got {
		require.Equal(t, byte(i+1), g.frame[0])
		require.Len(t, c.kb.got[i].hops, 2)
		if i == 0 {
			continue
		}
		assert.Equal(t, c.kb.got[i].hops, g.hops, "reply %d", i+1)
	}
	// The first reply leaves b at 3980000 (64 bytes at 25 Gb/s: 20480 ps),
	// reaches sw2 at 3980000+20480+500000 = 4500480 and starts on sw2's
	// port 0, the first frame that way; it is serialised in 5120 ps and
	// reaches sw1 2 us later, at 6505600, where port 0 sends it on at once.
	want := append(append([]sim.INTHop(nil), c.kb.got[0].hops...),
		sim.INTHop{TS: 4500480, QLen: 0, TxBytes: 64, RateBps: 100e9},
		sim.INTHop{TS: 6505600, QLen: 0, TxBytes: 64, RateBps: 100e9})
	assert.Equal(t, want, c.ka.got[0].hops)
	assert.Equal(t, 6505600+5120+sim.Microsecond, c.ka.got[0].at)
}

// A frame that collects INT on a path of ten switches with INT on keeps the
// first MaxINTHops records; the last two switches count an overflow each, on
// their egress port.
func TestINTMaxHops(t *testing.T) {
	eng := sim.NewEngine(0)
	net := sim.NewNetwork(eng, 1)
	k := &intSink{t: t}
	a := net.NewHost("a", nil)
	b := net.NewHost("b", k)
	const n = 10
	cfg := sim.LinkConfig{Bandwidth: 100e9, Delay: 100 * sim.Nanosecond}
	var sws []*sim.Switch
	prev := a.Port()
	for i := 0; i < n; i++ {
		s := net.NewSwitch("", 2, sim.PortConfig{})
		s.SetINT(true)
		s.SetRoute(1, 1)
		net.Connect(prev, s.Port(0), cfg)
		prev = s.Port(1)
		sws = append(sws, s)
	}
	net.Connect(prev, b.Port(), cfg)
	f := net.AllocFrame(100)
	f.SetCollectINT(true)
	a.SendFrame(1, f)
	eng.Run(sim.MaxTime)
	require.Len(t, k.got, 1)
	hops := k.got[0].hops
	require.Len(t, hops, sim.MaxINTHops)
	// Each hop takes 100 bytes at 80 ps plus 100 ns: switch i (from 0)
	// sends at (i+1) x 108000 ps.
	for i, h := range hops {
		assert.Equal(t, sim.INTHop{TS: sim.Time(i+1) * 108000, TxBytes: 100, RateBps: 100e9}, h, "hop %d", i)
	}
	for i, s := range sws {
		var want uint64
		if i >= sim.MaxINTHops {
			want = 1
		}
		assert.Equal(t, want, s.INTOverflows(), "switch %d", i)
		assert.Equal(t, want, s.Port(1).Stats().INTOverflows, "switch %d port 1", i)
		assert.Zero(t, s.Port(0).Stats().INTOverflows, "switch %d port 0", i)
	}
	assert.Equal(t, 108000*(n+1), int(k.got[0].at))
}

// A frame from the pool has no records and does not collect, whatever the
// frame it reuses had: freed by FreeFrame, or delivered.
func TestINTPoolHygiene(t *testing.T) {
	c := newINTChain(t)
	f := c.net.AllocFrame(64)
	f.SetINT([]sim.INTHop{{TS: 1, QLen: 2, TxBytes: 3, RateBps: 4}})
	f.SetCollectINT(true)
	require.Len(t, f.INT(), 1)
	c.net.FreeFrame(f)
	g := c.net.AllocFrame(64)
	require.Same(t, f, g) // the pool gives the frame back
	assert.Empty(t, g.INT())
	c.b.SendFrame(0, g) // does not collect: arrives with no records
	c.eng.Run(sim.MaxTime)
	require.Len(t, c.ka.got, 1)
	assert.Nil(t, c.ka.got[0].hops)

	// A frame that collected two records and was delivered goes back to
	// the pool; Host.Send reuses it.
	c.send(c.a, 1, 64, 1, true)
	c.eng.Run(sim.MaxTime)
	require.Len(t, c.kb.got, 1)
	require.Len(t, c.kb.got[0].hops, 2)
	require.Equal(t, 1, c.net.PoolStats().Frames) // one frame, reused each time
	c.a.Send(1, make([]byte, 64))
	c.eng.Run(sim.MaxTime)
	require.Len(t, c.kb.got, 2)
	assert.Nil(t, c.kb.got[1].hops)
	assert.Equal(t, 1, c.net.PoolStats().Frames)
}

// SetINT copies the records: changing the caller's slice afterwards does
// not change the frame's; more than MaxINTHops records panic; SetINT(nil)
// clears them.
func TestFrameSetINT(t *testing.T) {
	eng := sim.NewEngine(0)
	net := sim.NewNetwork(eng, 1)
	f := net.AllocFrame(10)
	hops := []sim.INTHop{{TS: 5, QLen: 6, TxBytes: 7, RateBps: 8}, {TS: 9}}
	f.SetINT(hops)
	hops[0].TS = 100
	assert.Equal(t, []sim.INTHop{{TS: 5, QLen: 6, TxBytes: 7, RateBps: 8}, {TS: 9}}, f.INT())
	assert.PanicsWithValue(t, "sim: Frame.SetINT: 9 records, at most MaxINTHops (8)", func() {
		f.SetINT(make([]sim.INTHop, sim.MaxINTHops+1))
	})
	f.SetINT(make([]sim.INTHop, sim.MaxINTHops))
	assert.Len(t, f.INT(), sim.MaxINTHops)
	f.SetINT(nil)
	assert.Empty(t, f.INT())
}

// A plain Endpoint gets Receive for frames with records; an INTEndpoint gets
// ReceiveINT with no records for frames that did not collect, and for frames
// that collect through switches with INT off.
func TestINTDelivery(t *testing.T) {
	c := newINTChain(t)
	k := &sink{}
	c.b.SetEndpoint(k)
	c.send(c.a, 1, 100, 1, true)
	c.eng.Run(sim.MaxTime)
	require.Len(t, k.got, 1)
	assert.Equal(t, byte(1), k.got[0].frame[0])

	c.b.SetEndpoint(c.kb)
	c.send(c.a, 1, 100, 2, false)
	c.sw1.SetINT(false)
	c.sw2.SetINT(false)
	assert.False(t, c.sw1.INT())
	c.send(c.a, 1, 100, 3, true)
	c.eng.Run(sim.MaxTime)
	require.Len(t, c.kb.got, 2)
	for i, g := range c.kb.got {
		assert.Equal(t, byte(i+2), g.frame[0])
		assert.Nil(t, g.hops, "frame %d", i+2)
	}

	// Only sw2 on: one record.
	c.sw2.SetINT(true)
	c.send(c.a, 1, 100, 4, true)
	c.eng.Run(sim.MaxTime)
	require.Len(t, c.kb.got, 3)
	require.Len(t, c.kb.got[2].hops, 1)
	assert.Equal(t, int64(25e9), c.kb.got[2].hops[0].RateBps)
}

// A duplicated frame carries the same records as the original; the Tap
// sees the plain frame bytes.
func TestINTDuplicateAndTap(t *testing.T) {
	c := newINTChain(t)
	out := c.sw2.Port(1)
	out.Link().SetFaults(out.Direction(), sim.Faults{Duplicate: 1})
	var tapped [][]byte
	c.net.Tap = func(now sim.Time, link int, dir sim.Direction, frame []byte) {
		tapped = append(tapped, append([]byte(nil), frame...))
	}
	c.send(c.a, 1, 100, 7, true)
	c.eng.Run(sim.MaxTime)
	require.Len(t, c.kb.got, 2)
	require.Len(t, c.kb.got[0].hops, 2)
	assert.Equal(t, c.kb.got[0].hops, c.kb.got[1].hops)
	assert.Equal(t, c.kb.got[0].frame, c.kb.got[1].frame)
	want := make([]byte, 100)
	want[0] = 7
	require.Len(t, tapped, 3) // a, sw1, sw2
	for _, f := range tapped {
		assert.Equal(t, want, f)
	}
}

// With INT on both switches, a data frame that collects and its echoed
// reply allocate nothing once the pool and queues have their size.
func TestINTZeroAllocs(t *testing.T) {
	c := newINTChain(t)
	c.kb.reply = func(now sim.Time, frame []byte, hops []sim.INTHop) {
		r := c.net.AllocFrame(64)
		r.SetINT(hops)
		c.b.SendFrame(0, r)
	}
	n := 0
	c.ka.reply = func(now sim.Time, frame []byte, hops []sim.INTHop) {
		if len(hops) != 2 {
			t.Errorf("reply with %d records", len(hops))
		}
		n++
	}
	run := func() {
		for i := 0; i < 4; i++ {
			f := c.net.AllocFrame(1000)
			f.SetCollectINT(true)
			c.a.SendFrame(1, f)
		}
		c.eng.Run(sim.MaxTime)
	}
	run()
	c.ka.got, c.kb.got = make([]intGot, 0, 1024), make([]intGot, 0, 1024)
	// The sinks copy what they receive; count only the network's own.
	ka, kb := c.ka, c.kb
	c.a.SetEndpoint(&countINT{inner: ka})
	c.b.SetEndpoint(&countINT{inner: kb})
	allocs := testing.AllocsPerRun(100, run)
	assert.Zero(t, allocs)
	assert.Equal(t, 4*(1+1+100), n) // the first run, AllocsPerRun's warm-up, 100 runs
}

// countINT passes ReceiveINT to inner's reply without copying anything.
type countINT struct{ inner *intSink }

func (c *countINT) Receive(now sim.Time, frame []byte) {}

func (c *countINT) ReceiveINT(now sim.Time, frame []byte, hops []sim.INTHop) {
	c.inner.reply(now, frame, hops)
}
