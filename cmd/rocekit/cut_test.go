package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// simTrace runs `rocekit sim` with args and --trace (and --snaplen when
// snap > 0) and returns the trace's path.
func simTrace(t *testing.T, snap int, args ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), fmt.Sprintf("s%d.pcap", snap))
	args = append([]string{"sim", "--trace", p}, args...)
	if snap > 0 {
		args = append(args, "--snaplen", strconv.Itoa(snap))
	}
	code, _, errs := simCLI(args...)
	require.Equal(t, 0, code, errs)
	return p
}

// checkSummaries runs `rocekit check --format json` and returns its exit
// code, its findings and its summary object without the file name.
func checkSummaries(t *testing.T, path string) (int, []string, string) {
	t.Helper()
	code, out, errs := simCLI("check", "--format", "json", path)
	require.NotEqual(t, 2, code, errs)
	var findings []string
	var summary string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, `{"type":"finding"`) {
			findings = append(findings, l)
			continue
		}
		summary = strings.Replace(l, `"file":`+strconv.Quote(path)+`,`, "", 1)
	}
	return code, findings, summary
}

// A capture that kept only the headers of each frame (snap lengths 64, 100
// and 128, as tcpdump -s, ibdump's header modes or a switch port mirror
// cut frames) of the same simulated run as a whole capture gives the same
// verdicts: no error on any frame, no finding, and the same per-QP summary
// (packets, bytes, payload bytes, messages, PSNs, warnings) and the same
// check summary. The run is healthy, then lossy (go-back-N, READ retries).
// Each cut frame says so: "[cut to N of M bytes]", its ICRC "not checked:
// frame cut by capture", and in JSON "cut":true and an unchecked ICRC.
func TestSimSnaplenSameVerdicts(t *testing.T) {
	for _, run := range []struct {
		name string
		args []string
	}{
		{"healthy", []string{"--messages", "30", "--op", "mix", "--size", "6000", "--mtu", "1024", "--seed", "5", "--loss", "0"}},
		{"lossy", []string{"--messages", "30", "--op", "mix", "--size", "6000", "--mtu", "1024", "--seed", "5", "--loss", "0.03"}},
	} {
		t.Run(run.name, func(t *testing.T) {
			whole := simTrace(t, 0, run.args...)
			code, out, errs := simCLI("decode", "--summary", "--format", "json", whole)
			require.Equal(t, 0, code, errs)
			wholeSum := out
			require.Contains(t, wholeSum, `"read_requests":`)
			chkCode, findings, wholeChk := checkSummaries(t, whole)
			if run.name == "healthy" {
				require.Equal(t, 0, chkCode)
				require.Empty(t, findings)
			}
			for _, snap := range []int{64, 100, 128} {
				t.Run(strconv.Itoa(snap), func(t *testing.T) {
					cut := simTrace(t, snap, run.args...)
					code, out, errs := simCLI("decode", "--summary", "--format", "json", cut)
					require.Equal(t, 0, code, errs)
					assert.JSONEq(t, wholeSum, out, "per-QP summary")
					c, fs, chk := checkSummaries(t, cut)
					assert.Equal(t, chkCode, c)
					assert.Equal(t, findings, fs)
					assert.JSONEq(t, wholeChk, chk, "check summary")

					code, out, errs = simCLI("decode", cut)
					require.Equal(t, 0, code, errs)
					lines := strings.Split(strings.TrimSpace(out), "\n")
					marked := 0
					for _, l := range lines {
						require.NotContains(t, l, " ERROR: ", l)
						require.NotContains(t, l, "ICRC BAD", l)
						if strings.Contains(l, " [cut to "+strconv.Itoa(snap)+" of ") {
							marked++
							assert.Contains(t, l, " icrc not checked: frame cut by capture", l)
						} else {
							assert.Contains(t, l, " icrc ok", l)
						}
					}
					assert.NotZero(t, marked)
					t.Logf("%d frames, %d cut", len(lines), marked)

					code, out, errs = simCLI("decode", "--format", "json", cut)
					require.Equal(t, 0, code, errs)
					for _, m := range decodeJSON(t, out) {
						require.NotContains(t, m, "error")
						if m["cut"] == true {
							assert.Equal(t, map[string]any{"checked": false, "reason": "frame cut by capture"}, m["icrc"])
							assert.Contains(t, m, "caplen")
						} else {
							v, _ := field(m, "icrc.valid")
							assert.Equal(t, true, v)
						}
					}
				})
			}
		})
	}
}

