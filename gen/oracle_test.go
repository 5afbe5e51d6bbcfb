package gen

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/internal/oracle"
)

// oracleScapyScript prints, per frame of the pcap in argv[1], "ok" when the
// ICRC the frame carries is the one scapy computes (scapy.contrib.roce BTH,
// after deleting the carried one), "bad" when not, "nobth" when scapy finds
// no BTH.
const oracleScapyScript = `
import sys
from scapy.all import rdpcap
from scapy.contrib.roce import BTH
for p in rdpcap(sys.argv[1]):
    if BTH not in p:
        print("nobth")
        continue
    carried = bytes(p)[-4:].hex()
    del p[BTH].icrc
    print("ok" if bytes(p)[-4:].hex() == carried else "bad")
`

// tsharkHeuristics are the heuristic dissectors tshark tries on InfiniBand
// payloads; the simulator's payloads are noise, which they may misread.
var tsharkHeuristics = []string{
	"smcr_infiniband", "smb_direct_infiniband", "rpcrdma_infiniband", "nvme_rdma", "lnet_ib",
	"iser_infiniband", "eth_over_ib", "mellanox_eoib", "sdp_infiniband", "fc_infiniband",
}

// Faults that break an oracle on purpose: scapy must find a wrong ICRC in
// exactly the frames of scapyBreaks, tshark must call exactly the frames
// of tsharkBreaks malformed. Every other frame, faulted or not, must pass.
var (
	scapyBreaks  = map[Kind]bool{BadICRC: true, FlipCovered: true, Truncate: true}
	tsharkBreaks = map[Kind]bool{Truncate: true}
)

// oracleStream is a RoCEv2 stream with one fault of every kind that RoCE
// frames can carry (wrong-qkey needs UD frames, bad-vcrc native IB) plus
// masked-field flips on a quarter of the frames.
func oracleStream(t *testing.T) (*Source, *got) {
	src := mixSource(t)
	var fs []FaultSpec
	for _, k := range Kinds() {
		if k != BadVCRC && k != WrongQKey && k != FlipMasked {
			fs = append(fs, FaultSpec{Kind: k, At: -1})
		}
	}
	fs = append(fs, FaultSpec{Kind: FlipMasked, Rate: 0.25, At: -1})
	return src, collect(t, src, Options{Seed: 3, Faults: fs})
}

// Stimulus frames verify in scapy (ICRC) and decode in tshark without a
// malformed frame and with our opcode, except the frames whose fault is
// meant to break exactly that, which the oracle must flag; the expected
// output passes both.
func TestOracles(t *testing.T) {
	src, g := oracleStream(t)
	in := tempPath(t, "in.pcap")
	out := tempPath(t, "out.pcap")
	writeCapture(t, in, src, g.in)
	writeCapture(t, out, src, g.out)
	kinds := map[Kind]int{}
	for i := range g.in {
		if f := g.in[i].Fault; f != nil {
			kinds[f.Kind]++
		}
	}
	require.Len(t, kinds, len(Kinds())-4, "a frame of every RoCE fault kind but the two that remove one: %v", kinds)

	t.Run("scapy", func(t *testing.T) {
		for _, c := range []struct {
			path   string
			frames []Frame
		}{{in, g.in}, {out, g.out}} {
			lines := strings.Fields(oracle.Python(t, oracleScapyScript, c.path))
			require.Len(t, lines, len(c.frames))
			flagged := 0
			for i, l := range lines {
				f := &c.frames[i]
				want := "ok"
				if f.Fault != nil && scapyBreaks[f.Fault.Kind] {
					want = "bad"
					flagged++
				}
				assert.Equal(t, want, l, "%s frame %d (%s, fault %v)", f.Stream, i, f.Purpose(), f.Fault)
			}
			if c.path == in {
				assert.Equal(t, kinds[BadICRC]+kinds[FlipCovered]+kinds[Truncate], flagged)
			}
		}
	})
	t.Run("tshark", func(t *testing.T) {
		for _, c := range []struct {
			path   string
			frames []Frame
		}{{in, g.in}, {out, g.out}} {
			args := []string{"-r", c.path, "-T", "fields", "-E", "separator=|", "-E", "occurrence=f",
				"-e", "frame.number", "-e", "infiniband.bth.opcode", "-e", "_ws.malformed"}
			for _, h := range tsharkHeuristics {
				args = append(args, "--disable-heuristic", h)
			}
			rows := oracle.Tshark(t, "|", args...)
			require.Len(t, rows, len(c.frames))
			for i, row := range rows {
				f := &c.frames[i]
				if f.Fault != nil && tsharkBreaks[f.Fault.Kind] {
					assert.NotEmpty(t, row[2], "frame %d (%s) must be malformed", i, f.Fault.Kind)
					continue
				}
				assert.Empty(t, row[2], "%s frame %d (%s) malformed", f.Stream, i, f.Purpose())
				op, err := strconv.ParseUint(row[1], 0, 8)
				require.NoError(t, err, "frame %d opcode %q", i, row[1])
				assert.Equal(t, uint64(f.Opcode), op, "%s frame %d opcode", f.Stream, i)
			}
		}
	})
}
