package roce_test

import (
	"fmt"

	"github.com/rocekit/rocekit/roce"
)

// A scenario from JSON: two hosts, a lossy 25 Gb/s link, one QP doing a
// mix of WRITEs, SENDs, READs and atomics. The run is deterministic: the
// same seed always gives these numbers.
func Example() {
	sc, err := roce.ParseScenario([]byte(`{
	  "seed": 1,
	  "hosts": [{"name": "a"}, {"name": "b"}],
	  "links": [{"a": "a", "b": "b", "bandwidth_gbps": 25, "delay_ns": 1000,
	             "faults": {"loss": 0.05}}],
	  "qps": [{"from": "a", "to": "b", "mtu": 1024, "timeout": 8,
	           "work": {"op": "mix", "count": 100, "size": 4000}}]
	}`))
	if err != nil {
		panic(err)
	}
	s, err := roce.New(sc, roce.Options{})
	if err != nil {
		panic(err)
	}
	sum, err := s.Run()
	if err != nil {
		panic(err)
	}
	fmt.Println("completed:", sum.WRCompleted)
	fmt.Println("data intact:", sum.DataIntegrityOK, "in order:", sum.CompletionOrderOK)
	fmt.Println("packets sent:", sum.PacketsSent, "retransmitted:", sum.Retransmissions, "timeouts:", sum.Timeouts)
	fmt.Printf("simulated time: %.1f us\n", sum.SimTimeNS/1000)
	// Output:
	// completed: map[SUCCESS:100]
	// data intact: true in order: true
	// packets sent: 721 retransmitted: 185 timeouts: 0
	// simulated time: 127.7 us
}

// The default scenario of `rocekit sim`, changed before running.
func ExampleDefaultScenario() {
	sc := roce.DefaultScenario()
	sc.QPs[0].Work.Count = 10 // ten 1 MiB WRITEs instead of 2,000
	sc.Links[0].Faults = nil  // no loss
	s, _ := roce.New(sc, roce.Options{})
	sum, _ := s.Run()
	fmt.Println(sum.WRCompleted["SUCCESS"], "WRITEs,", sum.BytesDelivered>>20, "MiB,", sum.Retransmissions, "retransmissions")
	fmt.Printf("goodput %.1f Gb/s\n", sum.GoodputGbps)
	// Output:
	// 10 WRITEs, 10 MiB, 0 retransmissions
	// goodput 98.4 Gb/s
}