// On a cut trace, decode shows a header exactly when tshark does: the
// headers the capture kept whole, with the same field values, and not the
// ones it cut (tshark: "[Packet size limited during capture]").
func TestDecodeCutAgainstTshark(t *testing.T) {
	oracle.Need(t, "tshark")
	fields := []struct{ ours, theirs string }{
		{"bth.opcode", "infiniband.bth.opcode"},
		{"bth.psn", "infiniband.bth.psn"},
		{"bth.destqp", "infiniband.bth.destqp"},
		{"reth.va|atomiceth.va", "infiniband.reth.va"}, // tshark shows the AtomicETH VA as reth.va
		{"reth.dmalen", "infiniband.reth.dmalen"},
		{"aeth.syndrome", "infiniband.aeth.syndrome"},
		{"aeth.msn", "infiniband.aeth.msn"},
		{"atomiceth.swapdt", "infiniband.atomiceth.swapdt"},
		{"atomiceth.cmpdt", "infiniband.atomiceth.cmpdt"},
		{"atomicacketh.origremdt", "infiniband.atomicacketh.origremdt"},
	}
	for _, snap := range []int{54, 58, 64, 80, 100} {
		t.Run(strconv.Itoa(snap), func(t *testing.T) {
			trace := simTrace(t, snap, "--messages", "12", "--op", "mix", "--size", "3000", "--seed", "3", "--loss", "0")
			code, out, errs := simCLI("decode", "--format", "json", trace)
			require.Equal(t, 0, code, errs)
			frames := decodeJSON(t, out)
			args := []string{"-r", trace, "-T", "fields", "-E", "separator=|", "-e", "frame.number"}
			for _, f := range fields {
				args = append(args, "-e", f.theirs)
			}
			for _, h := range tsharkHeuristics {
				args = append(args, "--disable-heuristic", h)
			}
			rows := oracle.Tshark(t, "|", args...)
			require.Len(t, rows, len(frames))
			compared := 0
			for i, row := range rows {
				for j, f := range fields {
					var v any
					ours := false
					for _, name := range strings.Split(f.ours, "|") {
						if v, ours = field(frames[i], name); ours {
							break
						}
					}
					if row[j+1] == "" {
						assert.False(t, ours, "frame %d: %s, which tshark does not show", i+1, f.ours)
						continue
					}
					require.True(t, ours, "frame %d: tshark shows %s=%s", i+1, f.theirs, row[j+1])
					want, ok := tsharkNumber(row[j+1])
					require.True(t, ok, row[j+1])
					got, ok := ourNumber(v)
					require.True(t, ok)
					assert.Equal(t, want, got, "frame %d %s", i+1, f.ours)
					compared++
				}
			}
			assert.NotZero(t, compared)
		})
	}
}

// corruptFrames returns valid frames of several opcodes and, for each, a
// copy with each byte from the BTH to the end of the ICRC replaced in
// turn (by its complement), plus copies whose opcode byte is damaged into
// unknown opcodes (0x57, 0x75, 0xE5) or, for an ACK, into a CmpSwap that
// needs an AtomicETH the packet has no room for. Every one of them keeps
// its Ethernet, IPv4 and UDP headers intact.
func corruptFrames(t *testing.T) [][]byte {
	t.Helper()
	type spec struct {
		op      opcode.Opcode
		payload int
	}
	var out [][]byte
	buf := make([]byte, 9000)
	for _, s := range []spec{
		{opcode.RCSendOnly, 21}, {opcode.RCRDMAWriteFirst, 256}, {opcode.RCRDMAReadRequest, 0},
		{opcode.RCAcknowledge, 0}, {opcode.RCCompareSwap, 0}, {opcode.RCAtomicAcknowledge, 0},
		{opcode.RCRDMAReadResponseLast, 7}, {opcode.UDSendOnly, 40},
	} {
		ff := packet.DefaultFrame(packet.RoCEv2IPv4)
		ff.Transport.BTH.Opcode, ff.Transport.BTH.DestQP, ff.Transport.BTH.PSN = s.op, 0x22, 5
		ff.Transport.RETH.DMALen = 256
		ff.Transport.AETH.Syndrome = aeth.ACKSyndrome(aeth.Unlimited)
		ff.Transport.Payload = make([]byte, s.payload)
		ff.Transport.SetPad()
		n, err := ff.Encode(buf)
		require.NoError(t, err)
		b := buf[:n]
		out = append(out, append([]byte(nil), b...))
		for i := 42; i < len(b); i++ {
			c := append([]byte(nil), b...)
			c[i] = ^c[i]
			out = append(out, c)
		}
		for _, op := range []byte{0x57, 0x75, 0xE5} {
			c := append([]byte(nil), b...)
			c[42] = op
			out = append(out, c)
		}
		if s.op == opcode.RCAcknowledge {
			c := append([]byte(nil), b...)
			c[42] = byte(opcode.RCCompareSwap)
			out = append(out, c)
		}
	}
	return out
}

