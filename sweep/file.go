package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/roce"
)

// File is a sweep file, read and checked: every point's scenario has been
// built and accepted by roce.ParseScenario.
type File struct {
	// Name is the file's name as given to Load.
	Name string
	// Params are the grid's key paths in file order, then "seed".
	Params []string
	// Metrics are the summary key paths that become the result columns.
	Metrics []string
	// coll runs a collective sweep's points (Options.Coll); nil for a
	// scenario sweep.
	coll func(flags []byte, run bool) ([]byte, error)
	// Points are every run of the sweep, in order (see the package
	// documentation for the order).
	Points []Point
}

// Point is one run of a sweep: the base scenario with the grid's keys set.
type Point struct {
	// Index is the point's place in the sweep, from 0.
	Index int
	// Values are the point's parameter values as CSV cells, in the order
	// of File.Params.
	Values []string
	// Scenario is the point's scenario JSON.
	Scenario []byte
}

// Label is the point's parameters for people: "cc.algorithm=dcqcn seed=1".
func (p Point) Label(params []string) string {
	var b strings.Builder
	for i, k := range params {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k + "=" + p.Values[i])
	}
	return b.String()
}

// Header is the CSV header of the sweep's results: "point", the
// parameters, then the metrics.
func (f *File) Header() []string {
	h := append([]string{"point"}, f.Params...)
	return append(h, f.Metrics...)
}

// Options are what Load needs from its caller.
type Options struct {
	// SimFlags turns the flags of `rocekit sim` (the sweep file's "sim"
	// key) into a scenario's JSON; nil refuses the key.
	SimFlags func(args []string) ([]byte, error)
	// Coll runs a collective from its flags, given as a JSON object of
	// `rocekit coll` flag names and values (the sweep file's "coll" key,
	// with the grid's keys set), and returns its result as `rocekit coll
	// --json` prints it; with run false it only checks the flags. Nil
	// refuses the key.
	Coll func(flags []byte, run bool) ([]byte, error)
}

// DefaultCollMetrics are the result columns of a collective sweep that
// names none.
var DefaultCollMetrics = []string{"size", "time_us", "algbw_gbps", "busbw_gbps", "wrong", "frames"}

// collKeys are the keys of a line of rocekit coll --json.
var collKeys = map[string]bool{"op": true, "algo": true, "ranks": true, "size": true, "count": true, "type": true,
	"redop": true, "root": true, "time_us": true, "algbw_gbps": true, "busbw_gbps": true, "wrong": true,
	"frames": true, "pfc_pauses": true, "retransmissions": true, "complete": true}

// DefaultMetrics are the result columns of a sweep file that names none:
// figures of every run, and a fabric's (empty for a run without one).
var DefaultMetrics = []string{
	"complete", "goodput_gbps", "sim_time_ns", "retransmissions", "latency_ns.p50", "latency_ns.p99",
	"flows_completed", "pfc_pauses", "ecn_marks", "max_queue_bytes",
}

// Load reads and checks the sweep file name; see Parse.
func Load(name string, opt Options) (*File, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, err
	}
	return Parse(name, data, opt)
}

// fileError is an error at a value of the sweep file.
func fileError(name string, data []byte, n *node, format string, a ...any) error {
	msg := fmt.Sprintf(format, a...)
	if n.path != "" {
		msg = n.path + ": " + msg
	}
	return fmt.Errorf("%s: %s at %s", name, msg, n.pos)
}

