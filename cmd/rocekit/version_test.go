package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
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
	assert.Contains(t, errOut, `rocekit version: unexpected argument "extra"`)
	_, out, _ = simCLI("help")
	assert.Contains(t, out, "  version  print rocekit's version")
}

// A binary built from this work tree reports its VCS revision, as go
// build records it, or says that the build recorded none.
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
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	require.NoError(t, err)
	if st, err := os.Stat(filepath.Join(strings.TrimSpace(string(root)), ".git")); err == nil && !st.IsDir() {
		// A linked work tree (git worktree): its .git is a file, and the go
		// tool records VCS information only where .git is a directory.
		assert.Contains(t, string(out), "built without VCS information")
		return
	}
	assert.Contains(t, string(out), strings.TrimSpace(string(top)))
}

// The first line says what the build recorded, and that it recorded no
// revision when it did not.
func TestVersionLine(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "d7d9553c"}}
	for _, c := range []struct {
		bi   debug.BuildInfo
		want string
	}{
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, "rocekit development build, built without VCS information"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: rev}, "rocekit development build d7d9553c"},
		{debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"})},
			"rocekit development build d7d9553c (modified)"},
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}}, "rocekit v1.2.0"},
		{debug.BuildInfo{Main: debug.Module{Version: "v1.2.0"}, Settings: rev}, "rocekit v1.2.0 d7d9553c"},
	} {
		assert.Equal(t, c.want, versionLine(&c.bi, true))
	}
	assert.Equal(t, "rocekit (no build information)", versionLine(nil, false))
	// A test binary records no revision.
	_, out, _ := simCLI("version")
	assert.True(t, strings.HasPrefix(out, "rocekit development build, built without VCS information\n"), out)
}
