package traffic

import (
	"strings"
	"testing"

	"github.com/rocekit/rocekit/sim"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in    string
		want  Spec
		canon string
	}{
		{"permutation:size=10MB", Spec{Pattern: Permutation, Size: 10_000_000}, "permutation:size=10MB"},
		{"permutation:seed=3,size=1MiB,start=1.5us", Spec{Pattern: Permutation, Size: 1 << 20, Start: 1500 * sim.Nanosecond, Seed: 3, HasSeed: true},
			"permutation:size=1MiB,start=1.5us,seed=3"},
		{"permutation:size=1500,start=0s", Spec{Pattern: Permutation, Size: 1500}, "permutation:size=1500"},
		{"incast:n=15,size=2MB", Spec{Pattern: Incast, N: 15, Size: 2_000_000}, "incast:n=15,size=2MB"},
		{"incast:size=0.5KiB,n=2,dst=7,start=10ms", Spec{Pattern: Incast, N: 2, Size: 512, Dst: 7, Start: 10 * sim.Millisecond},
			"incast:n=2,size=512,dst=7,start=10ms"},
		{"incast:n=1,size=2GB,dst=0", Spec{Pattern: Incast, N: 1, Size: 2e9}, "incast:n=1,size=2GB"},
		{"all-to-all:size=1MB", Spec{Pattern: AllToAll, Size: 1e6}, "all-to-all:size=1MB"},
		{"all-to-all:size=3GiB", Spec{Pattern: AllToAll, Size: 3 << 30}, "all-to-all:size=3GiB"},
		{"all-to-all:size=1.5KB", Spec{Pattern: AllToAll, Size: 1500}, "all-to-all:size=1500"},
		{"all-to-all:size=64B", Spec{Pattern: AllToAll, Size: 64}, "all-to-all:size=64"},
		{"poisson:load=0.3,cdf=websearch,duration=10ms", Spec{Pattern: Poisson, Load: 0.3, CDF: "websearch", Duration: 10 * sim.Millisecond},
			"poisson:load=0.3,cdf=websearch,duration=10ms"},
		{"poisson:seed=18446744073709551615,duration=2500ns,cdf=/tmp/a=b.txt,load=1", Spec{Pattern: Poisson, Load: 1, CDF: "/tmp/a=b.txt", Duration: 2500 * sim.Nanosecond, Seed: 1<<64 - 1, HasSeed: true},
			"poisson:load=1,cdf=/tmp/a=b.txt,duration=2.5us,seed=18446744073709551615"},
		{"poisson:load=.25,cdf=fbhadoop,duration=1s,seed=0", Spec{Pattern: Poisson, Load: 0.25, CDF: "fbhadoop", Duration: sim.Second, HasSeed: true},
			"poisson:load=0.25,cdf=fbhadoop,duration=1s,seed=0"},
	} {
		s, err := Parse(tc.in)
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, s, tc.in)
		assert.Equal(t, tc.canon, s.String(), tc.in)
		assert.NoError(t, s.Validate(), tc.in)
		again, err := Parse(s.String())
		require.NoError(t, err)
		assert.Equal(t, s, again)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `traffic: spec "": unknown pattern "" (want permutation, incast, all-to-all, poisson or incasts)`},
		{"perm:size=1", `unknown pattern "perm"`},
		{"permutation", `traffic: spec "permutation": missing key "size"`},
		{"permutation:", `missing key "size"`},
		{"permutation:size", `"size" is not key=value`},
		{"permutation:size=1,", `"" is not key=value`},
		{"permutation:size=1,n=3", `unknown key "n" for permutation (want size, start, seed)`},
		{"permutation:size=1,size=2", `key "size" given twice`},
		{"permutation:size=0", `size: size "0": want a positive number of bytes`},
		{"permutation:size=-5", `size: size "-5": want a positive whole number of bytes`},
		{"permutation:size=10mb", `size: size "10mb": want a positive whole number of bytes`},
		{"permutation:size=1.5B", `not a whole number`},
		{"permutation:size=0.1KiB", `size "0.1KiB"`},
		{"permutation:size=10000000000GB", `too large`},
		{"permutation:size=1e6", `not a plain decimal number`},
		{"permutation:size=1.MB", `no digits after the point`},
		{"permutation:size=MB", `no number`},
		{"permutation:size=1,start=5", `start: duration "5": unknown unit`},
		{"permutation:size=1,start=-5ns", `start: duration "-5ns"`},
		{"permutation:size=1,start=0.5ps", `not a whole number`},
		{"permutation:size=1,seed=-1", `seed: "-1" is not an unsigned 64-bit integer`},
		{"permutation:size=1,seed=18446744073709551616", `seed: "18446744073709551616" is not`},
		{"incast:size=1MB", `missing key "n"`},
		{"incast:n=15", `missing key "size"`},
		{"incast:n=0,size=1", `n: 0 senders, want at least 1`},
		{"incast:n=x,size=1", `n: "x" is not an integer`},
		{"incast:n=2,size=1,dst=-1", `dst: host -1 is negative`},
		{"incast:n=2,size=1,seed=4", `unknown key "seed" for incast (want n, size, dst, start)`},
		{"all-to-all:size=1,seed=4", `unknown key "seed" for all-to-all (want size, start)`},
		{"all-to-all:size=1,dst=4", `unknown key "dst" for all-to-all`},
		{"poisson:load=0.3,cdf=websearch", `missing key "duration"`},
		{"poisson:load=0.3,duration=1ms", `missing key "cdf"`},
		{"poisson:cdf=websearch,duration=1ms", `missing key "load"`},
		{"poisson:load=0,cdf=websearch,duration=1ms", `load: "0" is not a number in (0, 1]`},
		{"poisson:load=1.01,cdf=websearch,duration=1ms", `load: "1.01" is not a number in (0, 1]`},
		{"poisson:load=NaN,cdf=websearch,duration=1ms", `load: "NaN" is not a number`},
		{"poisson:load=0x1p-2,cdf=websearch,duration=1ms", `load: "0x1p-2" is not a number in (0, 1]`},
		{"poisson:load=0.3,cdf=,duration=1ms", `cdf: empty`},
		{"poisson:load=0.3,cdf=websearch,duration=0s", `duration: duration must be positive`},
		{"poisson:load=0.3,cdf=websearch,duration=1ms,size=1", `unknown key "size" for poisson (want load, cdf, duration, seed)`},
	} {
		_, err := Parse(tc.in)
		if assert.Error(t, err, tc.in) {
			assert.Contains(t, err.Error(), tc.want, tc.in)
			assert.True(t, strings.HasPrefix(err.Error(), "traffic: spec "+`"`+tc.in+`"`), err.Error())
		}
	}
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		s    Spec
		want string
	}{
		{Spec{}, "unknown pattern"},
		{Spec{Pattern: 9, Size: 1}, "unknown pattern"},
		{Spec{Pattern: Permutation}, "Size 0, want > 0"},
		{Spec{Pattern: Permutation, Size: 1, Start: -1}, "Start -1ps is negative"},
		{Spec{Pattern: Permutation, Size: 1, Load: 0.5}, "Load and Duration apply to poisson and incasts, CDF to poisson only"},
		{Spec{Pattern: Permutation, Size: 1, N: 2}, "N applies to incast and incasts, Dst to incast only"},
		{Spec{Pattern: Permutation, Size: 1, Seed: 2}, "Seed 2 set without HasSeed"},
		{Spec{Pattern: Incast, Size: 1}, "N 0, want at least 1"},
		{Spec{Pattern: Incast, Size: 1, N: 1, Dst: -2}, "Dst -2 is negative"},
		{Spec{Pattern: Incast, Size: 1, N: 1, HasSeed: true}, "takes no seed"},
		{Spec{Pattern: Poisson, Load: 0.5, CDF: "websearch"}, "Duration 0s, want > 0"},
		{Spec{Pattern: Poisson, Load: 0.5, CDF: "a,b", Duration: 1}, `CDF "a,b"`},
		{Spec{Pattern: Poisson, Load: 2, CDF: "websearch", Duration: 1}, "Load 2, want (0, 1]"},
		{Spec{Pattern: Poisson, Load: 0.5, CDF: "websearch", Duration: 1, Size: 1}, "Size applies to permutation, incast, all-to-all and incasts"},
		{Spec{Pattern: Incasts, Size: 1, N: 2, Load: 0.02}, "Duration 0s, want > 0"},
		{Spec{Pattern: Incasts, Size: 1, N: 2, Load: 0.02, Duration: 1, CDF: "websearch"}, "CDF to poisson only"},
		{Spec{Pattern: Incasts, Size: 1, N: 2, Load: 0.02, Duration: 1, Dst: 1}, "Dst to incast only"},
	} {
		assert.ErrorContains(t, tc.s.Validate(), tc.want, "%#v", tc.s)
	}
	assert.Equal(t, "Pattern(9)", Pattern(9).String())
}

