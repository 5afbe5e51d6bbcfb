package traffic

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/sim"
)

// Pattern is a kind of traffic.
type Pattern uint8

// The patterns Parse knows. See the package documentation for each.
const (
	Permutation Pattern = iota + 1 // "permutation"
	Incast                         // "incast"
	AllToAll                       // "all-to-all"
	Poisson                        // "poisson"
	Incasts                        // "incasts": incast events arriving as a Poisson process
)

var patternNames = [...]string{Permutation: "permutation", Incast: "incast", AllToAll: "all-to-all", Poisson: "poisson", Incasts: "incasts"}

// String returns the pattern's name in spec strings, or "Pattern(N)" for
// an unknown value.
func (p Pattern) String() string {
	if p >= Permutation && p <= Incasts {
		return patternNames[p]
	}
	return "Pattern(" + strconv.Itoa(int(p)) + ")"
}

// patternKeys lists each pattern's keys in canonical order; required ones
// are marked.
var patternKeys = [...][]struct {
	name     string
	required bool
}{
	Permutation: {{"size", true}, {"start", false}, {"seed", false}},
	Incast:      {{"n", true}, {"size", true}, {"dst", false}, {"start", false}},
	AllToAll:    {{"size", true}, {"start", false}},
	Poisson:     {{"load", true}, {"cdf", true}, {"duration", true}, {"seed", false}},
	Incasts:     {{"n", true}, {"size", true}, {"load", true}, {"duration", true}, {"seed", false}},
}

// Spec is a parsed traffic description. Which fields apply depends on
// Pattern; the others are zero in a valid Spec (see Validate). Specs are
// comparable, and Parse(s.String()) == s for every valid s.
type Spec struct {
	Pattern Pattern

	// Size is the bytes of every flow (permutation, incast, all-to-all).
	Size int64
	// Start is when every flow starts (permutation, incast, all-to-all);
	// default 0.
	Start sim.Time

	// N is the number of incast senders, 1 .. hosts-1 (incast, incasts).
	N int
	// Dst is the incast receiver; default host 0.
	Dst int

	// Load is the offered load of each host for poisson, as a fraction of
	// the host's link rate, in (0, 1]; for incasts, the load the incast
	// events offer, as a fraction of all hosts' rate.
	Load float64
	// CDF names the poisson flow-size distribution: "websearch",
	// "fbhadoop", or the path of a CDF file (see LookupCDF). A path may not
	// contain a comma.
	CDF string
	// Duration is how long poisson flows (incasts events) keep arriving:
	// every flow starts in [0, Duration).
	Duration sim.Time

	// Seed, when HasSeed is set, is the seed of the random patterns
	// (permutation, poisson); it overrides the seed given to Generate.
	Seed    uint64
	HasSeed bool
}

// Parse reads a traffic spec "pattern:key=value,key=value":
//
//	permutation:size=SIZE[,start=TIME][,seed=N]
//	incast:n=N,size=SIZE[,dst=HOST][,start=TIME]
//	all-to-all:size=SIZE[,start=TIME]
//	poisson:load=L,cdf=websearch|fbhadoop|PATH,duration=TIME[,seed=N]
//	incasts:n=N,size=SIZE,load=L,duration=TIME[,seed=N]
//
// SIZE is read by ParseSize ("10MB", "2MiB", "1500"), TIME by
// ParseDuration ("10ms", "0s"), seed as a decimal uint64, load as a
// decimal number in (0, 1]. Keys may come in any order, each at most once.
// A key that a pattern does not take is an error, seed included for the
// patterns that draw no random numbers (incast, all-to-all). Errors name
// the spec and the bad pattern, key or value.
func Parse(spec string) (Spec, error) {
	fail := func(f string, a ...any) (Spec, error) {
		return Spec{}, fmt.Errorf("traffic: spec %q: %s", spec, fmt.Sprintf(f, a...))
	}
	kind, args, _ := strings.Cut(spec, ":")
	var s Spec
	for p := Permutation; p <= Incasts; p++ {
		if patternNames[p] == kind {
			s.Pattern = p
		}
	}
	if s.Pattern == 0 {
		return fail("unknown pattern %q (want permutation, incast, all-to-all, poisson or incasts)", kind)
	}
	keys := patternKeys[s.Pattern]
	seen := map[string]bool{}
	if args != "" {
		for _, kv := range strings.Split(args, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return fail("%q is not key=value", kv)
			}
			known := false
			for _, w := range keys {
				known = known || w.name == k
			}
			if !known {
				names := make([]string, len(keys))
				for i, w := range keys {
					names[i] = w.name
				}
				return fail("unknown key %q for %s (want %s)", k, kind, strings.Join(names, ", "))
			}
			if seen[k] {
				return fail("key %q given twice", k)
			}
			seen[k] = true
			if err := s.set(k, v); err != nil {
				return fail("%s: %v", k, err)
			}
		}
	}
	for _, w := range keys {
		if w.required && !seen[w.name] {
			return fail("missing key %q", w.name)
		}
	}
	return s, nil
}

