package sim_test

import (
	"fmt"
	"math/bits"
	"testing"
	"time"

	"github.com/rocekit/rocekit/sim"
)

// rescheduler is a handler that, each time it runs, schedules one new event
// at a pseudo-random time up to span after now, keeping the number of
// pending events constant.
type rescheduler struct {
	eng  *sim.Engine
	x    uint64 // xorshift state
	span uint64
}

func (r *rescheduler) next() sim.Time {
	r.x ^= r.x << 13
	r.x ^= r.x >> 7
	r.x ^= r.x << 17
	hi, _ := bits.Mul64(r.x, r.span) // uniform in [0, span) without a division
	return sim.Time(1 + hi)
}

func (r *rescheduler) Handle(ev sim.Event) {
	r.eng.Schedule(ev.At+r.next(), r, ev.Kind, ev.A+1)
}

// newSteadyQueue returns an engine holding pending events, each of which
// reschedules itself, run long enough for its buffers to reach steady size.
func newSteadyQueue(pending int) *sim.Engine {
	eng := sim.NewEngine(pending)
	r := &rescheduler{eng: eng, x: 0x9e3779b97f4a7c15, span: 1_000_000}
	for i := 0; i < pending; i++ {
		eng.Schedule(r.next(), r, 0, 0)
	}
	for i := 0; i < 20*pending; i++ {
		eng.Step()
	}
	return eng
}

// BenchmarkEventQueue processes events from a queue holding a steady number
// of pending events (8, as one or two connections keep, in the Engine's
// small ring; 1,000 or 100,000 in its radix heap); each event schedules one
// new event at a uniformly random time 1 ps to 1 us later. One op is one
// event.
func BenchmarkEventQueue(b *testing.B) {
	for _, pending := range []int{8, 1000, 100000} {
		var eng *sim.Engine // built once, on the first call: b.Run calls again with larger b.N
		b.Run(fmt.Sprintf("pending=%d", pending), func(b *testing.B) {
			if eng == nil {
				eng = newSteadyQueue(pending)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				eng.Step()
			}
			el := time.Since(start)
			b.StopTimer()
			if eng.Pending() != pending {
				b.Fatalf("pending %d, want %d", eng.Pending(), pending)
			}
			b.ReportMetric(float64(b.N)/el.Seconds(), "events/s")
		})
	}
}

// BenchmarkLinkFrames sends 1024-byte frames from one host through a switch
// to another over two 100 Gb/s links, with 32 frames kept in flight (each
// delivery releases the next send). One op is one frame delivered end to end:
// four events (two serialisations, two arrivals), two link traversals and a
// forwarding decision.
func BenchmarkLinkFrames(b *testing.B) {
	eng := sim.NewEngine(1024)
	net := sim.NewNetwork(eng, 1)
	sw := net.NewSwitch("sw", 2, sim.PortConfig{QueueLimit: 1 << 20, ECNThreshold: 1 << 19})
	var src *sim.Host
	frame := make([]byte, 1024)
	delivered := 0
	dst := net.NewHost("dst", sim.EndpointFunc(func(now sim.Time, f []byte) {
		delivered++
		src.Send(1, frame)
	}))
	src = net.NewHost("src", nil)
	cfg := sim.LinkConfig{Bandwidth: 100e9, Delay: sim.Microsecond}
	net.Connect(src.Port(), sw.Port(0), cfg)
	net.Connect(dst.Port(), sw.Port(1), cfg)
	sw.SetRoute(1, 1)
	for i := 0; i < 32; i++ {
		src.Send(1, frame)
	}
	for delivered < 10000 { // warm up the pool and the queue
		eng.Step()
	}
	el := measureFrames(b, eng, &delivered)
	b.ReportMetric(float64(b.N)*1024*8/el.Seconds()/1e9, "sim-Gb/s")
}

// BenchmarkPayloadCopy copies a 4 KiB payload between two buffers whose
// starts are on a cache line (aligned) or 70 bytes past one (where the
// payload of a frame built at an arbitrary address starts): why
// Network.AllocFrameAligned exists.
func BenchmarkPayloadCopy(b *testing.B) {
	src := make([]byte, 8192)
	dst := make([]byte, 8192) // large allocations: both start on a page
	for _, off := range []int{0, 70} {
		b.Run(fmt.Sprintf("src+%d", off), func(b *testing.B) {
			b.SetBytes(4096)
			for i := 0; i < b.N; i++ {
				copy(dst[:4096], src[off:off+4096])
			}
		})
	}
}

// BenchmarkSwitchPriorities is BenchmarkLinkFrames with what a fabric
// switch does on: two senders keep 64 frames of four priorities (0, 3, 5,
// 6) in flight through a switch with RED on every priority, PFC on 3 and 5
// and a shared buffer, into a port of half their rate. One op is one frame
// delivered.
func BenchmarkSwitchPriorities(b *testing.B) {
	r := newPriorityRig()
	eng, delivered := r.eng, &r.delivered
	measureFrames(b, eng, delivered)
}

// intFunc adapts a function to an INTEndpoint.
type intFunc func(now sim.Time, frame []byte, hops []sim.INTHop)

func (f intFunc) Receive(now sim.Time, frame []byte) { f(now, frame, nil) }

func (f intFunc) ReceiveINT(now sim.Time, frame []byte, hops []sim.INTHop) { f(now, frame, hops) }

// BenchmarkINTFrames is BenchmarkLinkFrames with INT on at the switch and
// every frame collecting it: the cost of one record per hop and of delivery
// by ReceiveINT. One op is one frame delivered with its record.
func BenchmarkINTFrames(b *testing.B) {
	eng := sim.NewEngine(1024)
	net := sim.NewNetwork(eng, 1)
	sw := net.NewSwitch("sw", 2, sim.PortConfig{QueueLimit: 1 << 20, ECNThreshold: 1 << 19})
	sw.SetINT(true)
	var src *sim.Host
	frame := make([]byte, 1024)
	send := func() {
		f := net.AllocFrame(len(frame))
		copy(f.Data, frame)
		f.SetCollectINT(true)
		src.SendFrame(1, f)
	}
	delivered := 0
	var qlen int
	dst := net.NewHost("dst", intFunc(func(now sim.Time, f []byte, hops []sim.INTHop) {
		delivered++
		qlen += hops[0].QLen
		send()
	}))
	src = net.NewHost("src", nil)
	cfg := sim.LinkConfig{Bandwidth: 100e9, Delay: sim.Microsecond}
	net.Connect(src.Port(), sw.Port(0), cfg)
	net.Connect(dst.Port(), sw.Port(1), cfg)
	sw.SetRoute(1, 1)
	for i := 0; i < 32; i++ {
		send()
	}
	for delivered < 10000 {
		eng.Step()
	}
	measureFrames(b, eng, &delivered)
}

// measureFrames steps eng until b.N more frames are delivered (counted in
// *delivered by the benchmark's endpoint), reports frames per second and
// no allocations, and returns the time it took.
func measureFrames(b *testing.B, eng *sim.Engine, delivered *int) time.Duration {
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for target := *delivered + b.N; *delivered < target; {
		eng.Step()
	}
	el := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/el.Seconds(), "frames/s")
	return el
}
