package jsonerr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type self struct{ v int }

func (s *self) UnmarshalJSON(b []byte) error { return json.Unmarshal(b, &s.v) }

type inner struct {
	MTU     int     `json:"mtu"`
	Timeout *uint8  `json:"timeout,omitempty"`
	Name    string  `json:"name"`
	Custom  self    `json:"custom"`
	Rate    float64 `json:"rate"`
}

type outer struct {
	Seed  uint64            `json:"seed"`
	QPs   []inner           `json:"qps"`
	Named map[string]*inner `json:"named"`
}

func TestDecode(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"[1, 2]", "the value must be an object, got an array at line 1 column 1"},
		{"  \n 7", "the value must be an object, got a number at line 2 column 2"},
		{"{\"seed\": 1,\n \"qps\": [}", "invalid character '}' looking for beginning of value at line 2 column 10"},
		{"{\"seed\": 1,\n \"qps\": [\n", "unexpected end of JSON input at line 2 column 10"},
		{"{\"seed\": 1,\n \"qps\": [{\"name\": \"a\"},\n   {\"mtu\": \"4096\"}]}", `qps[1].mtu: expected an integer, got a string at line 3 column 12`},
		{"\n\n{\"qps\": [{\"timeout\": 300}]}", `qps[0].timeout: expected an integer from 0 to 255, got number 300 at line 3 column 22`},
		{`{"seed": -1}`, `seed: expected an integer, 0 or more, got number -1 at line 1 column 10`},
		{`{"qps": {"mtu": 1}}`, `qps: expected an array, got an object at line 1 column 9`},
		{`{"named": {"x": {"rate": true}}}`, `named.x.rate: expected a number, got true or false at line 1 column 26`},
		{"{\"qps\": [{\"custom\": 2, \"mtu\": 1},\n {\"MTU\": 2, \"nic\": 1}]}", `qps[1].nic: unknown key at line 2 column 13`},
		{`{"named": {"a": {"mtux": 1}}}`, `named.a.mtux: unknown key at line 1 column 18`},
		{`{"seed": 1} {}`, "data after the JSON value at line 1 column 13"},
		{"", "no JSON value: the file is empty"},
	} {
		var o outer
		err := Decode([]byte(c.in), &o, "the value must be an object")
		if assert.Error(t, err, c.in) {
			assert.Equal(t, c.want, err.Error(), c.in)
		}
	}
	var o outer
	require.NoError(t, Decode([]byte("{\"seed\": 3, \"qps\": [{\"mtu\": 1024, \"custom\": 5}]}\n"), &o, "x"))
	assert.Equal(t, uint64(3), o.Seed)
	assert.Equal(t, 1024, o.QPs[0].MTU)
	assert.Equal(t, 5, o.QPs[0].Custom.v)
}

func TestPosition(t *testing.T) {
	d := []byte("ab\ncdé\nf")
	assert.Equal(t, "line 1 column 1", Position(d, 0))
	assert.Equal(t, "line 2 column 1", Position(d, 3))
	assert.Equal(t, "line 3 column 1", Position(d, 8))
	assert.Equal(t, "line 2 column 4", Position(d, 7)) // after "cdé": characters, not bytes
	assert.Equal(t, "line 3 column 2", Position(d, 99))
}

type hexNum uint64

func (h *hexNum) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) != nil || len(s) < 3 || s[:2] != "0x" {
		return fmt.Errorf("%s: want a string such as \"0x1f\"", b)
	}
	return nil
}

type withHex struct {
	Items []struct {
		PSN  hexNum  `json:"psn"`
		Mask *hexNum `json:"mask"`
	} `json:"items"`
}

// A value of a type that decodes itself and refuses its bytes is named by
// its path and position too.
func TestDecodeUnmarshalerError(t *testing.T) {
	var w withHex
	err := Decode([]byte("{\"items\": [{\"psn\": \"0x1\"},\n  {\"psn\": \"0x2\", \"mask\": \"zz\"}]}"), &w, "x")
	require.Error(t, err)
	assert.Equal(t, `items[1].mask: "zz": want a string such as "0x1f" at line 2 column 26`, err.Error())
}

// Offset finds a value by the path the errors name, in nested objects and
// arrays, and says when there is none.
func TestOffset(t *testing.T) {
	data := []byte("{\"steps\": 2,\n \"items\": [{\"compute_us\": 5},\n  {\"op\": \"allreduce\", \"bytes\": \"25MB\"}]}")
	for _, tc := range []struct {
		path string
		want string
	}{
		{"steps", "2"}, {"items", "["}, {"items[0]", "{\"compute_us\""}, {"items[1].bytes", "\"25MB\""}, {"", "{"},
	} {
		off, ok := Offset(data, tc.path)
		if !ok || !bytes.HasPrefix(data[off:], []byte(tc.want)) {
			t.Errorf("%q: offset %d (%v), want the value %s", tc.path, off, ok, tc.want)
		}
	}
	if off, ok := Offset(data, "items[2]"); ok {
		t.Errorf("items[2]: offset %d, want none", off)
	}
	if got := Position(data, mustOffset(t, data, "items[1].bytes")); got != "line 3 column 32" {
		t.Errorf("items[1].bytes at %s", got)
	}
}

func mustOffset(t *testing.T, data []byte, path string) int64 {
	off, ok := Offset(data, path)
	if !ok {
		t.Fatalf("%s: not found", path)
	}
	return off
}
