package sim_test

import (
	"bytes"
	"encoding/binary"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/sim"
)

// arrival is a frame received by a sink, copied.
type arrival struct {
	at    sim.Time
	frame []byte
}

// sink is an Endpoint that keeps a copy of everything it receives.
type sink struct {
	got []arrival
}

func (s *sink) Receive(now sim.Time, frame []byte) {
	s.got = append(s.got, arrival{now, bytes.Clone(frame)})
}

// seqs returns the sequence numbers (first 4 bytes) of the received frames.
func (s *sink) seqs() []uint32 {
	var out []uint32
	for _, a := range s.got {
		out = append(out, binary.BigEndian.Uint32(a.frame))
	}
	return out
}

// numbered returns a frame of size bytes whose first 4 bytes are seq and
// whose other bytes are a pattern of seq.
func numbered(seq uint32, size int) []byte {
	f := make([]byte, size)
	for i := range f {
		f[i] = byte(int(seq)*7 + i)
	}
	binary.BigEndian.PutUint32(f, seq)
	return f
}

// pair is two hosts on one link; a sends, b receives (and the reverse).
type pair struct {
	eng        *sim.Engine
	net        *sim.Network
	a, b       *sim.Host
	sa, sb     *sink
	link       *sim.Link
	bw         int64
	propagaton sim.Time
}

func newPair(seed uint64, bw int64, delay sim.Time) *pair {
	p := &pair{eng: sim.NewEngine(0), sa: &sink{}, sb: &sink{}, bw: bw, propagaton: delay}
	p.net = sim.NewNetwork(p.eng, seed)
	p.a = p.net.NewHost("a", p.sa)
	p.b = p.net.NewHost("b", p.sb)
	p.link = p.net.Connect(p.a.Port(), p.b.Port(), sim.LinkConfig{Bandwidth: bw, Delay: delay})
	return p
}

// sendN sends n numbered frames of size bytes from a, back to back at the
// current time.
func (p *pair) sendN(n, size int) {
	for i := 0; i < n; i++ {
		p.a.Send(0, numbered(uint32(i), size))
	}
}

// A 1024-byte frame on a 100 Gb/s link takes 81.92 ns to serialise, then the
// propagation delay: it arrives at exactly 81920 ps + delay.
func TestLinkTimingExact(t *testing.T) {
	p := newPair(1, 100e9, 500*sim.Nanosecond)
	require.Equal(t, sim.Time(81920), p.link.TxTime(1024))
	p.eng.Run(3 * sim.Nanosecond) // start at a non-zero time
	frame := numbered(1, 1024)
	require.True(t, p.a.Send(0, frame))
	frame[10] ^= 0xff // the network copied it
	p.eng.Run(sim.MaxTime)
	require.Len(t, p.sb.got, 1)
	assert.Equal(t, 3*sim.Nanosecond+81920+500*sim.Nanosecond, p.sb.got[0].at)
	assert.Equal(t, numbered(1, 1024), p.sb.got[0].frame)
	c := p.link.Counters(sim.AtoB)
	assert.Equal(t, sim.Counters{SentFrames: 1, SentBytes: 1024, DeliveredFrames: 1, DeliveredBytes: 1024}, c)
	assert.Equal(t, sim.Counters{}, p.link.Counters(sim.BtoA))
	assert.Empty(t, p.sa.got)
}

// Frames sent back to back wait in the output queue while the wire is busy:
// the k-th leaves after k serialisation times.
func TestBackToBackQueueing(t *testing.T) {
	p := newPair(1, 100e9, sim.Microsecond)
	sizes := []int{1024, 64, 4096, 1500}
	for i, n := range sizes {
		p.a.Send(0, numbered(uint32(i), n))
	}
	port := p.a.Port()
	assert.True(t, port.Busy())
	assert.Equal(t, 3, port.QueuedFrames(), "the first frame is on the wire")
	assert.Equal(t, 64+4096+1500, port.QueuedBytes())
	p.eng.Run(sim.MaxTime)
	require.Len(t, p.sb.got, len(sizes))
	var done sim.Time
	for i, n := range sizes {
		done += sim.TxTime(n, 100e9)
		assert.Equal(t, done+sim.Microsecond, p.sb.got[i].at, "frame %d", i)
		assert.Equal(t, numbered(uint32(i), n), p.sb.got[i].frame)
	}
	assert.False(t, port.Busy())
	assert.Zero(t, port.QueuedBytes())
	assert.Equal(t, 64+4096+1500, port.PeakQueuedBytes())
}

