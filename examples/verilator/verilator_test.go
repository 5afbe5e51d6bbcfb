package verilator_test

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/internal/oracle"
)

// bench runs run.sh for one bench with plusargs and returns its output and
// whether it passed (exit status 0).
func bench(t *testing.T, dir, name string, plusargs ...string) (string, bool) {
	t.Helper()
	cmd := exec.Command("bash", append([]string{"run.sh", "-o", dir, name}, plusargs...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		if _, ok := err.(*exec.ExitError); !ok {
			t.Fatalf("run.sh %s: %v\n%s", name, err, out)
		}
	}
	return string(out), err == nil
}

// number returns the integer before what in out (the first match).
func number(t *testing.T, out, what string) int {
	t.Helper()
	m := regexp.MustCompile(`(\d+) ` + regexp.QuoteMeta(what)).FindStringSubmatch(out)
	require.NotNil(t, m, "%q in:\n%s", what, out)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return n
}

// TestVerilator builds librocekit and both benches with Verilator (two
// C++ builds: about 30 s on two idle cores, a minute beside the rest of
// go test ./...) and runs each with
// its correct stand-in under three seeds and with its broken one.
//
// DUT as responder: 40 WRITEs of 1 to 3000 bytes from the rocekit
// requester peer, which loses 5% of its frames, all complete with success
// and the scoreboard finds nothing; the stand-in that ACKs one PSN too far
// is caught: an ack_psn finding (§5.3) and the bench fails.
//
// DUT as requester: 20 WRITEs and 20 READs, answered live by the rocekit
// responder peer, which coalesces ACKs, paces READ responses and loses 20%
// of its frames, all complete, the READ data and the peer's memory are
// right and the scoreboard finds nothing; the stand-in that does not skip
// the PSNs a READ reserves is caught: read_psn_reservation findings (§5.3)
// and the bench fails.
func TestVerilator(t *testing.T) {
	oracle.Need(t, "verilator")
	oracle.Need(t, "go")
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	dir := t.TempDir()
	for _, b := range []struct {
		name, done, finding string
	}{
		{"resp", "of 40 WRITEs completed, 0 in error", "§5.3 ack_psn: "},
		{"req", "of 40 requests completed, 0 READ data errors, 0 WRITE bytes wrong", "§5.3 read_psn_reservation: "},
	} {
		t.Run(b.name, func(t *testing.T) {
			for _, seed := range []string{"1", "2", "3"} {
				out, ok := bench(t, dir, b.name, "+seed="+seed)
				require.True(t, ok, "seed %s:\n%s", seed, out)
				assert.Contains(t, out, "tb_"+b.name+": PASS")
				assert.Equal(t, 40, number(t, out, b.done), "seed %s:\n%s", seed, out)
				assert.Greater(t, number(t, out, "lost by the fault"), 0, "the peer lost frames")
				assert.NotContains(t, out, "finding:")
			}
			out, ok := bench(t, dir, b.name, "+break=1")
			require.False(t, ok, "the broken stand-in passed:\n%s", out)
			assert.Contains(t, out, "tb_"+b.name+": FAIL")
			assert.Contains(t, out, b.finding, "%s", out)
			for _, l := range strings.Split(out, "\n") {
				if strings.Contains(l, "finding:") {
					assert.Regexp(t, `finding: frame \d+: §5\.\d+ [a-z_]+: `, l)
				}
			}
		})
	}
}

// run.sh refuses a bench it does not know, before building anything.
func TestRunScriptUsage(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash not found")
	}
	cmd := exec.Command("bash", "run.sh", "-o", t.TempDir(), "nosuchbench")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	require.ErrorAs(t, err, &ee, "%s", out)
	assert.Equal(t, 2, ee.ExitCode())
	assert.Contains(t, string(out), "run.sh [-o DIR] resp|req")
}
