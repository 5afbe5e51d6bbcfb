package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/rocekit/rocekit/icrc"
)

func init() {
	register("version", "print rocekit's version, the Go toolchain and the ICRC code this CPU runs", runVersion)
}

// runVersion prints the module version (as go install recorded it), or for
// a build from a work tree its VCS revision when the build recorded one,
// the Go version and platform, and which ICRC kernel this machine uses,
// which BENCHMARKS.md's figures depend on.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		if args[0] == "-h" || args[0] == "--help" {
			fmt.Fprintln(stdout, "usage: rocekit version (no arguments)")
			return 0
		}
		return usageError(stderr, "version", "unexpected argument %q", args[0])
	}
	bi, ok := debug.ReadBuildInfo()
	fmt.Fprintf(stdout, "%s\n%s %s/%s\nicrc: %s\n", versionLine(bi, ok), runtime.Version(), runtime.GOOS, runtime.GOARCH, icrc.Kernel())
	return 0
}

// versionLine is the first line of rocekit version: the module version,
// the VCS revision when known, and otherwise says that it is not.
func versionLine(bi *debug.BuildInfo, ok bool) string {
	if !ok {
		return "rocekit (no build information)"
	}
	rev, modified := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	line := "rocekit " + bi.Main.Version
	dev := bi.Main.Version == "" || bi.Main.Version == "(devel)"
	if dev {
		line = "rocekit development build"
	}
	switch {
	case rev == "" && dev:
		line += ", built without VCS information"
	case rev == "":
		// A released version names itself.
	case modified:
		line += " " + rev + " (modified)"
	default:
		line += " " + rev
	}
	return line
}
