package pcap

import (
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The third-party captures, with the frame counts capinfos reports
// (MANIFEST.md) and their link types.
var captureFacts = map[string]struct {
	frames int
	link   LinkType
}{
	"srinivaskoritala-rdma-softroce-demo_infiniband.pcap":         {43, LinkTypeERF},
	"oferby-proxy_roce.pcap":                                      {123, LinkTypeEthernet},
	"montybeatnik-rdma-roce-lab_roce_capture_read-write-ecn.pcap": {12, LinkTypeEthernet},
	"montybeatnik-rdma-roce-lab_test.pcap":                        {16, LinkTypeEthernet},
	"seladb-PcapPlusPlus-pr1603_InfiniBandPacket.pcap":            {1, LinkTypeEthernet},
}

const ibCapture = "srinivaskoritala-rdma-softroce-demo_infiniband.pcap"

// epoch formats t as tshark prints frame.time_epoch.
func epoch(t time.Time) string { return fmt.Sprintf("%d.%09d", t.Unix(), t.Nanosecond()) }

// tsharkRows runs tshark -T fields on file and returns one []string per frame.
func tsharkRows(t *testing.T, file string, fields ...string) [][]string {
	args := []string{"-r", file, "-T", "fields"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(runTshark(t, args...), "\n"), "\n") {
		rows = append(rows, strings.Split(line, "\t"))
	}
	return rows
}

func TestCapturesFrameCountsAndLinkTypes(t *testing.T) {
	files := captureFiles(t)
	seen := 0
	for _, path := range files {
		name := filepath.Base(path)
		facts, ok := captureFacts[name]
		if !ok {
			continue
		}
		seen++
		t.Run(name, func(t *testing.T) {
			file, err := os.ReadFile(path)
			require.NoError(t, err)
			recs, full, err := readAll(t, file)
			require.NoError(t, err)
			require.Len(t, recs, facts.frames)
			off := int64(24)
			for i, r := range full {
				assert.Equal(t, i+1, r.Index)
				assert.Equal(t, off, r.Offset, "frame %d", i+1)
				assert.Equal(t, facts.link, r.LinkType)
				assert.Equal(t, 0, r.Interface)
				assert.Equal(t, len(r.Data), r.CapLen)
				off += 16 + int64(r.CapLen)
			}
			assert.Equal(t, int64(len(file)), off, "records end at the end of the file")

			// The same file gzip-compressed reads back the same records.
			assert.Equal(t, recs, mustReadAll(t, gz(t, file)))
		})
	}
	require.Equal(t, len(captureFacts), seen, "every capture listed in MANIFEST.md is present")
}

func TestCapturesTimestampsMatchTshark(t *testing.T) {
	for _, path := range captureFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			file, err := os.ReadFile(path)
			require.NoError(t, err)
			recs := mustReadAll(t, file)
			rows := tsharkRows(t, path, "frame.number", "frame.time_epoch")
			require.Len(t, rows, len(recs))
			// The first frame as asked, and every other one too.
			for i, r := range recs {
				assert.Equal(t, rows[i][1], epoch(r.Time), "frame %d", i+1)
			}
		})
	}
}