// The two directions of a link are independent: frames cross at full rate.
func TestFullDuplex(t *testing.T) {
	p := newPair(1, 25e9, 100*sim.Nanosecond)
	p.a.Send(0, numbered(1, 1000))
	p.b.Send(0, numbered(2, 1000))
	p.eng.Run(sim.MaxTime)
	want := sim.Time(1000*320) + 100*sim.Nanosecond
	require.Len(t, p.sa.got, 1)
	require.Len(t, p.sb.got, 1)
	assert.Equal(t, want, p.sa.got[0].at)
	assert.Equal(t, want, p.sb.got[0].at)
	assert.Equal(t, uint64(1), p.link.Counters(sim.BtoA).DeliveredFrames)
}

// The Tap sees every frame put on the wire, with the time its first bit
// leaves, the link's ID and the direction.
func TestTap(t *testing.T) {
	p := newPair(1, 100e9, sim.Microsecond)
	type tapped struct {
		at   sim.Time
		link int
		dir  sim.Direction
		seq  uint32
	}
	var seen []tapped
	p.net.Tap = func(now sim.Time, link int, dir sim.Direction, frame []byte) {
		seen = append(seen, tapped{now, link, dir, binary.BigEndian.Uint32(frame)})
	}
	p.link.SetFaults(sim.AtoB, sim.Faults{Loss: 1}) // tapped before faults
	p.sendN(2, 1024)
	p.b.Send(0, numbered(9, 100))
	p.eng.Run(sim.MaxTime)
	assert.Equal(t, []tapped{
		{0, 0, sim.AtoB, 0},
		{0, 0, sim.BtoA, 9},
		{81920, 0, sim.AtoB, 1},
	}, seen)
	assert.Empty(t, p.sb.got)
	assert.Equal(t, uint64(2), p.link.Counters(sim.AtoB).LossDrops)
}

func TestEndpointMayReplyAndModify(t *testing.T) {
	eng := sim.NewEngine(0)
	net := sim.NewNetwork(eng, 1)
	got := &sink{}
	a := net.NewHost("a", got)
	var b *sim.Host
	b = net.NewHost("b", sim.EndpointFunc(func(now sim.Time, frame []byte) {
		frame[0] = 0xee  // the endpoint may write the buffer
		b.Send(0, frame) // and send it back: Send copies
	}))
	net.Connect(a.Port(), b.Port(), sim.LinkConfig{Bandwidth: 100e9, Delay: 10})
	a.Send(0, []byte{1, 2, 3})
	eng.Run(sim.MaxTime)
	require.Len(t, got.got, 1)
	assert.Equal(t, []byte{0xee, 2, 3}, got.got[0].frame)
	assert.Equal(t, 2*(3*80+10), int(got.got[0].at))
	assert.Zero(t, net.PoolStats().InUse)
}

func TestSendFrameZeroCopy(t *testing.T) {
	p := newPair(1, 100e9, 0)
	f := p.net.AllocFrame(8)
	copy(f.Data, "rocekit!")
	require.True(t, p.a.SendFrame(0, f))
	g := p.net.AllocFrame(4)
	p.net.FreeFrame(g)
	assert.Panics(t, func() { p.net.FreeFrame(g) }, "double free")
	assert.Panics(t, func() { p.a.SendFrame(0, g) }, "sending a free frame")
	p.eng.Run(sim.MaxTime)
	require.Len(t, p.sb.got, 1)
	assert.Equal(t, []byte("rocekit!"), p.sb.got[0].frame)
	assert.Zero(t, p.net.PoolStats().InUse)
}