// Every valid Spec survives String and Parse unchanged.
func TestSpecRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var s Spec
		s.Pattern = Pattern(rapid.IntRange(1, 4).Draw(rt, "pattern"))
		if s.Pattern != Poisson {
			s.Size = rapid.Int64Range(1, 1<<62).Draw(rt, "size")
			if rapid.Bool().Draw(rt, "round") {
				s.Size = rapid.Int64Range(1, 1<<20).Draw(rt, "small") * rapid.SampledFrom([]int64{1, 1e3, 1e6, 1e9, 1 << 10, 1 << 20, 1 << 30}).Draw(rt, "unit")
			}
			s.Start = sim.Time(rapid.Int64Range(0, 1<<62).Draw(rt, "start"))
		}
		if s.Pattern == Incast {
			s.N = rapid.IntRange(1, 1<<30).Draw(rt, "n")
			s.Dst = rapid.IntRange(0, 1<<30).Draw(rt, "dst")
		}
		if s.Pattern == Poisson {
			s.Load = rapid.Float64Range(0, 1).Filter(func(f float64) bool { return f > 0 }).Draw(rt, "load")
			s.CDF = rapid.SampledFrom([]string{"websearch", "fbhadoop", "x/y=z.txt", "-"}).Draw(rt, "cdf")
			s.Duration = sim.Time(rapid.Int64Range(1, 1<<62).Draw(rt, "dur"))
		}
		if s.Pattern == Permutation || s.Pattern == Poisson {
			s.HasSeed = rapid.Bool().Draw(rt, "hasSeed")
			if s.HasSeed {
				s.Seed = rapid.Uint64().Draw(rt, "seed")
			}
		}
		if err := s.Validate(); err != nil {
			rt.Fatalf("%#v: %v", s, err)
		}
		got, err := Parse(s.String())
		if err != nil {
			rt.Fatalf("%s: %v", s, err)
		}
		if got != s {
			rt.Fatalf("%s parsed to %#v, want %#v", s, got, s)
		}
	})
}

