package topo

import (
	"fmt"
	"strconv"
	"strings"
)

// Parse builds a topology from a spec string "kind:key=value,key=value":
//
//	star:hosts=N                        Star
//	fat-tree:k=K[,hosts=N]              FatTree; hosts is hosts per edge (default k/2)
//	leaf-spine:leaves=L,spines=S,hosts=H  LeafSpine; hosts is hosts per leaf
//	dragonfly:a=A,p=P,h=H               Dragonfly
//
// Rates and delay come from lp (see LinkParams; star uses the host rate).
// Every key except fat-tree's hosts is required. Errors name the bad kind,
// key or value.
func Parse(spec string, lp LinkParams) (*Topology, error) {
	kind, args, _ := strings.Cut(spec, ":")
	var keys []string
	switch kind {
	case "star":
		keys = []string{"hosts"}
	case "fat-tree":
		keys = []string{"k", "hosts"}
	case "leaf-spine":
		keys = []string{"leaves", "spines", "hosts"}
	case "dragonfly":
		keys = []string{"a", "p", "h"}
	default:
		return nil, fmt.Errorf("topo: spec %q: unknown kind %q (want star, fat-tree, leaf-spine or dragonfly)", spec, kind)
	}
	vals := map[string]int{}
	if args != "" {
		for _, kv := range strings.Split(args, ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return nil, fmt.Errorf("topo: spec %q: %q is not key=value", spec, kv)
			}
			known := false
			for _, w := range keys {
				known = known || w == k
			}
			if !known {
				return nil, fmt.Errorf("topo: spec %q: unknown key %q for %s (want %s)", spec, k, kind, strings.Join(keys, ", "))
			}
			if _, dup := vals[k]; dup {
				return nil, fmt.Errorf("topo: spec %q: key %q given twice", spec, k)
			}
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("topo: spec %q: %s=%q is not an integer", spec, k, v)
			}
			vals[k] = n
		}
	}
	for _, k := range keys {
		if _, ok := vals[k]; !ok && !(kind == "fat-tree" && k == "hosts") {
			return nil, fmt.Errorf("topo: spec %q: missing key %q", spec, k)
		}
	}
	switch kind {
	case "star":
		r, err := lp.resolve("star")
		if err != nil {
			return nil, err
		}
		return Star(vals["hosts"], r.HostRateBps, r.Delay)
	case "fat-tree":
		return FatTree(vals["k"], vals["hosts"], lp)
	case "leaf-spine":
		return LeafSpine(vals["leaves"], vals["spines"], vals["hosts"], lp)
	default:
		return Dragonfly(vals["a"], vals["p"], vals["h"], lp)
	}
}
