package cc

import (
	"math"
	"testing"

	"github.com/rocekit/rocekit/sim"
)

const us = sim.Microsecond

func newDCQCN(t *testing.T, p DCQCNParams, line int64) *DCQCN {
	t.Helper()
	d, err := NewDCQCN(p, line)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// A CNP from line rate with alpha = 1 halves RC, sets RT to the old RC,
// and alpha stays (1-g)*1 + g = 1.
func TestDCQCNOneCNPHalves(t *testing.T) {
	p, _ := Preset("paper")
	d := newDCQCN(t, p, 40e9)
	if d.Rate() != 40e9 || d.NextWake() != sim.MaxTime {
		t.Fatalf("start: rate %d wake %v, want 40e9 and never", d.Rate(), d.NextWake())
	}
	d.OnCNP(7 * us)
	if d.Rate() != 20e9 || d.TargetRate() != 40e9 {
		t.Fatalf("after CNP: RC %d RT %d, want 20e9 40e9", d.Rate(), d.TargetRate())
	}
	if d.Alpha() != 1 {
		t.Fatalf("alpha %v, want 1", d.Alpha())
	}
	if d.NextWake() != 7*us+60*us {
		t.Fatalf("next wake %v, want 67us (increase timer)", d.NextWake())
	}
	// A second CNP 1 us later: alpha still 1 (no update period passed),
	// RT = 20e9, RC = 10e9.
	d.OnCNP(8 * us)
	if d.Rate() != 10e9 || d.TargetRate() != 20e9 {
		t.Fatalf("after 2nd CNP: RC %d RT %d, want 10e9 20e9", d.Rate(), d.TargetRate())
	}
}

// Alpha decays by (1-g)^k after k quiet periods, and rises by g on a CNP.
func TestDCQCNAlphaDecay(t *testing.T) {
	p, _ := Preset("paper") // alpha period 55 us, g = 1/256
	d := newDCQCN(t, p, 40e9)
	d.OnCNP(0)
	want := 1.0
	prev := 0
	for _, k := range []int{1, 2, 3, 10, 100, 1000} {
		d.Advance(sim.Time(k)*55*us - 1)
		for i := prev; i < k-1; i++ {
			want *= 255.0 / 256
		}
		if math.Abs(d.Alpha()-want) > 1e-12 {
			t.Fatalf("alpha just before period %d: %v, want %v", k, d.Alpha(), want)
		}
		d.Advance(sim.Time(k) * 55 * us)
		want *= 255.0 / 256
		prev = k
		if math.Abs(d.Alpha()-want)/want > 1e-12 {
			t.Fatalf("alpha after %d periods: %v, want (255/256)^%d = %v", k, d.Alpha(), k, want)
		}
	}
	// A CNP: alpha = (1-g)*alpha + g, cut by the alpha before it.
	a := d.Alpha()
	now := 1000 * 55 * us
	rc := d.Rate()
	d.OnCNP(now)
	if got := int64(float64(rc) * (1 - a/2)); d.Rate() != max(got, p.MinRate) {
		t.Fatalf("cut with alpha %v: RC %d, want %d", a, d.Rate(), got)
	}
	if w := a*255/256 + 1.0/256; math.Abs(d.Alpha()-w) > 1e-15 {
		t.Fatalf("alpha after CNP %v, want %v", d.Alpha(), w)
	}
	// The alpha timer restarted at the CNP: one period later, one decay.
	d.Advance(now + 55*us - 1)
	if math.Abs(d.Alpha()-(a*255/256+1.0/256)) > 1e-15 {
		t.Fatalf("alpha decayed before a full period after the CNP")
	}
}

// The staged increase: fast recovery while both counts < F, additive
// when one reaches F, hyper with i = min(counts)-F+1 when both have.
// Hand-computed table, line 40 Gb/s, F = 2, T = 100 us, B = 1 MB,
// R_AI 1 Gb/s, R_HAI 2 Gb/s.
func TestDCQCNStagedIncrease(t *testing.T) {
	p := DCQCNParams{
		CNPInterval: 50 * us, AlphaPeriod: 55 * us, IncreaseTimer: 100 * us,
		ByteCounter: 1e6, G: 1.0 / 256, F: 2, RAI: 1e9, RHAI: 2e9,
		MinRate: 100e6, InitialAlpha: 1, ClampTarget: true,
	}
	d := newDCQCN(t, p, 40e9)
	d.OnCNP(0)       // RT 40, RC 20, alpha 1
	d.OnCNP(10 * us) // alpha not yet updated: RT 20, RC 10
	if d.Rate() != 10e9 || d.TargetRate() != 20e9 || d.NextWake() != 110*us {
		t.Fatalf("after two CNPs: RC %d RT %d wake %v", d.Rate(), d.TargetRate(), d.NextWake())
	}
	steps := []struct {
		at         sim.Time
		sent       int // 0: timer event
		rc, rt     int64
		tStg, bStg int
	}{
		{110 * us, 0, 15e9, 20e9, 1, 0},             // (0,0) fast
		{150 * us, 1e6, 17.5e9, 20e9, 1, 1},         // (1,0) fast
		{210 * us, 0, 18.75e9, 20e9, 2, 1},          // (1,1) fast
		{250 * us, 1e6, 19.875e9, 21e9, 2, 2},       // (2,1) additive
		{310 * us, 0, 21.4375e9, 23e9, 3, 2},        // (2,2) hyper i=1
		{350 * us, 1e6, 23.21875e9, 25e9, 3, 3},     // (3,2) hyper i=1
		{410 * us, 0, 26.109375e9, 29e9, 4, 3},      // (3,3) hyper i=2
		{450 * us, 1e6, 29.5546875e9, 33e9, 4, 4},   // (4,3) hyper i=2
		{510 * us, 0, 34.27734375e9, 39e9, 5, 4},    // (4,4) hyper i=3
		{550 * us, 1e6, 37.138671875e9, 40e9, 5, 5}, // (5,4) hyper i=3, RT capped
	}
	for i, s := range steps {
		if s.sent == 0 {
			if d.NextWake() != s.at {
				t.Fatalf("step %d: next wake %v, want %v", i, d.NextWake(), s.at)
			}
			d.Advance(s.at - 1)
			if d.Rate() == s.rc {
				t.Fatalf("step %d: rate changed before its timer", i)
			}
			d.Advance(s.at)
		} else {
			d.OnSent(s.at, s.sent-1)
			d.OnSent(s.at, 1)
		}
		ts, bs := d.Stages()
		if d.Rate() != s.rc || d.TargetRate() != s.rt || ts != s.tStg || bs != s.bStg {
			t.Fatalf("step %d at %v: RC %d RT %d stages (%d,%d), want %d %d (%d,%d)",
				i, s.at, d.Rate(), d.TargetRate(), ts, bs, s.rc, s.rt, s.tStg, s.bStg)
		}
	}
	// Back at line rate after enough events: the timer stops.
	for d.NextWake() != sim.MaxTime {
		d.Advance(d.NextWake())
	}
	if d.Rate() != 40e9 || d.TargetRate() != 40e9 {
		t.Fatalf("end: RC %d RT %d, want line", d.Rate(), d.TargetRate())
	}
	// A CNP resets both stage counts and the byte counter.
	d.OnSent(2000*us, 999_999)
	d.OnCNP(2001 * us)
	if ts, bs := d.Stages(); ts != 0 || bs != 0 {
		t.Fatalf("stages after CNP (%d,%d)", ts, bs)
	}
	rc := d.Rate()
	d.OnSent(2002*us, 1) // would complete the old byte stage
	if d.Rate() != rc {
		t.Fatal("byte counter not reset by the CNP")
	}
}

// Timer-only stages (ByteCounter 0, HPCC ns-3's model) with F = 1: one
// fast recovery, one additive increase, then hyper increases by R_HAI.
func TestDCQCNTimerOnlyStages(t *testing.T) {
	p := DCQCNParams{
		AlphaPeriod: 55 * us, IncreaseTimer: 300 * us,
		G: 1.0 / 256, F: 1, RAI: 50e6, RHAI: 100e6,
		MinRate: 100e6, InitialAlpha: 1, ClampTarget: true,
	}
	d := newDCQCN(t, p, 10e9)
	d.OnCNP(0) // RT 10e9 RC 5e9
	d.OnCNP(1) // RT 5e9 RC 2.5e9
	want := []struct{ rc, rt int64 }{
		{3.75e9, 5e9},       // fast
		{4.4e9, 5.05e9},     // additive
		{4.775e9, 5.15e9},   // hyper
		{5.0125e9, 5.25e9},  // hyper
		{5.18125e9, 5.35e9}, // hyper
	}
	for i, w := range want {
		d.Advance(1 + sim.Time(i+1)*300*us)
		if d.Rate() != w.rc || d.TargetRate() != w.rt {
			t.Fatalf("event %d: RC %d RT %d, want %d %d", i, d.Rate(), d.TargetRate(), w.rc, w.rt)
		}
	}
}

// The current rate never falls below MinRate.
func TestDCQCNMinRate(t *testing.T) {
	p, _ := Preset("paper")
	d := newDCQCN(t, p, 1e9)
	want := []int64{500e6, 250e6, 125e6, 100e6, 100e6}
	for i, w := range want {
		d.OnCNP(sim.Time(i) * us)
		if d.Rate() != w {
			t.Fatalf("CNP %d: RC %d, want %d", i, d.Rate(), w)
		}
	}
}

// Mellanox-style model: the first CNP only starts the timers; alpha is
// updated every 1 us and the rate cut at most once per 4 us, at the end of
// an interval with a CNP, with alpha updated first at equal times.
func TestDCQCNMellanox(t *testing.T) {
	p, _ := Preset("ns3-mellanox")
	d := newDCQCN(t, p, 40e9)
	d.OnCNP(0)
	if d.Rate() != 40e9 || d.NextWake() != 4*us {
		t.Fatalf("after first CNP: rate %d wake %v, want 40e9 and 4us", d.Rate(), d.NextWake())
	}
	d.Advance(4 * us)
	// Four quiet alpha updates (1..4 us), then the cut. No increase event
	// came, and CLAMP_TARGET_RATE is 0, so RT stays at line rate.
	a := math.Pow(255.0/256, 4)
	if math.Abs(d.Alpha()-a) > 1e-15 {
		t.Fatalf("alpha %v, want (255/256)^4 = %v", d.Alpha(), a)
	}
	// 40e9 * (1 - 0.98446631.../2) = 20310673709.03
	if d.Rate() != 20310673709 || d.TargetRate() != 40e9 {
		t.Fatalf("after cut: RC %d RT %d, want 20310673709 40e9", d.Rate(), d.TargetRate())
	}
	if d.NextWake() != 304*us {
		t.Fatalf("next wake %v, want 304us (increase timer)", d.NextWake())
	}
	// Three CNPs in one 4 us interval give one cut, at 8 us. The CNP at
	// 5.5 us raises alpha at the 6 us update.
	d.OnCNP(5500 * sim.Nanosecond)
	d.OnCNP(6500 * sim.Nanosecond)
	d.OnCNP(7999 * sim.Nanosecond)
	if d.NextWake() != 8*us {
		t.Fatalf("next wake %v, want 8us", d.NextWake())
	}
	rc := d.Rate()
	d.Advance(8 * us)
	// Updates at 5 (quiet), 6 (CNP), 7 (CNP), 8 (CNP) us.
	g := 1.0 / 256
	a = a * (1 - g)
	a = (1-g)*a + g
	a = (1-g)*a + g
	a = (1-g)*a + g
	if math.Abs(d.Alpha()-a) > 1e-15 {
		t.Fatalf("alpha %v, want %v", d.Alpha(), a)
	}
	if want := int64(float64(rc) * (1 - a/2)); d.Rate() != want {
		t.Fatalf("second cut: RC %d, want %d", d.Rate(), want)
	}
	if c, _ := d.Counts(); c != 2 {
		t.Fatalf("%d cuts, want 2", c)
	}
	// A CNP long after, off the 4 us grid: the cut comes at the next grid
	// point (4 us multiples from the first CNP).
	d.OnCNP(1001500 * sim.Nanosecond)
	if d.NextWake() != 1004*us {
		t.Fatalf("next wake %v, want 1004us", d.NextWake())
	}
}

// The NP sends a CNP for the first CE mark, then at most one per
// interval; a mark exactly one interval after the last CNP is answered.
func TestNPInterval(t *testing.T) {
	np, err := NewNP(50 * us)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		at   sim.Time
		want bool
	}{
		{10 * us, true},
		{10 * us, false},
		{60*us - 1, false},
		{60 * us, true},
		{61 * us, false},
		{109 * us, false},
		{110 * us, true},
		{500 * us, true},
		{499 * us, false}, // before the last CNP
	}
	for _, c := range cases {
		if got := np.OnCE(c.at); got != c.want {
			t.Fatalf("CE at %v: %v, want %v", c.at, got, c.want)
		}
	}
	np0, _ := NewNP(0)
	for i := 0; i < 3; i++ {
		if !np0.OnCE(5 * us) {
			t.Fatal("interval 0 must answer every CE mark")
		}
	}
	if _, err := NewNP(-1); err == nil {
		t.Fatal("negative interval accepted")
	}
}

