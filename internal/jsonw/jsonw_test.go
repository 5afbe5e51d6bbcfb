package jsonw

import (
	"encoding/json"
	"testing"

	"pgregory.net/rapid"
)

// Whatever the string, the output is valid JSON that decodes to the same
// text (invalid UTF-8 becoming U+FFFD, as encoding/json does too).
func TestAppendStringDecodes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		if rapid.Bool().Draw(t, "raw") {
			s = string(rapid.SliceOf(rapid.Byte()).Draw(t, "bytes"))
		}
		var got string
		if err := json.Unmarshal(AppendString(nil, s), &got); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		want, _ := json.Marshal(s)
		var w string
		_ = json.Unmarshal(want, &w)
		if got != w {
			t.Fatalf("%q: got %q want %q", s, got, w)
		}
	})
}
