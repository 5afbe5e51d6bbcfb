package sim_test

import (
	"fmt"

	"github.com/rocekit/rocekit/sim"
)

// Two hosts on a 100 Gb/s link with 1 us of propagation delay: a 1024-byte
// frame takes 81.92 ns to serialise, then 1 us to propagate.
func Example() {
	eng := sim.NewEngine(0)
	net := sim.NewNetwork(eng, 1) // scenario seed 1
	b := net.NewHost("b", sim.EndpointFunc(func(now sim.Time, frame []byte) {
		fmt.Println("b received", len(frame), "bytes at", now)
	}))
	a := net.NewHost("a", nil)
	link := net.Connect(a.Port(), b.Port(), sim.LinkConfig{
		Bandwidth: 100e9,
		Delay:     sim.Microsecond,
	})
	link.SetFaults(sim.BtoA, sim.Faults{Loss: 0.01}) // b -> a is lossy
	net.Tap = func(now sim.Time, link int, dir sim.Direction, frame []byte) {
		fmt.Println("on the wire:", now, "link", link, dir)
	}
	a.Send(0, make([]byte, 1024))
	a.Send(0, make([]byte, 1024))
	eng.Run(sim.MaxTime)
	fmt.Printf("%+v\n", link.Counters(sim.AtoB))
	// Output:
	// on the wire: 0s link 0 A->B
	// on the wire: 81.92ns link 0 A->B
	// b received 1024 bytes at 1.08192us
	// b received 1024 bytes at 1.16384us
	// {SentFrames:2 SentBytes:2048 DeliveredFrames:2 DeliveredBytes:2048 LossDrops:0 BurstDrops:0 DeadDrops:0 QueueDrops:0 QueueDropBytes:0 Duplicated:0 Reordered:0 Corrupted:0 ECNMarked:0 PauseFrames:0 ResumeFrames:0 PausedTime:0s}
}

// An event handler: events run in time order, FIFO among equal times.
func ExampleEngine() {
	eng := sim.NewEngine(0)
	h := sim.HandlerFunc(func(ev sim.Event) {
		fmt.Println(ev.At, "event", ev.A)
	})
	eng.Schedule(2*sim.Nanosecond, h, 0, 1)
	eng.Schedule(sim.Nanosecond, h, 0, 2)
	eng.Schedule(2*sim.Nanosecond, h, 0, 3)
	eng.Run(sim.MaxTime)
	fmt.Println(eng.Events(), "events, now", eng.Now())
	// Output:
	// 1ns event 2
	// 2ns event 1
	// 2ns event 3
	// 3 events, now 2ns
}

// Lossless defaults for a 100 Gb/s port on 1 us links carrying 4096-byte
// frames, from PFCHeadroom: every lossless input port may need XOff plus
// the headroom, so a switch buffer of Bytes leaves each of n ports an XOff
// of Bytes/n minus the headroom, and XOn two frames below it.
func ExamplePFCHeadroom() {
	head := sim.PFCHeadroom(100e9, sim.Microsecond, 4096)
	const buffer, ports = 16 << 20, 32 // 16 MiB shared by 32 ports
	xoff := buffer/ports - head
	fmt.Println("headroom", head, "bytes")
	fmt.Printf("%+v\n", sim.PFCConfig{XOff: xoff, XOn: xoff - 2*4096, Priorities: 1 << 3})
	// Output:
	// headroom 33252 bytes
	// {XOff:491036 XOn:482844 Priorities:8}
}
