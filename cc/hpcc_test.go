package cc

import (
	"math"
	"testing"

	"github.com/rocekit/rocekit/sim"
)

// Line 100 Gb/s, T = 10 us: BDP = 100e9 * 10e-6 / 8 = 125,000 bytes.
const (
	hLine = 100e9
	hT    = 10 * us
	hBDP  = 125000
)

// hop builds one INT record at ts with a byte counter and queue length.
func hop(ts sim.Time, tx uint64, q int) INTHop {
	return INTHop{TS: ts, QLen: q, TxBytes: tx, RateBps: hLine}
}

func newHPCC(t *testing.T, p HPCCParams) *HPCC {
	t.Helper()
	h, err := NewHPCC(p, hLine, hT)
	if err != nil {
		t.Fatal(err)
	}
	if h.Window() != hBDP || h.Rate() != hLine {
		t.Fatalf("start: window %d rate %d, want %d %d", h.Window(), h.Rate(), hBDP, int64(hLine))
	}
	return h
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// One hop at U = 2*eta over a full RTT halves the window: txRate = B
// (125,000 bytes in 10 us) gives 1.0, a queue of 112,500 bytes in both
// samples 112500*8/(100e9*10e-6) = 0.9; U = 1.9 = 2*0.95, so
// W = 125000/2 + W_AI = 63,500 bytes and the rate 63500*8/10us = 50.8 Gb/s.
func TestHPCCHalvesAtTwiceEta(t *testing.T) {
	p := HPCCParams{Eta: 0.95, MaxStage: 0, WAI: 1000, FastReact: true, MinRate: 100e6}
	h := newHPCC(t, p)
	h.OnSent(0, 4000)
	h.OnAck(5*us, 1000, []INTHop{hop(0, 0, 112500)})
	if h.Window() != hBDP {
		t.Fatalf("first ACK changed the window to %d", h.Window())
	}
	h.OnSent(6*us, 4000)
	h.OnAck(15*us, 5000, []INTHop{hop(hT, hBDP, 112500)})
	if !near(h.Util(), 1.9) || h.Window() != 63500 || h.Rate() != 50.8e9 {
		t.Fatalf("util %v window %d rate %d, want 1.9 63500 50.8e9", h.Util(), h.Window(), h.Rate())
	}
	if h.RefWindow() != 63500 {
		t.Fatalf("W_c %v, want 63500 (full update)", h.RefWindow())
	}
}

// Below eta with maxStage 2: two additive steps of W_AI, then a
// multiplicative one although U < eta; U is chosen per ACK with dt = T so
// the smoothed value equals it.
func TestHPCCAdditiveAndMaxStage(t *testing.T) {
	p := HPCCParams{Eta: 0.95, MaxStage: 2, WAI: 1000, FastReact: true, MinRate: 100e6}
	h := newHPCC(t, p)
	var seq uint64
	var tx uint64
	ts := sim.Time(0)
	ack := func(dtx uint64, q int) {
		seq += 1000
		h.OnSent(ts, 1000)
		ts += hT
		tx += dtx
		h.OnAck(ts, seq+1, []INTHop{hop(ts, tx, q)})
	}
	h.OnSent(0, 1000)
	h.OnAck(0, 1, []INTHop{hop(0, 0, 112500)})
	seq = 1000
	ack(hBDP, 112500) // U = 1.9: W = 63500, stage 0
	if h.Window() != 63500 || h.Stage() != 0 {
		t.Fatalf("halving: window %d stage %d", h.Window(), h.Stage())
	}
	ack(62500, 0) // U = 0.5 < eta: additive
	if h.Window() != 64500 || h.Stage() != 1 || !near(h.Util(), 0.5) {
		t.Fatalf("additive 1: window %d stage %d util %v, want 64500 1 0.5", h.Window(), h.Stage(), h.Util())
	}
	ack(62500, 0)
	if h.Window() != 65500 || h.Stage() != 2 {
		t.Fatalf("additive 2: window %d stage %d, want 65500 2", h.Window(), h.Stage())
	}
	ack(112500, 0)                  // U = 0.9 < eta, but stage = maxStage: multiplicative
	want := 65500/(0.9/0.95) + 1000 // 70138.88...
	if !near(h.RefWindow(), want) || h.Window() != 70138 || h.Stage() != 0 {
		t.Fatalf("maxStage: W_c %v window %d stage %d, want %v 70138 0", h.RefWindow(), h.Window(), h.Stage(), want)
	}
	// The rate follows the window: 70138.88 * 8 / 10 us.
	if r := h.Rate(); r != int64(math.Round(want*8e12/float64(hT))) {
		t.Fatalf("rate %d", r)
	}
}

// Smoothing with dt < T, the max over hops, fast reaction between full
// updates, and W bounded at the BDP.
func TestHPCCFastReactAndHops(t *testing.T) {
	p := HPCCParams{Eta: 0.95, MaxStage: 0, WAI: 1000, FastReact: true, MinRate: 100e6}
	h := newHPCC(t, p)
	h.OnSent(0, 10000)
	h.OnAck(0, 1, []INTHop{hop(0, 0, 0), hop(0, 0, 112500)})
	// Hop 0 idle, hop 1 at U = 1.9 over dt = T/2 (62,500 bytes in 5 us is
	// line rate; queue 112,500): util = (1*(T/2) + 1.9*(T/2))/T = 1.45.
	h.OnSent(us, 10000) // sent up to 20000 before the full update
	h.OnAck(hT/2, 10001, []INTHop{hop(hT/2, 0, 0), hop(hT/2, 62500, 112500)})
	wantW := float64(hBDP)/(1.45/0.95) + 1000
	if !near(h.Util(), 1.45) || !near(h.RefWindow(), wantW) {
		t.Fatalf("util %v W_c %v, want 1.45 %v", h.Util(), h.RefWindow(), wantW)
	}
	wc := h.RefWindow()
	// The next ACK is not past 20000, the update point, so
	// it reacts from W_c without moving it. U = 1.9 over T/2 again:
	// util = (1.45 + 1.9)/2 = 1.675.
	h.OnAck(hT, 10001, []INTHop{hop(hT, 0, 0), hop(hT, 125000, 112500)})
	if !near(h.Util(), 1.675) || !near(h.RefWindow(), wc) || h.Window() != int(wc/(1.675/0.95)+1000) {
		t.Fatalf("fast react: util %v W_c %v window %d", h.Util(), h.RefWindow(), h.Window())
	}
	if h.Updates() != 2 || h.RefUpdates() != 1 {
		t.Fatalf("%d window updates, %d of W_c; want 2, 1", h.Updates(), h.RefUpdates())
	}
	// An idle path drives util toward 0; the window is capped at the BDP.
	for i := 2; i < 40; i++ {
		h.OnSent(sim.Time(i)*hT, 1000)
		h.OnAck(sim.Time(i)*hT, uint64(10001+1000*i), []INTHop{hop(sim.Time(i)*hT, 125000, 0), hop(sim.Time(i)*hT, 125000, 0)})
	}
	if h.Window() != hBDP || h.Rate() != hLine {
		t.Fatalf("idle path: window %d rate %d, want %d line", h.Window(), h.Rate(), hBDP)
	}

	// With FastReact off the ACK in between changes nothing.
	p.FastReact = false
	g := newHPCC(t, p)
	g.OnSent(0, 10000)
	g.OnAck(0, 1, []INTHop{hop(0, 0, 0)})
	g.OnSent(us, 10000)
	g.OnAck(hT, 10001, []INTHop{hop(hT, 125000, 112500)})
	w := g.Window()
	g.OnAck(2*hT, 10001, []INTHop{hop(2*hT, 250000, 112500)})
	if g.Window() != w || g.Updates() != 1 {
		t.Fatalf("no fast react: window %d -> %d, %d updates", w, g.Window(), g.Updates())
	}
}

// ACKs without INT or with too many hops are counted and not used; a hop
// whose timestamp did not advance is left out; W never falls below
// MinRate*T/8.
func TestHPCCBadSamples(t *testing.T) {
	p := HPCCParams{Eta: 0.95, WAI: 1000, FastReact: true, MinRate: 1e9}
	h := newHPCC(t, p)
	h.OnAck(0, 0, nil)
	h.OnAck(0, 0, make([]INTHop, MaxINTHops+1))
	if h.Unused() != 2 {
		t.Fatalf("unused %d, want 2", h.Unused())
	}
	h.OnSent(0, 1000)
	h.OnAck(0, 1, []INTHop{hop(hT, 0, 0)})
	h.OnAck(hT, 1001, []INTHop{hop(hT, 500000, 0)}) // same timestamp
	if h.Updates() != 0 || h.Window() != hBDP {
		t.Fatalf("stale timestamp used: %d updates, window %d", h.Updates(), h.Window())
	}
	// A huge queue: W = W_c/c + W_AI is tiny, bounded at 1e9*10us/8 = 1250.
	for i := 2; i < 6; i++ {
		h.OnSent(0, 1000)
		h.OnAck(0, uint64(1000*i+1), []INTHop{hop(sim.Time(i)*hT, 0, 1e9)})
	}
	if h.Window() != 1250 || h.Rate() != 1e9 {
		t.Fatalf("floor: window %d rate %d, want 1250 1e9", h.Window(), h.Rate())
	}
}

// The derived W_AI is BDP*(1-eta)/N: for the "ns3" preset at 100 Gb/s and
// 10 us, 125000*0.05/125 = 50 bytes, i.e. 40 Mb/s over T, as HPCC ns-3's
// run.py sets RATE_AI at 100 Gb/s (10 * 100/25 Mb/s).
func TestHPCCDerivedWAI(t *testing.T) {
	p, err := HPCCPreset("ns3")
	if err != nil {
		t.Fatal(err)
	}
	h := newHPCC(t, p)
	if !near(h.WAI(), 50) || !near(h.WAI()*8e12/float64(hT), 40e6) {
		t.Fatalf("W_AI %v bytes, want 50 (40 Mb/s)", h.WAI())
	}
}