// TestCapturesERFStripping checks that Network turns every ERF record of the
// native-IB capture into exactly the bytes LRH..VCRC, comparing LRH fields
// with tshark's.
func TestCapturesERFStripping(t *testing.T) {
	captureFiles(t)
	path := filepath.Join(capturesDir, ibCapture)
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	_, full, err := readAll(t, file)
	require.NoError(t, err)
	require.Len(t, full, 43)

	type lrh struct{ vl, lnh, dlid, pktlen, slid uint64 }
	var ours []lrh
	for i := range full {
		r := &full[i]
		require.Equal(t, LinkTypeERF, r.LinkType)
		assert.Equal(t, byte(21), r.Data[8]&0x7F, "frame %d: ERF type INFINIBAND", r.Index)
		p, err := r.Network()
		require.NoError(t, err, "frame %d", r.Index)
		require.Equal(t, LayerInfiniBand, p.Layer)
		b := p.Data
		// Zero copy: the payload is the record's bytes after the ERF header.
		require.Equal(t, &r.Data[ERFHeaderLen], &b[0])
		wlen := int(binary.BigEndian.Uint16(r.Data[14:16]))
		rlen := int(binary.BigEndian.Uint16(r.Data[10:12]))
		assert.Equal(t, wlen, len(b), "frame %d: payload is wlen bytes", r.Index)
		assert.Equal(t, r.CapLen-ERFHeaderLen, len(b), "frame %d: no stored padding", r.Index)
		assert.True(t, rlen-r.CapLen >= 2 && rlen-r.CapLen <= 6, "frame %d: rlen %d, caplen %d", r.Index, rlen, r.CapLen)
		pktlen := uint64(binary.BigEndian.Uint16(b[4:6]) & 0x7FF)
		// LRH PktLen counts 4-byte words from the LRH to the ICRC; the VCRC follows.
		assert.Equal(t, int(pktlen)*4+2, len(b), "frame %d: LRH..VCRC", r.Index)
		ours = append(ours, lrh{uint64(b[0] >> 4), uint64(b[1] & 3), uint64(binary.BigEndian.Uint16(b[2:4])), pktlen, uint64(binary.BigEndian.Uint16(b[6:8]))})
	}
	// The first frame as tshark -x shows it: f0 02 ff ff 00 48 ff ff.
	assert.Equal(t, lrh{0xF, 2, 0xFFFF, 72, 0xFFFF}, ours[0])

	rows := tsharkRows(t, path, "frame.len", "infiniband.lrh.vl", "infiniband.lrh.lnh",
		"infiniband.lrh.dlid", "infiniband.lrh.pktlen", "infiniband.lrh.slid")
	require.Len(t, rows, len(ours))
	for i, row := range rows {
		var v [6]uint64
		for j, s := range row {
			v[j], err = strconv.ParseUint(s, 0, 64)
			require.NoError(t, err, "frame %d field %d %q", i+1, j, s)
		}
		p, _ := full[i].Network()
		assert.Equal(t, int(v[0]), len(p.Data), "frame %d: tshark frame.len", i+1)
		assert.Equal(t, lrh{v[1], v[2], v[3], v[4], v[5]}, ours[i], "frame %d", i+1)
	}
}

func TestOpenFilesGzipAndStdin(t *testing.T) {
	dir := t.TempDir()
	ng := newNgFile(binary.LittleEndian).idb(LinkTypeInfiniBand, 0, 9, 0)
	for i := range 5 {
		ng.epb(0, 1700000000_000000000+uint64(i), uint32(30+i), frame(30+i, byte(i)))
	}
	want := mustReadAll(t, ng.bytes())
	require.Len(t, want, 5)
	assert.Equal(t, time.Unix(1700000000, 4).UTC(), want[4].Time)

	plain, packed := filepath.Join(dir, "x.pcapng"), filepath.Join(dir, "x.pcapng.gz")
	require.NoError(t, os.WriteFile(plain, ng.bytes(), 0o644))
	require.NoError(t, os.WriteFile(packed, gz(t, ng.bytes()), 0o644))

	readPath := func(path string) []rec {
		r, err := Open(path)
		require.NoError(t, err)
		defer r.Close()
		assert.Equal(t, FormatPcapng, r.Format())
		var got []rec
		for {
			x, err := r.Next()
			if err == io.EOF {
				return got
			}
			require.NoError(t, err)
			got = append(got, own(x))
		}
	}
	assert.Equal(t, want, readPath(plain))
	assert.Equal(t, want, readPath(packed))

	// "-" reads standard input.
	f, err := os.Open(packed)
	require.NoError(t, err)
	defer f.Close()
	saved := os.Stdin
	os.Stdin = f
	defer func() { os.Stdin = saved }()
	assert.Equal(t, want, readPath("-"))

	_, err = Open(filepath.Join(dir, "missing.pcap"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
