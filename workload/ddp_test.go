package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/sim"
)

// A 1.3-billion-parameter model in bf16 with DDP's 25 MiB buckets: 2.6e9
// bytes of gradients, 13,107,200 elements a bucket, ceil(1.3e9 /
// 13,107,200) = 100 buckets, 99 full (26,214,400 bytes) and a last one of
// 1.3e9 - 99 x 13,107,200 = 2,387,200 elements (4,774,400 bytes). The
// 60 ms backward pass is split by size: a full bucket's share is 6e10 ps x
// 26,214,400 / 2.6e9 = 604,947,692.3 ps (floor of the running sum, so 692
// or 693), the last 6e10 - floor(6e10 x 2,595,225,600 / 2.6e9) =
// 6e10 - 59,889,821,538 = 110,178,462 ps.
func TestDDPBuckets(t *testing.T) {
	w, err := DDP("ddp:params=1.3e9,dtype=bf16,fwd_us=30000,bwd_us=60000,opt_us=5000,steps=2")
	require.NoError(t, err)
	assert.Equal(t, 2, w.Steps)
	assert.Equal(t, 0, w.Ranks)
	require.Len(t, w.Items, 1+2*100+2)
	assert.Equal(t, Item{Kind: Compute, Compute: 30000 * sim.Microsecond, Where: w.Items[0].Where}, w.Items[0])
	var bwd sim.Time
	var bytes int64
	for i := 0; i < 100; i++ {
		c, a := w.Items[1+2*i], w.Items[2+2*i]
		require.Equal(t, Compute, c.Kind)
		require.Equal(t, Collective, a.Kind)
		assert.False(t, a.Wait)
		want := int64(26214400)
		if i == 99 {
			want = 4774400
			assert.Equal(t, sim.Time(110178462), c.Compute)
		} else {
			assert.Contains(t, []sim.Time{604947692, 604947693}, c.Compute, "bucket %d", i)
		}
		assert.Equal(t, Coll{Op: coll.AllReduce, Bytes: want, Algo: coll.Auto, DType: coll.BFloat16}, a.Coll, "bucket %d", i)
		bwd += c.Compute
		bytes += a.Coll.Bytes
	}
	assert.Equal(t, sim.Time(604947692), w.Items[1].Compute)
	assert.Equal(t, 60000*sim.Microsecond, bwd)
	assert.Equal(t, int64(2.6e9), bytes)
	assert.Equal(t, Barrier, w.Items[201].Kind)
	assert.Equal(t, Item{Kind: Compute, Compute: 5000 * sim.Microsecond, Where: w.Items[202].Where}, w.Items[202])
	assert.Equal(t, []Coll{{Op: coll.AllReduce, Bytes: 26214400, DType: coll.BFloat16}, {Op: coll.AllReduce, Bytes: 4774400, DType: coll.BFloat16}}, w.Colls())
	assert.Equal(t, "bucket 99 of ddp:params=1.3e9,dtype=bf16,fwd_us=30000,bwd_us=60000,opt_us=5000,steps=2", w.Items[200].Where)
}

// When the bucket divides the gradients every bucket is full: 1e9 float
// parameters in 25 MB (decimal) buckets are 4e9 / 25e6 = 160 buckets of
// 25e6 bytes, each with 1/160 of the backward pass (50 us of 8 ms), and
// no optimizer item without opt_us.
func TestDDPEven(t *testing.T) {
	w, err := DDP("ddp:params=1e9,dtype=float,bucket=25MB,fwd_us=0,bwd_us=8000,algo=ring")
	require.NoError(t, err)
	require.Len(t, w.Items, 1+2*160+1)
	for i := 0; i < 160; i++ {
		assert.Equal(t, 50*sim.Microsecond, w.Items[1+2*i].Compute)
		assert.Equal(t, Coll{Op: coll.AllReduce, Bytes: 25e6, Algo: coll.Ring, DType: coll.Float32}, w.Items[2+2*i].Coll)
	}
	assert.Equal(t, Barrier, w.Items[321].Kind)
}

func TestDDPErrors(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"ddp:params=1e9,fwd_us=1", `workload: spec "ddp:params=1e9,fwd_us=1": bwd_us is missing`},
		{"ddp:params=1.5,fwd_us=1,bwd_us=1", `workload: spec "ddp:params=1.5,fwd_us=1,bwd_us=1": params="1.5": want a whole number of parameters from 1 to 1e15`},
		{"ddp:params=1e9,fwd_us=1,bwd_us=1,layers=3", `workload: spec "ddp:params=1e9,fwd_us=1,bwd_us=1,layers=3": unknown key "layers" (want params, dtype, bucket, fwd_us, bwd_us, opt_us, algo, steps)`},
		{"ddp:params=1e9,fwd_us=1,bwd_us=-2", `workload: spec "ddp:params=1e9,fwd_us=1,bwd_us=-2": bwd_us="-2": want 0 to 3.6e+09 microseconds`},
		{"ddp:params=1e9,dtype=int32,fwd_us=1,bwd_us=1", `workload: spec "ddp:params=1e9,dtype=int32,fwd_us=1,bwd_us=1": dtype="int32": want float or bf16`},
		{"ddp:params=1e9,bucket=1,fwd_us=1,bwd_us=1", `workload: spec "ddp:params=1e9,bucket=1,fwd_us=1,bwd_us=1": bucket="1": smaller than one 4-byte float element`},
		{"ddp:params=1e9,fwd_us=1,bwd_us=1,algo=fast", `workload: spec "ddp:params=1e9,fwd_us=1,bwd_us=1,algo=fast": algo="fast": unknown algorithm "fast" (want auto, ring, tree, rhd, direct, binomial or sharp)`},
		{"ddp:params=1e9,params=2e9", `workload: spec "ddp:params=1e9,params=2e9": key "params" given twice`},
		{"ddp:params=1e9,bucket=4KB,fwd_us=1,bwd_us=1", `workload: spec "ddp:params=1e9,bucket=4KB,fwd_us=1,bwd_us=1": 1000000 buckets: want at most 100000 (a larger bucket)`},
		{"ddp:params", `workload: spec "ddp:params": "params" is not key=value`},
	} {
		_, err := DDP(c.spec)
		assert.EqualError(t, err, c.want, c.spec)
	}
}
