// Package jsonerr decodes the JSON files rocekit reads (scenarios, packet
// lists) with errors that say where the problem is the way the file is
// written: the key path (qps[0].mtu) and the line and column, instead of
// encoding/json's byte offsets and Go type names.
package jsonerr

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Decode decodes the one JSON value in data into v, which points to a
// struct or slice; unknown keys and data after the value are errors. top
// says what the whole value must be, for the error when it is something
// else: "the scenario must be an object".
func Decode(data []byte, v any, top string) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return describe(data, v, err, top)
	}
	off := skipSpace(data, dec.InputOffset())
	if off < int64(len(data)) {
		return fmt.Errorf("data after the JSON value at %s", Position(data, off))
	}
	return nil
}

// Position is the line and column (both from 1; columns count characters)
// of byte off of data: "line 3 column 12".
func Position(data []byte, off int64) string {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line := bytes.Count(before, []byte{'\n'}) + 1
	col := utf8.RuneCount(before[bytes.LastIndexByte(before, '\n')+1:]) + 1
	return fmt.Sprintf("line %d column %d", line, col)
}

// Offset returns the byte offset of the value at path in data, a path as
// this package's errors name it ("items[2].bytes"), and false when data,
// read up to its first syntax error, has no such value.
func Offset(data []byte, path string) (int64, bool) {
	var off int64
	found := false
	walk(data, nil, func(p []level, key bool, _ reflect.Type, s, _ int64) bool {
		if !key && pathOf(p) == path {
			off, found = s, true
		}
		return found
	})
	return off, found
}

func describe(data []byte, v any, err error, top string) error {
	if errors.Is(err, io.EOF) {
		return errors.New("no JSON value: the file is empty")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		off := se.Offset - 1 // the offending byte
		if errors.Is(err, io.ErrUnexpectedEOF) || strings.HasPrefix(se.Error(), "unexpected end of JSON input") {
			off = int64(len(bytes.TrimRight(data, " \t\r\n")))
		}
		return fmt.Errorf("%s at %s", strings.TrimPrefix(se.Error(), "json: "), Position(data, off))
	}
	if err == io.ErrUnexpectedEOF {
		return fmt.Errorf("unexpected end of JSON input at %s", Position(data, int64(len(bytes.TrimRight(data, " \t\r\n")))))
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		path, start := "", int64(0)
		walk(data, nil, func(p []level, key bool, _ reflect.Type, s, e int64) bool {
			if key || e < te.Offset {
				return false
			}
			path, start = pathOf(p), s
			return true
		})
		if path == "" {
			return fmt.Errorf("%s, got %s at %s", top, kindOf(te.Value), Position(data, start))
		}
		return fmt.Errorf("%s: expected %s, got %s at %s", path, want(te.Type), kindOf(te.Value), Position(data, start))
	}
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name, _ = strconv.Unquote(name)
		found := false
		var path string
		var start int64
		walk(data, reflect.TypeOf(v), func(p []level, key bool, _ reflect.Type, s, e int64) bool {
			if !key {
				return false
			}
			l := &p[len(p)-1]
			if l.t != nil && l.t.Kind() == reflect.Struct && fieldType(l.t, l.key) == nil {
				found, path, start = true, pathOf(p), s
				return true
			}
			return false
		})
		if found {
			return fmt.Errorf("%s: unknown key at %s", path, Position(data, start))
		}
		return fmt.Errorf("unknown key %q", name)
	}
	// An error of a type that decodes itself: find the first value of such
	// a type that refuses its bytes.
	var found error
	walk(data, reflect.TypeOf(v), func(p []level, key bool, t reflect.Type, s, e int64) bool {
		if key || t == nil || e-s < 1 || data[s] == '{' || data[s] == '[' {
			return false
		}
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		u, ok := reflect.New(t).Interface().(json.Unmarshaler)
		if !ok {
			return false
		}
		if uerr := u.UnmarshalJSON(data[s:e]); uerr != nil && len(p) > 0 {
			found = fmt.Errorf("%s: %v at %s", pathOf(p), uerr, Position(data, s))
			return true
		}
		return false
	})
	if found != nil {
		return found
	}
	return err
}

// level is one object or array being read, and its current member.
type level struct {
	array   bool
	index   int
	key     string
	wantKey bool
	t       reflect.Type // the container's Go type; nil: not followed
}

func pathOf(p []level) string {
	var b strings.Builder
	for _, l := range p {
		if l.array {
			fmt.Fprintf(&b, "[%d]", l.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(l.key)
	}
	return b.String()
}

// walk reads data token by token and calls visit for every key (key true)
// and value with the path to it and its first and end offsets, until
// visit returns true. With t, the Go type data decodes into, each level
// records the type of its container where one is known, and visit is
// given the Go type of each value (nil where not known).
func walk(data []byte, t reflect.Type, visit func(p []level, key bool, t reflect.Type, start, end int64) bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var stack []level
	advance := func() {
		if n := len(stack); n > 0 {
			if l := &stack[n-1]; l.array {
				l.index++
			} else {
				l.wantKey = true
			}
		}
	}
	for {
		start := skipSpace(data, dec.InputOffset())
		tok, err := dec.Token()
		if err != nil {
			return
		}
		end := dec.InputOffset()
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			advance()
			continue
		}
		if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].wantKey {
			stack[n-1].key, stack[n-1].wantKey = tok.(string), false
			if visit(stack, true, nil, start, end) {
				return
			}
			continue
		}
		child := t
		if n := len(stack); n > 0 {
			child = childType(&stack[n-1])
		} else if t != nil {
			t = nil // the root's type is used once
		}
		if visit(stack, false, child, start, end) {
			return
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, level{wantKey: true, t: container(child, reflect.Struct, reflect.Map)})
		case json.Delim('['):
			stack = append(stack, level{array: true, t: container(child, reflect.Slice, reflect.Array)})
		default:
			advance()
		}
	}
}

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// container is t without pointers if it is of one of the kinds and decodes
// itself the ordinary way, else nil.
func container(t reflect.Type, kinds ...reflect.Kind) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || reflect.PointerTo(t).Implements(unmarshaler) || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	for _, k := range kinds {
		if t.Kind() == k {
			return t
		}
	}
	return nil
}

// childType is the Go type of l's current member.
func childType(l *level) reflect.Type {
	switch {
	case l.t == nil:
		return nil
	case l.t.Kind() == reflect.Struct:
		return fieldType(l.t, l.key)
	}
	return l.t.Elem() // map, slice, array
}

// fieldType is the type of struct t's field that key decodes into
// (matched as encoding/json does, ignoring case), or nil.
func fieldType(t reflect.Type, key string) reflect.Type {
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			continue // its fields are promoted
		}
		if name == "" {
			name = f.Name
		}
		if strings.EqualFold(name, key) {
			return f.Type
		}
	}
	return nil
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
			continue
		}
		break
	}
	return off
}

// kindOf names what encoding/json found ("string", "number -1", "array").
func kindOf(v string) string {
	switch {
	case v == "array", v == "object":
		return "an " + v
	case v == "bool":
		return "true or false"
	case v == "string", v == "number":
		return "a " + v
	}
	return v // "number 1.5"
}

// want names what a Go type reads from JSON.
func want(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int64:
		return "an integer"
	case reflect.Int8, reflect.Int16, reflect.Int32:
		return fmt.Sprintf("an integer from %d to %d", -1<<(t.Bits()-1), 1<<(t.Bits()-1)-1)
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		return "an integer, 0 or more"
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		return fmt.Sprintf("an integer from 0 to %d", uint64(1)<<t.Bits()-1)
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a " + t.String()
}
