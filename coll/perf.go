package coll

import (
	"fmt"
	"io"
	"math"
)

// AlgBW returns the algorithm bandwidth of nccl-tests (doc/PERFORMANCE.md;
// fabric-facts §7) in GB/s (1e9 bytes per second): bytes, the size as
// Bytes gives it, over the time in seconds.
func AlgBW(bytes int64, seconds float64) float64 {
	return float64(bytes) / seconds / 1e9
}

// BusFactor returns the factor of nccl-tests that turns algorithm
// bandwidth into bus bandwidth for op over n ranks (fabric-facts §7):
// 2(n-1)/n for all-reduce, (n-1)/n for reduce-scatter, all-gather and
// all-to-all (and scatter and gather, as nccl-tests counts them), 1 for
// broadcast and reduce.
func BusFactor(op Op, n int) float64 {
	switch op {
	case AllReduce:
		return 2 * float64(n-1) / float64(n)
	case Broadcast, Reduce:
		return 1
	}
	return float64(n-1) / float64(n)
}

// BusBW returns the bus bandwidth of nccl-tests in GB/s: AlgBW times
// BusFactor, comparable to a link's bandwidth whatever the rank count.
func BusBW(op Op, bytes int64, ranks int, seconds float64) float64 {
	return AlgBW(bytes, seconds) * BusFactor(op, ranks)
}

// AlphaBeta returns the time in seconds the alpha-beta model (Thakur,
// Rabenseifner and Gropp 2005; fabric-facts §7) gives algo carrying out op
// over p ranks on bytes bytes (the size as Bytes gives it), with alpha
// seconds per step, beta seconds per byte sent and gamma seconds per byte
// reduced, one slice (no pipelining):
//
//   - Ring all-reduce: 2(p-1) alpha + 2(p-1)/p n beta + (p-1)/p n gamma.
//   - RHD all-reduce: 2 log2(p) alpha + 2(p-1)/p n beta + (p-1)/p n gamma,
//     plus 2 (alpha + n beta) + n gamma to fold in and out the ranks above
//     the largest power of two when p is not one.
//   - Ring all-gather and reduce-scatter: (p-1) alpha + (p-1)/p n beta
//     (plus (p-1)/p n gamma for reduce-scatter); RHD: log2(p) alpha and the
//     same bytes.
//   - Binomial broadcast: ceil(log2 p) (alpha + n beta); reduce adds
//     ceil(log2 p) n gamma.
//   - Ring (chain) broadcast and reduce, not pipelined: (p-1) (alpha + n
//     beta), plus (p-1) n gamma for reduce.
//   - Direct all-to-all, scatter and gather: alpha + (p-1)/p n beta, the
//     busiest port (every sender's, the root's) moving (p-1)/p n bytes.
//   - Tree all-reduce, pipelined in many chunks: 2 ceil(log2 p) alpha +
//     2 n beta + n gamma; an estimate, not a §7 formula: in a double binary
//     tree a rank sends n/2 up and n down in the tree where it is inner,
//     n/2 up in the other.
//
// It returns NaN for an algorithm that does not serve op at p ranks.
func AlphaBeta(algo Algo, op Op, p int, bytes int64, alpha, beta, gamma float64) float64 {
	if p < 1 || !Supports(algo, op, p) || algo == Auto {
		return math.NaN()
	}
	n := float64(bytes)
	fp := float64(p)
	frac := (fp - 1) / fp
	lg := float64(log2ceil(p))
	switch algo {
	case Ring:
		switch op {
		case AllReduce:
			return 2*(fp-1)*alpha + 2*frac*n*beta + frac*n*gamma
		case AllGather:
			return (fp-1)*alpha + frac*n*beta
		case ReduceScatter:
			return (fp-1)*alpha + frac*n*beta + frac*n*gamma
		case Broadcast:
			return (fp - 1) * (alpha + n*beta)
		case Reduce:
			return (fp - 1) * (alpha + n*beta + n*gamma)
		}
	case RHD:
		switch op {
		case AllReduce:
			p2 := pow2floor(p)
			f2 := float64(p2)
			t := 2*float64(log2ceil(p2))*alpha + 2*(f2-1)/f2*n*beta + (f2-1)/f2*n*gamma
			if p2 < p {
				t += 2*(alpha+n*beta) + n*gamma
			}
			return t
		case AllGather:
			return lg*alpha + frac*n*beta
		case ReduceScatter:
			return lg*alpha + frac*n*beta + frac*n*gamma
		}
	case Binomial:
		if op == Reduce {
			return lg * (alpha + n*beta + n*gamma)
		}
		return lg * (alpha + n*beta)
	case Direct:
		if p == 1 {
			return 0
		}
		return alpha + frac*n*beta
	case Tree:
		if p == 1 {
			return 0
		}
		return 2*lg*alpha + 2*n*beta + n*gamma
	}
	return math.NaN()
}

