package cc

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/rocekit/rocekit/sim"
	"github.com/rocekit/rocekit/topo"
)

// DCQCNParams holds every parameter of DCQCN's notification point (NP) and
// reaction point (RP), fabric-facts §4. Rates are bits per second, times
// integer picoseconds, the byte counter bytes.
//
// Two reaction-point models share these parameters:
//
//   - RateDecreaseInterval 0 (the paper's model, as bobzhuyb/ns3-rdma runs
//     it): every CNP cuts the rate at once and pushes alpha up at once; the
//     alpha timer restarts on every CNP, and each AlphaPeriod that passes
//     without a CNP decays alpha once.
//   - RateDecreaseInterval > 0 (the Mellanox-style model of HPCC ns-3,
//     rdma-hw.cc UpdateAlphaMlx and CheckRateDecreaseMlx): CNPs only set
//     flags. From the first CNP on, alpha is updated every AlphaPeriod,
//     rising if a CNP came during the period and decaying otherwise, and the
//     rate is cut at most once per RateDecreaseInterval, at the end of an
//     interval in which a CNP came.
//
// With ByteCounter 0 there is no byte counter and the stages follow the
// increase timer alone, as in HPCC ns-3: fewer than F expiries since the
// last cut give fast recovery, the F-th additive increase, later ones hyper
// increase by RHAI. With a byte counter the stages follow fabric-facts §4:
// fast recovery while both stage counts are below F, hyper increase when
// both are at least F, additive increase otherwise.
//
// The keys of Set, with the value forms they take:
//
//	cnp_interval            time ("50us"): NP sends at most one CNP per QP per interval; 0: one per CE-marked packet
//	alpha_period            time: alpha update period
//	rate_decrease_interval  time: 0 for the paper's model, else the Mellanox-style decrease interval
//	rate_increase_timer     time: period T of the rate-increase timer
//	byte_counter            bytes ("10MB", "150000", "150KB"; decimal units): B; 0 turns it off
//	g                       number or fraction ("1/256"): alpha gain, 0 < g <= 1
//	f                       integer >= 0: fast-recovery stage count F
//	rai                     rate ("40Mbps", "40Mb/s") or a share of the line rate ("line/20"): R_AI
//	rhai                    like rai: R_HAI
//	min_rate                rate: floor of the current rate
//	initial_alpha           number in [0, 1]: alpha before the first CNP
//	clamp_target            bool: on a cut, set RT = RC even when no increase event came since the last cut
type DCQCNParams struct {
	// CNPInterval is the NP's minimum gap between two CNPs for one QP.
	CNPInterval sim.Time
	// AlphaPeriod is the alpha update period.
	AlphaPeriod sim.Time
	// RateDecreaseInterval selects the Mellanox-style model when positive.
	RateDecreaseInterval sim.Time
	// IncreaseTimer is the period of the rate-increase timer (T).
	IncreaseTimer sim.Time
	// ByteCounter is the byte count of one byte-counter stage (B); 0 is
	// none.
	ByteCounter int64
	// G is the alpha gain g.
	G float64
	// F is the number of fast-recovery stages.
	F int
	// RAI is the additive increase step R_AI in bits/s, used when
	// RAILineShare is 0.
	RAI int64
	// RAILineShare, when positive, makes R_AI this share of the line rate
	// (htsim's line/20 is 0.05).
	RAILineShare float64
	// RHAI is the hyper increase step R_HAI in bits/s, used when
	// RHAILineShare is 0.
	RHAI int64
	// RHAILineShare, when positive, makes R_HAI this share of the line
	// rate.
	RHAILineShare float64
	// MinRate is the lowest current rate in bits/s.
	MinRate int64
	// InitialAlpha is alpha before the first CNP.
	InitialAlpha float64
	// ClampTarget makes every cut set RT = RC (fabric-facts §4). When
	// false, a cut sets RT = RC only if an increase event came since the
	// previous cut (HPCC ns-3 CLAMP_TARGET_RATE 0).
	ClampTarget bool
}

