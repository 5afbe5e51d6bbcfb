package sim_test

import (
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/sim"
)

func TestTimeUnits(t *testing.T) {
	assert.Equal(t, sim.Time(1), sim.Picosecond)
	assert.Equal(t, sim.Time(1_000), sim.Nanosecond)
	assert.Equal(t, sim.Time(1_000_000), sim.Microsecond)
	assert.Equal(t, sim.Time(1_000_000_000), sim.Millisecond)
	assert.Equal(t, sim.Time(1_000_000_000_000), sim.Second)
}

func TestTimeString(t *testing.T) {
	for _, c := range []struct {
		t    sim.Time
		want string
	}{
		{0, "0s"},
		{1, "1ps"},
		{999, "999ps"},
		{1000, "1ns"},
		{1500, "1.5ns"},
		{81920, "81.92ns"},
		{1234000, "1.234us"},
		{1234567, "1.234567us"},
		{sim.Millisecond, "1ms"},
		{2*sim.Second + 5*sim.Picosecond, "2.000000000005s"},
		{-1500, "-1.5ns"},
		{sim.MaxTime, "9223372.036854775807s"},
		{math.MinInt64, "-9223372.036854775808s"},
	} {
		assert.Equal(t, c.want, c.t.String(), "%d ps", int64(c.t))
	}
}

func TestTimeConversions(t *testing.T) {
	assert.Equal(t, 81.92, sim.Time(81920).Nanoseconds())
	assert.Equal(t, 1.5, (1500 * sim.Nanosecond).Microseconds())
	assert.Equal(t, 0.25, (250 * sim.Millisecond).Seconds())
	assert.Equal(t, int64(7), sim.Time(7).Picoseconds())
	assert.Equal(t, 81*time.Nanosecond, sim.Time(81920).Duration())
	assert.Equal(t, 3*sim.Microsecond, sim.FromDuration(3*time.Microsecond))
	assert.Equal(t, sim.MaxTime, sim.FromDuration(time.Duration(math.MaxInt64)))
	assert.Equal(t, -sim.MaxTime, sim.FromDuration(time.Duration(math.MinInt64)))
	assert.Equal(t, 1500*sim.Picosecond, sim.FromSeconds(1.5e-9))
	assert.Equal(t, sim.MaxTime, sim.FromSeconds(1e300))
	assert.Equal(t, -sim.MaxTime, sim.FromSeconds(-1e300))
	assert.Equal(t, sim.Time(0), sim.FromSeconds(math.NaN()))
}

func TestTxTime(t *testing.T) {
	assert.Equal(t, sim.Time(81920), sim.TxTime(1024, 100e9), "1024 B at 100 Gb/s")
	assert.Equal(t, sim.Time(80), sim.TxTime(1, 100e9))
	assert.Equal(t, sim.Time(320), sim.TxTime(1, 25e9))
	assert.Equal(t, sim.Time(0), sim.TxTime(0, 100e9))
	// 8 bits at 3 b/s: 2.666...s rounds up to the next picosecond.
	assert.Equal(t, sim.Time(2666666666667), sim.TxTime(1, 3))
	// 1 byte at 1 b/s is 8 s; a huge frame at 1 b/s saturates.
	assert.Equal(t, 8*sim.Second, sim.TxTime(1, 1))
	assert.Equal(t, sim.MaxTime, sim.TxTime(math.MaxInt, 1))
	assert.Panics(t, func() { sim.TxTime(-1, 1) })
	assert.Panics(t, func() { sim.TxTime(1, 0) })
}

// TxTime equals ceil(bytes*8e12/bps) computed with big integers.
func TestTxTimeExact(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, int(min(1<<40, int64(math.MaxInt)))).Draw(t, "bytes")
		bps := rapid.Int64Range(1, 1e13).Draw(t, "bps")
		num := new(big.Int).Mul(big.NewInt(int64(n)), big.NewInt(8e12))
		den := big.NewInt(bps)
		q, r := new(big.Int).QuoRem(num, den, new(big.Int))
		if r.Sign() != 0 {
			q.Add(q, big.NewInt(1))
		}
		want := sim.MaxTime
		if q.IsInt64() {
			want = sim.Time(q.Int64())
		}
		require.Equal(t, want, sim.TxTime(n, bps))
	})
}
