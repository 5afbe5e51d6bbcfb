package traffic_test

import (
	"fmt"
	"os"

	"github.com/rocekit/rocekit/traffic"
)

func Example() {
	spec, err := traffic.Parse("incast:size=2MB,n=3")
	if err != nil {
		fmt.Println(err)
		return
	}
	flows, err := traffic.Generate(spec, 16, 100e9, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(spec)
	for _, f := range flows {
		fmt.Printf("%d -> %d: %d bytes at %v\n", f.Src, f.Dst, f.Size, f.Start)
	}
	traffic.WriteHPCCFlows(os.Stdout, flows)
	// Output:
	// incast:n=3,size=2MB
	// 1 -> 0: 2000000 bytes at 0s
	// 2 -> 0: 2000000 bytes at 0s
	// 3 -> 0: 2000000 bytes at 0s
	// 3
	// 1 0 3 100 2000000 0.000000000
	// 2 0 3 100 2000000 0.000000000
	// 3 0 3 100 2000000 0.000000000
}

func ExampleCDF_Sample() {
	for _, u := range []float64{0.15, 0.5, 0.97} {
		fmt.Println(traffic.WebSearch.Sample(u))
	}
	fmt.Println(traffic.WebSearch.Mean())
	// Output:
	// 10000
	// 73077
	// 10000000
	// 1.71125e+06
}