func TestUnits(t *testing.T) {
	for in, want := range map[string]int64{
		"1": 1, "10MB": 10_000_000, "1KB": 1000, "1GB": 1e9, "1KiB": 1024, "1MiB": 1 << 20, "1GiB": 1 << 30,
		"7B": 7, "2.5MB": 2_500_000, "0.25KiB": 256, "9223372036854775807": 1<<63 - 1, "010": 10,
	} {
		got, err := ParseSize(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	for n, want := range map[int64]string{10_000_000: "10MB", 1 << 20: "1MiB", 1500: "1500", 1e9: "1GB", 3 << 30: "3GiB", 2048000: "2048KB", 1: "1"} {
		assert.Equal(t, want, FormatSize(n))
	}
	for in, want := range map[string]sim.Time{
		"0s": 0, "1ps": 1, "10ns": 10_000, "1.5us": 1_500_000, "10ms": 10 * sim.Millisecond, "2s": 2 * sim.Second, "0.000000000001s": 1,
	} {
		got, err := ParseDuration(in)
		if assert.NoError(t, err, in) {
			assert.Equal(t, want, got, in)
		}
	}
	_, err := ParseDuration("9223372036854775808ps")
	assert.ErrorContains(t, err, "too large")
	_, err = ParseDuration("1h")
	assert.ErrorContains(t, err, "unknown unit")
}
