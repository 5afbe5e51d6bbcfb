package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/rocekit/rocekit/internal/oracle"
)

// archive builds librocekit.a and librocekit.so once per test binary, with
// the system C compiler, and returns the directory holding them; it skips
// (fails with ROCEKIT_REQUIRE_ORACLES=1) when there is no cc or cgo is off.
func archive(t testing.TB) string {
	cc := oracle.Need(t, "cc")
	archiveOnce.Do(func() {
		out, err := exec.Command("go", "env", "CGO_ENABLED").Output()
		if err != nil || strings.TrimSpace(string(out)) != "1" {
			archiveErr = "cgo is disabled (go env CGO_ENABLED is not 1): librocekit needs it"
			return
		}
		dir, err := os.MkdirTemp("", "librocekit")
		if err != nil {
			archiveErr = err.Error()
			return
		}
		archiveDir = dir
		for _, b := range []struct{ mode, file string }{{"c-archive", "librocekit.a"}, {"c-shared", "librocekit.so"}} {
			cmd := exec.Command("go", "build", "-buildmode="+b.mode, "-o", filepath.Join(dir, b.file), ".")
			cmd.Env = append(os.Environ(), "CC="+cc)
			if out, err := cmd.CombinedOutput(); err != nil {
				archiveErr = "go build -buildmode=" + b.mode + ": " + err.Error() + "\n" + string(out)
				return
			}
		}
	})
	if archiveErr != "" {
		if strings.HasPrefix(archiveErr, "cgo is disabled") && !oracle.Required() {
			t.Skip(archiveErr)
		}
		t.Fatal(archiveErr)
	}
	return archiveDir
}

var (
	archiveOnce sync.Once
	archiveDir  string
	archiveErr  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if archiveDir != "" {
		os.RemoveAll(archiveDir)
	}
	os.Exit(code)
}

// compile builds the C program testdata/src against rocekit.h and the
// archive (static) or the shared library and returns its path.
func compile(t testing.TB, src string, opt string, static bool) string {
	lib := archive(t)
	exe := filepath.Join(t.TempDir(), strings.TrimSuffix(src, ".c"))
	args := []string{"-std=c99", "-Wall", "-Wextra", "-Werror", opt, "-I", ".", "-o", exe, filepath.Join("testdata", src)}
	if static {
		args = append(args, filepath.Join(lib, "librocekit.a"), "-lpthread", "-ldl", "-lm")
	} else {
		args = append(args, "-L"+lib, "-lrocekit", "-Wl,-rpath,"+lib)
	}
	cmd := exec.Command(oracle.Need(t, "cc"), args...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return exe
}

// TestCABI compiles testdata/abi_test.c against the archive and
// rocekit.h (which therefore matches the exported symbols) and runs it: a
// WRITE Only frame built and parsed back field by field (178 bytes), a
// wrong ICRC seen as such, a NAK of 62 bytes; short frames, null pointers,
// negative lengths, a small buffer, a reserved opcode, unknown and freed
// handles and handles of the wrong kind each give their negative status
// and a message naming the fault; two peers back to back, one losing a
// frame and the other coalescing ACKs, complete a WRITE, a READ of the
// same bytes (checked against rocekit gen's pattern) and a SEND with no
// finding; a scoreboard catches an ACK of a PSN never sent (frame 6,
// §5.3 ack_psn) in the text rocekit check prints.
//
// It runs twice: linked with the static archive and with the shared
// library.
func TestCABI(t *testing.T) {
	for _, static := range []bool{true, false} {
		exe := compile(t, "abi_test.c", "-O1", static)
		out, err := exec.Command(exe).CombinedOutput()
		if err != nil {
			t.Fatalf("static %v: %s: %v\n%s", static, exe, err, out)
		}
		if !strings.Contains(string(out), ", 0 failed") {
			t.Fatalf("static %v: %s", static, out)
		}
		t.Logf("static %v: %s", static, strings.TrimSpace(string(out)))
	}
}

// BenchmarkCABI runs testdata/bench.c for b.N frames: per frame on the
// device's port rocekit_peer_tx, rocekit_parse, rocekit_sb_feed and
// rocekit_peer_rx, as a bench calls them through DPI-C, plus a poll and two
// ticks per step. ns/op includes starting the program; c-ns/frame and
// frames/s are timed inside it, around the loop alone, and compare with
// internal/dpicore's BenchmarkLoop (the same work without the C ABI).
func BenchmarkCABI(b *testing.B) {
	exe := compile(b, "bench.c", "-O2", true)
	b.ResetTimer()
	out, err := exec.Command(exe, strconv.Itoa(b.N)).CombinedOutput()
	if err != nil {
		b.Fatalf("%s: %v\n%s", exe, err, out)
	}
	var frames, findings int
	var ns int64
	if _, err := fmt.Sscanf(string(out), "frames=%d ns=%d findings=%d", &frames, &ns, &findings); err != nil || frames != b.N || findings != 0 {
		b.Fatalf("%s: %v", out, err)
	}
	b.ReportMetric(float64(ns)/float64(frames), "c-ns/frame")
	b.ReportMetric(float64(frames)/(float64(ns)/1e9), "frames/s")
}
