package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Several QPs between the same two hosts, every one starting at PSN 0, and
// no CM in the trace: a response's PSN falls among the requests of several
// QPs. check must judge the whole, healthy trace clean and pair no
// response with a QP it does not answer (sim's connection i joins QP
// 0x11+2i to QP 0x12+2i); decode --summary must count each QP's packets
// where the trace has them, name each direction's source QP right, and
// warn of nothing on a lossless trace.
func TestSimSeveralQPsCheckClean(t *testing.T) {
	conn := regexp.MustCompile(`QP 0x([0-9a-f]+) <-> \S+ QP 0x([0-9a-f]+), [^,]+, paired by psn`)
	for _, qps := range []string{"3", "8"} {
		for _, op := range []string{"write", "send", "read", "fetch_add", "cmp_swap", "mix"} {
			for _, loss := range []string{"0", "0.01"} {
				name := fmt.Sprintf("qps=%s/op=%s/loss=%s", qps, op, loss)
				t.Run(name, func(t *testing.T) {
					trace := filepath.Join(t.TempDir(), "t.pcap")
					code, _, errs := runCLI(t, "sim", "--qps", qps, "--op", op, "--loss", loss, "--messages", "6", "--trace", trace)
					require.Equal(t, 0, code, errs)

					code, out, errs := runCLI(t, "check", trace)
					require.Equal(t, 0, code, errs)
					lines := strings.Split(strings.TrimSpace(out), "\n")
					require.Contains(t, lines[len(lines)-1], ": 0 findings", out)
					for _, m := range conn.FindAllStringSubmatch(out, -1) {
						a, _ := strconv.ParseUint(m[1], 16, 32)
						b, _ := strconv.ParseUint(m[2], 16, 32)
						assert.Equal(t, min(a, b)+1, max(a, b), "%s <-> %s", m[1], m[2])
						assert.Equal(t, uint64(1), min(a, b)%2, "%s <-> %s", m[1], m[2])
					}

					// Packets per direction, from the frames themselves.
					code, out, errs = runCLI(t, "decode", "--format", "json", trace)
					require.Equal(t, 0, code, errs)
					want := map[string]int{}
					for _, f := range decodeJSON(t, out) {
						ip, bth := f["ipv4"].(map[string]any), f["bth"].(map[string]any)
						want[fmt.Sprintf("%v>%v:%v", ip["src"], ip["dst"], bth["destqp"])]++
					}
					code, out, errs = runCLI(t, "decode", "--summary", "--format", "json", trace)
					require.Equal(t, 0, code, errs)
					var sum struct {
						Warnings    map[string]int `json:"warnings"`
						Connections []struct {
							PairedBy   string `json:"paired_by"`
							Directions []struct {
								Src     string `json:"src"`
								Dst     string `json:"dst"`
								DstQP   int    `json:"dst_qp"`
								SrcQP   *int   `json:"src_qp"`
								Packets int    `json:"packets"`
							} `json:"directions"`
						} `json:"connections"`
					}
					require.NoError(t, json.Unmarshal([]byte(out), &sum))
					got := map[string]int{}
					for _, c := range sum.Connections {
						for _, d := range c.Directions {
							got[fmt.Sprintf("%s>%s:%d", d.Src, d.Dst, d.DstQP)] += d.Packets
							if d.SrcQP != nil && c.PairedBy == "psn" {
								// QP 0x12+2i's peer is 0x11+2i, and back.
								peer := d.DstQP + 1
								if d.DstQP%2 == 0 {
									peer = d.DstQP - 1
								}
								assert.Equal(t, peer, *d.SrcQP, "direction to QP %#x", d.DstQP)
							}
						}
					}
					assert.Equal(t, want, got)
					if loss == "0" {
						// Nothing was lost: responses seen before the pairing
						// settled raise no PSN gap, sequence or unmatched warning.
						for w, n := range sum.Warnings {
							assert.Zero(t, n, w)
						}
					}
				})
			}
		}
	}
}
