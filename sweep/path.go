package sweep

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// step is one part of a key path: a key, an index ([2]) or a selector
// ([bucket=100KB-1MB], the element of a list whose key has that value).
type step struct {
	key      string
	index    int // -1: none
	selKey   string
	selValue string
}

// parsePath splits "a.b[0].c" or "a[k=v].b" into steps; selectors only
// where sel is true.
func parsePath(path string, sel bool) ([]step, error) {
	if path == "" {
		return nil, fmt.Errorf("an empty key path")
	}
	var out []step
	for _, part := range strings.Split(path, ".") {
		key, rest, _ := strings.Cut(part, "[")
		if key == "" {
			return nil, fmt.Errorf("key path %q has an empty key", path)
		}
		out = append(out, step{key: key, index: -1})
		for rest != "" {
			in, after, ok := strings.Cut(rest, "]")
			if !ok {
				return nil, fmt.Errorf("key path %q: [ without ]", path)
			}
			s := step{index: -1}
			if k, v, isSel := strings.Cut(in, "="); isSel && sel && k != "" {
				s.selKey, s.selValue = k, v
			} else if i, err := strconv.Atoi(in); err == nil && i >= 0 {
				s.index = i
			} else {
				return nil, fmt.Errorf("key path %q: [%s] is not an index", path, in)
			}
			out = append(out, s)
			if after != "" && after[0] != '[' {
				return nil, fmt.Errorf("key path %q: %q after ]", path, after)
			}
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return out, nil
}

func parseKeyPath(path string) ([]step, error) { return parsePath(path, false) }
func parseMetric(path string) ([]step, error)  { return parsePath(path, true) }

// setPath sets the value at steps in a scenario, making the objects on
// the way that are not there; an index must name an element that is.
func setPath(root map[string]any, steps []step, v any) error {
	var cur any = root
	for i, s := range steps {
		last := i == len(steps)-1
		if s.index >= 0 {
			list, ok := cur.([]any)
			if !ok || s.index >= len(list) {
				return fmt.Errorf("the base scenario has no element [%d] there", s.index)
			}
			if last {
				list[s.index] = v
				return nil
			}
			cur = list[s.index]
			continue
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return fmt.Errorf("the base scenario has no object at %s", s.key)
		}
		if last {
			if v == nil {
				delete(m, s.key)
			} else {
				m[s.key] = v
			}
			return nil
		}
		next, ok := m[s.key]
		if !ok || next == nil {
			if steps[i+1].index >= 0 {
				return fmt.Errorf("the base scenario has no list %s", s.key)
			}
			next = map[string]any{}
			m[s.key] = next
		}
		cur = next
	}
	return nil
}

// lookup finds the value at steps in a decoded summary; ok is false when
// it is not there.
func lookup(v any, steps []step) (any, bool) {
	for _, s := range steps {
		switch {
		case s.key != "":
			m, ok := v.(map[string]any)
			if !ok {
				return nil, false
			}
			if v, ok = m[s.key]; !ok {
				return nil, false
			}
		case s.index >= 0:
			l, ok := v.([]any)
			if !ok || s.index >= len(l) {
				return nil, false
			}
			v = l[s.index]
		default:
			l, ok := v.([]any)
			if !ok {
				return nil, false
			}
			found := false
			for _, e := range l {
				if m, ok := e.(map[string]any); ok && cellOf(m[s.selKey]) == s.selValue {
					v, found = e, true
					break
				}
			}
			if !found {
				return nil, false
			}
		}
	}
	return v, true
}

// cellOf is a summary value as a CSV cell: numbers exactly as the summary
// writes them, strings as they are, true and false, null as an empty cell,
// objects and lists as compact JSON.
func cellOf(v any) string {
	switch t := v.(type) {
	case nil:
		return ""
	case string:
		return t
	case json.Number:
		return string(t)
	case bool:
		return strconv.FormatBool(t)
	}
	b, _ := json.Marshal(v)
	return string(b)
}
