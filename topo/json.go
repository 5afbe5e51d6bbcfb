package topo

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/rocekit/rocekit/sim"
)

type jsonNode struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
}

type jsonLink struct {
	A         string  `json:"a"`
	B         string  `json:"b"`
	RateBps   int64   `json:"rate_bps"`
	DelayPs   int64   `json:"delay_ps"`
	ErrorRate float64 `json:"error_rate,omitempty"`
}

type jsonTopo struct {
	Nodes []jsonNode `json:"nodes"`
	Links []jsonLink `json:"links"`
}

// WriteJSON writes t in rocekit's JSON form (indented, one trailing
// newline), which ReadJSON reads:
//
//	{
//	  "nodes": [{"name": "h0", "kind": "host"}, {"name": "s0", "kind": "switch"}],
//	  "links": [{"a": "h0", "b": "s0", "rate_bps": 100000000000, "delay_ps": 1000000}]
//	}
//
// Node ids are positions in "nodes"; links name their ends by node name.
// "nodes", "links", and in each node "name" and "kind", in each link "a",
// "b" and "rate_bps" are required; "delay_ps" and "error_rate" default to 0.
// Kinds are "host" and "switch"; rate_bps is bits per second, delay_ps
// picoseconds; error_rate is written only when not zero.
func WriteJSON(w io.Writer, t *Topology) error {
	j := jsonTopo{Nodes: make([]jsonNode, len(t.nodes)), Links: make([]jsonLink, len(t.links))}
	for i, n := range t.nodes {
		j.Nodes[i] = jsonNode{Name: n.Name, Kind: n.Kind.String()}
	}
	for i, l := range t.links {
		j.Links[i] = jsonLink{A: t.nodes[l.A].Name, B: t.nodes[l.B].Name, RateBps: l.RateBps,
			DelayPs: int64(l.Delay), ErrorRate: l.ErrorRate}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(j)
}

// ReadJSON reads rocekit's JSON form strictly: unknown keys, missing
// required keys, values of the wrong type, trailing data, unknown node
// names and every validation error of Builder.Build are errors naming the
// key path ("links[3].rate_bps: ...", "nodes[2]: ..."). name prefixes
// every error.
func ReadJSON(r io.Reader, name string) (*Topology, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	fail := func(path, f string, a ...any) error {
		if path == "" {
			return fmt.Errorf("%s: %s", name, fmt.Sprintf(f, a...))
		}
		return fmt.Errorf("%s: %s: %s", name, path, fmt.Sprintf(f, a...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var top json.RawMessage
	if err := dec.Decode(&top); err != nil {
		return nil, fail("", "%v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fail("", "data after the top-level object")
	}
	obj, err := object(top, "", []string{"nodes", "links"}, []string{"nodes", "links"})
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	var rawNodes, rawLinks []json.RawMessage
	if err := json.Unmarshal(obj["nodes"], &rawNodes); err != nil {
		return nil, fail("nodes", "want an array")
	}
	if err := json.Unmarshal(obj["links"], &rawLinks); err != nil {
		return nil, fail("links", "want an array")
	}
	var b Builder
	ids := make(map[string]NodeID, len(rawNodes))
	for i, raw := range rawNodes {
		path := fmt.Sprintf("nodes[%d]", i)
		o, err := object(raw, path, []string{"name", "kind"}, []string{"name", "kind"})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		var nm, kind string
		if err := field(o, path, "name", &nm); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if err := field(o, path, "kind", &kind); err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		if j, dup := ids[nm]; dup {
			return nil, fail(path+".name", "duplicate name %q (also nodes[%d])", nm, j)
		}
		switch kind {
		case "host":
			ids[nm] = b.AddHost(nm)
		case "switch":
			ids[nm] = b.AddSwitch(nm)
		default:
			return nil, fail(path+".kind", "unknown kind %q, want host or switch", kind)
		}
	}
	for i, raw := range rawLinks {
		path := fmt.Sprintf("links[%d]", i)
		o, err := object(raw, path, []string{"a", "b", "rate_bps", "delay_ps", "error_rate"}, []string{"a", "b", "rate_bps"})
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		var l jsonLink
		var ends [2]NodeID
		for k, key := range []string{"a", "b"} {
			var nm string
			if err := field(o, path, key, &nm); err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			id, ok := ids[nm]
			if !ok {
				return nil, fail(path+"."+key, "unknown node %q", nm)
			}
			ends[k] = id
		}
		for key, dst := range map[string]any{"rate_bps": &l.RateBps, "delay_ps": &l.DelayPs, "error_rate": &l.ErrorRate} {
			if _, ok := o[key]; ok {
				if err := field(o, path, key, dst); err != nil {
					return nil, fmt.Errorf("%s: %v", name, err)
				}
			}
		}
		b.SetErrorRate(b.Connect(ends[0], ends[1], l.RateBps, sim.Time(l.DelayPs)), l.ErrorRate)
	}
	t, err := b.Build()
	if err != nil {
		var ve *ValidationError
		if errors.As(err, &ve) {
			if ve.Link >= 0 {
				return nil, fail(fmt.Sprintf("links[%d]", ve.Link), "%s", ve.Msg)
			}
			return nil, fail(fmt.Sprintf("nodes[%d]", ve.Node), "%s", ve.Msg)
		}
		return nil, err
	}
	return t, nil
}

// object decodes raw as a JSON object whose keys are all in allowed and
// include every key of required.
func object(raw json.RawMessage, path string, allowed, required []string) (map[string]json.RawMessage, error) {
	var o map[string]json.RawMessage
	at := path
	if at == "" {
		at = "top level"
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, &o) != nil {
		return nil, fmt.Errorf("%s: want an object", at)
	}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if !slices.Contains(allowed, k) {
			return nil, fmt.Errorf("%s: unknown key (want %s)", join(path, k), strings.Join(allowed, ", "))
		}
	}
	for _, k := range required {
		if _, ok := o[k]; !ok {
			return nil, fmt.Errorf("%s: missing", join(path, k))
		}
	}
	return o, nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func field(o map[string]json.RawMessage, path, key string, dst any) error {
	if err := json.Unmarshal(o[key], dst); err != nil {
		var want string
		switch dst.(type) {
		case *string:
			want = "a string"
		case *int64:
			want = "an integer"
		default:
			want = "a number"
		}
		return fmt.Errorf("%s: want %s, got %s", join(path, key), want, bytes.TrimSpace(o[key]))
	}
	return nil
}