// DCQCN presets, by name (see Preset).
var dcqcnPresets = map[string]DCQCNParams{
	// bobzhuyb/ns3-rdma, the DCQCN authors' simulator (fabric-facts §4):
	// 50 us / 55 us / 60 us, g 1/256, F 5, R_AI 40 Mb/s, R_HAI 200 Mb/s,
	// byte counter 300 MB. Its minimum rate is not in the facts; 100 Mb/s
	// as in HPCC ns-3 (and ns3-rdma's MinRate default). Alpha starts at 1
	// here; ns3-rdma's qbb-net-device.cc starts it at 0.5
	// (initial_alpha=0.5 for that).
	"paper": {
		CNPInterval:   50 * sim.Microsecond,
		AlphaPeriod:   55 * sim.Microsecond,
		IncreaseTimer: 60 * sim.Microsecond,
		ByteCounter:   300e6,
		G:             1.0 / 256,
		F:             5,
		RAI:           40e6,
		RHAI:          200e6,
		MinRate:       100e6,
		InitialAlpha:  1,
		ClampTarget:   true,
	},
	// HPCC ns-3 Mellanox-style DCQCN (config_doc.txt, rdma-hw.cc):
	// ALPHA_RESUME_INTERVAL 1 us, RATE_DECREASE_INTERVAL 4 us, RP_TIMER
	// 300 us (run.py "dcqcn"; config_doc.txt shows 900), EWMA_GAIN 1/256,
	// FAST_RECOVERY_TIMES 1, RATE_AI 50 Mb/s, RATE_HAI 100 Mb/s, MIN_RATE
	// 100 Mb/s, CLAMP_TARGET_RATE 0, alpha 1 at the first CNP, no byte
	// counter. Its receiver flags a CNP on the ACK of every CE-marked
	// packet (rdma-hw.cc ReceiveUdp), so the CNP interval is 0 and the
	// 4 us decrease interval does the coalescing.
	"ns3-mellanox": {
		CNPInterval:          0,
		AlphaPeriod:          1 * sim.Microsecond,
		RateDecreaseInterval: 4 * sim.Microsecond,
		IncreaseTimer:        300 * sim.Microsecond,
		G:                    1.0 / 256,
		F:                    1,
		RAI:                  50e6,
		RHAI:                 100e6,
		MinRate:              100e6,
		InitialAlpha:         1,
		ClampTarget:          false,
	},
	// An htsim DCQCN model (fabric-facts §4): CNP 50 us, update 55 us,
	// g 1/256, B 10 MB, F 5, R_AI line/20, R_HAI line/10. The facts give no
	// increase timer; 55 us, the update period, is used.
	"htsim": {
		CNPInterval:   50 * sim.Microsecond,
		AlphaPeriod:   55 * sim.Microsecond,
		IncreaseTimer: 55 * sim.Microsecond,
		ByteCounter:   10e6,
		G:             1.0 / 256,
		F:             5,
		RAILineShare:  1.0 / 20,
		RHAILineShare: 1.0 / 10,
		MinRate:       100e6,
		InitialAlpha:  1,
		ClampTarget:   true,
	},
}

// DCQCNPresets returns the names Preset accepts, sorted.
func DCQCNPresets() []string { return presetNames(dcqcnPresets) }

// Preset returns the DCQCN parameters of a named preset: "paper" (also
// "ns3-rdma": bobzhuyb/ns3-rdma's configuration), "ns3-mellanox" (HPCC
// ns-3's Mellanox-style model) or "htsim".
func Preset(name string) (DCQCNParams, error) {
	if name == "ns3-rdma" {
		name = "paper"
	}
	p, ok := dcqcnPresets[name]
	if !ok {
		return DCQCNParams{}, fmt.Errorf("cc: unknown DCQCN preset %q, want one of %s or ns3-rdma", name, strings.Join(DCQCNPresets(), ", "))
	}
	return p, nil
}

// Set sets the parameter named key (see DCQCNParams for the keys) from its
// text form, as --cc-param KEY=VALUE gives it. The error names the key.
func (p *DCQCNParams) Set(key, value string) error {
	var err error
	q := *p
	switch key {
	case "cnp_interval":
		q.CNPInterval, err = parseTime(value)
	case "alpha_period":
		q.AlphaPeriod, err = parseTime(value)
	case "rate_decrease_interval":
		q.RateDecreaseInterval, err = parseTime(value)
	case "rate_increase_timer":
		q.IncreaseTimer, err = parseTime(value)
	case "byte_counter":
		q.ByteCounter, err = parseBytes(value)
	case "g":
		q.G, err = parseFraction(value)
	case "f":
		q.F, err = parseCount(value)
	case "rai":
		q.RAI, q.RAILineShare, err = parseStep(value)
	case "rhai":
		q.RHAI, q.RHAILineShare, err = parseStep(value)
	case "min_rate":
		q.MinRate, err = parseRate(value)
	case "initial_alpha":
		q.InitialAlpha, err = parseFraction(value)
	case "clamp_target":
		q.ClampTarget, err = strconv.ParseBool(value)
		if err != nil {
			err = fmt.Errorf("%q: want true or false", value)
		}
	default:
		return fmt.Errorf("cc: unknown DCQCN parameter %q, want one of %s", key, strings.Join(dcqcnKeys, ", "))
	}
	if err != nil {
		return fmt.Errorf("cc: DCQCN parameter %s: %w", key, err)
	}
	if err := q.Validate(); err != nil {
		return fmt.Errorf("cc: DCQCN parameter %s=%s: %w", key, value, err)
	}
	*p = q
	return nil
}

