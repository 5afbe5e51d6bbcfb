package coll

import (
	"fmt"
	"math"
)

// splitmix64 is the finaliser of SplitMix64 (Steele, Lea, Flood 2014).
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// FillMax is the largest magnitude Fill draws.
const FillMax = 2

// Fill draws rank's input into buf deterministically from seed: element i
// is k/8 for floats and k for Int32, k in [-16, 16] drawn from a hash of
// (seed, rank, i). Multiples of 1/8 up to 2 make float sums over up to
// 2^17 ranks exact in any order, so a wrong element is a real error; the
// tolerance of Tolerance still allows for rounding. A trailing partial
// element is left alone.
func Fill(buf []byte, dt DType, seed uint64, rank int) {
	base := splitmix64(seed ^ uint64(rank)*0xd1b54a32d192ed03)
	es := dt.Size()
	for i := 0; (i+1)*es <= len(buf); i++ {
		k := int32(splitmix64(base+uint64(i))%33) - 16
		switch dt {
		case Float32:
			le.PutUint32(buf[i*4:], math.Float32bits(float32(k)/8))
		case Int32:
			le.PutUint32(buf[i*4:], uint32(k))
		case BFloat16:
			le.PutUint16(buf[i*2:], f32ToBF16(float32(k)/8))
		}
	}
}

// value returns element i of buf as a float64 (Int32 exactly).
func value(buf []byte, dt DType, i int) float64 {
	switch dt {
	case Float32:
		return float64(math.Float32frombits(le.Uint32(buf[i*4:])))
	case Int32:
		return float64(int32(le.Uint32(buf[i*4:])))
	default:
		return float64(bf16ToF32(le.Uint16(buf[i*2:])))
	}
}

// Reference returns the output every rank of the collective cfg describes
// must end with, given every rank's input (inputs[r], as Input sizes it),
// computed directly (ranks whose outputs are equal share one slice: do not
// modify them): a reduction in rank order, in float64 for floats (and
// in wrapping int32 arithmetic for Int32), then rounded to the type. A rank
// without output (non-root of Reduce and Gather) gets nil. cfg.Rank is
// ignored.
func Reference(cfg Config, inputs [][]byte) ([][]byte, error) {
	cfg.Rank = 0
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p, es, cnt := cfg.Ranks, cfg.DType.Size(), cfg.Count
	if len(inputs) != p {
		return nil, fmt.Errorf("coll: Reference: %d inputs for %d ranks", len(inputs), p)
	}
	for r, in := range inputs {
		if want := inputCount(cfg.Op, cnt, p) * es; len(in) != want {
			return nil, fmt.Errorf("coll: Reference: input of rank %d is %d bytes, want %d", r, len(in), want)
		}
	}
	n := cnt * es
	out := make([][]byte, p)
	// red returns the reduction over ranks of the elements at element
	// offset off of each input, written to dst.
	red := func(dst []byte, off, elems int) {
		for i := range elems {
			if cfg.DType == Int32 {
				acc := int32(le.Uint32(inputs[0][(off+i)*4:]))
				for r := 1; r < p; r++ {
					v := int32(le.Uint32(inputs[r][(off+i)*4:]))
					switch cfg.RedOp {
					case Sum:
						acc += v
					case Prod:
						acc *= v
					case Max:
						acc = max(acc, v)
					default:
						acc = min(acc, v)
					}
				}
				le.PutUint32(dst[i*4:], uint32(acc))
				continue
			}
			acc := value(inputs[0], cfg.DType, off+i)
			for r := 1; r < p; r++ {
				v := value(inputs[r], cfg.DType, off+i)
				switch cfg.RedOp {
				case Sum:
					acc += v
				case Prod:
					acc *= v
				case Max:
					acc = math.Max(acc, v)
				default:
					acc = math.Min(acc, v)
				}
			}
			if cfg.DType == Float32 {
				le.PutUint32(dst[i*4:], math.Float32bits(float32(acc)))
			} else {
				le.PutUint16(dst[i*2:], f32ToBF16(float32(acc)))
			}
		}
	}
	var all []byte // AllReduce: every rank's output is the same
	for r := range p {
		switch cfg.Op {
		case AllReduce:
			if all == nil {
				all = make([]byte, n)
				red(all, 0, cnt)
			}
			out[r] = all
		case Reduce:
			if r == cfg.Root {
				out[r] = make([]byte, n)
				red(out[r], 0, cnt)
			}
		case ReduceScatter:
			out[r] = make([]byte, n)
			red(out[r], r*cnt, cnt)
		case Broadcast:
			out[r] = append(make([]byte, 0, n), inputs[cfg.Root]...)
		case AllGather, Gather:
			if cfg.Op == Gather && r != cfg.Root {
				continue
			}
			out[r] = make([]byte, 0, n*p)
			for q := range p {
				out[r] = append(out[r], inputs[q]...)
			}
		case AllToAll:
			out[r] = make([]byte, 0, n*p)
			for q := range p {
				out[r] = append(out[r], inputs[q][r*n:(r+1)*n]...)
			}
		case Scatter:
			out[r] = append(make([]byte, 0, n), inputs[cfg.Root][r*n:(r+1)*n]...)
		}
	}
	return out, nil
}

// Tol is the tolerance of Check: an element is wrong when
// |got - want| > Abs + Rel |want|, or when exactly one of them is NaN.
type Tol struct {
	Abs, Rel float64
}

// Tolerance returns the tolerance for a collective of the given type,
// reduction and rank count on inputs drawn by Fill (|x| <= FillMax). With
// u the unit roundoff (2^-24 for Float32, 2^-8 for BFloat16), a sum of p
// terms in any order is within (p-1) u sum|x| <= (p-1) u p FillMax of the
// exact sum (Higham, Accuracy and Stability of Numerical Algorithms,
// §4.2), and a product within (p-1) u relative; the reference's own final
// rounding adds u relative. Bfloat16 rounds after every step, so the
// same bounds hold with its u. Int32, Min, Max and operations that only
// move data are exact.
func Tolerance(dt DType, op RedOp, ranks int) Tol {
	var u float64
	switch dt {
	case Float32:
		u = 0x1p-24
	case BFloat16:
		u = 0x1p-8
	default:
		return Tol{}
	}
	p := float64(ranks)
	switch op {
	case Sum:
		return Tol{Abs: (p - 1) * u * p * FillMax, Rel: u}
	case Prod:
		return Tol{Rel: p * u}
	}
	return Tol{}
}

// Check returns the number of elements of got that differ from want beyond
// tol (the "#wrong" of nccl-tests); elements present in only one of them
// count as wrong.
func Check(got, want []byte, dt DType, tol Tol) int {
	es := dt.Size()
	ng, nw := len(got)/es, len(want)/es
	wrong := max(ng, nw) - min(ng, nw)
	for i := range min(ng, nw) {
		if dt == Int32 {
			if string(got[i*es:(i+1)*es]) != string(want[i*es:(i+1)*es]) {
				wrong++
			}
			continue
		}
		g, w := value(got, dt, i), value(want, dt, i)
		if math.IsNaN(g) || math.IsNaN(w) {
			if math.IsNaN(g) != math.IsNaN(w) {
				wrong++
			}
			continue
		}
		if math.Abs(g-w) > tol.Abs+tol.Rel*math.Abs(w) {
			wrong++
		}
	}
	return wrong
}
