package traffic

import (
	"math"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The means of the two shipped CDFs, computed by hand from their points as
// the sum over segments of (size_i-1 + size_i)/2 x (percent_i -
// percent_i-1), divided by 100.
//
// WebSearch:
//
//	5,000 x 15 + 15,000 x 5 + 25,000 x 10 + 40,000 x 10 + 65,000 x 13
//	+ 140,000 x 7 + 600,000 x 10 + 1,500,000 x 10 + 3,500,000 x 10
//	+ 7,500,000 x 7 + 20,000,000 x 3
//	= 75,000 + 75,000 + 250,000 + 400,000 + 845,000 + 980,000 + 6,000,000
//	+ 15,000,000 + 35,000,000 + 52,500,000 + 60,000,000 = 171,125,000
//	mean = 1,711,250 bytes.
//
// FBHadoop:
//
//	50 x 1 + 150 x 1 + 250 x 3 + 325 x 10 + 375 x 5 + 450 x 10 + 550 x 10
//	+ 650 x 10 + 850 x 10 + 1,500 x 7 + 4,500 x 3 + 18,500 x 2
//	+ 40,000 x 10 + 65,000 x 5 + 100,000 x 3 + 210,000 x 5
//	+ 650,000 x 2.5 + 1,500,000 x 1.5 + 6,000,000 x 1
//	= 50 + 150 + 750 + 3,250 + 1,875 + 4,500 + 5,500 + 6,500 + 8,500
//	+ 10,500 + 13,500 + 37,000 + 400,000 + 325,000 + 300,000 + 1,050,000
//	+ 1,625,000 + 2,250,000 + 6,000,000 = 12,042,075
//	mean = 120,420.75 bytes.
func TestCDFMeans(t *testing.T) {
	assert.InDelta(t, 1711250.0, WebSearch.Mean(), 1e-6)
	assert.InDelta(t, 120420.75, FBHadoop.Mean(), 1e-6)
	tiny := mustRead(t, "testdata/tiny_cdf.txt")
	// (0+1000)/2 x 50 + (1000+3000)/2 x 50 = 25,000 + 100,000, /100 = 1,250.
	assert.InDelta(t, 1250.0, tiny.Mean(), 1e-9)
}

func mustRead(t *testing.T, path string) CDF {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	c, err := ReadCDF(f, path)
	require.NoError(t, err)
	return c
}

// The points are exactly those of fabric-facts §6.
func TestCDFPoints(t *testing.T) {
	ws := "0 0; 10000 15; 20000 20; 30000 30; 50000 40; 80000 53; 200000 60; 1000000 70; 2000000 80; 5000000 90; 10000000 97; 30000000 100"
	fb := "0 0; 100 1; 200 2; 300 5; 350 15; 400 20; 500 30; 600 40; 700 50; 1000 60; 2000 67; 7000 70; 30000 72; 50000 82; 80000 87; 120000 90; 300000 95; 1000000 97.5; 2000000 99; 10000000 100"
	for _, tc := range []struct {
		c    CDF
		text string
	}{{WebSearch, ws}, {FBHadoop, fb}} {
		file, err := ReadCDF(strings.NewReader(strings.ReplaceAll(tc.text, "; ", "\n")), tc.c.Name())
		require.NoError(t, err)
		assert.Equal(t, file.Points(), tc.c.Points(), tc.c.Name())
	}
	assert.Equal(t, "websearch", WebSearch.Name())
	assert.Equal(t, "fbhadoop", FBHadoop.Name())
}

// Sample at every knot is the knot's size (the first knot, size 0, is
// floored to 1 byte); halfway between two knots it is the midpoint.
func TestSampleKnots(t *testing.T) {
	for _, c := range []CDF{WebSearch, FBHadoop} {
		pts := c.Points()
		for i, p := range pts {
			want := int64(p.Size)
			if want < 1 {
				want = 1
			}
			assert.Equal(t, want, c.Sample(p.Percent/100), "%s knot %d", c.Name(), i)
			if i > 0 {
				a := pts[i-1]
				mid := c.Sample((a.Percent + p.Percent) / 200)
				assert.InDelta(t, (a.Size+p.Size)/2, float64(mid), 0.5, "%s between knots %d and %d", c.Name(), i-1, i)
			}
		}
	}
	// Hand-computed: WebSearch at u = 0.5 lies between 50,000 (40%) and
	// 80,000 (53%): 50,000 + 30,000 x (50-40)/(53-40) = 73,076.92 -> 73,077;
	// at 0.99, between 10,000,000 (97%) and 30,000,000 (100%):
	// 10,000,000 + 20,000,000 x 2/3 = 23,333,333.33 -> 23,333,333.
	assert.Equal(t, int64(73077), WebSearch.Sample(0.5))
	// FBHadoop at 0.975 is the knot 1,000,000; at 0.98: 1e6 + 1e6 x 0.5/1.5.
	assert.Equal(t, int64(1000000), FBHadoop.Sample(0.975))
	assert.Equal(t, int64(1333333), FBHadoop.Sample(0.98))
	// Ends and out-of-range: u <= 0 or NaN gives the first size (floored to
	// 1), u >= 1 the last.
	assert.Equal(t, int64(1), WebSearch.Sample(0))
	assert.Equal(t, int64(1), WebSearch.Sample(-3))
	assert.Equal(t, int64(1), WebSearch.Sample(math.NaN()))
	assert.Equal(t, int64(30000000), WebSearch.Sample(1))
	assert.Equal(t, int64(30000000), WebSearch.Sample(math.Inf(1)))
	assert.Equal(t, int64(23333333), WebSearch.Sample(0.99))
	assert.Equal(t, int64(0), CDF{}.Sample(0.5))
	assert.Equal(t, 0.0, CDF{}.Mean())
}

func TestSampleAllocs(t *testing.T) {
	assert.Zero(t, testing.AllocsPerRun(100, func() { _ = WebSearch.Sample(0.77) }))
}

func TestReadCDFErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "c:0: 0 points, want at least 2"},
		{"0 0\n", "c:1: 1 points, want at least 2"},
		{"0 0\n10 50\n", "c:2: the last point's percent is 50, want 100"},
		{"0 0\n\n10 50 7\n", "c:3: 3 fields, want 2"},
		{"0 0\nx 50\n", `c:2: size "x" is not a number`},
		{"0 0\n10 y\n", `c:2: percent "y" is not a number`},
		{"5 1\n10 100\n", "c:1: the first point's percent is 1, want 0"},
		{"0 0\n10 50\n10 100\n", "c:3: size 10 does not exceed the previous point's 10"},
		{"0 0\n10 50\n20 50\n", "c:3: percent 50 does not exceed the previous point's 50"},
		{"0 0\n10 101\n", "c:2: percent 101 is not between 0 and 100"},
		{"-1 0\n10 100\n", "c:1: size -1 is not between 0"},
		{"0 0\nNaN 100\n", "c:2: size NaN is not between 0"},
		{"0 0\n1e300 100\n", "c:2: size 1e+300 is not between 0"},
	} {
		_, err := ReadCDF(strings.NewReader(tc.in), "c")
		if assert.Error(t, err, "%q", tc.in) {
			assert.Contains(t, err.Error(), tc.want, "%q", tc.in)
		}
	}
	_, err := NewCDF("mine", []Point{{0, 0}, {5, 40}, {4, 100}})
	assert.EqualError(t, err, "traffic: CDF mine: point 2: size 4 does not exceed the previous point's 5 (sizes must increase strictly)")
	_, err = NewCDF("mine", []Point{{0, 0}})
	assert.EqualError(t, err, "traffic: CDF mine: 1 points, want at least 2")
}

func TestLookupCDF(t *testing.T) {
	c, err := LookupCDF("websearch")
	require.NoError(t, err)
	assert.Equal(t, WebSearch.Points(), c.Points())
	c, err = LookupCDF("fbhadoop")
	require.NoError(t, err)
	assert.Equal(t, FBHadoop.Points(), c.Points())
	c, err = LookupCDF("testdata/tiny_cdf.txt")
	require.NoError(t, err)
	assert.Equal(t, []Point{{0, 0}, {1000, 50}, {3000, 100}}, c.Points())
	_, err = LookupCDF("WebSearch")
	assert.ErrorContains(t, err, `cdf "WebSearch" is not websearch or fbhadoop, and not a readable file`)
	// Points returns a copy: changing it leaves the CDF alone.
	p := WebSearch.Points()
	p[1].Size = 7
	assert.Equal(t, int64(10000), WebSearch.Sample(0.15))
}
