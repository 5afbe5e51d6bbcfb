package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

// check counts the frames, checks the ICRC of each RoCEv2 one and finds
// the one whose ICRC was damaged; a frame that is not RoCEv2 is counted,
// not checked.
func TestCheck(t *testing.T) {
	fr := packet.DefaultFrame(packet.RoCEv2IPv4)
	fr.Transport.Payload = make([]byte, 100)
	fr.Transport.SetPad()
	buf := make([]byte, 2048)
	n, err := fr.Encode(buf)
	require.NoError(t, err)
	var file bytes.Buffer
	w, err := pcap.NewWriter(&file, pcap.FormatPcap, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	ts := time.Unix(1, 0)
	for i := range 500 {
		d := bytes.Clone(buf[:n])
		if i == 321 {
			d[n-1] ^= 0x80 // a bad ICRC
		}
		require.NoError(t, w.WritePacket(ts, d))
	}
	require.NoError(t, w.WritePacket(ts, make([]byte, 60))) // not RoCE
	require.NoError(t, w.Flush())
	path := filepath.Join(t.TempDir(), "f.pcap")
	require.NoError(t, os.WriteFile(path, file.Bytes(), 0o644))
	for _, way := range []string{"map", "copy"} {
		t.Setenv("ROCEKIT_READ", way)
		c, copied, err := check(path)
		require.NoError(t, err)
		require.Equal(t, way == "copy", copied)
		require.Equal(t, [3]uint64{501, 500, 1}, [3]uint64{c.frames, c.checked, c.bad}, way)
	}
}
