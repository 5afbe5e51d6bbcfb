package traffic

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Point is one knot of a flow-size CDF: Percent percent of flows are at
// most Size bytes.
type Point struct {
	Size    float64 // bytes
	Percent float64 // cumulative, 0 .. 100
}

// CDF is a piecewise-linear flow-size distribution, as HPCC ns-3's
// traffic_gen uses them: between two knots the size is uniform, so the
// inverse CDF is linear interpolation between the knots (fabric-facts §6).
// A valid CDF has at least two points, starts at 0 percent, ends at 100,
// and both Size and Percent increase strictly from point to point (the
// checks of traffic_gen's custom_rand.py), with sizes from 0 to MaxCDFSize.
//
// The zero CDF has no points; it samples 0 and has mean 0.
type CDF struct {
	name string
	pts  []Point
	q    []float64 // Percent / 100, for Sample
}

// MaxCDFSize is the largest size a CDF may name, 2^50 bytes (1 PiB): below
// 2^53, so sizes are exact in a float64.
const MaxCDFSize = 1 << 50

// WebSearch is the web-search flow-size CDF (DCTCP's measurement, as
// HPCC ns-3's traffic_gen/WebSearch_distribution.txt gives it; fabric-facts
// §6). Its mean is 1,711,250 bytes.
var WebSearch = mustCDF("websearch", []Point{
	{0, 0}, {10000, 15}, {20000, 20}, {30000, 30}, {50000, 40}, {80000, 53},
	{200000, 60}, {1000000, 70}, {2000000, 80}, {5000000, 90}, {10000000, 97}, {30000000, 100},
})

// FBHadoop is the Facebook Hadoop flow-size CDF (HPCC ns-3's
// traffic_gen/FbHdp_distribution.txt; fabric-facts §6). Its mean is
// 120,420.75 bytes.
var FBHadoop = mustCDF("fbhadoop", []Point{
	{0, 0}, {100, 1}, {200, 2}, {300, 5}, {350, 15}, {400, 20}, {500, 30},
	{600, 40}, {700, 50}, {1000, 60}, {2000, 67}, {7000, 70}, {30000, 72},
	{50000, 82}, {80000, 87}, {120000, 90}, {300000, 95}, {1000000, 97.5},
	{2000000, 99}, {10000000, 100},
})

func mustCDF(name string, pts []Point) CDF {
	c, err := NewCDF(name, pts)
	if err != nil {
		panic(err)
	}
	return c
}

// NewCDF checks points (see CDF) and returns the CDF they describe, named
// name. Errors name the point by its index.
func NewCDF(name string, points []Point) (CDF, error) {
	for i, p := range points {
		if msg := checkPoint(p, points[:i]); msg != "" {
			return CDF{}, fmt.Errorf("traffic: CDF %s: point %d: %s", name, i, msg)
		}
	}
	if msg := checkEnd(points); msg != "" {
		return CDF{}, fmt.Errorf("traffic: CDF %s: %s", name, msg)
	}
	return build(name, slices.Clone(points)), nil
}

func build(name string, pts []Point) CDF {
	q := make([]float64, len(pts))
	for i, p := range pts {
		q[i] = p.Percent / 100
	}
	return CDF{name: name, pts: pts, q: q}
}

// checkPoint checks p, which follows prev; it returns "" or what is wrong.
func checkPoint(p Point, prev []Point) string {
	switch {
	case !(p.Size >= 0 && p.Size <= MaxCDFSize):
		return fmt.Sprintf("size %v is not between 0 and %d bytes", p.Size, int64(MaxCDFSize))
	case !(p.Percent >= 0 && p.Percent <= 100):
		return fmt.Sprintf("percent %v is not between 0 and 100", p.Percent)
	case len(prev) == 0 && p.Percent != 0:
		return fmt.Sprintf("the first point's percent is %v, want 0", p.Percent)
	case len(prev) > 0 && p.Size <= prev[len(prev)-1].Size:
		return fmt.Sprintf("size %v does not exceed the previous point's %v (sizes must increase strictly)", p.Size, prev[len(prev)-1].Size)
	case len(prev) > 0 && p.Percent <= prev[len(prev)-1].Percent:
		return fmt.Sprintf("percent %v does not exceed the previous point's %v (percents must increase strictly)", p.Percent, prev[len(prev)-1].Percent)
	}
	return ""
}