// set parses the value of key k into s.
func (s *Spec) set(k, v string) error {
	var err error
	switch k {
	case "size":
		s.Size, err = ParseSize(v)
	case "start":
		s.Start, err = ParseDuration(v)
	case "duration":
		s.Duration, err = ParseDuration(v)
		if err == nil && s.Duration <= 0 {
			err = errors.New("duration must be positive")
		}
	case "n", "dst":
		n, e := strconv.Atoi(v)
		switch {
		case e != nil:
			err = fmt.Errorf("%q is not an integer", v)
		case k == "n" && n < 1:
			err = fmt.Errorf("%d senders, want at least 1", n)
		case k == "dst" && n < 0:
			err = fmt.Errorf("host %d is negative", n)
		case k == "n":
			s.N = n
		default:
			s.Dst = n
		}
	case "seed":
		s.Seed, err = strconv.ParseUint(v, 10, 64)
		if err != nil {
			err = fmt.Errorf("%q is not an unsigned 64-bit integer", v)
		}
		s.HasSeed = true
	case "load":
		s.Load, err = strconv.ParseFloat(v, 64)
		if err != nil || strings.Trim(v, "0123456789.eE+-") != "" || !(s.Load > 0 && s.Load <= 1) {
			err = fmt.Errorf("%q is not a number in (0, 1]", v)
		}
	case "cdf":
		if v == "" {
			err = errors.New("empty; want websearch, fbhadoop or the path of a CDF file")
		}
		s.CDF = v
	}
	return err
}

// String returns the spec in canonical form: the pattern, then its keys in
// the order Parse's documentation lists them, sizes by FormatSize,
// durations by sim.Time's String, and optional keys only when they differ
// from their defaults (start=0, dst=0, no seed):
// "permutation:size=10MB", "incast:n=15,size=2MB",
// "poisson:load=0.3,cdf=websearch,duration=10ms,seed=7".
func (s Spec) String() string {
	var b strings.Builder
	b.WriteString(s.Pattern.String())
	sep := byte(':')
	add := func(k, v string) {
		b.WriteByte(sep)
		sep = ','
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	switch s.Pattern {
	case Permutation, Incast, AllToAll:
		if s.Pattern == Incast {
			add("n", strconv.Itoa(s.N))
		}
		add("size", FormatSize(s.Size))
		if s.Dst != 0 {
			add("dst", strconv.Itoa(s.Dst))
		}
		if s.Start != 0 {
			add("start", s.Start.String())
		}
	case Poisson:
		add("load", strconv.FormatFloat(s.Load, 'g', -1, 64))
		add("cdf", s.CDF)
		add("duration", s.Duration.String())
	case Incasts:
		add("n", strconv.Itoa(s.N))
		add("size", FormatSize(s.Size))
		add("load", strconv.FormatFloat(s.Load, 'g', -1, 64))
		add("duration", s.Duration.String())
	}
	if s.HasSeed {
		add("seed", strconv.FormatUint(s.Seed, 10))
	}
	return b.String()
}

// Validate reports whether s is a spec Parse could return: a known
// pattern, its required fields in range, and the fields of other patterns
// zero. Generate validates its spec first.
func (s Spec) Validate() error {
	fail := func(f string, a ...any) error {
		return fmt.Errorf("traffic: invalid %s spec: %s", s.Pattern, fmt.Sprintf(f, a...))
	}
	fixed := s.Pattern == Permutation || s.Pattern == Incast || s.Pattern == AllToAll
	sized := fixed || s.Pattern == Incasts
	random := s.Pattern == Poisson || s.Pattern == Incasts
	switch {
	case s.Pattern < Permutation || s.Pattern > Incasts:
		return fail("unknown pattern")
	case sized && s.Size <= 0:
		return fail("Size %d, want > 0", s.Size)
	case fixed && s.Start < 0:
		return fail("Start %v is negative", s.Start)
	case (s.Pattern == Incast || s.Pattern == Incasts) && s.N < 1:
		return fail("N %d, want at least 1", s.N)
	case s.Pattern == Incast && s.Dst < 0:
		return fail("Dst %d is negative", s.Dst)
	case random && !(s.Load > 0 && s.Load <= 1):
		return fail("Load %v, want (0, 1]", s.Load)
	case s.Pattern == Poisson && (s.CDF == "" || strings.Contains(s.CDF, ",")):
		return fail("CDF %q, want websearch, fbhadoop or a path without commas", s.CDF)
	case random && s.Duration <= 0:
		return fail("Duration %v, want > 0", s.Duration)
	case !sized && s.Size != 0 || !fixed && s.Start != 0:
		return fail("Size applies to permutation, incast, all-to-all and incasts, Start to the first three")
	case s.Pattern != Incast && s.Dst != 0 || s.Pattern != Incast && s.Pattern != Incasts && s.N != 0:
		return fail("N applies to incast and incasts, Dst to incast only")
	case !random && (s.Load != 0 || s.Duration != 0) || s.Pattern != Poisson && s.CDF != "":
		return fail("Load and Duration apply to poisson and incasts, CDF to poisson only")
	case (s.Pattern == Incast || s.Pattern == AllToAll) && s.HasSeed:
		return fail("draws no random numbers, so takes no seed")
	case !s.HasSeed && s.Seed != 0:
		return fail("Seed %d set without HasSeed", s.Seed)
	case math.IsNaN(s.Load):
		return fail("Load is NaN")
	}
	return nil
}
