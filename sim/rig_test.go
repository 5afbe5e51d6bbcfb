package sim_test

import "github.com/rocekit/rocekit/sim"

// priorityRig is a switch with several priorities, RED marking (every
// frame ECN-capable), PFC on priorities 3 and 5 and a shared buffer: two
// senders keep 64 frames of four priorities (0, 3, 5, 6) in flight into a
// port of half their rate, each delivery releasing one send. newPriorityRig
// runs it until 20,000 frames have been delivered, into its steady state.
type priorityRig struct {
	eng       *sim.Engine
	sw        *sim.Switch
	delivered int
}

func newPriorityRig() *priorityRig {
	r := &priorityRig{eng: sim.NewEngine(1024)}
	net := sim.NewNetwork(r.eng, 1)
	net.Classify = classify
	net.MarkCE = func([]byte) bool { return true }
	r.sw = net.NewSwitch("sw", 3, sim.PortConfig{QueueLimit: 1 << 20})
	r.sw.SetPFC(sim.PFCConfig{XOff: 4000, XOn: 2000, Priorities: 1<<3 | 1<<5})
	r.sw.SetBuffer(sim.BufferConfig{Bytes: 1 << 20, Alpha: 1})
	frames := [4][]byte{prioFrame(0, 0, 1024), prioFrame(0, 3, 1024), prioFrame(0, 5, 1024), prioFrame(0, 6, 1024)}
	var src0, src1 *sim.Host
	dst := net.NewHost("dst", sim.EndpointFunc(func(now sim.Time, f []byte) {
		r.delivered++
		if r.delivered&1 == 0 {
			src0.Send(2, frames[r.delivered>>1&3])
		} else {
			src1.Send(2, frames[(r.delivered>>1+2)&3])
		}
	}))
	src0 = net.NewHost("src0", nil)
	src1 = net.NewHost("src1", nil)
	fast := sim.LinkConfig{Bandwidth: 100e9, Delay: sim.Microsecond}
	net.Connect(src0.Port(), r.sw.Port(0), fast)
	net.Connect(src1.Port(), r.sw.Port(1), fast)
	net.Connect(dst.Port(), r.sw.Port(2), sim.LinkConfig{Bandwidth: 50e9, Delay: sim.Microsecond})
	r.sw.SetRoute(2, 2)
	for i := 0; i < sim.NumPriorities; i++ {
		r.sw.Port(2).SetRED(i, sim.RED{KMin: 2000, KMax: 20000, PMax: 0.2})
	}
	for i := 0; i < 32; i++ {
		src0.Send(2, frames[i&3])
		src1.Send(2, frames[(i+2)&3])
	}
	for r.delivered < 20000 {
		r.eng.Step()
	}
	return r
}
