package cc

import (
	"errors"
	"math"

	"github.com/rocekit/rocekit/sim"
)

// never is the time of a timer that is not running.
const never = sim.MaxTime

// DCQCN is the reaction point of DCQCN for one QP (fabric-facts §4): the
// sender's current rate RC and target rate RT, the alpha estimate of
// congestion, the rate-increase timer and byte counter with their stage
// counts. Both rates start at the line rate; nothing runs until the first
// CNP.
//
// On a CNP (at once, or at the end of the decrease interval in the
// Mellanox-style model, see DCQCNParams): RT = RC; RC = max(MinRate,
// RC*(1-alpha/2)); alpha = (1-g)*alpha + g; the increase timer restarts,
// the byte counter empties and both stage counts return to 0.
//
// Each expiry of the increase timer (every IncreaseTimer) and each
// ByteCounter bytes sent count one stage of their own and raise the rate:
//
//   - fast recovery: RC = (RT+RC)/2 (rounded up to whole b/s);
//   - additive increase: RT = min(line, RT+R_AI); RC = (RT+RC)/2;
//   - hyper increase: RT = min(line, RT + i*R_HAI); RC = (RT+RC)/2.
//
// The phase is chosen from the stage counts before the event's own count
// is added. With a byte counter, fast recovery while both counts are below
// F, hyper increase when both are at least F, with i = min(counts) - F + 1
// (1 at the first hyper event, growing by one each time both counters have
// expired once more, QCN's hyper-active increase), additive otherwise.
// Without one (ByteCounter 0, as HPCC ns-3's model), the timer count alone:
// below F fast recovery, equal to F additive, above F hyper with i = 1
// (rdma-hw.cc RateIncEventMlx).
//
// Timer events due at the same instant run alpha update first, then the
// rate decrease, then the increase (HPCC ns-3 delays its first decrease
// check by 1 ns to get this order). Once RC and RT are both back at the
// line rate the increase timer and byte counter stop, since further
// increases would change nothing; the next cut restarts them. Alpha
// updates do not change the rate, so they are applied lazily when the
// rate is next computed and never appear in NextWake.
//
// Time must not go back: a call with a time before the previous one is
// treated as happening at the previous time.
type DCQCN struct {
	p         DCQCNParams
	line      int64
	rai, rhai int64
	rc, rt    int64
	alpha     float64

	now     sim.Time // latest time seen
	started bool     // a CNP has arrived

	alphaAt       sim.Time // next alpha update (lazy), never before the first CNP
	cnpSinceAlpha bool     // Mellanox model: a CNP came in this alpha period

	decAt       sim.Time // Mellanox model: next decrease check on the grid
	cnpSinceDec bool     // Mellanox model: a CNP came since the last check

	incAt       sim.Time // next increase timer expiry, never when stopped
	tStage      int
	bStage      int
	bytes       int64 // bytes counted toward the next byte stage
	incSinceDec bool  // an increase event came since the last cut

	cuts, increases uint64
}

// NewDCQCN returns the reaction point of a QP sending on a link of
// lineRateBps bits/s, at line rate. It fails if p is not valid (Validate)
// or the line rate is below p.MinRate.
func NewDCQCN(p DCQCNParams, lineRateBps int64) (*DCQCN, error) {
	d := &DCQCN{}
	if err := d.Reset(p, lineRateBps); err != nil {
		return nil, err
	}
	return d, nil
}

// Reset puts d back in the state NewDCQCN gives, with p and lineRateBps,
// reusing its memory.
func (d *DCQCN) Reset(p DCQCNParams, lineRateBps int64) error {
	if err := p.Validate(); err != nil {
		return errors.New("cc: DCQCN parameter " + err.Error())
	}
	if lineRateBps < p.MinRate {
		return errors.New("cc: DCQCN line rate below min_rate")
	}
	rai, rhai := p.RAI, p.RHAI
	if p.RAILineShare > 0 {
		rai = int64(math.Round(float64(lineRateBps) * p.RAILineShare))
	}
	if p.RHAILineShare > 0 {
		rhai = int64(math.Round(float64(lineRateBps) * p.RHAILineShare))
	}
	*d = DCQCN{
		p: p, line: lineRateBps, rai: rai, rhai: rhai,
		rc: lineRateBps, rt: lineRateBps, alpha: p.InitialAlpha,
		alphaAt: never, decAt: never, incAt: never,
	}
	return nil
}

// Rate returns the current rate RC in bits/s, as of the latest call.
func (d *DCQCN) Rate() int64 { return d.rc }

// TargetRate returns the target rate RT in bits/s.
func (d *DCQCN) TargetRate() int64 { return d.rt }

// Alpha returns alpha as of the latest call.
func (d *DCQCN) Alpha() float64 { return d.alpha }

// Stages returns the stage counts of the increase timer and of the byte
// counter since the last cut.
func (d *DCQCN) Stages() (timer, bytes int) { return d.tStage, d.bStage }

// Counts returns how many rate cuts and how many increase events have
// happened.
func (d *DCQCN) Counts() (cuts, increases uint64) { return d.cuts, d.increases }

