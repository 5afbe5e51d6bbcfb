package packet_test

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Oracles: frames we build, read back by independent implementations.
// Both tests skip when the tool is missing, and fail instead when
// ROCEKIT_REQUIRE_ORACLES=1 (package internal/oracle).

// orWritePcap writes frames to a classic pcap file (microsecond magic,
// little-endian, LINKTYPE_ETHERNET), one second apart.
func orWritePcap(t *testing.T, path string, frames [][]byte) {
	t.Helper()
	var b []byte
	b = binary.LittleEndian.AppendUint32(b, 0xA1B2C3D4)
	b = binary.LittleEndian.AppendUint16(b, 2)
	b = binary.LittleEndian.AppendUint16(b, 4)
	b = binary.LittleEndian.AppendUint32(b, 0)     // thiszone
	b = binary.LittleEndian.AppendUint32(b, 0)     // sigfigs
	b = binary.LittleEndian.AppendUint32(b, 65535) // snaplen
	b = binary.LittleEndian.AppendUint32(b, 1)     // LINKTYPE_ETHERNET
	for i, f := range frames {
		b = binary.LittleEndian.AppendUint32(b, uint32(1_700_000_000+i))
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(f)))
		b = binary.LittleEndian.AppendUint32(b, uint32(len(f)))
		b = append(b, f...)
	}
	require.NoError(t, os.WriteFile(path, b, 0o644))
}

// orFrame builds a RoCEv2/IPv4 frame around p: lower-layer values drawn from
// proptest.FrameFieldsFor with the given seed, the UDP source port moved into
// the RoCE range 0xC000-0xFFFF (a low source port can make a dissector pick
// another protocol, as in the oferby capture).
func orFrame(t *testing.T, seed int, p packet.Fields) (packet.FrameFields, []byte) {
	ff := proptest.FrameFieldsFor(packet.RoCEv2IPv4).Example(seed)
	ff.UDP.SrcPort |= 0xC000
	ff.Transport = p
	return ff, rtEncodeFrame(t, &ff)
}

// tsharkOK reports whether tshark 4.0 dissects op correctly: RC, UC and UD,
// without the IBA 1.5 FLUSH and ATOMIC WRITE (ib-facts.md §2.2: it misreads
// RD and does not dissect XRC, FLUSH, ATOMIC WRITE or the RoCEv2 CNP 0x81).
func tsharkOK(op opcode.Opcode) bool {
	switch op.Transport() {
	case opcode.RC, opcode.UC, opcode.UD:
	default:
		return false
	}
	switch op.Operation() {
	case opcode.Flush, opcode.AtomicWrite:
		return false
	}
	return true
}

// orFramesPerOpcode is how many frames the tshark oracle builds per opcode.
const orFramesPerOpcode = 4

// orTsharkPayloadHeuristics are the heuristic dissectors tshark 4.0 tries
// on InfiniBand payloads (tshark -G heuristic-decodes lists the table
// infiniband.payload; these are their short names).
var orTsharkPayloadHeuristics = []string{
	"smcr_infiniband", "smb_direct_infiniband", "rpcrdma_infiniband", "nvme_rdma", "lnet_ib",
	"iser_infiniband", "eth_over_ib", "mellanox_eoib", "sdp_infiniband", "fc_infiniband",
}

// The tshark fields compared, in the order of the -e options.
var orTsharkFields = []string{
	"frame.number",
	"infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m", "infiniband.bth.padcnt",
	"infiniband.bth.tver", "infiniband.bth.p_key", "infiniband.bth.destqp", "infiniband.bth.a",
	"infiniband.bth.reserved7", "infiniband.bth.psn", "infiniband.reserved",
	"infiniband.deth.q_key", "infiniband.deth.srcqp",
	"infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
	"infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
	"infiniband.aeth.syndrome", "infiniband.aeth.msn",
	"infiniband.atomicacketh.origremdt",
	"infiniband.immdt", "infiniband.ieth",
	"infiniband.invariant.crc",
	"_ws.malformed",
}

