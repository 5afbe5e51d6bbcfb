package stim_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocekit/rocekit/stim"
)

// Write two frames as AXI-Stream text at width 64, byte order le.
func ExampleNewAXISWriter() {
	w, err := stim.NewAXISWriter(os.Stdout, stim.Options{Width: 64, Order: stim.LE, NoHeader: true})
	if err != nil {
		panic(err)
	}
	w.WriteFrame([]byte{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09})
	w.WriteFrame([]byte{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7})
	if err := w.Close(); err != nil {
		panic(err)
	}
	// Output:
	// 0706050403020100 ff 0
	// 0000000000000908 03 1
	// a7a6a5a4a3a2a1a0 ff 1
}

// Create the $readmemh files of a stream and read them back.
func ExampleCreate() {
	dir, _ := os.MkdirTemp("", "stim")
	defer os.RemoveAll(dir)
	prefix := filepath.Join(dir, "stream")
	w, err := stim.Create(stim.FormatMemh, prefix, stim.Options{Width: 512, Order: stim.BE})
	if err != nil {
		panic(err)
	}
	for _, n := range []int{60, 64, 65} {
		if err := w.WriteFrame(make([]byte, n)); err != nil {
			panic(err)
		}
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	names := stim.Files(stim.FormatMemh, prefix)
	mem, _ := os.Open(names[0])
	defer mem.Close()
	idx, _ := os.Open(names[1])
	defer idx.Close()
	frames, err := stim.ReadMemh(mem, idx, 512, stim.BE)
	fmt.Println(filepath.Base(names[0]), filepath.Base(names[1]), len(frames), err)
	// Output: stream.mem stream.idx.mem 3 <nil>
}

// Read AXI-Stream text; errors name the line.
func ExampleReadAXIS() {
	in := "0706050403020100 ff 0\n0000000000000908 05 1\n"
	_, err := stim.ReadAXIS(strings.NewReader(in), 64, stim.LE)
	fmt.Println(err)
	// Output: stim: axis line 2: tkeep 05 has holes: with byte-order le the kept bytes are the low tkeep bits, contiguous from tkeep[0]
}
