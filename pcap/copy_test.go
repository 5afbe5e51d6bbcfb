package pcap

import (
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/internal/pcapfast"
)

// copyIsFaster: ROCEKIT_READ decides it for a Mapped file; a file too small
// to matter is read through the mapping without a probe; a Reader that is
// not Mapped never reads through copies.
func TestCopyIsFaster(t *testing.T) {
	requireMapping(t)
	dir := t.TempDir()
	small := filepath.Join(dir, "small.pcap")
	require.NoError(t, os.WriteFile(small, twoGood(0).bytes(), 0o644))
	zipped := filepath.Join(dir, "small.pcap.gz")
	require.NoError(t, os.WriteFile(zipped, gz(t, twoGood(0).bytes()), 0o644))
	open := func(path string) *Reader {
		r, err := Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { r.Close() })
		return r
	}
	for env, want := range map[string]bool{"copy": true, "COPY": true, "map": false, "": false, "other": false} {
		t.Setenv("ROCEKIT_READ", env)
		require.Equal(t, want, open(small).copyIsFaster(), "ROCEKIT_READ=%q", env)
		require.False(t, open(zipped).copyIsFaster(), "gzip, ROCEKIT_READ=%q", env)
	}
}

// A Copy reads what the file held when it was mapped, clipped to the file;
// ranges outside it leave the Copy empty.
func TestCopyAt(t *testing.T) {
	requireMapping(t)
	file := twoGood(0).bytes()
	r, path := openMapped(t, file)
	var c pcapfast.Copy
	for _, tc := range []struct{ from, to, wantOff, wantTo int64 }{
		{0, 10, 0, 10},
		{24, int64(len(file)) + 100, 24, int64(len(file))},
		{-5, 3, 0, 3},
		{int64(len(file)), int64(len(file)) + 5, int64(len(file)), int64(len(file))},
		{40, 30, 40, 40},
	} {
		r.copyAt(&c, tc.from, tc.to)
		require.Equal(t, tc.wantOff, c.Off, "[%d, %d)", tc.from, tc.to)
		require.Equal(t, file[tc.wantOff:tc.wantTo], c.Data, "[%d, %d)", tc.from, tc.to)
	}
	// Bytes appended after the file was opened are not in its copies.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte("appended"))
	require.NoError(t, err)
	require.NoError(t, f.Close())
	r.copyAt(&c, 0, int64(len(file))+8)
	require.Equal(t, file, c.Data)
}

// Records a Copy holds whole are read from it; the others, and the part of
// a skim it does not cover, from the mapping, with the same result.
func TestRecordFromCopy(t *testing.T) {
	requireMapping(t)
	file := twoGood(0).record(12, 3, 33, frame(33, 3)).bytes()
	r, _ := openMapped(t, file)
	offs, first := r.skimFrom(nil, int64(len(file)), nil)
	require.Len(t, offs, 3)
	var want []Record
	for i, off := range offs {
		var rec Record
		require.NoError(t, r.recordFrom(nil, off, first+i, &rec))
		want = append(want, rec)
	}
	// inside reports whether b lies in in's memory.
	inside := func(b, in []byte) bool {
		lo, hi := uintptr(unsafe.Pointer(unsafe.SliceData(in))), uintptr(len(in))
		p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
		return p >= lo && p+uintptr(len(b)) <= lo+hi
	}
	var c pcapfast.Copy
	// The copy ends one byte short of the last record.
	r.copyAt(&c, offs[0], int64(len(file))-1)
	for i, off := range offs {
		var rec Record
		require.NoError(t, r.recordFrom(&c, off, first+i, &rec))
		require.Equal(t, want[i], rec, "record %d", i+1)
		require.Equal(t, i < 2, inside(rec.Data, c.Data), "record %d read from the copy", i+1)
	}
	// A second Reader skims through a copy of the middle record only.
	r2, _ := openMapped(t, file)
	r2.copyAt(&c, offs[1], offs[2])
	got, first2 := r2.skimFrom(&c, int64(len(file)), nil)
	require.Equal(t, offs, got)
	require.Equal(t, first, first2)
}