// checkEnd checks the whole list once every point has passed checkPoint.
func checkEnd(pts []Point) string {
	switch {
	case len(pts) < 2:
		return fmt.Sprintf("%d points, want at least 2", len(pts))
	case pts[len(pts)-1].Percent != 100:
		return fmt.Sprintf("the last point's percent is %v, want 100", pts[len(pts)-1].Percent)
	}
	return ""
}

// ReadCDF reads a CDF in the format of HPCC ns-3's traffic_gen
// distribution files: one point per line, "size percent" (two numbers
// separated by blanks; decimal fractions and exponents allowed). Blank
// lines are skipped; nothing else is. name is used in errors, which read
// "name:line: message", and as the CDF's name.
func ReadCDF(r io.Reader, name string) (CDF, error) {
	sc := bufio.NewScanner(r)
	var pts []Point
	line := 0
	for sc.Scan() {
		line++
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			return CDF{}, fmt.Errorf("%s:%d: %d fields, want 2: <size bytes> <cumulative percent>", name, line, len(f))
		}
		var p Point
		for i, dst := range []*float64{&p.Size, &p.Percent} {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return CDF{}, fmt.Errorf("%s:%d: %s %q is not a number", name, line, []string{"size", "percent"}[i], f[i])
			}
			*dst = v
		}
		if msg := checkPoint(p, pts); msg != "" {
			return CDF{}, fmt.Errorf("%s:%d: %s", name, line, msg)
		}
		if len(pts) >= maxCDFPoints {
			return CDF{}, fmt.Errorf("%s:%d: more than %d points", name, line, maxCDFPoints)
		}
		pts = append(pts, p)
	}
	if err := sc.Err(); err != nil {
		return CDF{}, fmt.Errorf("%s:%d: %v", name, line+1, err)
	}
	if msg := checkEnd(pts); msg != "" {
		return CDF{}, fmt.Errorf("%s:%d: %s", name, line, msg)
	}
	return build(name, pts), nil
}

const maxCDFPoints = 1 << 20

// LookupCDF returns the CDF a spec's cdf= names: "websearch" is WebSearch,
// "fbhadoop" is FBHadoop (exactly these spellings), and anything else is
// the path of a file ReadCDF reads.
func LookupCDF(name string) (CDF, error) {
	switch name {
	case "websearch":
		return WebSearch, nil
	case "fbhadoop":
		return FBHadoop, nil
	}
	f, err := os.Open(name)
	if err != nil {
		return CDF{}, fmt.Errorf("traffic: cdf %q is not websearch or fbhadoop, and not a readable file: %w", name, err)
	}
	defer f.Close()
	return ReadCDF(f, name)
}

// Name returns the name the CDF was made with.
func (c CDF) Name() string { return c.name }

// Points returns a copy of the CDF's knots.
func (c CDF) Points() []Point { return slices.Clone(c.pts) }

// Sample returns the flow size at cumulative probability u, in [0, 1): the
// inverse CDF by linear interpolation between the knots (as traffic_gen
// does), rounded to the nearest byte. Two choices: a size below one byte
// (u within the first stretch of a CDF starting at size 0) is returned as 1
// byte, since a flow carries at least one byte (traffic_gen does the same);
// u <= 0 or NaN gives the first point's size, u >= 1 the last's. At a knot,
// Sample(Percent/100) is the knot's Size. Sample does not allocate.
func (c CDF) Sample(u float64) int64 {
	if len(c.q) == 0 {
		return 0
	}
	var x float64
	switch {
	case !(u > 0):
		x = c.pts[0].Size
	case u >= 1:
		x = c.pts[len(c.pts)-1].Size
	default:
		i, _ := slices.BinarySearch(c.q, u) // first knot with q >= u; 1 <= i <= last
		a, b := c.pts[i-1], c.pts[i]
		x = a.Size + (b.Size-a.Size)*(u-c.q[i-1])/(c.q[i]-c.q[i-1])
	}
	n := int64(math.Round(x))
	if n < 1 {
		n = 1
	}
	return n
}

// Mean returns the mean flow size of the piecewise-linear distribution, in
// bytes: the sum over segments of (size_i + size_i-1)/2 x (percent_i -
// percent_i-1)/100 (traffic_gen's getAvg). Sample's rounding to whole
// bytes, and its floor of 1 byte, move the mean of its draws by less than
// one byte.
func (c CDF) Mean() float64 {
	s := 0.0
	for i := 1; i < len(c.pts); i++ {
		a, b := c.pts[i-1], c.pts[i]
		s += (a.Size + b.Size) / 2 * (b.Percent - a.Percent)
	}
	return s / 100
}
