// Package sim is the discrete-event engine and network model of rocekit's RC
// simulator: integer-picosecond time, an allocation-free event queue, and
// hosts, switches and links that carry real RoCEv2 frames as []byte with
// deterministic, seeded faults. In spirit it follows htsim (integer
// picoseconds, one event queue that does not allocate) and the test network
// of etcd-io/raft (drop and delay decided per link).
//
// # Time and events
//
// Time is an int64 of picoseconds, so serialisation times are exact:
// TxTime(1024, 100e9) is 81920 ps. An Engine holds the clock and the pending
// events; Schedule(at, h, kind, a) arranges for h.Handle(Event{...}) to run
// at time at. Events run in order of time, and in scheduling order among
// equal times, so the same schedule always gives the same run. An event is a
// small struct stored by value (time, handler, kind and an integer);
// nothing is allocated per event once the queue has reached its size. A handler that wants a timer it may cancel keeps a generation
// number, passes it as the event's A, and ignores events whose A is stale.
//
// The queue is a radix heap with 4-bit digits: the simulator's clock never
// goes back, which lets the queue bucket events by the highest digit in which
// their time differs from the last one removed, move each event only a few
// times toward the front, and keep FIFO order among equal times without
// sequence numbers. Measured with cachegrind on BenchmarkEventQueue, it
// executes about 580 instructions per event (handler included) with 1,000
// pending events, on par with a 4-ary heap of (time, sequence, slot) keys
// plus a payload slab (about 640), and about 620 with 100,000 pending, where
// the heap needed over three times as many; a binary radix heap needed 640
// and 830. In front of it, a ring of 16 events sorted on insertion holds
// the earliest ones (see Engine): the few events one or two connections
// keep pending never reach the heap (the one-QP stream runs about 1.09x as
// fast), and with many pending the heap's first bucket moves into the ring
// whole once it is small enough, instead of being split further.
//
// # Network
//
// A Network, driven by an Engine, has Hosts (one Port and an Endpoint that
// receives frames), Switches (several Ports, a forwarding table or function,
// store-and-forward) and Links (a bandwidth, a propagation delay, and for each
// direction a fault model, a dead switch and Counters). A Port serialises one
// frame at a time at its link's rate; later frames wait in its FIFO output
// queue, which may have a byte limit (drop-tail) and an ECN threshold K above
// which joining frames are passed to Network.MarkCE. The timing of a frame
// over one link is its serialisation time plus the propagation delay; a
// switch forwards a frame once its last bit has arrived. A switch may be
// lossless (Switch.SetPFC): it pauses the sender on an input port while
// more than XOff bytes that came in by that port are inside it, and resumes
// it at XOn, with PFC frames shown to the Tap.
//
// The network does not look inside frames. It hands every arriving frame to
// the host's Endpoint, which checks the ICRC itself; a switch routes by the
// destination number the sender passed to Host.Send, or by a Forward function
// that may parse the frame; ECN marking is delegated to the MarkCE hook.
//
// # Faults
//
// Each direction of each link has its own Faults: independent loss,
// Gilbert-Elliott burst loss, reordering (an extra random delay up to a bound),
// duplication (the copy follows the original) and corruption (one random bit
// flipped; the frame is still delivered, for the receiver's ICRC check to
// catch). Link.SetDead and SetDeadAt kill and revive a direction at a given
// time. Every random decision comes from a math/rand/v2 PCG stream of its own,
// one per fault per link direction, seeded from the scenario seed and the
// link's name: the same seed gives the same run, byte for byte, and adding a
// link or changing one fault does not disturb the decisions of the others.
//
// # Frame ownership
//
// Frame buffers belong to the network's pool. Host.Send copies the caller's
// bytes into a pooled buffer (Network.AllocFrame with Host.SendFrame avoids
// the copy and transfers ownership). From then on the network owns the frame:
// it returns the buffer to the pool when the frame is dropped, or when the
// receiving Endpoint's Receive returns. The slice passed to Receive, Tap,
// OnDrop and MarkCE is valid only during that call; keep a copy of anything
// needed later. Once the pool has as many buffers as the peak number of
// frames in flight, the network allocates nothing.
//
// # Example
//
// Two hosts on a 100 Gb/s link with 1 us of propagation delay, one way lossy:
//
//	eng := sim.NewEngine(0)
//	net := sim.NewNetwork(eng, 1) // scenario seed 1
//	b := net.NewHost("b", sim.EndpointFunc(func(now sim.Time, frame []byte) {
//		fmt.Println(now, len(frame)) // 1.08192us 1024
//	}))
//	a := net.NewHost("a", nil)
//	link := net.Connect(a.Port(), b.Port(), sim.LinkConfig{
//		Bandwidth: 100e9,
//		Delay:     sim.Microsecond,
//	})
//	link.SetFaults(sim.BtoA, sim.Faults{Loss: 0.01})
//	a.Send(0, make([]byte, 1024))
//	eng.Run(sim.MaxTime)
//
// Network.Tap sees every frame put on a wire, with its link and direction;
// it is the place to write a pcap.
package sim
