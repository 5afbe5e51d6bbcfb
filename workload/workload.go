package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/coll"
	"github.com/rocekit/rocekit/internal/jsonerr"
	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/traffic"
)

// Kind is what an Item does.
type Kind uint8

const (
	// Compute is a stretch of computation on the compute stream.
	Compute Kind = iota
	// Collective is a collective issued on the communication stream.
	Collective
	// Barrier makes the compute stream wait until every collective issued
	// before it has finished (the optimizer waits for the gradients).
	Barrier
)

// String names the kind: compute, collective or barrier.
func (k Kind) String() string {
	switch k {
	case Compute:
		return "compute"
	case Collective:
		return "collective"
	case Barrier:
		return "barrier"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Coll is a collective as the workload names it, the key under which its
// duration is simulated once: the operation, its size in bytes as
// nccl-tests counts it (coll.Bytes: the all-reduce's buffer, the
// all-gather's output), the algorithm (Auto: by coll.ChooseAlgo; Sharp:
// SHARP's all-reduce in the switches) and the element type.
type Coll struct {
	Op    coll.Op
	Bytes int64
	Algo  coll.Algo
	Sharp bool
	DType coll.DType
}

// AlgoName is the algorithm as the workload names it: "sharp", or
// coll.Algo's name ("auto" included).
func (c Coll) AlgoName() string {
	if c.Sharp {
		return "sharp"
	}
	return c.Algo.String()
}

// String is the collective in a few words: "allreduce 25MB auto float".
func (c Coll) String() string {
	return c.Op.String() + " " + traffic.FormatSize(c.Bytes) + " " + c.AlgoName() + " " + c.DType.String()
}

// Count is the element count per rank (coll.Config's Count) of the
// collective over ranks ranks, or an error when its size is not a whole
// number of them or is beyond what package coll takes (2^31 elements).
func (c Coll) Count(ranks int) (int, error) {
	if ranks < 1 {
		return 0, fmt.Errorf("%d ranks", ranks)
	}
	es := int64(c.DType.Size())
	unit := coll.Bytes(c.Op, 1, int(es), ranks) // the size of Count 1
	if c.Bytes <= 0 || c.Bytes%unit != 0 {
		if unit == es {
			return 0, fmt.Errorf("%d bytes is not a whole number of %d-byte %s elements", c.Bytes, es, c.DType)
		}
		return 0, fmt.Errorf("%d bytes is not a whole number of %d-byte blocks (%d ranks x %d-byte %s) for %s", c.Bytes, unit, ranks, es, c.DType, c.Op)
	}
	n := c.Bytes / unit
	if n > 1<<31 {
		return 0, fmt.Errorf("%d bytes is %d elements per rank, more than 2^31", c.Bytes, n)
	}
	return int(n), nil
}

// Item is one entry of a step: a compute stretch, a collective or a
// barrier.
type Item struct {
	Kind Kind
	// Compute is the stretch's duration (Kind Compute).
	Compute sim.Time
	// Coll is the collective (Kind Collective).
	Coll Coll
	// Wait makes the compute stream wait for the collective before it
	// goes on (Kind Collective), as a forward pass waits for the
	// all-gather of the parameters it needs.
	Wait bool
	// Where says where the item was written, for errors: "items[3] at
	// line 7 column 5", or a generator's "bucket 12 of ddp:...".
	Where string
}

// Workload is a training step's items, repeated Steps times over Ranks
// ranks (0: the ranks are not given; the caller supplies them).
type Workload struct {
	Steps int
	Ranks int
	Items []Item
}

// MaxSteps is the most steps a workload may have (every step is the same,
// and is a row of the report).
const MaxSteps = 10_000

// Colls returns the workload's distinct collectives, in the order of
// their first appearance.
func (w *Workload) Colls() []Coll {
	seen := map[Coll]bool{}
	var out []Coll
	for _, it := range w.Items {
		if it.Kind == Collective && !seen[it.Coll] {
			seen[it.Coll] = true
			out = append(out, it.Coll)
		}
	}
	return out
}

// Check checks the workload over ranks ranks: at least one item, the
// step count in range, and every collective a whole number of elements
// of an algorithm that runs it at that rank count. Errors name the item.
func (w *Workload) Check(ranks int) error {
	if w.Steps < 1 || w.Steps > MaxSteps {
		return fmt.Errorf("%d steps: want 1 to %d", w.Steps, MaxSteps)
	}
	if len(w.Items) == 0 {
		return errors.New("no items: a step needs at least one")
	}
	for _, it := range w.Items {
		if it.Kind != Collective {
			continue
		}
		c := it.Coll
		if _, err := c.Count(ranks); err != nil {
			return fmt.Errorf("%s: %s: %v", it.Where, c, err)
		}
		if c.Sharp && c.Op != coll.AllReduce {
			return fmt.Errorf("%s: %s: SHARP runs allreduce only", it.Where, c)
		}
		if !c.Sharp && !coll.Supports(c.Algo, c.Op, ranks) {
			return fmt.Errorf("%s: %s: algorithm %s does not run %s at %d ranks", it.Where, c, c.Algo, c.Op, ranks)
		}
	}
	return nil
}

// The JSON form. Every key is optional in the decoding; Parse checks
// which an item has.
type fileWorkload struct {
	Steps *int       `json:"steps"`
	Ranks *int       `json:"ranks"`
	Items []fileItem `json:"items"`
}

type fileItem struct {
	ComputeUS *float64   `json:"compute_us"`
	Op        *opName    `json:"op"`
	Bytes     *byteSize  `json:"bytes"`
	Algo      *algoName  `json:"algo"`
	DType     *dtypeName `json:"dtype"`
	Wait      *bool      `json:"wait"`
	Barrier   *bool      `json:"barrier"`
}

// opName, algoName, dtypeName and byteSize decode themselves, so that a
// bad value is reported at its key path and position.
type opName coll.Op

func (o *opName) UnmarshalJSON(b []byte) error {
	s, err := jsonString(b)
	if err != nil {
		return err
	}
	op, err := coll.ParseOp(s)
	if err != nil {
		return fmt.Errorf("unknown operation %q (want allreduce, allgather, reducescatter, broadcast, reduce, alltoall, scatter or gather)", s)
	}
	*o = opName(op)
	return nil
}

type algoName struct {
	algo  coll.Algo
	sharp bool
}

func (a *algoName) UnmarshalJSON(b []byte) error {
	s, err := jsonString(b)
	if err != nil {
		return err
	}
	if s == "sharp" {
		*a = algoName{sharp: true}
		return nil
	}
	al, err := coll.ParseAlgo(s)
	if err != nil {
		return fmt.Errorf("unknown algorithm %q (want auto, ring, tree, rhd, direct, binomial or sharp)", s)
	}
	*a = algoName{algo: al}
	return nil
}

type dtypeName coll.DType

func (d *dtypeName) UnmarshalJSON(b []byte) error {
	s, err := jsonString(b)
	if err != nil {
		return err
	}
	dt, err := parseDType(s)
	if err != nil {
		return err
	}
	*d = dtypeName(dt)
	return nil
}

// parseDType reads an element type: coll's names (float, int32, bfloat16)
// and the frameworks' bf16, fp32 and float32.
func parseDType(s string) (coll.DType, error) {
	switch s {
	case "bf16":
		return coll.BFloat16, nil
	case "fp32", "float32":
		return coll.Float32, nil
	}
	dt, err := coll.ParseDType(s)
	if err != nil {
		return 0, fmt.Errorf("unknown element type %q (want float, bf16 or int32)", s)
	}
	return dt, nil
}

type byteSize int64

// UnmarshalJSON reads a size as a number of bytes (25000000) or a string
// with a unit, as traffic.ParseSize reads it ("25MB", "4MiB").
func (z *byteSize) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		s, err := jsonString(b)
		if err != nil {
			return err
		}
		n, err := traffic.ParseSize(s)
		if err != nil {
			return err
		}
		*z = byteSize(n)
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n <= 0 {
		return fmt.Errorf("%s: want a positive whole number of bytes, or a string such as \"25MB\"", b)
	}
	*z = byteSize(n)
	return nil
}

func jsonString(b []byte) (string, error) {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return "", fmt.Errorf("%s: want a string", b)
	}
	return s, nil
}

