package workload

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/traffic"
)

// DefaultBucket is PyTorch DDP's default bucket size: bucket_cap_mb = 25,
// which DDP counts in MiB (25 x 1024 x 1024 bytes).
const DefaultBucket = 25 << 20

// maxBuckets is the most buckets DDP makes: every bucket is a row of the
// step's table.
const maxBuckets = 100_000

// ddpKeys are the keys of a DDP spec, in the order the usage gives them.
var ddpKeys = []string{"params", "dtype", "bucket", "fwd_us", "bwd_us", "opt_us", "algo", "steps"}

// DDP builds the training step of PyTorch's DistributedDataParallel from
// a spec
//
//	ddp:params=1.3e9,dtype=bf16,bucket=25MiB,fwd_us=30000,bwd_us=60000
//
// with keys params (the model's parameter count, a whole number, 1e9 and
// 1.3e9 allowed), dtype (of the gradients: float, the default, or bf16),
// bucket (the bucket size, default DefaultBucket, 25 MiB as DDP's
// bucket_cap_mb), fwd_us and bwd_us (the forward and backward pass,
// microseconds, required), opt_us (the optimizer, default 0), algo (of the
// all-reduces, default auto) and steps (default 1).
//
// The rule: the G = params x element-size bytes of gradients are cut into
// k = ceil(params / b) buckets of b = bucket / element-size elements
// (rounded down), in reverse order of the parameters, as backward
// produces them; every bucket holds b elements except the last, which
// holds the rest (and is smaller unless b divides params). The step is the
// forward pass (fwd_us), then for each bucket in turn its share of the
// backward pass, bwd_us x its bytes / G (bucket i's share ends at bwd_us
// x the bytes of buckets 0..i / G, rounded down to the picosecond, so that
// the shares add up to bwd_us exactly), followed by the bucket's
// all-reduce, issued then and not waited for, so that it overlaps the
// backward of the buckets after it; then a barrier (the optimizer needs
// every gradient) and the optimizer (opt_us, left out when 0).
//
// DDP itself also caps its first bucket at 1 MiB (first_bucket_bytes_cap)
// and keeps parameters whole within buckets; with no layer sizes to go by,
// this generator cuts the gradients as one stream in equal buckets.
func DDP(spec string) (*Workload, error) {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("workload: spec %q: %s", spec, fmt.Sprintf(format, a...))
	}
	args, ok := strings.CutPrefix(spec, "ddp:")
	if !ok {
		return nil, bad("not a ddp: spec")
	}
	vals := map[string]string{}
	for _, kv := range strings.Split(args, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, bad("%q is not key=value", kv)
		}
		known := false
		for _, w := range ddpKeys {
			known = known || w == k
		}
		if !known {
			return nil, bad("unknown key %q (want %s)", k, strings.Join(ddpKeys, ", "))
		}
		if _, dup := vals[k]; dup {
			return nil, bad("key %q given twice", k)
		}
		vals[k] = v
	}
	for _, k := range []string{"params", "fwd_us", "bwd_us"} {
		if _, ok := vals[k]; !ok {
			return nil, bad("%s is missing", k)
		}
	}
	params, err := strconv.ParseFloat(vals["params"], 64)
	if err != nil || !(params >= 1 && params <= 1e15) || params != math.Trunc(params) {
		return nil, bad("params=%q: want a whole number of parameters from 1 to 1e15", vals["params"])
	}
	dt := coll.Float32
	if s, ok := vals["dtype"]; ok {
		if dt, err = parseDType(s); err != nil || dt == coll.Int32 {
			return nil, bad("dtype=%q: want float or bf16", s)
		}
	}
	bucket := int64(DefaultBucket)
	if s, ok := vals["bucket"]; ok {
		if bucket, err = traffic.ParseSize(s); err != nil {
			return nil, bad("bucket=%q: %v", s, err)
		}
	}
	us := func(k string) (sim.Time, error) {
		s, ok := vals[k]
		if !ok {
			return 0, nil
		}
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || !(v >= 0 && v <= maxComputeUS) {
			return 0, bad("%s=%q: want 0 to %g microseconds", k, s, maxComputeUS)
		}
		return sim.Time(math.Round(v * float64(sim.Microsecond))), nil
	}
	fwd, err := us("fwd_us")
	if err != nil {
		return nil, err
	}
	bwd, err := us("bwd_us")
	if err != nil {
		return nil, err
	}
	opt, err := us("opt_us")
	if err != nil {
		return nil, err
	}
	algo := algoName{}
	if s, ok := vals["algo"]; ok {
		if err := algo.UnmarshalJSON([]byte(strconv.Quote(s))); err != nil {
			return nil, bad("algo=%q: %v", s, err)
		}
	}
	steps := 1
	if s, ok := vals["steps"]; ok {
		if steps, err = strconv.Atoi(s); err != nil || steps < 1 || steps > MaxSteps {
			return nil, bad("steps=%q: want 1 to %d", s, MaxSteps)
		}
	}
	es := int64(dt.Size())
	n := int64(params)
	per := bucket / es
	if per < 1 {
		return nil, bad("bucket=%q: smaller than one %d-byte %s element", traffic.FormatSize(bucket), es, dt)
	}
	k := (n + per - 1) / per
	if k > maxBuckets {
		return nil, bad("%d buckets: want at most %d (a larger bucket)", k, maxBuckets)
	}
	total := n * es // G, at most 4e15
	w := &Workload{Steps: steps, Items: make([]Item, 0, 2*k+3)}
	w.Items = append(w.Items, Item{Kind: Compute, Compute: fwd, Where: "forward of " + spec})
	var done int64 // gradient bytes produced so far
	var prev sim.Time
	for i := int64(0); i < k; i++ {
		b := min(per, n-i*per) * es
		done += b
		// bwd x done / total in 128 bits: bwd < 2^62, total < 2^52.
		hi, lo := bits.Mul64(uint64(bwd), uint64(done))
		q, _ := bits.Div64(hi, lo, uint64(total))
		at := sim.Time(q)
		where := fmt.Sprintf("bucket %d of %s", i, spec)
		w.Items = append(w.Items,
			Item{Kind: Compute, Compute: at - prev, Where: "backward of " + where},
			Item{Kind: Collective, Coll: Coll{Op: coll.AllReduce, Bytes: b, Algo: algo.algo, Sharp: algo.sharp, DType: dt}, Where: where})
		prev = at
	}
	w.Items = append(w.Items, Item{Kind: Barrier, Where: "barrier of " + spec})
	if opt > 0 {
		w.Items = append(w.Items, Item{Kind: Compute, Compute: opt, Where: "optimizer of " + spec})
	}
	return w, nil
}
