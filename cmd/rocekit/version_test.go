package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/icrc"
)

// rocekit version names the Go toolchain, the platform and the ICRC kernel;
// it takes no arguments.
func TestVersion(t *testing.T) {
	code, out, _ := simCLI("version")
	require.Equal(t, 0, code)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 3, out)
	assert.True(t, strings.HasPrefix(lines[0], "rocekit "), out)
	assert.Equal(t, runtime.Version()+" "+runtime.GOOS+"/"+runtime.GOARCH, lines[1])
	assert.Equal(t, "icrc: "+icrc.Kernel(), lines[2])
	code, _, errOut := simCLI("version", "extra")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "usage: rocekit version")
	_, out, _ = simCLI("help")
	assert.Contains(t, out, "  version  print rocekit's version")
}

// A binary built from this work tree reports its VCS revision, as go
// build records it.
func TestVersionBuiltBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	top, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skip("not in a git work tree:", err)
	}
	bin := filepath.Join(t.TempDir(), "rocekit")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOFLAGS=-buildvcs=true")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))
	out, err = exec.Command(bin, "version").Output()
	require.NoError(t, err)
	assert.Contains(t, string(out), strings.TrimSpace(string(top)))
}
