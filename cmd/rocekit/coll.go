package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/roce"
	"github.com/rocekit/rocekit/traffic"
)

const collUsage = `usage: rocekit coll [flags]

Run a collective as nccl-tests does, on the fabric simulator: N ranks, rank r
on host r of the topology (default: N hosts on one 100 Gb/s switch), each
chunk an RDMA WRITE with immediate of real data over an RC connection, every
frame real; the data is really reduced and every rank's result checked
against a reference (#wrong, as nccl-tests counts it). Prints nccl-tests'
table for sizes from --min-bytes to --max-bytes by --step-factor: time is
simulated time (out of place; no in-place runs), algbw and busbw in GB/s as
nccl-tests defines them. Wall time and events per second follow the table.

Exit status: 0 when every result is right, 1 when an element was wrong, 2
for usage errors.

flags:
`

func init() {
	register("coll", "run collectives (all-reduce, all-gather, ...) over simulated RC, nccl-tests style", runColl)
}

func runColl(args []string, stdout, stderr io.Writer) int {
	return collCommand(args, stdout, stderr, false)
}

// collCommand is rocekit coll; with check it stops after checking the
// flags (rocekit sweep checks every point before it runs one).
func collCommand(args []string, stdout, stderr io.Writer, check bool) int {
	fs := flag.NewFlagSet("coll", flag.ContinueOnError)
	op := fs.String("op", "allreduce", "operation: allreduce, allgather, reducescatter, broadcast, reduce, alltoall, scatter or gather")
	algo := fs.String("algo", "auto", "algorithm: ring, tree, rhd, direct, binomial, hier (all-reduce inside and between nodes), sharp (all-reduce in the switches) or auto (by coll.ChooseAlgo)")
	ranks := fs.Int("ranks", 8, "ranks (`N`), --gpus per host")
	minBytes := fs.String("min-bytes", "32MB", "smallest size (`SIZE`: B, KB, MB, GB, KiB, MiB, GiB)")
	maxBytes := fs.String("max-bytes", "", "largest size (default: --min-bytes)")
	step := fs.Int("step-factor", 2, "multiply the size by this `factor` from one row to the next")
	dtype := fs.String("dtype", "float", "element type: float, int32 or bfloat16")
	redop := fs.String("redop", "sum", "reduction: sum, prod, max or min")
	root := fs.Int("root", 0, "root rank of broadcast, reduce, scatter and gather")
	chunk := fs.Int("chunk", coll.DefaultChunkSize, "chunk size in `bytes`")
	channels := fs.Int("channels", 1, "channels the data is split over")
	sharpStreams := fs.Int("sharp-streams", 0, "SHARP: aggregation units per switch (`N` chunks reduced at once; 0: 2)")
	sharpGbps := fs.Float64("sharp-gbps", 0, "SHARP: each aggregation unit's reduction rate in `Gb/s` of input (0: reducing takes no time)")
	fab := addCollFabric(fs)
	jsonOut := fs.Bool("json", false, "print one JSON object per size instead of the table")
	rest, code, ok := parseArgs(fs, collUsage, args, stdout, stderr)
	if !ok {
		return code
	}
	if len(rest) > 0 {
		return usageError(stderr, "coll", "unexpected argument %q", rest[0])
	}
	o, err := coll.ParseOp(*op)
	if err != nil {
		return usageError(stderr, "coll", "--op %s: want allreduce, allgather, reducescatter, broadcast, reduce, alltoall, scatter or gather", *op)
	}
	sharp := *algo == "sharp"
	a, err := coll.ParseAlgo(*algo)
	if err != nil && !sharp {
		return usageError(stderr, "coll", "--algo %s: want ring, tree, rhd, direct, binomial, hier, sharp or auto", *algo)
	}
	if sharp && o != coll.AllReduce {
		return usageError(stderr, "coll", "--algo sharp runs allreduce only, not %s", o)
	}
	dt, err := coll.ParseDType(*dtype)
	if err != nil {
		return usageError(stderr, "coll", "--dtype %s: want float, int32 or bfloat16", *dtype)
	}
	ro, err := coll.ParseRedOp(*redop)
	if err != nil {
		return usageError(stderr, "coll", "--redop %s: want sum, prod, max or min", *redop)
	}
	if *channels < 1 {
		return usageError(stderr, "coll", "--channels %d: want 1 or more", *channels)
	}
	if *chunk < 1 {
		return usageError(stderr, "coll", "--chunk %d: want 1 or more bytes", *chunk)
	}
	if *ranks < 2 || *ranks > 4096 {
		return usageError(stderr, "coll", "--ranks %d: want 2 to 4096", *ranks)
	}
	if *sharpStreams < 0 || *sharpStreams > 1<<20 || !(*sharpGbps >= 0 && *sharpGbps < 1e9) {
		return usageError(stderr, "coll", "--sharp-streams %d, --sharp-gbps %v: want 0 or more", *sharpStreams, *sharpGbps)
	}
	if *fab.gpus > 1 && sharp {
		return usageError(stderr, "coll", "--algo sharp with --gpus %d: SHARP with several GPUs per host is not modelled", *fab.gpus)
	}
	if a == coll.Hier && o != coll.AllReduce {
		return usageError(stderr, "coll", "--algo hier runs allreduce only, not %s", o)
	}
	lo, err := traffic.ParseSize(*minBytes)
	if err != nil {
		return usageError(stderr, "coll", "--min-bytes %s: %v", *minBytes, err)
	}
	hi := lo
	if *maxBytes != "" {
		if hi, err = traffic.ParseSize(*maxBytes); err != nil {
			return usageError(stderr, "coll", "--max-bytes %s: %v", *maxBytes, err)
		}
	}
	if hi < lo {
		return usageError(stderr, "coll", "--max-bytes %s is less than --min-bytes %s", *maxBytes, *minBytes)
	}
	if *step < 2 && hi > lo {
		return usageError(stderr, "coll", "--step-factor %d: want 2 or more", *step)
	}
	sc, node, err := fab.build(*ranks)
	if err != nil {
		return usageError(stderr, "coll", "%v", err)
	}
	if check {
		return 0
	}
	es := dt.Size()
	per := coll.Bytes(o, 1, es, *ranks) / int64(es) // elements of the reported size per element of Count
	var rows []coll.Row
	start := time.Now()
	var events uint64
	wrong := 0
	for size := lo; size <= hi; size *= int64(*step) {
		count := size / int64(es) / per
		if count < 1 || count > 1<<31 {
			return usageError(stderr, "coll", "size %d: %d elements per rank", size, count)
		}
		res, err := roce.RunCollective(sc, roce.CollConfig{Ranks: *ranks, Op: o, Algo: a, DType: dt, RedOp: ro, Root: *root,
			Count: int(count), ChunkSize: *chunk, Channels: *channels, Sharp: sharp, Node: node,
			SharpStreams: *sharpStreams, SharpReduceBps: *sharpGbps * 1e9 / 8}, roce.Options{})
		if err != nil {
			return usageError(stderr, "coll", "%v", err)
		}
		events += res.Summary.Events
		wrong += res.Wrong
		if !res.Complete {
			fmt.Fprintf(stderr, "rocekit coll: size %d: the collective did not complete: %d of %d work requests failed (%s)\n",
				res.Bytes, res.Summary.Failed(), res.Summary.WRTotal, failedStatuses(res.Summary.WRCompleted))
		}
		if *jsonOut {
			name := res.Algo.String()
			if sharp {
				name = "sharp"
			}
			b, _ := json.Marshal(map[string]any{"op": o.String(), "algo": name, "ranks": *ranks, "gpus_per_host": *fab.gpus, "size": res.Bytes,
				"count": count * per, "type": dt.String(), "redop": ro.String(), "root": *root, "time_us": res.Time.Microseconds(),
				"algbw_gbps": res.AlgBW, "busbw_gbps": res.BusBW, "wrong": res.Wrong, "frames": res.Summary.PacketsSent,
				"pfc_pauses": res.Summary.PFCPauses, "retransmissions": res.Summary.Retransmissions, "complete": res.Complete})
			fmt.Fprintf(stdout, "%s\n", b)
		}
		rows = append(rows, coll.Row{Op: o, Ranks: *ranks, Count: int(count), DType: dt, RedOp: ro, Root: *root,
			OutOfPlace: coll.Result{Seconds: res.Time.Seconds(), Wrong: res.Wrong}})
		if size > hi/int64(*step) {
			break
		}
	}
	wall := time.Since(start)
	if !*jsonOut {
		chosen := *algo
		if a == coll.Auto && !sharp {
			chosen = "auto: " + coll.ChooseAlgo(o, coll.Bytes(o, rows[0].Count, es, *ranks), *ranks).String() + " for the first size"
		}
		fmt.Fprintf(stdout, "# rocekit coll: %s, %s, %s %s, simulated time\n", o, chosen, fab.placed(*ranks), fab.where(sc))
		if err := coll.FormatTable(stdout, rows); err != nil {
			fmt.Fprintf(stderr, "rocekit coll: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "# wall %.3f s, %d events, %.3g events/s\n", wall.Seconds(), events, float64(events)/wall.Seconds())
	}
	if wrong > 0 {
		fmt.Fprintf(stderr, "rocekit coll: %d wrong elements\n", wrong)
		return 1
	}
	return 0
}

// failedStatuses lists the statuses other than SUCCESS with their counts.
func failedStatuses(m map[string]uint64) string {
	var parts []string
	for k, v := range m {
		if k != "SUCCESS" && v > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", k, v))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ", ")
}