// Two DCQCN senders with the paper's parameters share a 40 Gb/s
// bottleneck in a fluid loop: every 1 us each sends rate*dt bytes; while
// the sum exceeds the capacity every packet is CE-marked and each
// receiver's NP decides whether to send a CNP, which reaches the sender
// 5 us later. Sender B joins at 20 ms at half the line rate (as after
// one CNP), when A runs at line rate, so the two start unequal. Over
// the last 100 ms of 2 s each must average half the capacity within
// 10%, the two means differ by at most 5% of it, and the link be used at
// 85% or more. (With additive steps of 40 Mb/s per 60 us and no hyper
// increase, since the 300 MB byte counter never fills, fairness comes
// slowly: at 400 ms the two still average 21.9 and 17.2 Gb/s.)
func TestDCQCNTwoSendersFluid(t *testing.T) {
	p, _ := Preset("paper")
	const C = 40e9
	const dt = us
	const delay = 5 // steps
	var rp [2]*DCQCN
	var np [2]NP
	for i := range rp {
		rp[i] = newDCQCN(t, p, C)
		np[i], _ = NewNP(p.CNPInterval)
	}
	var pending [2][delay]bool
	var sum [2]float64
	var samples int
	const steps = 2_000_000
	for s := 0; s < steps; s++ {
		now := sim.Time(s) * dt
		active := 1
		if now >= 20*sim.Millisecond {
			active = 2
		}
		if now == 20*sim.Millisecond {
			rp[1].OnCNP(now) // B starts at half rate, A runs at line rate
		}
		var total float64
		for i := 0; i < active; i++ {
			if pending[i][s%delay] {
				pending[i][s%delay] = false
				rp[i].OnCNP(now)
			}
			rp[i].Advance(now)
			r := float64(rp[i].Rate())
			total += r
			rp[i].OnSent(now, int(r*float64(dt)/8e12))
		}
		if total > C {
			for i := 0; i < active; i++ {
				if np[i].OnCE(now) {
					pending[i][s%delay] = true
				}
			}
		}
		if s >= steps-100_000 {
			for i := range sum {
				sum[i] += float64(rp[i].Rate())
			}
			samples++
		}
	}
	a, b := sum[0]/float64(samples), sum[1]/float64(samples)
	t.Logf("mean rates %.3f and %.3f Gb/s", a/1e9, b/1e9)
	for i, r := range []float64{a, b} {
		if math.Abs(r-C/2) > 0.1*C/2 {
			t.Errorf("sender %d: mean %.3f Gb/s, want 20 Gb/s within 10%%", i, r/1e9)
		}
	}
	if math.Abs(a-b) > 0.05*C/2 {
		t.Errorf("unfair: %.3f and %.3f Gb/s differ by more than 1 Gb/s", a/1e9, b/1e9)
	}
	if a+b < 0.85*C {
		t.Errorf("link use %.3f Gb/s, want at least 34 Gb/s", (a+b)/1e9)
	}
}