var dcqcnKeys = []string{"cnp_interval", "alpha_period", "rate_decrease_interval", "rate_increase_timer",
	"byte_counter", "g", "f", "rai", "rhai", "min_rate", "initial_alpha", "clamp_target"}

// Validate reports the first parameter out of range, by its Set key.
func (p *DCQCNParams) Validate() error {
	switch {
	case p.CNPInterval < 0:
		return errors.New("cnp_interval: negative")
	case p.AlphaPeriod <= 0:
		return errors.New("alpha_period: must be positive")
	case p.RateDecreaseInterval < 0:
		return errors.New("rate_decrease_interval: negative")
	case p.IncreaseTimer <= 0:
		return errors.New("rate_increase_timer: must be positive")
	case p.ByteCounter < 0:
		return errors.New("byte_counter: negative")
	case !(p.G > 0 && p.G <= 1):
		return errors.New("g: want 0 < g <= 1")
	case p.F < 0:
		return errors.New("f: negative")
	case p.RAI < 0 || !(p.RAILineShare >= 0 && p.RAILineShare <= 1):
		return errors.New("rai: want a non-negative rate or a share of the line rate up to 1")
	case p.RHAI < 0 || !(p.RHAILineShare >= 0 && p.RHAILineShare <= 1):
		return errors.New("rhai: want a non-negative rate or a share of the line rate up to 1")
	case p.MinRate <= 0:
		return errors.New("min_rate: must be positive")
	case !(p.InitialAlpha >= 0 && p.InitialAlpha <= 1):
		return errors.New("initial_alpha: want 0 <= alpha <= 1")
	}
	return nil
}

// HPCCParams holds HPCC's sender parameters (fabric-facts §5; Li et al.,
// SIGCOMM 2019, Algorithm 1; HPCC ns-3 rdma-hw.cc UpdateRateHp).
//
// The keys of Set:
//
//	eta         number in (0, 1]: target utilisation (U_TARGET)
//	max_stage   integer >= 0: additive steps before a multiplicative one (MI_THRESH)
//	wai         bytes ("1000", "2KB"): additive step W_AI; 0 derives it as BDP*(1-eta)/n
//	n           integer >= 1: expected concurrent flows per link, for the derived W_AI
//	fast_react  bool: react to every ACK, not only once per RTT (FAST_REACT)
//	min_rate    rate: floor of the rate, and so of the window (MIN_RATE)
type HPCCParams struct {
	// Eta is the target utilisation η.
	Eta float64
	// MaxStage is the number of additive-increase steps allowed before
	// a multiplicative update is forced (maxStage, MI_THRESH).
	MaxStage int
	// WAI is the additive increase W_AI in bytes; 0 derives it from N.
	WAI int64
	// N is the expected number of flows per link: W_AI = W_init*(1-η)/N
	// when WAI is 0 (the paper, §3.3).
	N int
	// FastReact applies the window computed from every ACK, while the
	// reference window W_c changes once per RTT (FAST_REACT 1).
	FastReact bool
	// MinRate is the lowest rate in bits/s.
	MinRate int64
}

var hpccPresets = map[string]HPCCParams{
	// HPCC ns-3 run.py "hp" (config_doc.txt): U_TARGET 0.95, MI_THRESH 0,
	// FAST_REACT 1, MIN_RATE 100 Mb/s, RATE_AI 10 Mb/s per 25 Gb/s of line
	// rate (run.py: ai = 10 * bw / 25). As a window that is
	// BDP * 4e-4 = BDP * (1-0.95) / 125, so N is 125.
	"ns3": {Eta: 0.95, MaxStage: 0, N: 125, FastReact: true, MinRate: 100e6},
	// The paper (Li et al. 2019): maxStage 5, otherwise as "ns3".
	"paper": {Eta: 0.95, MaxStage: 5, N: 125, FastReact: true, MinRate: 100e6},
}

// HPCCPresets returns the names HPCCPreset accepts, sorted.
func HPCCPresets() []string { return presetNames(hpccPresets) }

// HPCCPreset returns the HPCC parameters of a named preset: "ns3" (HPCC
// ns-3's defaults) or "paper" (maxStage 5).
func HPCCPreset(name string) (HPCCParams, error) {
	p, ok := hpccPresets[name]
	if !ok {
		return HPCCParams{}, fmt.Errorf("cc: unknown HPCC preset %q, want one of %s", name, strings.Join(HPCCPresets(), ", "))
	}
	return p, nil
}

var hpccKeys = []string{"eta", "max_stage", "wai", "n", "fast_react", "min_rate"}

