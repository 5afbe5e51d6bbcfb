package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rocekit/rocekit/internal/jsonerr"
)

// node is one value of a sweep file with where it starts, so that every
// error can name the key path and the line and column.
type node struct {
	kind  byte // '{', '[', 's' string, 'n' number, 'b' bool, '0' null
	path  string
	pos   string // where the value starts: "line 3 column 12"
	start int64  // byte offset of the value's first byte (JSON only)
	end   int64  // byte offset just after the value
	str   string
	num   json.Number
	b     bool
	keys  []string // object keys in file order
	kids  []*node  // object members (in keys' order) or array elements
}

func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.kids[i]
		}
	}
	return nil
}

// kindName is what a value is, for errors.
func (n *node) kindName() string {
	switch n.kind {
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 's':
		return "a string"
	case 'n':
		return "a number"
	case 'b':
		return "a boolean"
	}
	return "null"
}

// value is the node as the Go value encoding/json gives with UseNumber.
func (n *node) value() any {
	switch n.kind {
	case '{':
		m := make(map[string]any, len(n.keys))
		for i, k := range n.keys {
			m[k] = n.kids[i].value()
		}
		return m
	case '[':
		s := make([]any, len(n.kids))
		for i, k := range n.kids {
			s[i] = k.value()
		}
		return s
	case 's':
		return n.str
	case 'n':
		return n.num
	case 'b':
		return n.b
	}
	return nil
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// parseTree reads the one JSON value in data into a tree of nodes; a
// syntax error or a key given twice is an error with its line and column.
func parseTree(data []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var next func(path string) (*node, error)
	tokenAt := func() (json.Token, int64, error) {
		start := skipSep(data, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return nil, start, syntaxError(data, err)
		}
		return tok, start, nil
	}
	next = func(path string) (*node, error) {
		tok, start, err := tokenAt()
		if err != nil {
			return nil, err
		}
		n := &node{path: path, start: start, pos: jsonerr.Position(data, start)}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				n.kind = '{'
				for dec.More() {
					ktok, kstart, err := tokenAt()
					if err != nil {
						return nil, err
					}
					key := ktok.(string)
					if n.get(key) != nil {
						return nil, fmt.Errorf("%s: key given twice at %s", join(path, key), jsonerr.Position(data, kstart))
					}
					kid, err := next(join(path, key))
					if err != nil {
						return nil, err
					}
					n.keys = append(n.keys, key)
					n.kids = append(n.kids, kid)
				}
			case '[':
				n.kind = '['
				for i := 0; dec.More(); i++ {
					kid, err := next(fmt.Sprintf("%s[%d]", path, i))
					if err != nil {
						return nil, err
					}
					n.kids = append(n.kids, kid)
				}
			}
			if _, _, err := tokenAt(); err != nil { // the closing delimiter
				return nil, err
			}
		case string:
			n.kind, n.str = 's', t
		case json.Number:
			n.kind, n.num = 'n', t
		case bool:
			n.kind, n.b = 'b', t
		case nil:
			n.kind = '0'
		}
		n.end = dec.InputOffset()
		return n, nil
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, errors.New("no JSON value: the file is empty")
	}
	root, err := next("")
	if err != nil {
		return nil, err
	}
	if off := skipSep(data, dec.InputOffset()); off < int64(len(data)) {
		return nil, fmt.Errorf("data after the JSON value at %s", jsonerr.Position(data, off))
	}
	return root, nil
}

// skipSep skips white space and the separators , and : that the decoder
// leaves before a token.
func skipSep(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

func syntaxError(data []byte, err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("%s at %s", strings.TrimPrefix(se.Error(), "json: "), jsonerr.Position(data, se.Offset))
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("unexpected end of JSON input at %s", jsonerr.Position(data, int64(len(bytes.TrimRight(data, " \t\r\n")))))
	}
	return err
}