func writeFrames(t *testing.T, frames [][]byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "corrupt.pcap")
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	w, err := pcap.NewWriter(f, pcap.FormatPcap, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	ts := time.Unix(1700000000, 0)
	for i, b := range frames {
		require.NoError(t, w.WritePacket(ts.Add(time.Duration(i)*time.Microsecond), b))
	}
	require.NoError(t, w.Flush())
	return p
}

// Single-byte damage anywhere in the transport packet, the opcode byte
// included, never costs a frame its ICRC verdict: once the Ethernet, IPv4
// and UDP lengths bound the transport packet its ICRC is checked, whatever
// the opcode and whether or not the headers decode. The verdict is printed
// beside the decode error, in text and JSON, counted by --summary and
// reported by check.
func TestICRCVerdictOnUndecodablePackets(t *testing.T) {
	frames := corruptFrames(t)
	path := writeFrames(t, frames)

	code, out, errs := simCLI("decode", "--format", "json", path)
	require.Equal(t, 0, code, errs)
	js := decodeJSON(t, out)
	require.Len(t, js, len(frames))
	bad, undecoded := 0, 0
	var badFrames []string
	for _, m := range js {
		v, ok := field(m, "icrc.valid")
		require.True(t, ok, "frame %v has no ICRC verdict (error %v)", m["frame"], m["error"])
		if v == false {
			bad++
			badFrames = append(badFrames, fmt.Sprint(m["frame"]))
		}
		if _, ok := m["error"]; ok {
			undecoded++
		}
	}
	require.NotZero(t, undecoded)
	t.Logf("%d frames, %d with a decode error, %d with a bad ICRC", len(js), undecoded, bad)

	// Text: the verdict beside the error.
	code, out, errs = simCLI("decode", path)
	require.Equal(t, 0, code, errs)
	verdict := regexp.MustCompile(` (icrc ok|ICRC BAD \(want 0x[0-9a-f]{8}, got 0x[0-9a-f]{8}\))`)
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		require.Regexp(t, verdict, l)
		if strings.Contains(l, " ERROR: ") {
			require.Regexp(t, regexp.MustCompile(`(icrc ok|ICRC BAD [^E]*) ERROR: `), l)
			n++
		}
	}
	require.NotZero(t, n)
	for _, op := range []string{"UNKNOWN_0x57", "UNKNOWN_0x75", "VENDOR_0xE5"} {
		assert.Regexp(t, regexp.MustCompile(`(?m)^\d+ .* `+op+` .* ICRC BAD .* ERROR: bth.OpCode: unknown opcode`), out)
	}
	assert.Regexp(t, regexp.MustCompile(`(?m)^\d+ .*RC_COMPARE_SWAP .* ICRC BAD .* ERROR: atomiceth: truncated`), out)

	// --summary counts every bad ICRC, in the total and in the warnings.
	code, out, errs = simCLI("decode", "--summary", "--format", "json", path)
	require.Equal(t, 0, code, errs)
	var sum struct {
		Warnings map[string]int `json:"warnings"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &sum))
	assert.Equal(t, bad, sum.Warnings["icrc_bad"])

	// check reports one bad_icrc per bad ICRC, beside the malformed ones.
	code, out, _ = simCLI("check", path)
	assert.Equal(t, 1, code)
	var icrcFrames []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, " bad_icrc: ") {
			icrcFrames = append(icrcFrames, strings.TrimSuffix(strings.Fields(l)[1], ":"))
		}
	}
	assert.Equal(t, badFrames, icrcFrames)
}
