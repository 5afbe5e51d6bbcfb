package cc

import (
	"strings"
	"testing"

	"github.com/rocekit/rocekit/sim"
)

// The presets carry the published values (fabric-facts §4, HPCC ns-3
// config_doc.txt and run.py).
func TestPresets(t *testing.T) {
	p, err := Preset("paper")
	if err != nil {
		t.Fatal(err)
	}
	if p.CNPInterval != 50*us || p.AlphaPeriod != 55*us || p.IncreaseTimer != 60*us ||
		p.G != 1.0/256 || p.F != 5 || p.RAI != 40e6 || p.RHAI != 200e6 || p.ByteCounter != 300e6 ||
		p.RateDecreaseInterval != 0 {
		t.Fatalf("paper: %+v", p)
	}
	if q, _ := Preset("ns3-rdma"); q != p {
		t.Fatal("ns3-rdma is not the paper preset")
	}
	m, _ := Preset("ns3-mellanox")
	if m.AlphaPeriod != 1*us || m.RateDecreaseInterval != 4*us || m.IncreaseTimer != 300*us ||
		m.RAI != 50e6 || m.RHAI != 100e6 || m.MinRate != 100e6 || m.F != 1 || m.ByteCounter != 0 ||
		m.ClampTarget || m.CNPInterval != 0 {
		t.Fatalf("ns3-mellanox: %+v", m)
	}
	h, _ := Preset("htsim")
	d, err := NewDCQCN(h, 100e9)
	if err != nil {
		t.Fatal(err)
	}
	if d.rai != 5e9 || d.rhai != 10e9 || h.ByteCounter != 10e6 || h.F != 5 || h.AlphaPeriod != 55*us {
		t.Fatalf("htsim at 100 Gb/s: R_AI %d R_HAI %d, %+v", d.rai, d.rhai, h)
	}
	for _, name := range DCQCNPresets() {
		p, _ := Preset(name)
		if err := p.Validate(); err != nil {
			t.Errorf("preset %s: %v", name, err)
		}
	}
	if _, err := Preset("dcqcn"); err == nil || !strings.Contains(err.Error(), `"dcqcn"`) {
		t.Fatalf("unknown preset: %v", err)
	}
	hp, _ := HPCCPreset("paper")
	if hp.Eta != 0.95 || hp.MaxStage != 5 || !hp.FastReact {
		t.Fatalf("HPCC paper: %+v", hp)
	}
	if _, err := HPCCPreset("x"); err == nil {
		t.Fatal("unknown HPCC preset accepted")
	}
}

