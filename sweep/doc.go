// Package sweep runs parameter sweeps of rocekit's simulator: one base
// scenario (package roce), a grid of scenario keys and their values, and
// the seeds of each point, each point run in this process and summed up as
// one CSV row. It is what `rocekit sweep` runs, on one machine with a pool
// of workers or as the shards of a SLURM job array or a Kubernetes Indexed
// Job.
//
// # The sweep file
//
// A sweep file is one JSON object:
//
//	{
//	  "sim": "--topology star:hosts=3",
//	  "grid": {
//	    "traffic": ["incast:n=2,size=100KB", "incast:n=2,size=200KB"],
//	    "fabric.ecn.kmax_bytes": 400000,
//	    "fabric.ecn.kmin_bytes": {"from": 100000, "to": 300000, "step": 200000}
//	  },
//	  "mode": "product",
//	  "seeds": 2,
//	  "metrics": ["goodput_gbps", "fct_slowdown[bucket=100KB-1MB].p99", "pfc_pauses"]
//	}
//
// The same file may be written in YAML (a name ending in .yaml or .yml),
// read with go.yaml.in/yaml/v3 into the same values; its errors give the
// line and column the same way (a YAML syntax error, the line the YAML
// parser gives).
//
// The base scenario is "scenario", a scenario file's name (relative to the
// sweep file) or a scenario object, or "sim", the flags of `rocekit sim`
// as one string or a list of arguments; with neither it is rocekit sim's
// built-in scenario.
//
// "grid" maps dotted key paths into the scenario's JSON (cc.algorithm,
// fabric.ecn.kmin_bytes, qps[0].work.size, traffic, seed) to their values:
// a list; a range, {"from": a, "to": b, "step": s} for a, a+s, ... up to b
// (written with as many decimals as a and s, so 0.1 steps give 0.3) or
// {"from": a, "to": b, "factor": f} for a, a*f, a*f*f, ... up to b; or one
// value (any other JSON value, objects included, set as it is). Objects on
// the way to a key are made when the base scenario lacks them (cc.algorithm
// makes "cc"); a null value removes the key. "mode" is "product" (every
// combination; the first key changes slowest) or "zip" (the lists side by
// side, all of one length).
//
// "seeds" is a count n (seeds 1 to n), a list or a range; each combination
// runs once per seed, the seed changing fastest. Without it each point
// runs with the base scenario's seed. The grid may set "seed" itself
// instead.
//
// "metrics" are key paths into the summary's JSON (the keys `rocekit sim
// --json` prints; default DefaultMetrics). A path names a member
// (latency_ns.p99), an element of a list by its index (fct_slowdown[0].p50)
// or the element whose key has a value (fct_slowdown[bucket=100KB-1MB].p99).
// Each metric is one column: a number exactly as the summary writes it, a
// string as it is, true or false, an empty cell when the run's summary has
// no such value (a fabric key of a run without a fabric, a bucket without
// flows), and an object or list (latency_ns, wr_completed) as compact JSON
// with its keys sorted.
//
// Every point's scenario is built and checked when the file is read, so a
// bad value stops the sweep before anything runs. Each error is one line
// naming the file, the key path and the line and column:
//
//	s.json: grid.fabric.ecn.kmin_bytes: fabric.ecn.kmin_bytes=500000: the scenario is refused: fabric.ecn: want 0 <= kmin_bytes <= kmax_bytes at line 5 column 30
//
// # Results
//
// The results are CSV with the header "point", the parameters (the grid's
// keys, then "seed" unless the grid sets it) and the metrics; a row per
// point. A point is known by its parameter values: Run skips the points its
// output has already, and appends each row whole as its point ends, so a run
// that stopped resumes. Shard splits the points by their number modulo the
// shard count; Merge joins the shards' files in point order and names the
// points that none has.
package sweep