// Parse reads a sweep file's data (name is for errors and finds a base
// scenario file named relative to it) and builds every point. Every error
// is one line naming the file, the key path and the line and column.
func Parse(name string, data []byte, opt Options) (*File, error) {
	isYAML := strings.HasSuffix(name, ".yaml") || strings.HasSuffix(name, ".yml")
	parseFile := parseTree
	if isYAML {
		parseFile = parseYAML
	}
	root, err := parseFile(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if root.kind != '{' {
		return nil, fileError(name, data, root, "the sweep file must be an object, got %s", root.kindName())
	}
	bad := func(n *node, format string, a ...any) error { return fileError(name, data, n, format, a...) }
	for i, k := range root.keys {
		switch k {
		case "scenario", "sim", "coll", "grid", "mode", "seeds", "metrics":
		default:
			return nil, bad(root.kids[i], "unknown key (keys: scenario, sim, coll, grid, mode, seeds, metrics)")
		}
	}

	// The base scenario.
	var base []byte
	scen, simArgs, collNode := root.get("scenario"), root.get("sim"), root.get("coll")
	switch {
	case scen != nil && simArgs != nil:
		return nil, bad(simArgs, "give either scenario or sim, not both")
	case collNode != nil && (scen != nil || simArgs != nil):
		return nil, bad(collNode, "a collective sweep takes no scenario or sim")
	case collNode != nil:
		if collNode.kind != '{' {
			return nil, bad(collNode, "want an object of rocekit coll flags and their values, got %s", collNode.kindName())
		}
		if opt.Coll == nil {
			return nil, bad(collNode, "collectives are not available here")
		}
		js, err := json.Marshal(collNode.value())
		if err != nil {
			return nil, bad(collNode, "%v", err)
		}
		base = js
	case scen != nil && scen.kind == 's':
		file := scen.str
		if !filepath.IsAbs(file) {
			file = filepath.Join(filepath.Dir(name), file)
		}
		sc, err := roce.LoadScenario(file)
		if err != nil {
			// The error names the scenario file and its own line.
			return nil, fmt.Errorf("%s: scenario: %v", name, err)
		}
		base = sc.MarshalIndent()
	case scen != nil && scen.kind == '{' && isYAML:
		js, err := json.MarshalIndent(scen.value(), "", "  ")
		if err != nil {
			return nil, bad(scen, "%v", err)
		}
		var ve *roce.ValueError
		if _, err := roce.ParseScenario(js); err != nil && !errors.As(err, &ve) {
			return nil, bad(scen, "%s", atLine.ReplaceAllString(strings.TrimPrefix(err.Error(), "scenario: "), ""))
		}
		base = js
	case scen != nil && scen.kind == '{':
		// Blank everything around the object, line breaks kept, so the
		// scenario's errors give the sweep file's lines and columns.
		blank := make([]byte, len(data))
		for i, c := range data {
			blank[i] = ' '
			if c == '\n' || (int64(i) >= scen.start && int64(i) < scen.end) {
				blank[i] = c
			}
		}
		// A value Validate refuses may be one the grid sets: the points
		// are checked below.
		var ve *roce.ValueError
		if _, err := roce.ParseScenario(blank); err != nil && !errors.As(err, &ve) {
			return nil, fmt.Errorf("%s: scenario.%s", name, strings.TrimPrefix(err.Error(), "scenario: "))
		}
		base = data[scen.start:scen.end]
	case scen != nil:
		return nil, bad(scen, "want a scenario file name or a scenario object, got %s", scen.kindName())
	case simArgs != nil:
		var args []string
		switch simArgs.kind {
		case 's':
			args = strings.Fields(simArgs.str)
		case '[':
			for _, a := range simArgs.kids {
				if a.kind != 's' {
					return nil, bad(a, "want a string (one argument of rocekit sim), got %s", a.kindName())
				}
				args = append(args, a.str)
			}
		default:
			return nil, bad(simArgs, "want the flags of rocekit sim, as a string or a list of strings, got %s", simArgs.kindName())
		}
		if opt.SimFlags == nil {
			return nil, bad(simArgs, "sim flags are not available here")
		}
		if base, err = opt.SimFlags(args); err != nil {
			return nil, bad(simArgs, "%v", err)
		}
	default:
		base = roce.DefaultScenario().MarshalIndent()
	}
	var baseVal map[string]any
	if err := json.Unmarshal(base, &baseVal); err != nil {
		return nil, fmt.Errorf("%s: the base scenario: %v", name, err)
	}
	baseSeed := uint64(0)
	if s, ok := baseVal["seed"].(float64); ok {
		baseSeed = uint64(s)
	}
	if err := decodeNumbers(base, &baseVal); err != nil {
		return nil, fmt.Errorf("%s: the base scenario: %v", name, err)
	}

	// The grid: each key's values.
	var params []gridParam
	if g := root.get("grid"); g != nil {
		if g.kind != '{' {
			return nil, bad(g, "want an object of scenario key paths and their values, got %s", g.kindName())
		}
		for i, key := range g.keys {
			n := g.kids[i]
			if _, err := parseKeyPath(key); err != nil {
				return nil, bad(n, "%v", err)
			}
			vals, err := values(n)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err.locate(data))
			}
			p := gridParam{key: key, node: n, vals: vals}
			for range vals {
				p.nums = append(p.nums, n)
			}
			if n.kind == '[' {
				p.nums = n.kids
			}
			params = append(params, p)
		}
	}

	// Seeds.
	seeds := []any{json.Number(strconv.FormatUint(baseSeed, 10))}
	seedNode := &node{path: "seeds"}
	if s := root.get("seeds"); s != nil {
		for _, p := range params {
			if p.key == "seed" {
				return nil, bad(s, "the grid sets seed already")
			}
		}
		seedNode = s
		if s.kind == 'n' {
			n, err := strconv.ParseUint(s.num.String(), 10, 32)
			if err != nil || n == 0 {
				return nil, bad(s, "%s: want a count of seeds, 1 or more (seeds 1 to n), a list or a range", s.num)
			}
			seeds = seeds[:0]
			for i := uint64(1); i <= n; i++ {
				seeds = append(seeds, json.Number(strconv.FormatUint(i, 10)))
			}
		} else {
			vals, err := values(s)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err.locate(data))
			}
			for i, v := range vals {
				num, ok := v.(json.Number)
				if _, err := strconv.ParseUint(string(num), 10, 64); !ok || err != nil {
					at := s
					if s.kind == '[' {
						at = s.kids[i]
					}
					return nil, bad(at, "%v: a seed is a whole number, 0 or more", cell(v))
				}
			}
			seeds = vals
		}
	}
	hasSeedParam := false
	for _, p := range params {
		hasSeedParam = hasSeedParam || p.key == "seed"
	}

	// Product or zip.
	mode := "product"
	if m := root.get("mode"); m != nil {
		if m.kind != 's' || (m.str != "product" && m.str != "zip") {
			return nil, bad(m, "want \"product\" (every combination) or \"zip\" (the lists side by side)")
		}
		mode = m.str
	}
	var combos [][]int // for each combination, each param's value index
	switch {
	case len(params) == 0:
		combos = [][]int{{}}
	case mode == "zip":
		n := len(params[0].vals)
		for _, p := range params[1:] {
			if len(p.vals) != n {
				return nil, bad(p.node, "%d values, but %s has %d: zip needs lists of one length", len(p.vals), params[0].key, n)
			}
		}
		for i := 0; i < n; i++ {
			c := make([]int, len(params))
			for j := range c {
				c[j] = i
			}
			combos = append(combos, c)
		}
	default:
		total := 1
		for _, p := range params {
			total *= len(p.vals)
			if total > maxPoints {
				return nil, bad(p.node, "the grid has more than %d points", maxPoints)
			}
		}
		for i := 0; i < total; i++ {
			c := make([]int, len(params))
			r := i
			for j := len(params) - 1; j >= 0; j-- {
				c[j] = r % len(params[j].vals)
				r /= len(params[j].vals)
			}
			combos = append(combos, c)
		}
	}
	if len(combos)*len(seeds) > maxPoints {
		return nil, bad(seedNode, "the sweep has more than %d points", maxPoints)
	}

	f := &File{Name: name}
	if collNode != nil {
		f.coll = opt.Coll
	}
	for _, p := range params {
		f.Params = append(f.Params, p.key)
	}
	if !hasSeedParam {
		f.Params = append(f.Params, "seed")
	}

	// Metrics.
	f.Metrics = DefaultMetrics
	keys, what := summaryKeys, "the summary (rocekit sim --json)"
	if f.coll != nil {
		f.Metrics, keys, what = DefaultCollMetrics, collKeys, "rocekit coll --json"
	}
	if m := root.get("metrics"); m != nil {
		if m.kind != '[' || len(m.kids) == 0 {
			return nil, bad(m, "want a list of summary key paths (rocekit sim --json keys), got %s", m.kindName())
		}
		f.Metrics = nil
		seen := map[string]bool{}
		for _, k := range m.kids {
			if k.kind != 's' {
				return nil, bad(k, "want a summary key path, got %s", k.kindName())
			}
			steps, err := parseMetric(k.str)
			if err != nil {
				return nil, bad(k, "%q: %v", k.str, err)
			}
			if !keys[steps[0].key] {
				return nil, bad(k, "%q: %s has no key %q", k.str, what, steps[0].key)
			}
			if seen[k.str] || slicesContains(f.Params, k.str) || k.str == "point" {
				return nil, bad(k, "%q: a column of that name is there already", k.str)
			}
			seen[k.str] = true
			f.Metrics = append(f.Metrics, k.str)
		}
	}

	// Every point's scenario, checked now so that a bad value stops the
	// sweep before it runs.
	for _, c := range combos {
		for _, seed := range seeds {
			sc := deepCopy(baseVal).(map[string]any)
			vals := make([]string, 0, len(f.Params))
			for j, p := range params {
				v := p.vals[c[j]]
				steps, _ := parseKeyPath(p.key)
				if err := setPath(sc, steps, v); err != nil {
					return nil, bad(p.nums[c[j]], "%v", err)
				}
				vals = append(vals, cell(v))
			}
			if !hasSeedParam {
				sc["seed"] = seed
				vals = append(vals, cell(seed))
			}
			js, err := json.MarshalIndent(sc, "", "  ")
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			js = append(js, '\n')
			if f.coll != nil {
				if _, err := f.coll(js, false); err != nil {
					at := collNode
					if len(params) > 0 {
						at = params[0].nums[c[0]]
					}
					return nil, bad(at, "the collective is refused: %v (with %s)", err, pointLabel(params, c, seed, hasSeedParam))
				}
				f.Points = append(f.Points, Point{Index: len(f.Points), Values: vals, Scenario: js})
				continue
			}
			if _, err := roce.ParseScenario(js); err != nil {
				// Blame the grid value whose key path the error names, or
				// the first of the point's values.
				msg := strings.TrimPrefix(atLine.ReplaceAllString(err.Error(), ""), "scenario: ")
				at, atKey := seedNode, "seed"
				if len(params) > 0 {
					at, atKey = params[0].nums[c[0]], params[0].key
				}
				blameBase := scen != nil && scen.kind == '{'
				if blameBase {
					at = scen
				}
				path, _, _ := strings.Cut(msg, ":")
				var ve *roce.ValueError
				if errors.As(err, &ve) {
					path = ve.Path
				}
				for j, p := range params {
					if strings.HasPrefix(path, p.key) || strings.HasPrefix(p.key, path+".") {
						at, atKey, blameBase = p.nums[c[j]], p.key, false
						break
					}
				}
				if blameBase {
					return nil, bad(scen, "the scenario is refused: %s (with %s)", msg, pointLabel(params, c, seed, hasSeedParam))
				}
				return nil, bad(at, "%s=%s: the scenario is refused: %s", atKey, cell(valueOf(params, c, atKey, seed)), msg)
			}
			f.Points = append(f.Points, Point{Index: len(f.Points), Values: vals, Scenario: js})
		}
	}
	return f, nil
}