// Set sets the parameter named key (see HPCCParams for the keys) from its
// text form. The error names the key.
func (p *HPCCParams) Set(key, value string) error {
	var err error
	q := *p
	switch key {
	case "eta":
		q.Eta, err = parseFraction(value)
	case "max_stage":
		q.MaxStage, err = parseCount(value)
	case "wai":
		q.WAI, err = parseBytes(value)
	case "n":
		q.N, err = parseCount(value)
	case "fast_react":
		q.FastReact, err = strconv.ParseBool(value)
		if err != nil {
			err = fmt.Errorf("%q: want true or false", value)
		}
	case "min_rate":
		q.MinRate, err = parseRate(value)
	default:
		return fmt.Errorf("cc: unknown HPCC parameter %q, want one of %s", key, strings.Join(hpccKeys, ", "))
	}
	if err != nil {
		return fmt.Errorf("cc: HPCC parameter %s: %w", key, err)
	}
	if err := q.Validate(); err != nil {
		return fmt.Errorf("cc: HPCC parameter %s=%s: %w", key, value, err)
	}
	*p = q
	return nil
}

// Validate reports the first parameter out of range, by its Set key.
func (p *HPCCParams) Validate() error {
	switch {
	case !(p.Eta > 0 && p.Eta <= 1):
		return errors.New("eta: want 0 < eta <= 1")
	case p.MaxStage < 0:
		return errors.New("max_stage: negative")
	case p.WAI < 0:
		return errors.New("wai: negative")
	case p.WAI == 0 && p.N < 1:
		return errors.New("n: want at least 1 when wai is 0")
	case p.MinRate <= 0:
		return errors.New("min_rate: must be positive")
	}
	return nil
}

func presetNames[T any](m map[string]T) []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	return names
}

func parseTime(s string) (sim.Time, error) { return topo.ParseDelay(s) }

// parseRate takes topo.ParseRate's forms and the same with "b/s" for
// "bps" ("50Mb/s", as HPCC ns-3's configuration writes rates).
func parseRate(s string) (int64, error) {
	if num, ok := strings.CutSuffix(s, "b/s"); ok {
		s = num + "bps"
	}
	return topo.ParseRate(s)
}

// parseStep parses an increase step: a rate, or "line/N" or "line*X" for a
// share of the line rate.
func parseStep(s string) (int64, float64, error) {
	if rest, ok := strings.CutPrefix(s, "line/"); ok {
		d, err := strconv.ParseFloat(rest, 64)
		if err != nil || !(d >= 1) || math.IsInf(d, 0) {
			return 0, 0, fmt.Errorf("%q: want line/D with a number D >= 1", s)
		}
		return 0, 1 / d, nil
	}
	if rest, ok := strings.CutPrefix(s, "line*"); ok {
		x, err := strconv.ParseFloat(rest, 64)
		if err != nil || !(x > 0 && x <= 1) {
			return 0, 0, fmt.Errorf("%q: want line*X with 0 < X <= 1", s)
		}
		return 0, x, nil
	}
	r, err := parseRate(s)
	return r, 0, err
}

// parseFraction parses a number or "a/b".
func parseFraction(s string) (float64, error) {
	if a, b, ok := strings.Cut(s, "/"); ok {
		x, err1 := strconv.ParseFloat(a, 64)
		y, err2 := strconv.ParseFloat(b, 64)
		if err1 != nil || err2 != nil || y == 0 || math.IsNaN(x/y) || math.IsInf(x/y, 0) {
			return 0, fmt.Errorf("%q: want a number or a fraction a/b", s)
		}
		return x / y, nil
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, fmt.Errorf("%q: want a number or a fraction a/b", s)
	}
	return x, nil
}

func parseCount(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q: want a whole number >= 0", s)
	}
	return n, nil
}

var byteUnits = []struct {
	s string
	m int64
}{{"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"B", 1}, {"", 1}}

// parseBytes parses a byte count with an optional decimal unit: "150000",
// "150KB", "10MB", "1.5MB".
func parseBytes(s string) (int64, error) {
	for _, u := range byteUnits {
		num, ok := strings.CutSuffix(s, u.s)
		if !ok {
			continue
		}
		if n, err := strconv.ParseInt(num, 10, 64); err == nil {
			if n < 0 || n > math.MaxInt64/u.m {
				break
			}
			return n * u.m, nil
		}
		f, err := strconv.ParseFloat(num, 64)
		if err != nil || !(f >= 0) || f*float64(u.m) >= math.MaxInt64 {
			break
		}
		v := f * float64(u.m)
		if v != math.Trunc(v) {
			break
		}
		return int64(v), nil
	}
	return 0, fmt.Errorf("%q: want a whole number of bytes, optionally with B, KB, MB or GB", s)
}
