package plot

import (
	"testing"

	"github.com/rocekit/rocekit/decode"
)

// BenchmarkReadCapture reads the trace of 20 1 MiB WRITEs at 1% loss
// (5,633 frames) into its plot series. Reading a capture for plotting is
// not a hot path: the series, and every frame's event between the two
// passes, are kept, so memory grows with the capture (-benchmem: about
// 2.5 MB here, some 440 bytes a frame).
func BenchmarkReadCapture(b *testing.B) {
	path := simCapture(b, 20, "")
	var frames uint64
	for b.Loop() {
		c, err := ReadCapture(path, decode.Options{})
		if err != nil {
			b.Fatal(err)
		}
		frames = c.Summary.Frames
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(frames), "ns/frame")
}
