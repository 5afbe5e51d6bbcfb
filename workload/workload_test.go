package workload

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/sim"
)

const fsdpStep = `{
  "steps": 2,
  "ranks": 4,
  "items": [
    {"op": "allgather", "bytes": "4MB", "wait": true},
    {"compute_us": 250.5},
    {"op": "reducescatter", "bytes": 4000000, "algo": "ring", "dtype": "bf16"},
    {"op": "allreduce", "bytes": "1MiB", "algo": "sharp"},
    {"barrier": true},
    {"compute_us": 40}
  ]
}
`

func TestParse(t *testing.T) {
	w, err := Parse([]byte(fsdpStep))
	require.NoError(t, err)
	assert.Equal(t, 2, w.Steps)
	assert.Equal(t, 4, w.Ranks)
	want := []Item{
		{Kind: Collective, Coll: Coll{Op: coll.AllGather, Bytes: 4e6, DType: coll.Float32}, Wait: true, Where: "items[0] at line 5 column 5"},
		{Kind: Compute, Compute: 250500 * sim.Nanosecond, Where: "items[1] at line 6 column 5"},
		{Kind: Collective, Coll: Coll{Op: coll.ReduceScatter, Bytes: 4e6, Algo: coll.Ring, DType: coll.BFloat16}, Where: "items[2] at line 7 column 5"},
		{Kind: Collective, Coll: Coll{Op: coll.AllReduce, Bytes: 1 << 20, Sharp: true, DType: coll.Float32}, Where: "items[3] at line 8 column 5"},
		{Kind: Barrier, Where: "items[4] at line 9 column 5"},
		{Kind: Compute, Compute: 40 * sim.Microsecond, Where: "items[5] at line 10 column 5"},
	}
	assert.Equal(t, want, w.Items)
	assert.Equal(t, "allreduce 1MiB sharp float", w.Items[3].Coll.String())
	require.NoError(t, w.Check(4))
	// 4 MB of all-gather output is 1,000,000 bytes per rank at 4 ranks,
	// 31,250 floats at 32; at 3 ranks it is not whole.
	n, err := w.Items[0].Coll.Count(32)
	require.NoError(t, err)
	assert.Equal(t, 31250, n)
	assert.EqualError(t, w.Check(3), "items[0] at line 5 column 5: allgather 4MB auto float: 4000000 bytes is not a whole number of 12-byte blocks (3 ranks x 4-byte float) for allgather")

	dir := t.TempDir()
	name := filepath.Join(dir, "step.json")
	require.NoError(t, os.WriteFile(name, []byte(fsdpStep), 0o644))
	w2, err := Open(name)
	require.NoError(t, err)
	assert.Equal(t, w, w2)
	_, err = Open(filepath.Join(dir, "none.json"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// Every error names the key path and the line and column of the value.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"{\"items\": [\n  {\"compute_us\": 1},\n  {\"op\": \"allreduce\", \"bytes\": \"25XB\"}]}",
			`workload: items[1].bytes: size "25XB": want a positive whole number of bytes with unit B, KB, MB, GB, KiB, MiB or GiB (not a plain decimal number) at line 3 column 32`},
		{"{\"items\": [\n  {\"op\": \"allsum\", \"bytes\": 8}]}",
			`workload: items[0].op: unknown operation "allsum" (want allreduce, allgather, reducescatter, broadcast, reduce, alltoall, scatter or gather) at line 2 column 10`},
		{"{\"items\": [{\"compute_us\": 1, \"wiat\": true}]}", `workload: items[0].wiat: unknown key at line 1 column 30`},
		{"{\"items\": [{\"compute_us\": \"1\"}]}", `workload: items[0].compute_us: expected a number, got a string at line 1 column 27`},
		{"{\"steps\": 1,\n \"items\": [\n  {\"compute_us\": 1, \"op\": \"allreduce\"}]}",
			`workload: items[0]: an item is one of {"compute_us": ...}, {"op": ...} or {"barrier": true} at line 3 column 3`},
		{"{\"items\": [{}]}", `workload: items[0]: an item is one of {"compute_us": ...}, {"op": ...} or {"barrier": true} at line 1 column 12`},
		{"{\"items\": [{\"compute_us\": 5, \"wait\": true}]}", `workload: items[0].wait: only a collective (an item with "op") has "wait" at line 1 column 38`},
		{"{\"items\": [{\"barrier\": false}]}", `workload: items[0].barrier: false: a barrier item is {"barrier": true} at line 1 column 24`},
		{"{\"items\": [{\"compute_us\": -3}]}", `workload: items[0].compute_us: -3: want 0 to 3.6e+09 microseconds at line 1 column 27`},
		{"{\"items\": [{\"op\": \"allreduce\"}]}", `workload: items[0]: a collective needs "bytes" at line 1 column 12`},
		{"{\"items\": [{\"op\": \"allgather\", \"bytes\": 8, \"algo\": \"sharp\"}]}", `workload: items[0].algo: sharp runs allreduce only, not allgather at line 1 column 52`},
		{"{\"items\": [{\"op\": \"allreduce\", \"bytes\": 8, \"dtype\": \"fp8\"}]}", `workload: items[0].dtype: unknown element type "fp8" (want float, bf16 or int32) at line 1 column 53`},
		{"{\"ranks\": 8, \"items\": [\n {\"op\": \"allgather\", \"bytes\": 1000}]}",
			`workload: items[0].bytes: 1000 bytes is not a whole number of 32-byte blocks (8 ranks x 4-byte float) for allgather at line 2 column 31`},
		{"{\"steps\": 0, \"items\": [{\"barrier\": true}]}", `workload: steps: 0: want 1 to 10000 at line 1 column 11`},
		{"{\"ranks\": 1, \"items\": [{\"barrier\": true}]}", `workload: ranks: 1: want 2 to 4096 at line 1 column 11`},
		{"{\"steps\": 1}", `workload: items: no items: a step needs at least one at line 1 column 1`},
		{"{\"items\": [\n  {\"compute_us\": 1},,\n]}", `workload: invalid character ',' looking for beginning of value at line 2 column 21`},
		{"[1]", `the workload must be an object, got an array at line 1 column 1`},
	} {
		_, err := Parse([]byte(c.in))
		assert.EqualError(t, err, c.want, c.in)
	}
}
