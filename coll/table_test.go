package coll

import (
	"strings"
	"testing"
)

// FormatTable prints nccl-tests' columns; the expected text is written out
// column by column: %12d size, %12d count, %8s type, %6s redop, %6d root,
// then per group %7s time (us), %6.2f algbw, %6.2f busbw, %6d #wrong, two
// spaces between columns.
func TestFormatTable(t *testing.T) {
	rows := []Row{
		// fabric-facts §7's floor: 64e6 bytes in 8.96 ms is 7.14 GB/s of
		// algbw and 12.50 of busbw at 8 ranks.
		{Op: AllReduce, Ranks: 8, Count: 16e6, DType: Float32, RedOp: Sum,
			OutOfPlace: Result{Seconds: 8.96e-3}, InPlace: Result{Seconds: 8.96e-3}, HasInPlace: true},
		// 4096 bytes in 10 us: 0.4096 GB/s, busbw the same for broadcast.
		{Op: Broadcast, Ranks: 4, Count: 1024, DType: Float32, RedOp: Max, Root: 2,
			OutOfPlace: Result{Seconds: 10e-6, Wrong: 3}},
		// All-gather of 256 floats per rank at 4 ranks: 4096 bytes and 1024
		// elements in all; 3/4 of 4.096 GB/s is 3.072.
		{Op: AllGather, Ranks: 4, Count: 256, DType: Float32,
			OutOfPlace: Result{Seconds: 1e-6}, InPlace: Result{Seconds: 2e-6, Wrong: 1}, HasInPlace: true},
	}
	var sb strings.Builder
	if err := FormatTable(&sb, rows); err != nil {
		t.Fatal(err)
	}
	want := "#" + strings.Repeat(" ", 72) + "out-of-place" + strings.Repeat(" ", 25) + "in-place\n" +
		"#       size" + "         count" + "      type" + "   redop" + "    root" +
		"     time" + "   algbw" + "   busbw" + "  #wrong" + "     time" + "   algbw" + "   busbw" + "  #wrong\n" +
		"#        (B)" + "    (elements)" + "          " + "        " + "        " +
		"     (us)" + "  (GB/s)" + "  (GB/s)" + "        " + "     (us)" + "  (GB/s)" + "  (GB/s)" + "        \n" +
		"    64000000" + "      16000000" + "     float" + "     sum" + "      -1" +
		"  8960.00" + "    7.14" + "   12.50" + "       0" + "  8960.00" + "    7.14" + "   12.50" + "       0\n" +
		"        4096" + "          1024" + "     float" + "    none" + "       2" +
		"    10.00" + "    0.41" + "    0.41" + "       3" + "      N/A" + "     N/A" + "     N/A" + "     N/A\n" +
		"        4096" + "          1024" + "     float" + "    none" + "      -1" +
		"     1.00" + "    4.10" + "    3.07" + "       0" + "     2.00" + "    2.05" + "    1.54" + "       1\n" +
		// (12.5 + 12.5 + 0.4096 + 3.072 + 1.536) / 5
		"# Avg bus bandwidth    : 6.00352 \n"
	if got := sb.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
