package roce

import (
	"math"
	"math/bits"

	"github.com/rocekit/rocekit/sim"
)

// Histogram is a fixed-size log-linear histogram of durations in the manner
// of HdrHistogram: values below 128 ps have a bucket each, larger ones fall
// in one of 64 linear sub-buckets of their power of two, so a reported
// quantile is within 1/64 (1.6%) of the true value. It holds 3,712 counters
// (29 KiB) whatever the number of samples, and Record allocates nothing. The
// mean, minimum and maximum are exact. The zero Histogram is empty and ready.
type Histogram struct {
	counts     [histBuckets]uint64
	n          uint64
	sumHi      uint64 // 128-bit sum of picoseconds
	sumLo      uint64
	minV, maxV sim.Time
}

const (
	histSubBits = 6
	histSub     = 1 << histSubBits                        // sub-buckets per power of two
	histLinear  = 2 * histSub                             // values below this have their own bucket
	histBuckets = histLinear + (63-histSubBits-1)*histSub // shifts 1..56
)

func histIndex(v uint64) int {
	if v < histLinear {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits - 1 // >= 1
	return histLinear + (shift-1)*histSub + int(v>>shift) - histSub
}

// histBounds returns the smallest and largest value of bucket i.
func histBounds(i int) (lo, hi uint64) {
	if i < histLinear {
		return uint64(i), uint64(i)
	}
	shift := (i-histLinear)/histSub + 1
	m := uint64((i-histLinear)%histSub + histSub)
	return m << shift, (m+1)<<shift - 1
}

// Record adds one duration; negative ones count as 0.
func (h *Histogram) Record(d sim.Time) {
	if d < 0 {
		d = 0
	}
	v := uint64(d)
	h.counts[histIndex(v)]++
	if h.n == 0 || d < h.minV {
		h.minV = d
	}
	if d > h.maxV {
		h.maxV = d
	}
	h.n++
	var c uint64
	h.sumLo, c = bits.Add64(h.sumLo, v, 0)
	h.sumHi += c
}

// Count returns the number of samples.
func (h *Histogram) Count() uint64 { return h.n }

// Min and Max return the smallest and largest sample (0 when empty).
func (h *Histogram) Min() sim.Time { return h.minV }

// Max returns the largest sample.
func (h *Histogram) Max() sim.Time { return h.maxV }

// Mean returns the exact mean (0 when empty).
func (h *Histogram) Mean() sim.Time {
	if h.n == 0 {
		return 0
	}
	if h.sumHi == 0 {
		return sim.Time(h.sumLo / h.n)
	}
	return sim.Time(math.Round((float64(h.sumHi)*0x1p64 + float64(h.sumLo)) / float64(h.n)))
}

// Quantile returns the value at quantile q in [0, 1]: the middle of the
// bucket holding the ceil(q*n)-th smallest sample, clamped to the exact
// minimum and maximum; the smallest and largest samples are exact. It is 0
// when empty.
func (h *Histogram) Quantile(q float64) sim.Time {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = min(max(rank, 1), h.n)
	switch rank {
	case 1:
		return h.minV
	case h.n:
		return h.maxV
	}
	var seen uint64
	for i := range h.counts {
		seen += h.counts[i]
		if seen >= rank {
			lo, hi := histBounds(i)
			v := sim.Time(lo + (hi-lo)/2)
			return min(max(v, h.minV), h.maxV)
		}
	}
	return h.maxV
}

// Merge adds the samples of o.
func (h *Histogram) Merge(o *Histogram) {
	if o.n == 0 {
		return
	}
	for i, c := range o.counts {
		h.counts[i] += c
	}
	if h.n == 0 || o.minV < h.minV {
		h.minV = o.minV
	}
	h.maxV = max(h.maxV, o.maxV)
	h.n += o.n
	var c uint64
	h.sumLo, c = bits.Add64(h.sumLo, o.sumLo, 0)
	h.sumHi += o.sumHi + c
}
