package svgtest

import (
	"reflect"
	"testing"
)

func TestTexts(t *testing.T) {
	got, err := Texts([]byte(`<svg><g><text>a</text><rect/><text>b c</text></g>x</svg>`))
	if err != nil || !reflect.DeepEqual(got, []string{"a", "b c"}) {
		t.Fatalf("Texts: %q, %v", got, err)
	}
	if _, err := Texts([]byte(`<html><text>a</text></html>`)); err == nil {
		t.Error("an html root: no error")
	}
	if _, err := Texts([]byte(`<svg><text>a</svg>`)); err == nil {
		t.Error("mismatched tags: no error")
	}
}