// TestOracleTshark builds frames for every opcode tshark 4.0 dissects
// correctly, with random but fixed field values, and compares every BTH and
// ETH field tshark shows, and the ICRC, with what was built.
func TestOracleTshark(t *testing.T) {
	oracle.Need(t, "tshark")
	var ops []opcode.Opcode
	var built []packet.FrameFields
	var frames [][]byte
	for _, op := range opcode.All() {
		if !tsharkOK(op) {
			continue
		}
		for i := 0; i < orFramesPerOpcode; i++ {
			seed := int(op)*100 + i
			p := proptest.PacketFields(op).Example(seed)
			// tshark dissects the payload of packets to or from QP0 and
			// QP1 as MADs, and random bytes end the dissection before the
			// ICRC.
			if p.BTH.DestQP < 2 {
				p.BTH.DestQP += 2
			}
			if p.DETH.SrcQP < 2 && op.HasDETH() {
				p.DETH.SrcQP += 2
			}
			ff, b := orFrame(t, seed, p)
			ops = append(ops, op)
			built = append(built, ff)
			frames = append(frames, b)
		}
	}
	path := filepath.Join(t.TempDir(), "oracle.pcap")
	if keep := os.Getenv("ROCEKIT_ORACLE_KEEP"); keep != "" {
		path = keep // keep the pcap for a look with tshark -V
	}
	orWritePcap(t, path, frames)

	args := []string{"-r", path, "-T", "fields", "-E", "separator=/t", "-E", "aggregator=;", "-E", "occurrence=a"}
	// The payload is random bytes: keep the upper-layer protocols that
	// claim InfiniBand payloads heuristically from trying (and failing before
	// tshark shows the ICRC).
	for _, h := range orTsharkPayloadHeuristics {
		args = append(args, "--disable-heuristic", h)
	}
	for _, f := range orTsharkFields {
		args = append(args, "-e", f)
	}
	rows := oracle.Tshark(t, "\t", args...)
	require.Len(t, rows, len(frames), "tshark rows")

	checked := map[opcode.Opcode]int{}
	for i, row := range rows {
		require.Len(t, row, len(orTsharkFields), "row %d", i+1)
		v := map[string]string{}
		for j, name := range orTsharkFields {
			v[name] = row[j]
		}
		ff := &built[i]
		p := &ff.Transport
		b := frames[i]
		op := ops[i]
		what := fmt.Sprintf("frame %d (%s)", i+1, op)
		if os.Getenv("ROCEKIT_ORACLE_DEBUG") != "" {
			t.Logf("%s: %v", what, row)
		}
		require.Equal(t, strconv.Itoa(i+1), v["frame.number"], what)
		assert.Empty(t, v["_ws.malformed"], "%s: tshark says the frame is malformed", what)

		num := func(name string) uint64 {
			s := v[name]
			require.NotEmpty(t, s, "%s: tshark shows no %s", what, name)
			require.NotContains(t, s, ";", "%s: %s occurs more than once", what, name)
			n, err := strconv.ParseUint(s, 0, 64)
			require.NoError(t, err, "%s: %s = %q", what, name, s)
			return n
		}
		flag := func(name string) bool {
			switch s := v[name]; s {
			case "1", "True":
				return true
			case "0", "False":
				return false
			default:
				t.Fatalf("%s: %s = %q, not a boolean", what, name, s)
			}
			return false
		}
		hexBytes := func(name string) []byte {
			// tshark 4.0 lists ImmDt and IETH twice (header and value,
			// same field); every occurrence must agree.
			occ := strings.Split(v[name], ";")
			for _, o := range occ[1:] {
				require.Equal(t, occ[0], o, "%s: %s occurrences differ", what, name)
			}
			b, err := hex.DecodeString(strings.ReplaceAll(occ[0], ":", ""))
			require.NoError(t, err, "%s: %s = %q", what, name, v[name])
			return b
		}
		absent := func(name string) {
			assert.Empty(t, v[name], "%s: tshark shows %s, which %s does not carry", what, name, op)
		}

		// BTH
		assert.Equal(t, uint64(op), num("infiniband.bth.opcode"), what)
		assert.Equal(t, p.BTH.SE, flag("infiniband.bth.se"), "%s: SE", what)
		assert.Equal(t, p.BTH.MigReq, flag("infiniband.bth.m"), "%s: M", what)
		assert.Equal(t, uint64(p.BTH.PadCnt), num("infiniband.bth.padcnt"), "%s: PadCnt", what)
		assert.Equal(t, uint64(p.BTH.TVer), num("infiniband.bth.tver"), "%s: TVer", what)
		assert.Equal(t, uint64(p.BTH.PKey), num("infiniband.bth.p_key"), "%s: P_Key", what)
		assert.Equal(t, uint64(p.BTH.DestQP), num("infiniband.bth.destqp"), "%s: DestQP", what)
		assert.Equal(t, p.BTH.AckReq, flag("infiniband.bth.a"), "%s: AckReq", what)
		assert.Equal(t, uint64(p.BTH.Resv7), num("infiniband.bth.reserved7"), "%s: Resv7", what)
		assert.Equal(t, uint64(p.BTH.PSN), num("infiniband.bth.psn"), "%s: PSN", what)
		// tshark 4.0 shows BTH byte 4 (FECN, BECN, Resv6) as its first
		// "Reserved" field.
		resv := strings.Split(v["infiniband.reserved"], ";")[0]
		assert.Equal(t, hex.EncodeToString(b[packet.EthernetLen+packet.VLANLen*len(ff.Eth.VLANs)+packet.IPv4Len+packet.UDPLen+4:][:1]), resv, "%s: BTH byte 4", what)

		// ETHs
		info := op.Info()
		if info.Has(opcode.DETH) {
			assert.Equal(t, uint64(p.DETH.QKey), num("infiniband.deth.q_key"), "%s: Q_Key", what)
			assert.Equal(t, uint64(p.DETH.SrcQP), num("infiniband.deth.srcqp"), "%s: SrcQP", what)
		} else {
			absent("infiniband.deth.q_key")
		}
		switch {
		case info.Has(opcode.RETH):
			assert.Equal(t, p.RETH.VA, num("infiniband.reth.va"), "%s: RETH VA", what)
			assert.Equal(t, uint64(p.RETH.RKey), num("infiniband.reth.r_key"), "%s: RETH R_Key", what)
			assert.Equal(t, uint64(p.RETH.DMALen), num("infiniband.reth.dmalen"), "%s: RETH DMA length", what)
		case info.Has(opcode.AtomicETH):
			// tshark 4.0 shows the AtomicETH VA and R_Key with the RETH fields.
			assert.Equal(t, p.AtomicETH.VA, num("infiniband.reth.va"), "%s: AtomicETH VA", what)
			assert.Equal(t, uint64(p.AtomicETH.RKey), num("infiniband.reth.r_key"), "%s: AtomicETH R_Key", what)
			absent("infiniband.reth.dmalen")
		default:
			absent("infiniband.reth.va")
		}
		if info.Has(opcode.AtomicETH) {
			assert.Equal(t, p.AtomicETH.SwapAdd, num("infiniband.atomiceth.swapdt"), "%s: swap/add", what)
			assert.Equal(t, p.AtomicETH.Compare, num("infiniband.atomiceth.cmpdt"), "%s: compare", what)
		} else {
			absent("infiniband.atomiceth.swapdt")
		}
		if info.Has(opcode.AETH) {
			assert.Equal(t, uint64(p.AETH.Syndrome), num("infiniband.aeth.syndrome"), "%s: syndrome", what)
			assert.Equal(t, uint64(p.AETH.MSN), num("infiniband.aeth.msn"), "%s: MSN", what)
		} else {
			absent("infiniband.aeth.syndrome")
		}
		if info.Has(opcode.AtomicAckETH) {
			assert.Equal(t, p.AtomicAckETH.OrigRemDt, num("infiniband.atomicacketh.origremdt"), "%s: original remote data", what)
		} else {
			absent("infiniband.atomicacketh.origremdt")
		}
		if info.Has(opcode.ImmDt) {
			assert.Equal(t, binary.BigEndian.AppendUint32(nil, p.ImmDt.Imm), hexBytes("infiniband.immdt"), "%s: ImmDt", what)
		} else {
			absent("infiniband.immdt")
		}
		if info.Has(opcode.IETH) {
			assert.Equal(t, binary.BigEndian.AppendUint32(nil, p.IETH.RKey), hexBytes("infiniband.ieth"), "%s: IETH", what)
		} else {
			absent("infiniband.ieth")
		}

		// ICRC: tshark reads the four wire bytes as a big-endian number
		// (ib-facts.md §3.2), so it shows our value byte-reversed.
		ours := icrc.Get(b[len(b)-icrc.Len:])
		assert.Equal(t, uint64(bits.ReverseBytes32(ours)), num("infiniband.invariant.crc"), "%s: ICRC", what)
		checked[op]++
	}
	t.Logf("tshark agreed on %d frames, %d opcodes (RC, UC, UD; not RD, XRC, CNP, FLUSH, ATOMIC WRITE)", len(rows), len(checked))
}

