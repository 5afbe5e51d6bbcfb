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

// runVersion prints the module version (as go install recorded it, or
// "(devel)" for a build from a work tree, with its VCS revision when known),
// the Go version and platform, and which ICRC kernel this machine uses,
// which BENCHMARKS.md's figures depend on.
func runVersion(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		fmt.Fprintf(stderr, "usage: rocekit version (no arguments)\n")
		if args[0] == "-h" || args[0] == "--help" {
			return 0
		}
		return 2
	}
	version, rev := "unknown", ""
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" && rev != "" {
					rev += " (modified)"
				}
			}
		}
	}
	fmt.Fprintf(stdout, "rocekit %s", version)
	if rev != "" {
		fmt.Fprintf(stdout, " %s", rev)
	}
	fmt.Fprintf(stdout, "\n%s %s/%s\nicrc: %s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH, icrc.Kernel())
	return 0
}