// AllocFrameAligned puts Data[at] on a cache line, and the frame keeps
// that alignment on the wire, through a switch and in its duplicates.
func TestAllocFrameAligned(t *testing.T) {
	eng := sim.NewEngine(0)
	net := sim.NewNetwork(eng, 1)
	var mis []uintptr
	var sizes []int
	a := net.NewHost("a", nil)
	b := net.NewHost("b", sim.EndpointFunc(func(now sim.Time, frame []byte) {
		sizes = append(sizes, len(frame))
		at := binary.BigEndian.Uint16(frame) // where the sender aligned it
		mis = append(mis, uintptr(unsafe.Pointer(&frame[at]))&63)
	}))
	sw := net.NewSwitch("sw", 2, sim.PortConfig{})
	la := net.Connect(a.Port(), sw.Port(0), sim.LinkConfig{Bandwidth: 100e9, Delay: 10})
	net.Connect(b.Port(), sw.Port(1), sim.LinkConfig{Bandwidth: 100e9, Delay: 10})
	sw.SetRoute(1, 1)
	la.SetFaults(sim.AtoB, sim.Faults{Duplicate: 1})
	for _, c := range []struct{ size, at int }{{100, 70}, {4166, 54}, {64, 0}, {5000, 5000 - 1}, {9000, 4097}} {
		f := net.AllocFrameAligned(c.size, c.at)
		require.Len(t, f.Data, c.size)
		assert.Zero(t, uintptr(unsafe.Pointer(&f.Data[c.at]))&63, "size %d at %d", c.size, c.at)
		binary.BigEndian.PutUint16(f.Data, uint16(c.at))
		require.True(t, a.SendFrame(1, f))
	}
	eng.Run(sim.MaxTime)
	assert.Equal(t, []int{100, 100, 4166, 4166, 64, 64, 5000, 5000, 9000, 9000}, sizes)
	assert.Equal(t, make([]uintptr, 10), mis)
	assert.Zero(t, net.PoolStats().InUse)
	assert.Panics(t, func() { net.AllocFrameAligned(10, 11) })
	assert.Panics(t, func() { net.AllocFrameAligned(10, -1) })
}

// txSink is an endpoint that is also told when its port finishes a frame.
type txSink struct {
	port *sim.Port
	done []sim.Time
	busy []bool
}

func (s *txSink) Receive(sim.Time, []byte) {}
func (s *txSink) TxDone(now sim.Time) {
	s.done = append(s.done, now)
	s.busy = append(s.busy, s.port.Busy())
}

// A TxNotifier endpoint hears of every end of transmission of its port, at
// the instant it happens, with the port already on to its next frame.
func TestTxNotifier(t *testing.T) {
	eng := sim.NewEngine(0)
	net := sim.NewNetwork(eng, 1)
	ts := &txSink{}
	a := net.NewHost("a", ts)
	ts.port = a.Port()
	b := net.NewHost("b", nil)
	net.Connect(a.Port(), b.Port(), sim.LinkConfig{Bandwidth: 8e9, Delay: 10}) // 1 ns per byte
	a.Send(0, make([]byte, 100))
	a.Send(0, make([]byte, 50))
	eng.Run(sim.MaxTime)
	assert.Equal(t, []sim.Time{100_000, 150_000}, ts.done)
	assert.Equal(t, []bool{true, false}, ts.busy)
	assert.Equal(t, uint64(4), eng.Events(), "two ends of transmission and two arrivals, no more")
	b.SetEndpoint(ts) // SetEndpoint picks up the notifier too; now is 150,010 ps
	b.Send(0, make([]byte, 10))
	eng.Run(sim.MaxTime)
	assert.Equal(t, []sim.Time{100_000, 150_000, 160_010}, ts.done)
}

