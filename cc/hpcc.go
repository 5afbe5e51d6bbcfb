package cc

import (
	"errors"
	"math"

	"github.com/rocekit/rocekit/sim"
)

// MaxINTHops is the most INT records HPCC keeps per QP. An ACK with more is
// not used (see HPCC.Unused).
const MaxINTHops = 8

// HPCC is the HPCC sender for one QP (fabric-facts §5; Li et al., SIGCOMM
// 2019, Algorithm 1; HPCC ns-3 rdma-hw.cc UpdateRateHp): a window W in
// bytes and the rate W/T, computed from the INT records echoed in ACKs.
//
// For each hop, from the record in this ACK and the one kept from the
// previous ACK, with tau the difference of their timestamps and B the
// hop's line rate:
//
//	txRate = (TxBytes - TxBytes') * 8 / tau
//	u      = txRate/B + min(QLen, QLen') * 8 / (B*T)
//
// U is the largest u over the hops and dt its tau. The estimate is
// smoothed over one base RTT T: util = (util*(T-dt') + U*dt') / T with
// dt' = min(dt, T), util starting at 1. Then, from the reference window
// W_c:
//
//	W = W_c / (util/eta) + W_AI   if util >= eta or incStage >= MaxStage (incStage = 0)
//	W = W_c + W_AI                otherwise (incStage + 1)
//
// bounded to [MinRate*T/8, line*T/8]. W takes effect at once. W_c and
// incStage take the new values only on the first ACK past the sequence
// that had been sent at the previous such update, so once per RTT; with
// FastReact off the ACKs in between are not used at all. The first ACK
// only records the INT. W starts at the bandwidth-delay product
// line*T/8 (HPCC ns-3 uses the largest base RTT of the fabric for T).
//
// A hop whose timestamp did not advance, whose byte counter went back, or
// whose rate is not positive is left out of U for that ACK; an ACK whose
// hop count differs from the kept one (a new path) only replaces the kept
// records.
type HPCC struct {
	p       HPCCParams
	line    int64
	rtt     sim.Time
	wai     float64
	minW    float64
	maxW    float64
	w, wc   float64
	util    float64
	stage   int
	started bool
	lastSeq uint64 // W_c is next updated by an ACK past this
	sndNxt  uint64

	hops  [MaxINTHops]INTHop
	nhops int

	updates, refUpdates, unused uint64
}

// NewHPCC returns an HPCC sender for a link of lineRateBps bits/s and a
// base RTT of baseRTT (the T of HPCC). It fails if p is not valid, the
// line rate is below p.MinRate or baseRTT is not positive.
func NewHPCC(p HPCCParams, lineRateBps int64, baseRTT sim.Time) (*HPCC, error) {
	h := &HPCC{}
	if err := h.Reset(p, lineRateBps, baseRTT); err != nil {
		return nil, err
	}
	return h, nil
}

// Reset puts h back in the state NewHPCC gives, reusing its memory.
func (h *HPCC) Reset(p HPCCParams, lineRateBps int64, baseRTT sim.Time) error {
	if err := p.Validate(); err != nil {
		return errors.New("cc: HPCC parameter " + err.Error())
	}
	if lineRateBps < p.MinRate {
		return errors.New("cc: HPCC line rate below min_rate")
	}
	if baseRTT <= 0 {
		return errors.New("cc: HPCC base RTT must be positive")
	}
	bdp := bytesIn(lineRateBps, baseRTT)
	wai := float64(p.WAI)
	if p.WAI == 0 {
		wai = bdp * (1 - p.Eta) / float64(p.N)
	}
	*h = HPCC{
		p: p, line: lineRateBps, rtt: baseRTT, wai: wai,
		minW: bytesIn(p.MinRate, baseRTT), maxW: bdp,
		w: bdp, wc: bdp, util: 1,
	}
	return nil
}

