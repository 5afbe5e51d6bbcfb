package plot

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"

	gplot "gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// The size of every figure: 20 cm by 12 cm (756 by 454 pixels in a PNG).
var (
	Width  = 20 * vg.Centimeter
	Height = 12 * vg.Centimeter
)

// Format returns the image format of an output file name from its
// extension: "svg" or "png", or an error naming the extension.
func Format(path string) (string, error) {
	switch ext := strings.ToLower(filepath.Ext(path)); ext {
	case ".svg", ".png":
		return ext[1:], nil
	case "":
		return "", fmt.Errorf("%q has no extension: want .svg or .png", path)
	default:
		return "", fmt.Errorf("%q: extension %s, want .svg or .png", path, ext)
	}
}

// Render writes p as an image of the given format ("svg" or "png").
func Render(w io.Writer, p *gplot.Plot, format string) error {
	c, err := p.WriterTo(Width, Height, format)
	if err != nil {
		return err
	}
	_, err = c.WriteTo(w)
	return err
}

// Save writes p to the file path, as SVG or PNG by its extension.
func Save(p *gplot.Plot, path string) error {
	format, err := Format(path)
	if err != nil {
		return err
	}
	var b bytes.Buffer
	if err := Render(&b, p, format); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o666)
}

// Table is a table of an HTML report.
type Table struct {
	Title  string
	Header []string
	Rows   [][]string
}

// Figure is a plot of an HTML report.
type Figure struct {
	Title string
	Plot  *gplot.Plot
}

// WriteHTML writes one self-contained page: the title, every figure as an
// SVG image inlined as a data URI, and the tables.
func WriteHTML(w io.Writer, title string, figs []Figure, tables []Table) error {
	var b strings.Builder
	e := html.EscapeString
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>%s</title>
<style>
body { font-family: sans-serif; margin: 1.5em; color: #222; }
figure { margin: 1em 0; }
img { max-width: 100%%; border: 1px solid #ddd; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 90%%; }
th, td { border: 1px solid #ccc; padding: 0.2em 0.6em; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #f2f2f2; }
</style>
</head>
<body>
<h1>%s</h1>
`, e(title), e(title))
	for _, t := range tables {
		fmt.Fprintf(&b, "<h2>%s</h2>\n<table>\n<tr>", e(t.Title))
		for _, h := range t.Header {
			fmt.Fprintf(&b, "<th>%s</th>", e(h))
		}
		b.WriteString("</tr>\n")
		for _, r := range t.Rows {
			b.WriteString("<tr>")
			for _, c := range r {
				fmt.Fprintf(&b, "<td>%s</td>", e(c))
			}
			b.WriteString("</tr>\n")
		}
		b.WriteString("</table>\n")
	}
	for _, f := range figs {
		var svg bytes.Buffer
		if err := Render(&svg, f.Plot, "svg"); err != nil {
			return fmt.Errorf("figure %q: %v", f.Title, err)
		}
		fmt.Fprintf(&b, "<figure><img alt=\"%s\" src=\"data:image/svg+xml;base64,%s\"><figcaption>%s</figcaption></figure>\n",
			e(f.Title), base64.StdEncoding.EncodeToString(svg.Bytes()), e(f.Title))
	}
	b.WriteString("</body>\n</html>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// baseName is a file's name without its folder, for titles.
func baseName(path string) string { return filepath.Base(path) }
