package workload_test

import (
	"fmt"

	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/workload"
)

// A forward pass that waits for an all-gather of the parameters, then a
// backward pass whose all-reduce the optimizer waits for, laid out with
// durations given by hand (Run gives them from the fabric).
func ExampleSchedule() {
	w, err := workload.Parse([]byte(`{"items": [
  {"op": "allgather", "bytes": "8MB", "wait": true},
  {"compute_us": 300},
  {"op": "allreduce", "bytes": "8MB"},
  {"barrier": true},
  {"compute_us": 20}]}`))
	if err != nil {
		panic(err)
	}
	colls := w.Colls()
	tl, err := workload.Schedule(w, map[workload.Coll]sim.Time{
		colls[0]: 600 * sim.Microsecond, colls[1]: 1200 * sim.Microsecond})
	if err != nil {
		panic(err)
	}
	for _, c := range tl.Colls {
		fmt.Printf("%-26s issued %v, start %v, end %v\n", w.Items[c.Item].Coll, c.Issued, c.Start, c.End)
	}
	st := tl.Steps[0]
	fmt.Printf("step %v: compute %v, exposed %v (%.1f%%)\n", st.Time, st.Compute, st.Exposed, 100*st.ExposedShare())
	// Output:
	// allgather 8MB auto float   issued 0s, start 0s, end 600us
	// allreduce 8MB auto float   issued 900us, start 900us, end 2.1ms
	// step 2.12ms: compute 320us, exposed 1.8ms (84.9%)
}
