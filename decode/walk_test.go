package decode

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/pcap"
)

// writeFile writes n records of varied lengths (each starting with its
// index) as a file of format f and returns its path and the records.
func writeFile(t *testing.T, f pcap.Format, n int) (string, [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	w, err := pcap.NewWriter(&buf, f, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	var recs [][]byte
	for i := range n {
		d := make([]byte, 60+(i*7919)%1500)
		binary.BigEndian.PutUint32(d, uint32(i))
		for j := 4; j < len(d); j++ {
			d[j] = byte(i + j)
		}
		require.NoError(t, w.WritePacket(time.Unix(1, int64(i)), d))
		recs = append(recs, d)
	}
	require.NoError(t, w.Flush())
	path := filepath.Join(t.TempDir(), "f.pcap")
	require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	return path, recs
}

// walkAll walks path and returns each record's data by its Index, failing
// on a record handed over twice.
func walkAll(t *testing.T, path string, workers int) (map[int][]byte, bool, error) {
	t.Helper()
	var mu sync.Mutex
	got := map[int][]byte{}
	copied, err := Walk(path, workers, func(w int, rec *pcap.Record) {
		require.True(t, w >= 0 && w < workers, "worker %d of %d", w, workers)
		mu.Lock()
		defer mu.Unlock()
		_, dup := got[rec.Index]
		require.False(t, dup, "record %d handed over twice", rec.Index)
		got[rec.Index] = bytes.Clone(rec.Data)
	})
	return got, copied, err
}

// Every record of a file many chunks long reaches exactly one worker, with
// its bytes, both ways of reading and with any number of workers.
func TestWalkEveryRecordOnce(t *testing.T) {
	path, recs := writeFile(t, pcap.FormatPcap, 3000) // about 2.4 MB: 10 read chunks, 19 copy chunks
	for _, way := range []string{"map", "copy"} {
		t.Setenv("ROCEKIT_READ", way)
		for _, workers := range []int{1, 2, 3} {
			got, copied, err := walkAll(t, path, workers)
			require.NoError(t, err)
			require.Equal(t, way == "copy", copied)
			require.Len(t, got, len(recs), "%s, %d workers", way, workers)
			for i, d := range recs {
				require.Equal(t, d, got[i+1], "record %d, %s, %d workers", i+1, way, workers)
			}
		}
	}
}

// A file cut inside a record: every record before the cut is handed over,
// and the cut is reported.
func TestWalkDamaged(t *testing.T) {
	path, recs := writeFile(t, pcap.FormatPcap, 1000)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b[:len(b)-10], 0o644))
	for _, way := range []string{"map", "copy"} {
		t.Setenv("ROCEKIT_READ", way)
		got, _, err := walkAll(t, path, 2)
		require.Error(t, err, way)
		require.Contains(t, err.Error(), "record 1000", way)
		require.Len(t, got, len(recs)-1, way)
		for i, d := range recs[:len(recs)-1] {
			require.Equal(t, d, got[i+1], "record %d, %s", i+1, way)
		}
	}
}

// A file that pcap.Open does not map (pcapng) is walked from its stream:
// every record reaches exactly one worker, with its bytes, and never
// through copies.
func TestWalkStream(t *testing.T) {
	path, recs := writeFile(t, pcap.FormatPcapng, 1000)
	for _, workers := range []int{1, 2, 3} {
		got, copied, err := walkAll(t, path, workers)
		require.NoError(t, err)
		require.False(t, copied)
		require.Len(t, got, len(recs), "%d workers", workers)
		for i, d := range recs {
			require.Equal(t, d, got[i+1], "record %d, %d workers", i+1, workers)
		}
	}
}