// gridParam is one key of the grid with its values.
type gridParam struct {
	key  string
	node *node
	vals []any
	nums []*node // the node each value comes from
}

// pointLabel is the parameters of a point being built, for errors.
func pointLabel(params []gridParam, c []int, seed any, hasSeedParam bool) string {
	var parts []string
	for j, p := range params {
		parts = append(parts, p.key+"="+cell(p.vals[c[j]]))
	}
	if !hasSeedParam {
		parts = append(parts, "seed="+cell(seed))
	}
	return strings.Join(parts, " ")
}

func valueOf(params []gridParam, c []int, key string, seed any) any {
	for j, p := range params {
		if p.key == key {
			return p.vals[c[j]]
		}
	}
	return seed
}

// maxPoints bounds a sweep, so that a typo in a range cannot ask for a
// billion runs.
const maxPoints = 1_000_000

// atLine finds the position in an error about a point's generated
// scenario, which is no place in any file the user wrote.
var atLine = regexp.MustCompile(` at line \d+ column \d+`)

func slicesContains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// decodeNumbers decodes data again into v keeping numbers as written.
func decodeNumbers(data []byte, v *map[string]any) error {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	return dec.Decode(v)
}

func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		s := make([]any, len(t))
		for i, x := range t {
			s[i] = deepCopy(x)
		}
		return s
	}
	return v
}