func TestDCQCNSet(t *testing.T) {
	p, _ := Preset("paper")
	good := []struct {
		key, value string
		check      func(DCQCNParams) bool
	}{
		{"cnp_interval", "4us", func(p DCQCNParams) bool { return p.CNPInterval == 4*us }},
		{"alpha_period", "1us", func(p DCQCNParams) bool { return p.AlphaPeriod == us }},
		{"rate_decrease_interval", "4000ns", func(p DCQCNParams) bool { return p.RateDecreaseInterval == 4*us }},
		{"rate_increase_timer", "0.9ms", func(p DCQCNParams) bool { return p.IncreaseTimer == 900*us }},
		{"byte_counter", "10MB", func(p DCQCNParams) bool { return p.ByteCounter == 10e6 }},
		{"byte_counter", "150000", func(p DCQCNParams) bool { return p.ByteCounter == 150000 }},
		{"g", "1/16", func(p DCQCNParams) bool { return p.G == 0.0625 }},
		{"g", "0.00390625", func(p DCQCNParams) bool { return p.G == 1.0/256 }},
		{"f", "1", func(p DCQCNParams) bool { return p.F == 1 }},
		{"rai", "50Mb/s", func(p DCQCNParams) bool { return p.RAI == 50e6 && p.RAILineShare == 0 }},
		{"rai", "line/20", func(p DCQCNParams) bool { return p.RAILineShare == 0.05 }},
		{"rhai", "1Gbps", func(p DCQCNParams) bool { return p.RHAI == 1e9 && p.RHAILineShare == 0 }},
		{"min_rate", "1Gbps", func(p DCQCNParams) bool { return p.MinRate == 1e9 }},
		{"initial_alpha", "0.5", func(p DCQCNParams) bool { return p.InitialAlpha == 0.5 }},
		{"clamp_target", "false", func(p DCQCNParams) bool { return !p.ClampTarget }},
	}
	for _, c := range good {
		q := p
		if err := q.Set(c.key, c.value); err != nil {
			t.Fatalf("%s=%s: %v", c.key, c.value, err)
		}
		if !c.check(q) {
			t.Fatalf("%s=%s gave %+v", c.key, c.value, q)
		}
	}
	bad := []struct{ key, value string }{
		{"g", "abc"}, {"g", "0"}, {"g", "2"}, {"g", "1/0"},
		{"alpha_period", "0us"}, {"alpha_period", "55"}, {"rate_increase_timer", "-1us"},
		{"cnp_interval", "-5us"}, {"byte_counter", "-1"}, {"byte_counter", "1.5B"},
		{"f", "-1"}, {"f", "x"}, {"rai", "fast"}, {"rai", "line/0.5"}, {"rhai", "line*2"},
		{"min_rate", "0bps"}, {"initial_alpha", "1.5"}, {"clamp_target", "yes please"},
	}
	for _, c := range bad {
		q := p
		err := q.Set(c.key, c.value)
		if err == nil {
			t.Fatalf("%s=%s accepted", c.key, c.value)
		}
		if !strings.Contains(err.Error(), c.key) {
			t.Fatalf("%s=%s: error %q does not name the key", c.key, c.value, err)
		}
		if q != p {
			t.Fatalf("%s=%s: failed Set changed the parameters", c.key, c.value)
		}
	}
	q := p
	err := q.Set("alpha", "1")
	if err == nil || !strings.Contains(err.Error(), `"alpha"`) || !strings.Contains(err.Error(), "alpha_period") {
		t.Fatalf("unknown key: %v", err)
	}
}

func TestHPCCSet(t *testing.T) {
	p, _ := HPCCPreset("ns3")
	for _, kv := range [][2]string{{"eta", "0.9"}, {"max_stage", "5"}, {"wai", "2KB"}, {"n", "10"}, {"fast_react", "false"}, {"min_rate", "1Gbps"}} {
		if err := p.Set(kv[0], kv[1]); err != nil {
			t.Fatalf("%s=%s: %v", kv[0], kv[1], err)
		}
	}
	want := HPCCParams{Eta: 0.9, MaxStage: 5, WAI: 2000, N: 10, FastReact: false, MinRate: 1e9}
	if p != want {
		t.Fatalf("got %+v, want %+v", p, want)
	}
	for _, kv := range [][2]string{{"eta", "0"}, {"eta", "1.2"}, {"max_stage", "-1"}, {"wai", "x"}, {"min_rate", "1"}, {"u_target", "1"}} {
		q := p
		if err := q.Set(kv[0], kv[1]); err == nil || !strings.Contains(err.Error(), kv[0]) {
			t.Fatalf("%s=%s: %v", kv[0], kv[1], err)
		}
	}
	q := HPCCParams{Eta: 0.95, MinRate: 1e6}
	if err := q.Validate(); err == nil || !strings.Contains(err.Error(), "n:") {
		t.Fatalf("WAI 0 with N 0: %v", err)
	}
}

func TestConstructorsReject(t *testing.T) {
	p, _ := Preset("paper")
	if _, err := NewDCQCN(p, 50e6); err == nil {
		t.Fatal("line rate below min_rate accepted")
	}
	p.G = 0
	if _, err := NewDCQCN(p, 40e9); err == nil || !strings.Contains(err.Error(), "g") {
		t.Fatalf("g = 0: %v", err)
	}
	hp, _ := HPCCPreset("ns3")
	if _, err := NewHPCC(hp, 100e9, 0); err == nil {
		t.Fatal("zero base RTT accepted")
	}
	if _, err := NewHPCC(hp, 1e6, sim.Microsecond); err == nil {
		t.Fatal("line rate below min_rate accepted")
	}
	if _, err := NewNone(0); err == nil {
		t.Fatal("zero line rate accepted")
	}
}