// bytesIn is the bytes sent at bps in t.
func bytesIn(bps int64, t sim.Time) float64 {
	return float64(bps) * float64(t) / 8e12
}

// Window returns W in whole bytes, at least 1.
func (h *HPCC) Window() int { return max(1, int(h.w)) }

// Rate returns W/T in bits/s.
func (h *HPCC) Rate() int64 {
	return int64(math.Round(h.w * 8e12 / float64(h.rtt)))
}

// RefWindow returns the reference window W_c in bytes.
func (h *HPCC) RefWindow() float64 { return h.wc }

// Util returns the smoothed normalised inflight estimate.
func (h *HPCC) Util() float64 { return h.util }

// Stage returns incStage, the additive steps since the last
// multiplicative one.
func (h *HPCC) Stage() int { return h.stage }

// WAI returns the additive step W_AI in bytes.
func (h *HPCC) WAI() float64 { return h.wai }

// Updates returns how many ACKs changed the window.
func (h *HPCC) Updates() uint64 { return h.updates }

// RefUpdates returns how many ACKs moved the reference window W_c and
// incStage: about one per round trip while the QP sends.
func (h *HPCC) RefUpdates() uint64 { return h.refUpdates }

// Unused returns how many ACKs were not used because they carried no INT
// or more than MaxINTHops records.
func (h *HPCC) Unused() uint64 { return h.unused }

// OnSent advances the send sequence by bytes.
func (h *HPCC) OnSent(now sim.Time, bytes int) {
	if bytes > 0 {
		h.sndNxt += uint64(bytes)
	}
}

// OnCNP does nothing: HPCC uses INT, not ECN.
func (h *HPCC) OnCNP(now sim.Time) {}

// Advance does nothing: HPCC has no timers.
func (h *HPCC) Advance(now sim.Time) {}

// NextWake returns sim.MaxTime.
func (h *HPCC) NextWake() sim.Time { return sim.MaxTime }

// OnAck handles an ACK acknowledging the bytes before ackedSeq, with its
// INT records.
func (h *HPCC) OnAck(now sim.Time, ackedSeq uint64, ints []INTHop) {
	if len(ints) == 0 || len(ints) > MaxINTHops {
		h.unused++
		return
	}
	if !h.started || len(ints) != h.nhops {
		if !h.started {
			h.lastSeq = h.sndNxt
			h.started = true
		}
		h.nhops = copy(h.hops[:], ints)
		return
	}
	full := ackedSeq > h.lastSeq
	if !full && !h.p.FastReact {
		return
	}
	var U float64
	var dt sim.Time
	used := false
	for i := range ints {
		cur, prev := &ints[i], &h.hops[i]
		tau := cur.TS - prev.TS
		if tau > 0 && cur.TxBytes >= prev.TxBytes && cur.RateBps > 0 {
			b := float64(cur.RateBps)
			tx := float64(cur.TxBytes-prev.TxBytes) * 8e12 / float64(tau)
			q := min(cur.QLen, prev.QLen)
			u := tx/b + float64(q)*8e12/(b*float64(h.rtt))
			if !used || u > U {
				U, dt = u, tau
			}
			used = true
		}
		*prev = *cur
	}
	if used {
		dt = min(dt, h.rtt)
		T := float64(h.rtt)
		h.util = (h.util*(T-float64(dt)) + U*float64(dt)) / T
		c := h.util / h.p.Eta
		var w float64
		stage := h.stage + 1
		if c >= 1 || h.stage >= h.p.MaxStage {
			if c > 0 {
				w = h.wc/c + h.wai
			} else {
				w = h.maxW
			}
			stage = 0
		} else {
			w = h.wc + h.wai
		}
		h.w = min(max(w, h.minW), h.maxW)
		h.updates++
		if full {
			h.wc, h.stage = h.w, stage
			h.refUpdates++
		}
	}
	if full && h.sndNxt > h.lastSeq {
		h.lastSeq = h.sndNxt
	}
}
