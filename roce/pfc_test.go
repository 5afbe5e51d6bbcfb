package roce

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/pcap"
)

// The PFC frames of a lossless incast appear in the trace where they were
// sent, as 802.1Qbb frames that tshark decodes: a pause (class 3, 65535
// quanta) and later a resume (0 quanta) for each.
func TestPFCInTrace(t *testing.T) {
	sc, err := LoadScenario("testdata/incast-pfc.json")
	require.NoError(t, err)
	var b bytes.Buffer
	sum := run(t, sc, Options{Trace: &b, TraceFormat: pcap.FormatPcap})
	require.True(t, sum.Complete)
	require.NotZero(t, sum.Network.PFCPauses)

	r, err := pcap.NewReader(bytes.NewReader(b.Bytes()))
	require.NoError(t, err)
	var quanta []uint16
	frames := 0
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		frames++
		if binary.BigEndian.Uint16(rec.Data[12:]) == 0x8808 {
			require.Len(t, rec.Data, 60)
			require.Equal(t, []byte{0x01, 0x80, 0xC2, 0x00, 0x00, 0x01}, rec.Data[:6])
			require.Equal(t, uint16(0x0101), binary.BigEndian.Uint16(rec.Data[14:]))
			require.Equal(t, uint16(0x0008), binary.BigEndian.Uint16(rec.Data[16:]))
			quanta = append(quanta, binary.BigEndian.Uint16(rec.Data[24:]))
		}
	}
	pauses := 0
	for _, q := range quanta {
		if q == 0xFFFF {
			pauses++
		} else {
			require.Zero(t, q)
		}
	}
	assert.Equal(t, int(sum.Network.PFCPauses), pauses)
	assert.Equal(t, 2*pauses, len(quanta), "every pause resumed by the end")
	assert.Equal(t, int(sum.Network.FramesOnWire)+len(quanta), frames)

	path := filepath.Join(t.TempDir(), "pfc.pcap")
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
	rows := oracle.Tshark(t, "|", "-r", path, "-Y", "macc", "-T", "fields", "-E", "separator=|",
		"-e", "macc.opcode", "-e", "macc.cbfc.enbv.c3", "-e", "macc.cbfc.pause_time.c3")
	require.Len(t, rows, len(quanta))
	for i, row := range rows {
		want := "0"
		if quanta[i] == 0xFFFF {
			want = "65535"
		}
		assert.Equal(t, []string{"0x0101", "1", want}, row, "PFC frame %d", i)
	}
}
