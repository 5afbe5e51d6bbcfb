package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// readmeSimExamples returns the `rocekit sim` command lines of README.md:
// lines of code blocks (indented or fenced) and inline code spans that start
// with the command "rocekit sim" (not a "rocekit sim:" message quoted from its
// output), without their "# comments", each once.
func readmeSimExamples(t *testing.T, readme string) []string {
	t.Helper()
	text, err := os.ReadFile(readme)
	require.NoError(t, err)
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if i := strings.Index(s, " #"); i >= 0 {
			s = s[:i]
		}
		s = strings.Join(strings.Fields(s), " ")
		if (s == "rocekit sim" || strings.HasPrefix(s, "rocekit sim ")) && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	span := regexp.MustCompile("`(rocekit sim[^`]*)`")
	fenced := false
	for _, line := range strings.Split(string(text), "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t") {
			add(strings.TrimSpace(line))
			continue
		}
		for _, m := range span.FindAllStringSubmatch(line, -1) {
			add(m[1])
		}
	}
	return out
}

// Every `rocekit sim` example in README.md runs as written (in a scratch
// directory, steps joined by && in order, "> FILE" writing the output
// there) and, where it simulates (not -h, not --print-scenario), ends with every work request completed
// with SUCCESS and the data intact: the summary is read with --json added.
// A README example meant to show failure would have to be listed here with
// the failure it shows. About 3 s, so -short skips it.
func TestREADMESimExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every README sim example in full")
	}
	readme, err := filepath.Abs(filepath.Join("..", "..", "README.md"))
	require.NoError(t, err)
	examples := readmeSimExamples(t, readme)
	// The list is what the README shows; finding fewer means the parser
	// lost some.
	require.GreaterOrEqual(t, len(examples), 6, "%q", examples)
	t.Chdir(t.TempDir())
	for _, ex := range examples {
		t.Run(ex, func(t *testing.T) {
			for _, step := range strings.Split(ex, "&&") {
				args := strings.Fields(step)
				require.Equal(t, "rocekit", args[0], "step %q", step)
				require.NotContains(t, step, `"`, "quoted arguments are not parsed here")
				args = args[1:]
				redirect := ""
				if i := slices.Index(args, ">"); i >= 0 {
					require.Equal(t, i+2, len(args), "step %q: > FILE ends the step", step)
					redirect = args[i+1]
					args = args[:i]
				}
				simulates := args[0] == "sim" && !slices.ContainsFunc(args, func(a string) bool {
					return a == "--print-scenario" || a == "-h" || a == "--help"
				})
				if simulates && slices.Index(args, "--json") < 0 {
					args = append(args, "--json")
				}
				code, stdout, stderr := simCLI(args...)
				require.Equal(t, 0, code, "step %q: %s", step, stderr)
				if redirect != "" {
					require.NoError(t, os.WriteFile(redirect, []byte(stdout), 0o644))
				}
				if !simulates {
					continue
				}
				var sum struct {
					Complete    bool              `json:"complete"`
					WRTotal     uint64            `json:"wr_total"`
					WRCompleted map[string]uint64 `json:"wr_completed"`
					Integrity   bool              `json:"data_integrity_ok"`
					Order       bool              `json:"completion_order_ok"`
				}
				require.NoError(t, json.Unmarshal([]byte(stdout), &sum), "step %q", step)
				assert.True(t, sum.Complete, "step %q", step)
				assert.NotZero(t, sum.WRTotal, "step %q", step)
				assert.Equal(t, map[string]uint64{"SUCCESS": sum.WRTotal}, sum.WRCompleted, "step %q", step)
				assert.True(t, sum.Integrity, "step %q", step)
				assert.True(t, sum.Order, "step %q", step)
			}
		})
	}
}
