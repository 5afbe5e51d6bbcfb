// Package oracle runs the independent implementations rocekit's tests
// compare against (tshark, scapy) and finds the shared captures. Tests skip
// when a tool or the captures are missing, unless ROCEKIT_REQUIRE_ORACLES=1
// (set by .ci/run), in which case a missing tool fails the test.
package oracle

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Required reports whether missing oracles must fail tests.
func Required() bool { return os.Getenv("ROCEKIT_REQUIRE_ORACLES") == "1" }

// Need skips (or, when required, fails) t unless the named program is on PATH.
func Need(t testing.TB, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		if Required() {
			t.Fatalf("%s not found and ROCEKIT_REQUIRE_ORACLES=1", prog)
		}
		t.Skipf("%s not installed (apt-get install -y %s); skipping the oracle comparison", prog, prog)
	}
	return p
}

// Tshark runs tshark with args and returns its standard output split into
// lines of fields separated by sep (use "-E separator=" in args to match).
func Tshark(t testing.TB, sep string, args ...string) [][]string {
	t.Helper()
	p := Need(t, "tshark")
	cmd := exec.Command(p, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("tshark %v: %v\n%s", args, err, errb.String())
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimRight(out.String(), "\n"), "\n") {
		if l == "" {
			continue
		}
		rows = append(rows, strings.Split(l, sep))
	}
	return rows
}

// Python runs /usr/bin/python3 (where Debian's python3-scapy lives) with a
// script and returns its standard output. It skips or fails like Need when
// scapy is not importable.
func Python(t testing.TB, script string, args ...string) string {
	t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", "import scapy.contrib.roce").Run(); err != nil {
		if Required() {
			t.Fatalf("scapy not importable by %s and ROCEKIT_REQUIRE_ORACLES=1: %v", py, err)
		}
		t.Skipf("scapy not installed (apt-get install -y python3-scapy); skipping the oracle comparison")
	}
	cmd := exec.Command(py, append([]string{"-c", script}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("python: %v\n%s", err, errb.String())
	}
	return out.String()
}

// Captures returns the folder of shared real captures (../shared/captures
// from the repository root), or skips t when it is absent.
func Captures(t testing.TB) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "captures")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("../shared/captures not present (%v); the real-capture tests need it beside the repository", err)
	}
	return dir
}

// CaptureFile is one of the shared captures with what MANIFEST.md says of it.
type CaptureFile struct {
	Name       string
	Frames     int // packets in the file
	RoCE       int // frames carrying an IB transport header
	TsharkArgs []string
}

// CaptureFiles lists the shared captures (MANIFEST.md).
var CaptureFiles = []CaptureFile{
	{"srinivaskoritala-rdma-softroce-demo_infiniband.pcap", 43, 43, nil},
	{"oferby-proxy_roce.pcap", 123, 105, []string{"-d", "udp.port==69,infiniband"}},
	{"montybeatnik-rdma-roce-lab_roce_capture_read-write-ecn.pcap", 12, 12, nil},
	{"montybeatnik-rdma-roce-lab_test.pcap", 16, 12, nil},
	{"seladb-PcapPlusPlus-pr1603_InfiniBandPacket.pcap", 1, 1, nil},
}
