package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// stampTimes are the times of the frames of writeStampCapture: the last
// one is earlier than the one before it (a capture out of time order).
var stampTimes = []time.Time{
	time.Unix(1700000000, 1),               // 2023-11-14 22:13:20.000000001 UTC
	time.Unix(1700000001, 500000000),       // +1.499999999 s
	time.Unix(1700003662, 0),               // +1 h 1 min 0.5 s
	time.Unix(1700003661, 999999000).UTC(), // 1 us earlier
}

func writeStampCapture(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "t.pcap")
	f, err := os.Create(p)
	require.NoError(t, err)
	defer f.Close()
	w, err := pcap.NewWriter(f, pcap.FormatPcap, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	buf := make([]byte, 2048)
	for i, ts := range stampTimes {
		ff := packet.DefaultFrame(packet.RoCEv2IPv4)
		ff.Transport.BTH.Opcode, ff.Transport.BTH.PSN, ff.Transport.BTH.DestQP = opcode.RCSendOnly, uint32(i), 0x22
		n, err := ff.Encode(buf)
		require.NoError(t, err)
		require.NoError(t, w.WritePacket(ts, buf[:n]))
	}
	require.NoError(t, w.Flush())
	return p
}

// --time gives each text line's time as tcpdump's -t options do, in UTC
// whatever the local time zone.
func TestDecodeTimeFormats(t *testing.T) {
	file := writeStampCapture(t)
	// Lines without their time: index, then the rest.
	code, out, errs := runCLI(t, "decode", "--time", "none", file)
	require.Equal(t, 0, code, errs)
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 4)
	var rest []string
	for i, l := range lines {
		idx, r, ok := strings.Cut(l, " ")
		require.True(t, ok)
		assert.Equal(t, []string{"1", "2", "3", "4"}[i], idx)
		assert.True(t, strings.HasPrefix(r, "192.168.1."), l)
		rest = append(rest, r)
	}
	want := map[string][]string{
		"abs":   {"22:13:20.000000001", "22:13:21.500000000", "23:14:22.000000000", "23:14:21.999999000"},
		"date":  {"2023-11-14 22:13:20.000000001", "2023-11-14 22:13:21.500000000", "2023-11-14 23:14:22.000000000", "2023-11-14 23:14:21.999999000"},
		"epoch": {"1700000000.000000001", "1700000001.500000000", "1700003662.000000000", "1700003661.999999000"},
		"rel":   {"00:00:00.000000000", "00:00:01.499999999", "01:01:01.999999999", "01:01:01.999998999"},
		"delta": {"00:00:00.000000000", "00:00:01.499999999", "01:01:00.500000000", "-00:00:00.000001000"},
	}
	defer func(l *time.Location) { time.Local = l }(time.Local)
	for _, zone := range []*time.Location{time.UTC, time.FixedZone("UTC+9", 9*3600), time.FixedZone("UTC-5", -5*3600)} {
		time.Local = zone
		for _, name := range []string{"", "abs", "date", "epoch", "rel", "delta"} {
			args := []string{"decode", file}
			if name != "" {
				args = []string{"decode", "--time", name, file}
			}
			code, out, errs := runCLI(t, args...)
			require.Equal(t, 0, code, errs)
			var exp strings.Builder
			for i, ts := range want[max(name, "abs")] {
				exp.WriteString([]string{"1", "2", "3", "4"}[i] + " " + ts + " " + rest[i] + "\n")
			}
			assert.Equal(t, exp.String(), out, "--time %q in %v", name, zone)
		}
	}
	// rel and delta run from the frames printed: with --frames 2-, the
	// second frame is the first.
	code, out, _ = runCLI(t, "decode", "--time", "rel", "--frames", "3-", file)
	require.Equal(t, 0, code)
	assert.Equal(t, "3 00:00:00.000000000 "+rest[2]+"\n4 -00:00:00.000001000 "+rest[3]+"\n", out)
}

func TestDecodeTimeUsageErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"decode", "--time", "local", "x.pcap"}, `rocekit decode: --time "local": want abs, date, epoch, rel, delta or none`},
		{[]string{"decode", "--time", "epoch", "-v", "x.pcap"}, "rocekit decode: --time applies to the one-line text output, not to -v, --format json or --summary"},
		{[]string{"decode", "--time", "rel", "--format", "json", "x.pcap"}, "rocekit decode: --time applies to the one-line text output, not to -v, --format json or --summary"},
	} {
		code, _, errs := runCLI(t, c.args...)
		assert.Equal(t, 2, code, "%v", c.args)
		assert.Equal(t, c.want+"\nrun 'rocekit decode -h' for usage\n", errs, "%v", c.args)
	}
}

// The stamps are written without allocating.
func TestStampAllocs(t *testing.T) {
	b := make([]byte, 0, 64)
	for f := timeAbs; f < timeNone; f++ {
		s := stamper{format: f}
		n := testing.AllocsPerRun(100, func() {
			for _, ts := range stampTimes {
				b = s.append(b[:0], ts)
			}
		})
		assert.Zero(t, n, timeNames[f])
	}
}