// cell is a parameter value as a CSV cell: a string as it is, a number as
// written, anything else as compact JSON.
func cell(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case json.Number:
		return string(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// locError is an error at a node, placed in the file by locate.
type locError struct {
	n   *node
	msg string
}

func (e *locError) locate(data []byte) error {
	p := ""
	if e.n.path != "" {
		p = e.n.path + ": "
	}
	return fmt.Errorf("%s%s at %s", p, e.msg, e.n.pos)
}

// values expands a grid entry: a list of values, a range object
// ({"from", "to", "step"} or {"from", "to", "factor"}), or one value.
func values(n *node) ([]any, *locError) {
	switch n.kind {
	case '[':
		if len(n.kids) == 0 {
			return nil, &locError{n, "an empty list: want one value or more"}
		}
		out := make([]any, len(n.kids))
		for i, k := range n.kids {
			out[i] = k.value()
		}
		return out, nil
	case '{':
		if n.get("from") == nil && n.get("to") == nil {
			// An object value (a whole sub-scenario) set as it is.
			return []any{n.value()}, nil
		}
		return rangeValues(n)
	}
	return []any{n.value()}, nil
}

// rangeValues expands {"from": a, "to": b, "step": s} (a, a+s, ... up to
// b inclusive) or {"from": a, "to": b, "factor": f} (a, a*f, ... up to b).
func rangeValues(n *node) ([]any, *locError) {
	num := func(key string) (float64, int, *node, *locError) {
		k := n.get(key)
		if k == nil {
			return 0, 0, nil, nil
		}
		if k.kind != 'n' {
			return 0, 0, k, &locError{k, "want a number, got " + k.kindName()}
		}
		v, err := k.num.Float64()
		if err != nil || math.IsInf(v, 0) {
			return 0, 0, k, &locError{k, k.num.String() + ": not a finite number"}
		}
		return v, decimals(k.num.String()), k, nil
	}
	for i, key := range n.keys {
		switch key {
		case "from", "to", "step", "factor":
		default:
			return nil, &locError{n.kids[i], "unknown key in a range (keys: from, to, step or factor)"}
		}
	}
	from, d1, fromN, err := num("from")
	if err != nil {
		return nil, err
	}
	to, d2, toN, err := num("to")
	if err != nil {
		return nil, err
	}
	step, d3, stepN, err := num("step")
	if err != nil {
		return nil, err
	}
	factor, _, factorN, err := num("factor")
	if err != nil {
		return nil, err
	}
	switch {
	case fromN == nil:
		return nil, &locError{n, "a range needs from"}
	case toN == nil:
		return nil, &locError{n, "a range needs to"}
	case (stepN == nil) == (factorN == nil):
		return nil, &locError{n, "a range needs step or factor (one of them)"}
	}
	var out []any
	if stepN != nil {
		if !(step > 0) {
			return nil, &locError{stepN, stepN.num.String() + ": want more than 0"}
		}
		if to < from {
			return nil, &locError{toN, "to is less than from"}
		}
		count := math.Floor((to-from)/step*(1+1e-12)) + 1
		if count > maxPoints {
			return nil, &locError{stepN, fmt.Sprintf("more than %d values", maxPoints)}
		}
		d := max(d1, d3)
		for i := 0; i < int(count); i++ {
			out = append(out, formatNumber(from+float64(i)*step, d))
		}
		_ = d2
		return out, nil
	}
	if !(factor > 1) {
		return nil, &locError{factorN, factorN.num.String() + ": want more than 1"}
	}
	if !(from > 0) {
		return nil, &locError{fromN, fromN.num.String() + ": a range with a factor starts above 0"}
	}
	if to < from {
		return nil, &locError{toN, "to is less than from"}
	}
	for v := from; v <= to*(1+1e-12); v *= factor {
		if len(out) == maxPoints {
			return nil, &locError{factorN, fmt.Sprintf("more than %d values", maxPoints)}
		}
		out = append(out, formatNumber(v, -1))
	}
	return out, nil
}

// decimals is the number of digits after the point in a number as written
// (exponent forms count as many as strconv needs: -1).
func decimals(s string) int {
	if strings.ContainsAny(s, "eE") {
		return -1
	}
	if i := strings.IndexByte(s, '.'); i >= 0 {
		return len(s) - i - 1
	}
	return 0
}

// formatNumber writes v with d decimals (the most the range's numbers were
// written with, so 0.1 steps give 0.3, not 0.30000000000000004), or as
// short as it round-trips for d < 0.
func formatNumber(v float64, d int) json.Number {
	if d < 0 {
		if v == math.Trunc(v) && math.Abs(v) < 1e15 {
			return json.Number(strconv.FormatFloat(v, 'f', 0, 64))
		}
		return json.Number(strconv.FormatFloat(v, 'g', -1, 64))
	}
	return json.Number(strconv.FormatFloat(v, 'f', d, 64))
}

// summaryKeys are the top-level keys of the summary's JSON (roce.Summary
// with the fabric's and congestion control's keys).
var summaryKeys = func() map[string]bool {
	keys := map[string]bool{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		for i := 0; i < t.NumField(); i++ {
			fl := t.Field(i)
			if fl.Anonymous {
				add(fl.Type)
				continue
			}
			name, _, _ := strings.Cut(fl.Tag.Get("json"), ",")
			if name != "" && name != "-" && fl.IsExported() {
				keys[name] = true
			}
		}
	}
	add(reflect.TypeOf(roce.Summary{}))
	return keys
}()
