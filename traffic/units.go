package traffic

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/sim"
)

type unit struct {
	suffix string
	mult   int64
}

// sizeUnits are tried in this order; the longer suffixes come before "B".
var sizeUnits = []unit{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
}

// sizeFormat is the order FormatSize tries: decimal before binary, larger
// before smaller.
var sizeFormat = []unit{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

var timeUnits = []unit{
	{"ps", int64(sim.Picosecond)}, {"ns", int64(sim.Nanosecond)}, {"us", int64(sim.Microsecond)},
	{"ms", int64(sim.Millisecond)}, {"s", int64(sim.Second)},
}

// ParseSize parses a byte count: a plain number of bytes ("1500"), or a
// number with a unit: B; KB, MB, GB (decimal: 1 MB = 1,000,000 bytes, as
// htsim's "10 MB" flows are 10,000,000 bytes); KiB, MiB, GiB (binary:
// 1 MiB = 1,048,576 bytes). The number may have a decimal fraction
// ("1.5MB", "0.5KiB") if the result is a whole number of bytes. The result
// is positive.
func ParseSize(s string) (int64, error) {
	num, mult := s, int64(1)
	for _, u := range sizeUnits {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			num, mult = n, u.mult
			break
		}
	}
	v, err := scaled(num, mult)
	if err != nil {
		return 0, errors.New("size " + strconv.Quote(s) + ": want a positive whole number of bytes with unit B, KB, MB, GB, KiB, MiB or GiB (" + err.Error() + ")")
	}
	if v <= 0 {
		return 0, errors.New("size " + strconv.Quote(s) + ": want a positive number of bytes")
	}
	return v, nil
}

// FormatSize formats a byte count in the form ParseSize reads: in the
// largest decimal unit (GB, MB, KB) that keeps it exact, else the largest
// binary one (GiB, MiB, KiB), else as plain bytes: 10000000 is "10MB",
// 1048576 "1MiB", 1500 "1500" (fractions are never written).
func FormatSize(n int64) string {
	if n > 0 {
		for _, u := range sizeFormat {
			if n%u.mult == 0 {
				return strconv.FormatInt(n/u.mult, 10) + u.suffix
			}
		}
	}
	return strconv.FormatInt(n, 10)
}

// ParseDuration parses a non-negative duration with a unit: ps, ns, us, ms
// or s ("10ms", "1.5us", "0s"). The number may have a decimal fraction if
// the result is a whole number of picoseconds. It reads every string
// sim.Time's String writes for a non-negative time.
func ParseDuration(s string) (sim.Time, error) {
	for _, u := range timeUnits {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			v, err := scaled(num, u.mult)
			if err != nil {
				return 0, errors.New("duration " + strconv.Quote(s) + ": want a non-negative whole number of picoseconds (" + err.Error() + ")")
			}
			return sim.Time(v), nil
		}
	}
	return 0, errors.New("duration " + strconv.Quote(s) + ": unknown unit, want ps, ns, us, ms or s")
}

// scaled returns the decimal number num ("12", "1.5", ".5") times mult,
// exactly. num has no sign and no exponent; the result must be whole and
// fit an int64.
func scaled(num string, mult int64) (int64, error) {
	ip, fp, hasDot := strings.Cut(num, ".")
	if ip == "" && fp == "" {
		return 0, errors.New("no number")
	}
	if hasDot && fp == "" {
		return 0, errors.New("no digits after the point")
	}
	for _, part := range []string{ip, fp} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return 0, errors.New("not a plain decimal number")
			}
		}
	}
	fp = strings.TrimRight(fp, "0")
	if len(ip)+len(fp) > 40 {
		return 0, errors.New("too many digits")
	}
	var n big.Int
	if _, ok := n.SetString("0"+ip+fp, 10); !ok {
		return 0, errors.New("not a number")
	}
	n.Mul(&n, big.NewInt(mult))
	var den, rem big.Int
	den.Exp(big.NewInt(10), big.NewInt(int64(len(fp))), nil)
	n.QuoRem(&n, &den, &rem)
	if rem.Sign() != 0 {
		return 0, errors.New("not a whole number")
	}
	if !n.IsInt64() || n.Int64() > math.MaxInt64 {
		return 0, errors.New("too large")
	}
	return n.Int64(), nil
}