// orScapyScript prints, for every frame of the pcap in argv[1], the ICRC
// scapy computes (wire order, hex) after deleting the one the frame carries.
const orScapyScript = `
import sys
from scapy.all import rdpcap
from scapy.contrib.roce import BTH
for p in rdpcap(sys.argv[1]):
    if BTH not in p:
        print("nobth")
        continue
    del p[BTH].icrc
    print(bytes(p)[-4:].hex())
`

// orScapyFrames is how many frames the scapy oracle compares.
const orScapyFrames = 200

// TestOracleScapy compares the ICRC of random RoCEv2/IPv4 frames (any valid
// opcode, any lower-layer values, VLAN tags included) with the one scapy
// 2.5's BTH computes. scapy knows the BTH only; the extension headers are
// payload to it, which the ICRC covers the same way.
func TestOracleScapy(t *testing.T) {
	var frames [][]byte
	for i := 0; i < orScapyFrames; i++ {
		ff := proptest.FrameFieldsFor(packet.RoCEv2IPv4).Example(1000 + i)
		ff.UDP.SrcPort |= 0xC000
		frames = append(frames, rtEncodeFrame(t, &ff))
	}
	path := filepath.Join(t.TempDir(), "scapy.pcap")
	orWritePcap(t, path, frames)
	out := oracle.Python(t, orScapyScript, path)
	lines := strings.Fields(out)
	require.Len(t, lines, len(frames), "scapy output lines")
	ops := map[opcode.Opcode]bool{}
	for i, l := range lines {
		b := frames[i]
		ours := hex.EncodeToString(b[len(b)-icrc.Len:])
		var fr packet.Frame
		require.NoError(t, fr.DecodeEthernet(b))
		ops[fr.Transport.Opcode()] = true
		assert.Equal(t, ours, l, "frame %d (%s, %d bytes): ICRC", i+1, fr.Transport.Opcode(), len(b))
	}
	t.Logf("scapy agreed on the ICRC of %d frames (%d distinct opcodes)", len(lines), len(ops))
}
