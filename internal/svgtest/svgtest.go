// Package svgtest reads the SVG that package plot writes, for tests that
// check a figure by its text rather than its pixels.
package svgtest

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
)

// Texts returns the character data of every <text> element of the SVG
// document b, in document order, and an error when b does not parse as
// XML or its root element is not <svg>.
func Texts(b []byte) ([]string, error) {
	dec := xml.NewDecoder(bytes.NewReader(b))
	var out []string
	in, root := false, ""
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		switch tk := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tk.Name.Local
			}
			in = tk.Name.Local == "text"
		case xml.CharData:
			if in {
				out = append(out, string(tk))
			}
		case xml.EndElement:
			in = false
		}
	}
	if root != "svg" {
		return nil, fmt.Errorf("svgtest: root element %q, not svg", root)
	}
	return out, nil
}
