package cc

import (
	"math/rand/v2"
	"testing"

	"github.com/rocekit/rocekit/sim"
)

// Under random sequences of CNPs, sends and timer runs, for every preset:
// MinRate <= RC <= RT <= line, 0 <= alpha <= 1, and after Advance(now)
// nothing is due at or before now.
func TestDCQCNInvariants(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, name := range DCQCNPresets() {
		p, _ := Preset(name)
		p.ByteCounter = min(p.ByteCounter, 64000) // let the byte counter fire
		const line = 25e9
		d, err := NewDCQCN(p, line)
		if err != nil {
			t.Fatal(err)
		}
		now := sim.Time(0)
		for i := 0; i < 200_000; i++ {
			now += sim.Time(r.Int64N(int64(20 * us)))
			switch r.IntN(4) {
			case 0:
				d.OnCNP(now)
			case 1:
				d.OnSent(now, r.IntN(9000))
			default:
				d.Advance(now)
			}
			if d.NextWake() <= now {
				t.Fatalf("%s step %d: wake %v not after now %v", name, i, d.NextWake(), now)
			}
			rc, rt, a := d.Rate(), d.TargetRate(), d.Alpha()
			if rc < p.MinRate || rc > rt || rt > line || !(a >= 0 && a <= 1) {
				t.Fatalf("%s step %d: RC %d RT %d alpha %v", name, i, rc, rt, a)
			}
		}
		if c, inc := d.Counts(); c == 0 || inc == 0 {
			t.Fatalf("%s: %d cuts, %d increases: sequence did not exercise both", name, c, inc)
		}
	}
}

// Arbitrary text never panics Set, and a failed Set leaves the
// parameters as they were.
func FuzzSet(f *testing.F) {
	for _, s := range []string{"g=1/256", "rai=line/20", "byte_counter=1.5MB", "eta=0.95", "wai=2KB", "f=x", "alpha_period=1e400us", "rai=line/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, kv string) {
		k, v, _ := cutEq(kv)
		p, _ := Preset("paper")
		q := p
		if err := q.Set(k, v); err != nil && q != p {
			t.Fatalf("failed Set(%q, %q) changed the parameters", k, v)
		}
		if err := q.Validate(); err != nil {
			t.Fatalf("Set(%q, %q) left invalid parameters: %v", k, v, err)
		}
		h, _ := HPCCPreset("ns3")
		hq := h
		if err := hq.Set(k, v); err != nil && hq != h {
			t.Fatalf("failed HPCC Set(%q, %q) changed the parameters", k, v)
		}
	})
}

func cutEq(s string) (string, string, bool) {
	for i := 0; i < len(s); i++ {
		if s[i] == '=' {
			return s[:i], s[i+1:], true
		}
	}
	return s, "", false
}