// maxComputeUS is the longest compute stretch, an hour.
const maxComputeUS = 3.6e9

// topLevel is the error for a file that holds no JSON object.
const topLevel = "the workload must be an object"

// Parse decodes and checks a workload in its JSON form:
//
//	{"steps": 2, "ranks": 8, "items": [
//	  {"compute_us": 500},
//	  {"op": "allreduce", "bytes": "25MB", "algo": "auto", "dtype": "float", "wait": false},
//	  {"barrier": true},
//	  {"compute_us": 100}]}
//
// steps defaults to 1 and ranks to 0 (given by the caller). An item is
// exactly one of a compute stretch (compute_us, microseconds, 0 or more),
// a collective (op, with bytes, and optionally algo, default auto; dtype,
// default float; wait, default false) or a barrier (barrier, true).
// Unknown keys, keys of another kind of item and values out of range are
// errors that name the key path and the line and column: "items[2].bytes:
// ... at line 4 column 34".
func Parse(data []byte) (*Workload, error) {
	var f fileWorkload
	if err := jsonerr.Decode(data, &f, topLevel); err != nil {
		if strings.HasPrefix(err.Error(), topLevel) {
			return nil, err
		}
		return nil, fmt.Errorf("workload: %w", err)
	}
	at := func(path, format string, a ...any) error {
		return fmt.Errorf("workload: %s: %s at %s", path, fmt.Sprintf(format, a...), jsonerr.Position(data, offsetOf(data, path)))
	}
	w := &Workload{Steps: 1}
	if f.Steps != nil {
		if *f.Steps < 1 || *f.Steps > MaxSteps {
			return nil, at("steps", "%d: want 1 to %d", *f.Steps, MaxSteps)
		}
		w.Steps = *f.Steps
	}
	if f.Ranks != nil {
		if *f.Ranks < 2 || *f.Ranks > 4096 {
			return nil, at("ranks", "%d: want 2 to 4096", *f.Ranks)
		}
		w.Ranks = *f.Ranks
	}
	if len(f.Items) == 0 {
		return nil, at("items", "no items: a step needs at least one")
	}
	for i, fi := range f.Items {
		p := fmt.Sprintf("items[%d]", i)
		it := Item{Where: p + " at " + jsonerr.Position(data, offsetOf(data, p))}
		kinds := 0
		for _, has := range []bool{fi.ComputeUS != nil, fi.Op != nil, fi.Barrier != nil} {
			if has {
				kinds++
			}
		}
		if kinds != 1 {
			return nil, at(p, "an item is one of {\"compute_us\": ...}, {\"op\": ...} or {\"barrier\": true}")
		}
		switch {
		case fi.ComputeUS != nil:
			us := *fi.ComputeUS
			if !(us >= 0 && us <= maxComputeUS) {
				return nil, at(p+".compute_us", "%v: want 0 to %g microseconds", us, maxComputeUS)
			}
			it.Kind, it.Compute = Compute, sim.Time(math.Round(us*float64(sim.Microsecond)))
		case fi.Barrier != nil:
			if !*fi.Barrier {
				return nil, at(p+".barrier", "false: a barrier item is {\"barrier\": true}")
			}
			it.Kind = Barrier
		default:
			if fi.Bytes == nil {
				return nil, at(p, "a collective needs \"bytes\"")
			}
			it.Kind = Collective
			it.Coll = Coll{Op: coll.Op(*fi.Op), Bytes: int64(*fi.Bytes), DType: coll.Float32}
			if fi.Algo != nil {
				it.Coll.Algo, it.Coll.Sharp = fi.Algo.algo, fi.Algo.sharp
			}
			if fi.DType != nil {
				it.Coll.DType = coll.DType(*fi.DType)
			}
			if fi.Wait != nil {
				it.Wait = *fi.Wait
			}
			if it.Coll.Sharp && it.Coll.Op != coll.AllReduce {
				return nil, at(p+".algo", "sharp runs allreduce only, not %s", it.Coll.Op)
			}
		}
		if it.Kind != Collective {
			for _, k := range []struct {
				key string
				has bool
			}{{"bytes", fi.Bytes != nil}, {"algo", fi.Algo != nil}, {"dtype", fi.DType != nil}, {"wait", fi.Wait != nil}} {
				if k.has {
					return nil, at(p+"."+k.key, "only a collective (an item with \"op\") has %q", k.key)
				}
			}
		}
		w.Items = append(w.Items, it)
	}
	if w.Ranks > 0 {
		for i, it := range w.Items {
			if it.Kind != Collective {
				continue
			}
			if _, err := it.Coll.Count(w.Ranks); err != nil {
				return nil, at(fmt.Sprintf("items[%d].bytes", i), "%v", err)
			}
		}
	}
	return w, nil
}

// Load reads and checks the workload in file name.
func Load(name string) (*Workload, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	w, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return w, nil
}

// Open returns the workload arg names: a generator's spec ("ddp:...", see
// DDP) or a JSON file.
func Open(arg string) (*Workload, error) {
	if strings.HasPrefix(arg, "ddp:") {
		return DDP(arg)
	}
	return Load(arg)
}

// offsetOf is the offset of the value at path in data, or 0.
func offsetOf(data []byte, path string) int64 {
	off, _ := jsonerr.Offset(data, path)
	return off
}
