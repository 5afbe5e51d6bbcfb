package fuzz

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/rocekit/rocekit/roce"
	"github.com/rocekit/rocekit/topo"
	"github.com/rocekit/rocekit/traffic"
)

// small reports whether every number in s is small enough that a topology
// or traffic it describes builds in milliseconds (the fuzzers look for
// panics and wrong errors, not for slow large fabrics).
func small(s string) bool {
	for _, m := range regexp.MustCompile(`[0-9]+`).FindAllString(s, -1) {
		if n, err := strconv.Atoi(m); err != nil || n > 64 {
			return false
		}
	}
	return len(s) < 400
}

// FuzzScenario feeds arbitrary bytes to the scenario parser, fabric keys
// included. ParseScenario never panics: it returns a scenario that
// Validate accepts, or an error that names the scenario; for an accepted
// one, MemoryEstimate runs. Seeds: every scenario in roce/testdata and a
// few fabric ones.
func FuzzScenario(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "roce", "testdata", "*.json"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	for _, s := range []string{
		`{"topology":"star:hosts=3","traffic":"incast:n=2,size=1KB","cc":{"algorithm":"dcqcn"}}`,
		`{"topology":"leaf-spine:leaves=2,spines=2,hosts=2","traffic":"all-to-all:size=1KB+permutation:size=2KB","fabric":{"pfc":false,"ecn":{"kmin_bytes":1,"kmax_bytes":2,"pmax":0.5}}}`,
		`{"topology":"dragonfly:a=2,p=1,h=1","traffic":"poisson:load=0.5,cdf=fbhadoop,duration=10us","fabric":{"routing":"valiant"},"flow":{"op":"read","mtu":1024}}`,
		`{"topology":"fat-tree:k=4","traffic":"incasts:n=3,size=1KB,load=0.1,duration=5us","links":[{"a":"e0.0","b":"a0.0","dead":[{"from_ns":1}]}],"cc":{"algorithm":"hpcc","params":{"eta":"0.9"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !small(string(b)) {
			return
		}
		sc, err := roce.ParseScenario(b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "scenario") && !strings.HasPrefix(err.Error(), "the scenario") {
				t.Fatalf("error does not name the scenario: %v", err)
			}
			return
		}
		if err := sc.Validate(); err != nil {
			t.Fatalf("parsed but invalid: %v", err)
		}
		_ = sc.MemoryEstimate()
	})
}

// FuzzTopologySpec: topo.Parse never panics; a topology it returns has
// every host reachable from every switch's tables (NextHops of some
// switch to each host is non-empty where there are switches).
func FuzzTopologySpec(f *testing.F) {
	for _, s := range []string{"star:hosts=3", "fat-tree:k=4", "fat-tree:k=4,hosts=3", "leaf-spine:leaves=4,spines=2,hosts=8",
		"dragonfly:a=4,p=2,h=2", "dragonfly:a=2,p=1,h=1", "ring:n=3", "fat-tree:k=", "star:hosts=1,hosts=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if !small(spec) {
			return
		}
		tp, err := topo.Parse(spec, topo.LinkParams{HostRateBps: 100e9, Delay: 1000})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "topo: ") {
				t.Fatalf("error without its package: %v", err)
			}
			return
		}
		if len(tp.Switches()) == 0 {
			return
		}
		for _, h := range tp.Hosts() {
			if len(tp.NextHops(tp.Switches()[0], h)) == 0 {
				t.Fatalf("%s: switch %s has no next hop to %s", spec, tp.Node(tp.Switches()[0]).Name, tp.Node(h).Name)
			}
		}
	})
}

// FuzzTrafficSpec: traffic.Parse never panics; a spec it accepts prints
// back to itself, and Generate on 8 hosts either fails with an error or
// returns flows between distinct hosts in range, sorted by start.
func FuzzTrafficSpec(f *testing.F) {
	for _, s := range []string{"permutation:size=10KB", "incast:n=3,size=2KB,dst=1", "all-to-all:size=1KB,start=1us",
		"poisson:load=0.3,cdf=websearch,duration=20us", "incasts:n=2,size=1KB,load=0.5,duration=10us,seed=4", "poisson:load=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, spec string) {
		if !small(spec) || strings.Contains(spec, "cdf=/") || strings.Contains(spec, "cdf=.") {
			return
		}
		s, err := traffic.Parse(spec)
		if err != nil {
			return
		}
		if back, err := traffic.Parse(s.String()); err != nil || back != s {
			t.Fatalf("%q prints as %q, which parses as %+v (%v)", spec, s.String(), back, err)
		}
		flows, err := traffic.Generate(s, 8, 100e9, 1)
		if err != nil {
			return
		}
		for i, fl := range flows {
			if fl.Src == fl.Dst || fl.Src < 0 || fl.Src >= 8 || fl.Dst < 0 || fl.Dst >= 8 || fl.Size <= 0 {
				t.Fatalf("flow %d: %+v", i, fl)
			}
			if i > 0 && flows[i-1].Start > fl.Start {
				t.Fatalf("flow %d starts before flow %d", i, i-1)
			}
		}
	})
}
