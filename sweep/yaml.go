package sweep

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// parseYAML reads a YAML sweep file into the same tree as a JSON one, each
// value with its line and column.
func parseYAML(data []byte) (*node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, yamlError(err)
	}
	if len(doc.Content) == 0 {
		return nil, errors.New("no YAML value: the file is empty")
	}
	return fromYAML(doc.Content[0], "", 0)
}

// yamlError rewrites "yaml: line 3: msg" as "msg at line 3".
func yamlError(err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if line, m, ok := strings.Cut(rest, ": "); ok {
			return fmt.Errorf("%s at line %s", m, line)
		}
	}
	return errors.New(msg)
}

func fromYAML(y *yaml.Node, path string, depth int) (*node, error) {
	n := &node{path: path, pos: fmt.Sprintf("line %d column %d", y.Line, y.Column)}
	if depth > 100 {
		return nil, fmt.Errorf("%s: nested more than 100 deep at %s", path, n.pos)
	}
	switch y.Kind {
	case yaml.AliasNode:
		a, err := fromYAML(y.Alias, path, depth+1)
		if err != nil {
			return nil, err
		}
		a.pos = n.pos
		return a, nil
	case yaml.MappingNode:
		n.kind = '{'
		for i := 0; i+1 < len(y.Content); i += 2 {
			k := y.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("%s: a key must be a string at line %d column %d", path, k.Line, k.Column)
			}
			if n.get(k.Value) != nil {
				return nil, fmt.Errorf("%s: key given twice at line %d column %d", join(path, k.Value), k.Line, k.Column)
			}
			kid, err := fromYAML(y.Content[i+1], join(path, k.Value), depth+1)
			if err != nil {
				return nil, err
			}
			n.keys = append(n.keys, k.Value)
			n.kids = append(n.kids, kid)
		}
	case yaml.SequenceNode:
		n.kind = '['
		for i, c := range y.Content {
			kid, err := fromYAML(c, fmt.Sprintf("%s[%d]", path, i), depth+1)
			if err != nil {
				return nil, err
			}
			n.kids = append(n.kids, kid)
		}
	case yaml.ScalarNode:
		switch y.ShortTag() {
		case "!!null":
			n.kind = '0'
		case "!!bool":
			n.kind = 'b'
			if err := y.Decode(&n.b); err != nil {
				return nil, fmt.Errorf("%s: %v at %s", path, err, n.pos)
			}
		case "!!int", "!!float":
			n.kind = 'n'
			if json.Valid([]byte(y.Value)) {
				n.num = json.Number(y.Value) // as written: 0.1 stays 0.1
				break
			}
			var v any
			if err := y.Decode(&v); err != nil {
				return nil, fmt.Errorf("%s: %v at %s", path, err, n.pos)
			}
			switch t := v.(type) {
			case int:
				n.num = json.Number(strconv.Itoa(t))
			case int64:
				n.num = json.Number(strconv.FormatInt(t, 10))
			case uint64:
				n.num = json.Number(strconv.FormatUint(t, 10))
			case float64:
				if math.IsInf(t, 0) || math.IsNaN(t) {
					return nil, fmt.Errorf("%s: %s: not a finite number at %s", path, y.Value, n.pos)
				}
				n.num = json.Number(strconv.FormatFloat(t, 'g', -1, 64))
			default:
				return nil, fmt.Errorf("%s: %s: not a number at %s", path, y.Value, n.pos)
			}
		default:
			n.kind, n.str = 's', y.Value
		}
	default:
		return nil, fmt.Errorf("%s: a YAML value of kind %d at %s", path, y.Kind, n.pos)
	}
	return n, nil
}