// Result is one measurement of a collective: its time in seconds and its
// number of wrong elements.
type Result struct {
	Seconds float64
	Wrong   int
}

// Row is one line of FormatTable: a collective's size and configuration,
// and its out-of-place and, if HasInPlace, in-place results.
type Row struct {
	Op         Op
	Ranks      int
	Count      int // elements, as Config.Count
	DType      DType
	RedOp      RedOp // printed only for a reducing Op
	Root       int   // printed only for a rooted Op
	OutOfPlace Result
	InPlace    Result
	HasInPlace bool
}

// FormatTable writes rows as nccl-tests prints its results: a two-line
// header, then per row the size in bytes (as Bytes), the count of elements
// in it (the size over the element size, as nccl-tests counts), the type,
// the reduction ("none" for an operation without one), the root (-1 for an
// operation without one), and for out-of-place and in-place the time in
// microseconds, algbw and busbw in GB/s and #wrong ("N/A" where there is no
// in-place result), and a closing average of the bus bandwidth over the
// out-of-place results (and the in-place ones when present).
func FormatTable(w io.Writer, rows []Row) error {
	ew := &errWriter{w: w}
	ew.printf("#%84s%33s\n", "out-of-place", "in-place")
	ew.printf("#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
		"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong")
	ew.printf("#%11s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n",
		"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "")
	var sum float64
	var nsum int
	for _, r := range rows {
		bytes := Bytes(r.Op, r.Count, r.DType.Size(), r.Ranks)
		red, root := "none", -1
		if r.Op.reduces() {
			red = r.RedOp.String()
		}
		if r.Op.rooted() {
			root = r.Root
		}
		ew.printf("%12d  %12d  %8s  %6s  %6d", bytes, bytes/int64(r.DType.Size()), r.DType, red, root)
		for k, res := range []Result{r.OutOfPlace, r.InPlace} {
			if k == 1 && !r.HasInPlace {
				ew.printf("  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A")
				continue
			}
			if !(res.Seconds > 0) { // did not complete: no time, no bandwidth
				ew.printf("  %7s  %6s  %6s  %6d", "N/A", "N/A", "N/A", res.Wrong)
				continue
			}
			bus := BusBW(r.Op, bytes, r.Ranks, res.Seconds)
			ew.printf("  %7s  %6.2f  %6.2f  %6d", usec(res.Seconds*1e6), AlgBW(bytes, res.Seconds), bus, res.Wrong)
			sum += bus
			nsum++
		}
		ew.printf("\n")
	}
	if nsum > 0 {
		sum /= float64(nsum)
	}
	ew.printf("# Avg bus bandwidth    : %g \n", math.Round(sum*1e6)/1e6)
	return ew.err
}

// usec formats a time in microseconds as nccl-tests does: two decimals
// below 10 ms, one below 100 ms, none above.
func usec(us float64) string {
	switch {
	case us < 1e4:
		return fmt.Sprintf("%7.2f", us)
	case us < 1e5:
		return fmt.Sprintf("%7.1f", us)
	}
	return fmt.Sprintf("%7.0f", us)
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, a ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, a...)
	}
}
