package decode

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// writeRC writes n RC SEND ONLY frames of one QP, PSNs 0 to n-1, with a
// PSN gap at frame gapAt (1-based; 0: none) and the ICRC of frame badAt
// broken, as a classic pcap file, and returns its path.
func writeRC(t *testing.T, n, gapAt, badAt int) string {
	t.Helper()
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, pcap.FormatPcap, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	psn := uint32(0)
	for i := 1; i <= n; i++ {
		if i == gapAt {
			psn += 5
		}
		ff := packet.DefaultFrame(packet.RoCEv2IPv4)
		ff.Transport.BTH.Opcode = opcode.RCSendOnly
		ff.Transport.BTH.DestQP = 0x11
		ff.Transport.BTH.PSN = psn
		ff.Transport.Payload = []byte("payload " + strconv.Itoa(i))
		ff.Transport.SetPad()
		d := make([]byte, ff.Len())
		m, err := ff.Encode(d)
		require.NoError(t, err)
		d = d[:m]
		if i == badAt {
			d[len(d)-1] ^= 0xFF
		}
		require.NoError(t, w.WritePacket(time.Unix(1700000000, int64(i)), d))
		psn++
	}
	require.NoError(t, w.Flush())
	path := filepath.Join(t.TempDir(), "rc.pcap")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path
}

// Decode hands every frame over once, in file order, decoded and checked,
// with the analysis' warnings, and returns the summary.
func TestDecodeInOrder(t *testing.T) {
	const n = 5000
	path := writeRC(t, n, 3000, 100)
	for _, way := range []string{"map", "copy"} {
		t.Setenv("ROCEKIT_READ", way)
		next := 1
		var gaps []int
		s, err := Decode(path, Options{Workers: 2}, func(f *Frame) error {
			require.Equal(t, next, f.Record.Index, way)
			next++
			require.NoError(t, f.Err)
			require.NotNil(t, f.Packet.Transport.BTH)
			require.Equal(t, uint32(0x11), f.Packet.Transport.BTH.DestQP())
			require.True(t, f.ICRC.Checked)
			require.Equal(t, f.Record.Index != 100, f.ICRC.OK, "frame %d", f.Record.Index)
			require.False(t, f.VCRC.Checked)
			for _, w := range f.Warnings {
				if w == string(analysis.PSNGap) {
					gaps = append(gaps, f.Record.Index)
				}
			}
			return nil
		})
		require.NoError(t, err)
		require.Equal(t, n+1, next, way)
		// A frame with a bad ICRC is dropped: the next one shows a gap.
		require.Equal(t, []int{101, 3000}, gaps, way)
		require.Len(t, s.Connections, 1)
		require.Equal(t, uint64(2), s.Total(analysis.PSNGap))
	}
}

// The error each returns stops the calls and is returned.
func TestDecodeEachError(t *testing.T) {
	path := writeRC(t, 1000, 0, 0)
	calls := 0
	stop := fmt.Errorf("stop")
	_, err := Decode(path, Options{}, func(f *Frame) error {
		calls++
		if f.Record.Index == 10 {
			return stop
		}
		return nil
	})
	require.ErrorIs(t, err, stop)
	require.Equal(t, 10, calls)
}

// A Decoder's output is in file order whatever the number of workers, the
// way of reading and Ordered; a damaged file's error comes after the
// output of every frame before the damage; Last stops the decoding but
// not the reading.
func TestDecoderOutput(t *testing.T) {
	const n = 3000
	path := writeRC(t, n, 0, 0)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	cut := filepath.Join(t.TempDir(), "cut.pcap")
	require.NoError(t, os.WriteFile(cut, b[:len(b)-10], 0o644))
	var want bytes.Buffer
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	lines := func(w int, b []byte, f *Frame) []byte {
		return append(strconv.AppendInt(b, int64(f.Record.Index), 10), '\n')
	}
	for _, way := range []string{"map", "copy"} {
		t.Setenv("ROCEKIT_READ", way)
		for _, workers := range []int{1, 2, 3} {
			for _, ordered := range []bool{false, true} {
				var out bytes.Buffer
				d := New(Options{Workers: workers, Ordered: ordered, Append: lines, Out: &out})
				require.NoError(t, d.File(path))
				require.Equal(t, want.String(), out.String(), "%s, %d workers", way, workers)

				out.Reset()
				err := d.File(cut)
				require.Error(t, err)
				require.Contains(t, err.Error(), "record 3000")
				require.Equal(t, want.String()[:bytes.LastIndex(want.Bytes()[:want.Len()-1], []byte("\n"))+1], out.String())
				require.Len(t, d.Summary().Connections, 1)
			}
		}
		var out bytes.Buffer
		_ = New(Options{Last: 7, Append: lines, Out: &out}).File(path)
		require.Equal(t, "1\n2\n3\n4\n5\n6\n7\n", out.String())
		err := New(Options{Last: 7, SummaryOnly: true}).File(cut)
		require.Error(t, err, "damage after Last is still reported")
	}
}
