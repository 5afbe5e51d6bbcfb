package packet_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capDir is ../shared/captures relative to the repository root.
var capDir = filepath.Join("..", "..", "shared", "captures")

// capExpect is what ../shared/captures/MANIFEST.md says each file holds:
// records, frames carrying an IB transport packet, and BTH opcode counts.
type capExpect struct {
	file    string
	records int
	roce    int
	encaps  map[packet.Encap]int
	opcodes map[opcode.Opcode]int
}

var capFiles = []capExpect{
	{
		file: "srinivaskoritala-rdma-softroce-demo_infiniband.pcap", records: 43, roce: 43,
		encaps:  map[packet.Encap]int{packet.IBLocal: 37, packet.IBGlobal: 6},
		opcodes: map[opcode.Opcode]int{opcode.RCSendOnly: 10, opcode.RCAcknowledge: 9, opcode.UDSendOnly: 24},
	},
	{
		// RoCE from UDP port 69 to 4791: we key on the destination port.
		file: "oferby-proxy_roce.pcap", records: 123, roce: 105,
		encaps: map[packet.Encap]int{packet.RoCEv2IPv4: 105},
		opcodes: map[opcode.Opcode]int{opcode.RCSendFirst: 33, opcode.RCSendLastWithImmediate: 33,
			opcode.RCSendOnlyWithImmediate: 2, opcode.RCAcknowledge: 37},
	},
	{
		file: "montybeatnik-rdma-roce-lab_roce_capture_read-write-ecn.pcap", records: 12, roce: 12,
		encaps:  map[packet.Encap]int{packet.RoCEv2IPv4: 12},
		opcodes: capMontybeatnik,
	},
	{
		file: "montybeatnik-rdma-roce-lab_test.pcap", records: 16, roce: 12,
		encaps:  map[packet.Encap]int{packet.RoCEv2IPv4: 12},
		opcodes: capMontybeatnik,
	},
	{
		file: "seladb-PcapPlusPlus-pr1603_InfiniBandPacket.pcap", records: 1, roce: 1,
		encaps:  map[packet.Encap]int{packet.RoCEv2IPv4: 1},
		opcodes: map[opcode.Opcode]int{opcode.RCRDMAReadRequest: 1},
	},
}

var capMontybeatnik = map[opcode.Opcode]int{
	opcode.RCRDMAWriteOnly: 1, opcode.RCRDMAReadRequest: 1, opcode.RCRDMAReadResponseFirst: 1,
	opcode.RCRDMAReadResponseMiddle: 2, opcode.RCRDMAReadResponseLast: 1, opcode.RCAcknowledge: 1,
	opcode.UDSendOnly: 5,
}

// TestCaptures decodes every frame of the third-party captures: no decode
// error, a valid ICRC on every RoCE/IB frame, a valid VCRC on every native IB
// frame, and the record, encapsulation and opcode counts of MANIFEST.md.
func TestCaptures(t *testing.T) {
	if _, err := os.Stat(capDir); err != nil {
		t.Skipf("captures not present at %s (the repository's ../shared/captures): %v", capDir, err)
	}
	for _, c := range capFiles {
		t.Run(c.file, func(t *testing.T) {
			path := filepath.Join(capDir, c.file)
			if _, err := os.Stat(path); err != nil {
				t.Skipf("capture %s not present: %v", path, err)
			}
			r, err := pcap.Open(path)
			require.NoError(t, err)
			defer r.Close()

			var fr packet.Frame
			records, roce, icrcOK, vcrcOK := 0, 0, 0, 0
			encaps := map[packet.Encap]int{}
			ops := map[opcode.Opcode]int{}
			for {
				rec, err := r.Next()
				if errors.Is(err, io.EOF) {
					break
				}
				require.NoError(t, err)
				records++
				p, err := rec.Network()
				require.NoError(t, err, "record %d", rec.Index)
				switch p.Layer {
				case pcap.LayerEthernet, pcap.LayerInfiniBand, pcap.LayerIPv4, pcap.LayerIPv6:
				default:
					t.Fatalf("record %d: unexpected layer %s", rec.Index, p.Layer)
				}
				require.NoError(t, fr.DecodeRecord(rec), "record %d (%s)", rec.Index, p.Layer)
				if !fr.IsRoCE() {
					continue
				}
				roce++
				encaps[fr.Encap]++
				ops[fr.Transport.Opcode()]++
				ok, want, got, err := fr.CheckICRC()
				require.NoError(t, err, "record %d", rec.Index)
				if assert.True(t, ok, "record %d: ICRC want %08x got %08x", rec.Index, want, got) {
					icrcOK++
				}
				if fr.Encap == packet.IBLocal || fr.Encap == packet.IBGlobal {
					ok, want, got, err := fr.CheckVCRC()
					require.NoError(t, err, "record %d", rec.Index)
					if assert.True(t, ok, "record %d: VCRC want %04x got %04x", rec.Index, want, got) {
						vcrcOK++
					}
				} else {
					assert.Nil(t, fr.VCRC)
				}
			}
			assert.Equal(t, c.records, records, "records")
			assert.Equal(t, c.roce, roce, "RoCE/IB frames")
			assert.Equal(t, c.encaps, encaps, "encapsulations")
			assert.Equal(t, c.opcodes, ops, "opcodes")
			assert.Equal(t, roce, icrcOK, "valid ICRCs")
			native := encaps[packet.IBLocal] + encaps[packet.IBGlobal]
			assert.Equal(t, native, vcrcOK, "valid VCRCs")
			t.Logf("%d records, %d RoCE/IB frames, ICRC %d/%d valid, VCRC %d/%d valid", records, roce, icrcOK, roce, vcrcOK, native)
		})
	}
}
