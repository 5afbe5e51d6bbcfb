package decode_test

import (
	"fmt"
	"os"

	"github.com/rocekit/rocekit/decode"
)

// Every frame of a capture in order, with its ICRC check and the
// analysis' warnings, then the per-connection summary.
func Example() {
	summary, err := decode.Decode("trace.pcap", decode.Options{}, func(f *decode.Frame) error {
		if f.ICRC.Checked && !f.ICRC.OK {
			fmt.Printf("frame %d: bad ICRC\n", f.Record.Index)
		}
		for _, w := range f.Warnings {
			fmt.Printf("frame %d: %s\n", f.Record.Index, w)
		}
		return nil
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	summary.WriteText(os.Stdout)
}

// The output of every frame formatted on every core at once and written in
// file order.
func ExampleNew() {
	d := decode.New(decode.Options{
		Append: func(w int, b []byte, f *decode.Frame) []byte {
			return fmt.Appendf(b, "%d %d bytes\n", f.Record.Index, f.Record.OrigLen)
		},
		Out: os.Stdout,
	})
	for _, path := range []string{"a.pcap", "b.pcapng.gz"} {
		if err := d.File(path); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
	d.Summary().WriteText(os.Stdout)
}