// Window returns 0: DCQCN paces by rate alone.
func (d *DCQCN) Window() int { return 0 }

// OnAck does nothing: DCQCN reacts to CNPs, not ACKs.
func (d *DCQCN) OnAck(now sim.Time, ackedSeq uint64, ints []INTHop) { d.Advance(now) }

// NextWake returns when the rate will next change without a CNP (an
// increase timer expiry, or a pending Mellanox-style decrease), or
// sim.MaxTime if never.
func (d *DCQCN) NextWake() sim.Time {
	w := d.incAt
	if d.cnpSinceDec && d.decAt < w {
		w = d.decAt
	}
	return w
}

// Advance runs the timers due at or before now.
func (d *DCQCN) Advance(now sim.Time) {
	if now < d.now {
		now = d.now
	}
	d.now = now
	if !d.started {
		return
	}
	for {
		dec := never
		if d.cnpSinceDec {
			dec = d.decAt
		}
		t := min(dec, d.incAt)
		if t > now {
			break
		}
		d.alphaTo(t)
		if dec == t {
			d.decAt += d.p.RateDecreaseInterval
			d.cnpSinceDec = false
			d.cut(t)
			continue
		}
		d.incAt += d.p.IncreaseTimer
		d.increase(true)
	}
	d.alphaTo(now)
}

// alphaTo applies the alpha updates due at or before t.
func (d *DCQCN) alphaTo(t sim.Time) {
	if d.alphaAt > t {
		return
	}
	k := int64((t-d.alphaAt)/d.p.AlphaPeriod) + 1
	d.alphaAt += sim.Time(k) * d.p.AlphaPeriod
	g := d.p.G
	if d.cnpSinceAlpha {
		d.alpha = (1-g)*d.alpha + g
		d.cnpSinceAlpha = false
		k--
	}
	switch k {
	case 0:
	case 1:
		d.alpha *= 1 - g
	default:
		d.alpha *= math.Pow(1-g, float64(k))
	}
}

// OnCNP handles a CNP for this QP arriving at now.
func (d *DCQCN) OnCNP(now sim.Time) {
	d.Advance(now)
	now = d.now
	if d.p.RateDecreaseInterval == 0 {
		d.started = true
		d.cut(now)
		d.alpha = (1-d.p.G)*d.alpha + d.p.G
		d.alphaAt = now + d.p.AlphaPeriod
		return
	}
	if !d.started {
		// HPCC ns-3 cnp_received_mlx: the first CNP starts the alpha
		// and decrease timers and counts for the first decrease, not for
		// the first alpha update.
		d.started = true
		d.alphaAt = now + d.p.AlphaPeriod
		d.decAt = now + d.p.RateDecreaseInterval
		d.cnpSinceDec = true
		return
	}
	d.cnpSinceAlpha = true
	if !d.cnpSinceDec {
		d.cnpSinceDec = true
		if d.decAt <= now { // bring the idle grid forward past now
			k := (now-d.decAt)/d.p.RateDecreaseInterval + 1
			d.decAt += k * d.p.RateDecreaseInterval
		}
	}
}

// cut is the rate decrease at t, with alpha as it stands.
func (d *DCQCN) cut(t sim.Time) {
	if d.p.ClampTarget || d.incSinceDec {
		d.rt = d.rc
	}
	rc := int64(float64(d.rc) * (1 - d.alpha/2))
	d.rc = max(rc, d.p.MinRate)
	d.tStage, d.bStage, d.bytes = 0, 0, 0
	d.incSinceDec = false
	d.incAt = t + d.p.IncreaseTimer
	d.cuts++
}

// increase is one increase event, from the timer or the byte counter.
func (d *DCQCN) increase(timer bool) {
	t, b, f := d.tStage, d.bStage, d.p.F
	if timer {
		d.tStage++
	} else {
		d.bStage++
	}
	d.incSinceDec = true
	d.increases++
	switch {
	case d.p.ByteCounter == 0 && t < f, d.p.ByteCounter > 0 && t < f && b < f:
		// fast recovery
	case d.p.ByteCounter == 0 && t == f, d.p.ByteCounter > 0 && (t < f || b < f):
		d.rt = min(d.line, d.rt+d.rai)
	default:
		i := int64(1)
		if d.p.ByteCounter > 0 {
			i = int64(min(t, b) - f + 1)
		}
		d.rt = min(d.line, d.rt+i*d.rhai)
	}
	d.rc = (d.rt + d.rc + 1) / 2 // rounded up, so that RC reaches RT
	if d.rc >= d.line && d.rt >= d.line {
		d.rc = d.line
		d.incAt = never
	}
}

// OnSent counts bytes sent at now toward the byte counter.
func (d *DCQCN) OnSent(now sim.Time, bytes int) {
	d.Advance(now)
	if d.p.ByteCounter == 0 || d.incAt == never || bytes <= 0 {
		return
	}
	d.bytes += int64(bytes)
	for d.bytes >= d.p.ByteCounter && d.incAt != never {
		d.bytes -= d.p.ByteCounter
		d.increase(false)
	}
}