func TestUnconnectedAndConfigErrors(t *testing.T) {
	eng := sim.NewEngine(0)
	net := sim.NewNetwork(eng, 1)
	var causes []sim.DropCause
	net.OnDrop = func(now sim.Time, link int, dir sim.Direction, cause sim.DropCause, frame []byte) {
		assert.Equal(t, -1, link)
		causes = append(causes, cause)
	}
	a := net.NewHost("", nil)
	assert.Equal(t, "host0", a.Name())
	assert.False(t, a.Send(0, []byte{1}))
	assert.Equal(t, []sim.DropCause{sim.DropUnconnected}, causes)
	assert.Nil(t, a.Port().Peer())

	b := net.NewHost("b", nil)
	cfg := sim.LinkConfig{Bandwidth: 1e9}
	assert.Panics(t, func() { net.Connect(a.Port(), a.Port(), cfg) })
	assert.Panics(t, func() { net.Connect(a.Port(), b.Port(), sim.LinkConfig{}) }, "zero bandwidth")
	assert.Panics(t, func() { net.Connect(a.Port(), b.Port(), sim.LinkConfig{Bandwidth: 1, Delay: -1}) })
	l := net.Connect(a.Port(), b.Port(), cfg)
	assert.Equal(t, "host0--b", l.Name())
	assert.Same(t, b.Port(), a.Port().Peer())
	assert.Same(t, l, b.Port().Link())
	assert.Equal(t, sim.BtoA, b.Port().Direction())
	assert.Panics(t, func() { net.Connect(a.Port(), b.Port(), cfg) }, "already connected")
	c, d := net.NewHost("c", nil), net.NewHost("d", nil)
	assert.Panics(t, func() { net.Connect(c.Port(), d.Port(), sim.LinkConfig{Bandwidth: 1, Name: "host0--b"}) }, "duplicate name")

	assert.Panics(t, func() { l.SetFaults(sim.AtoB, sim.Faults{Loss: 1.5}) })
	assert.Error(t, sim.Faults{Reorder: 0.1}.Validate(), "reorder without delay")
	assert.Error(t, sim.Faults{Burst: sim.GilbertElliott{PBadGood: -0.1}}.Validate())
	assert.NoError(t, sim.Faults{Reorder: 0.1, ReorderDelay: 1}.Validate())
	assert.Equal(t, "A->B", sim.AtoB.String())
	assert.Equal(t, sim.AtoB, sim.BtoA.Reverse())
	assert.Equal(t, "burst", sim.DropBurst.String())
}

// Without faults a link is a FIFO server: frame i starts when it is sent or
// when frame i-1 is done, whichever is later, takes TxTime to serialise and
// arrives Delay later, intact and in order.
func TestLinkMatchesQueueModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		bw := rapid.SampledFrom([]int64{1e9, 25e9, 56e9, 100e9, 400e9}).Draw(t, "bw")
		delay := sim.Time(rapid.Int64Range(0, 5_000_000).Draw(t, "delay"))
		p := newPair(1, bw, delay)
		n := rapid.IntRange(1, 50).Draw(t, "n")
		var want []sim.Time
		var sendAt sim.Time
		var done sim.Time
		for i := 0; i < n; i++ {
			sendAt += sim.Time(rapid.Int64Range(0, 200_000).Draw(t, "gap"))
			size := rapid.IntRange(0, 9000).Draw(t, "size")
			p.eng.Run(sendAt)
			require.True(t, p.a.Send(0, numbered(uint32(i), max(size, 4))))
			done = max(done, sendAt) + sim.TxTime(max(size, 4), bw)
			want = append(want, done+delay)
		}
		p.eng.Run(sim.MaxTime)
		require.Len(t, p.sb.got, n)
		for i, a := range p.sb.got {
			require.Equal(t, want[i], a.at, "frame %d", i)
			require.Equal(t, uint32(i), binary.BigEndian.Uint32(a.frame))
		}
		require.Zero(t, p.net.PoolStats().InUse)
	})
}
