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
// frame at a time at its link's rate; the timing of a frame over one link is
// its serialisation time plus the propagation delay; a switch forwards a
// frame once its last bit has arrived.
//
// Every frame has one of eight priorities (0-7), given once by the
// Network.Classify hook when a host sends it (priority 0 without one) and
// kept at every hop. Each port has one FIFO output queue per priority and
// serves them in strict priority: when the wire is free, the first frame
// of the highest priority that is not paused goes next. Each queue may have
// a byte limit (drop-tail) and ECN marking in the style of RED, decided when
// a frame joins it on the bytes already waiting in that queue: none up to
// KMin, with a probability rising linearly to PMax at KMax, always above
// (fabric-facts §3); a step threshold K is the case KMin = KMax = K, PMax 1.
// A marked frame is passed to Network.MarkCE. The random draws come from a
// PCG stream of the port's own, like the links' faults.
//
// A switch may have a shared buffer (Switch.SetBuffer): every frame in the
// switch takes its bytes from it until the end of its serialisation on the
// way out, a frame that finds it full is dropped (DropBuffer), and a frame
// of a lossy priority may join a queue only up to a dynamic threshold,
// Alpha times the free buffer (Choudhury and Hahne), so that a few busy
// queues leave room for the others. A switch may be lossless on some
// priorities (Switch.SetPFC): per input port and priority, it pauses the
// peer's queue of that priority while more than XOff bytes of it that came
// in by that port are inside, and resumes it at XOn, with real 802.1Qbb
// frames shown to the Tap; the peer's other priorities go on. A paused switch
// port's queue grows until its own switch pauses the port upstream, so
// pauses spread hop by hop back to the senders. PFCHeadroom is the buffer a
// lossless input port needs above XOff. Port.Stats gives what a fabric
// summary needs of each port: frames sent, drops by cause, marks, PFC frames
// both ways, time paused, the largest and the time-weighted mean queue.
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
// # INT
//
// A switch may record in-band network telemetry for congestion control
// such as HPCC (fabric-facts §5): with Switch.SetINT on, a frame that asks
// for it (Frame.SetCollectINT) gets one INTHop from each of the switch's
// egress ports it starts on: the time, the bytes waiting at the port (all
// priorities, not counting the frame), the bytes the port has sent
// including the frame, and the link's rate. Real RoCE NICs carry INT in a
// vendor header; here the records travel beside the frame as simulator
// metadata, up to MaxINTHops of them, held in the Frame itself so that
// nothing is allocated for them. The frame's bytes, and so the Tap and any
// pcap written from it, are the plain RoCEv2 frame; a duplicate carries the
// original's records. A host whose Endpoint is an INTEndpoint receives
// every frame with its records (ReceiveINT); a receiver echoes them to the
// sender by attaching them to its acknowledgement with Frame.SetINT, and
// switches add nothing to that unless it too asks to collect.
//
// # Frame ownership
//
// Frame buffers belong to the network's pool. Host.Send copies the caller's
// bytes into a pooled buffer (Network.AllocFrame with Host.SendFrame avoids
// the copy and transfers ownership). From then on the network owns the frame:
// it returns the buffer to the pool when the frame is dropped, or when the
// receiving Endpoint's Receive (or ReceiveINT) returns. The slices passed
// to Receive, ReceiveINT, Tap, OnDrop and MarkCE are valid only during that
// call; keep a copy of anything needed later. Once the pool has as many
// buffers as the peak number of frames in flight, the network allocates
// nothing. A frame from the pool carries no INT records and does not
// collect them.
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
