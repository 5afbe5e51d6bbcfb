package pcap

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var orders = []struct {
	name  string
	order byteOrder
}{{"little-endian", binary.LittleEndian}, {"big-endian", binary.BigEndian}}

// TestPcapByteOrdersAndResolutions reads classic pcap files built by hand in
// both byte orders, with microsecond and nanosecond magic.
func TestPcapByteOrdersAndResolutions(t *testing.T) {
	for _, o := range orders {
		for _, nano := range []bool{false, true} {
			name := o.name + "/usec"
			if nano {
				name = o.name + "/nsec"
			}
			t.Run(name, func(t *testing.T) {
				f := newPcapFile(o.order, nano, 65535, LinkTypeInfiniBand)
				f.record(1210794479, 499693, 300, frame(40, 1))
				f.record(4294967295, 999999, 7, frame(7, 2))
				f.record(0, 0, 0, nil)
				if nano {
					f.buf.Truncate(24)
					f.record(1210794479, 499693535, 300, frame(40, 1))
					f.record(4294967295, 999999999, 7, frame(7, 2))
					f.record(0, 0, 0, nil)
				}
				file := f.bytes()
				if o.order == binary.BigEndian {
					require.Equal(t, []byte{0xA1, 0xB2}, file[:2])
				}
				_, full, err := readAll(t, file)
				require.NoError(t, err)
				require.Len(t, full, 3)
				want0, want1 := time.Unix(1210794479, 499693000), time.Unix(4294967295, 999999000)
				if nano {
					want0, want1 = time.Unix(1210794479, 499693535), time.Unix(4294967295, 999999999)
				}
				assert.True(t, want0.Equal(full[0].Time), "%v", full[0].Time)
				assert.True(t, want1.Equal(full[1].Time), "%v", full[1].Time)
				assert.Equal(t, frame(40, 1), full[0].Data)
				assert.Equal(t, 300, full[0].OrigLen)
				assert.Equal(t, 40, full[0].CapLen)
				assert.Equal(t, LinkTypeInfiniBand, full[0].LinkType)
				assert.Equal(t, []int64{24, 24 + 16 + 40, 24 + 16 + 40 + 16 + 7}, []int64{full[0].Offset, full[1].Offset, full[2].Offset})
				assert.Equal(t, []int{1, 2, 3}, []int{full[0].Index, full[1].Index, full[2].Index})
				assert.Empty(t, full[2].Data)

				// The same, gzip-compressed: offsets are in the decompressed file.
				_, fullGz, err := readAll(t, gz(t, file))
				require.NoError(t, err)
				assert.Equal(t, full, fullGz)
			})
		}
	}
}

// TestPcapLinkTypeFCSBits checks that FCS information in the top bits of the
// link-type field is ignored.
func TestPcapLinkTypeFCSBits(t *testing.T) {
	f := newPcapFile(binary.LittleEndian, true, 0, LinkTypeEthernet)
	file := f.record(1, 2, 60, frame(60, 0)).bytes()
	binary.LittleEndian.PutUint32(file[20:24], 0x1<<28|0x1<<26|uint32(LinkTypeEthernet)) // FCS length 1 (2 bytes), P bit
	recs := mustReadAll(t, file)
	require.Len(t, recs, 1)
	assert.Equal(t, LinkTypeEthernet, recs[0].Link)
}

// TestPcapngBothByteOrdersSectionsAndInterfaces reads a pcapng of three
// sections (little-, big-, little-endian), with several interfaces of
// different link types, EPB, SPB and obsolete PB packets and blocks to skip.
func TestPcapngBothByteOrdersSectionsAndInterfaces(t *testing.T) {
	ng := newNgFile(binary.LittleEndian).
		idb(LinkTypeEthernet, 0, -1, 0).   // if 0: default microseconds
		idb(LinkTypeInfiniBand, 128, 9, 0) // if 1: nanoseconds, snaplen 128
	ng.block(4, ng.u32(ng.u32(nil, 0), 0)) // name resolution block, skipped
	ng.epb(0, 1_500_000_123_456, 100, frame(60, 1))
	ng.epb(1, 1_500_000_123_456_789, 200, frame(128, 2))
	ng.block(5, make([]byte, 16)) // interface statistics, skipped
	ng.spb(70, frame(70, 3))      // interface 0, no timestamp
	ng.block(0x0BAD, []byte("custom block, skipped"))
	ng.shb(binary.BigEndian).
		idb(LinkTypeLinuxSLL2, 0, 3, 0). // if 0 of section 2: milliseconds
		idb(LinkTypeRaw, 0, 0x80|20, 10) // if 1: 2^-20 s, offset +10 s
	ng.pb(1, 5<<20|1<<19, 50, frame(40, 4)) // 5.5 s + 10 s
	ng.epb(0, 1234, 30, frame(30, 5))
	ng.block(0x12345678, make([]byte, 40))
	ng.shb(binary.LittleEndian).idb(LinkTypeIPv6, 0, 6, 0)
	ng.epb(0, 7_000_001, 40, frame(40, 6))
	file := ng.bytes()

	type row struct {
		link LinkType
		ifc  int
		time time.Time
		cap  int
		orig int
	}
	u := func(sec, nsec int64) time.Time { return time.Unix(sec, nsec).UTC() }
	want := []row{
		{LinkTypeEthernet, 0, u(1_500_000, 123_456_000), 60, 100},
		{LinkTypeInfiniBand, 1, u(1_500_000, 123_456_789), 128, 200},
		{LinkTypeEthernet, 0, time.Time{}, 70, 70}, // SPB: no timestamp
		{LinkTypeRaw, 1, u(15, 500_000_000), 40, 50},
		{LinkTypeLinuxSLL2, 0, u(1, 234_000_000), 30, 30},
		{LinkTypeIPv6, 0, u(7, 1000), 40, 40},
	}
	plainLen := int64(len(file))
	check := func(t *testing.T, file []byte) {
		_, full, err := readAll(t, file)
		require.NoError(t, err)
		var got []row
		for i, r := range full {
			assert.Equal(t, i+1, r.Index)
			if i > 0 {
				assert.Greater(t, r.Offset, full[i-1].Offset)
			}
			assert.Equal(t, r.CapLen, len(r.Data))
			assert.Equal(t, frame(r.CapLen, byte(i+1)), r.Data)
			got = append(got, row{r.LinkType, r.Interface, r.Time, r.CapLen, r.OrigLen})
		}
		assert.Equal(t, want, got)
		// The last EPB (32 bytes of fixed fields, 40 of data, 16 of options)
		// ends the (decompressed) file.
		assert.Equal(t, plainLen-(32+40+16), full[5].Offset)
	}
	t.Run("plain", func(t *testing.T) { check(t, file) })
	t.Run("gzip", func(t *testing.T) { check(t, gz(t, file)) })
}

// TestPcapngTimestampResolutions checks if_tsresol (powers of 10 and of 2)
// and if_tsoffset.
func TestPcapngTimestampResolutions(t *testing.T) {
	cases := []struct {
		name    string
		tsresol int
		offset  int64
		ts      uint64
		want    time.Time
	}{
		{"default usec", -1, 0, 1_700_000_000_123_456, time.Unix(1_700_000_000, 123_456_000)},
		{"10^-6", 6, 0, 1_700_000_000_123_456, time.Unix(1_700_000_000, 123_456_000)},
		{"10^-9", 9, 0, 1_700_000_000_123_456_789, time.Unix(1_700_000_000, 123_456_789)},
		{"10^-3", 3, 0, 1_700_000_000_123, time.Unix(1_700_000_000, 123_000_000)},
		{"10^0", 0, 0, 1_700_000_000, time.Unix(1_700_000_000, 0)},
		{"10^-12 truncates", 12, 0, 1_700_000_123_456_789_999, time.Unix(1_700_000, 123_456_789)},
		{"10^-19", 19, 0, 1_0000000000000000000 + 5_000_000_000_000_000_000, time.Unix(1, 500_000_000)},
		{"2^-0", 0x80, 0, 42, time.Unix(42, 0)},
		{"2^-10", 0x80 | 10, 0, 3<<10 | 512, time.Unix(3, 500_000_000)},
		{"2^-32", 0x80 | 32, 0, 1_700_000_000<<32 | 1<<31, time.Unix(1_700_000_000, 500_000_000)},
		{"2^-63", 0x80 | 63, 0, 1<<63 | 1<<62, time.Unix(1, 500_000_000)},
		{"offset", 9, 1_000_000_000, 700_000_000_250_000_000, time.Unix(1_700_000_000, 250_000_000)},
		{"negative offset", 6, -100, 200_000_001, time.Unix(100, 1000)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ng := newNgFile(binary.BigEndian).idb(LinkTypeEthernet, 0, c.tsresol, c.offset)
			recs := mustReadAll(t, ng.epb(0, c.ts, 60, frame(60, 0)).bytes())
			require.Len(t, recs, 1)
			assert.Equal(t, c.want.UTC(), recs[0].Time)
		})
	}
}

// TestRecordTimeIsUTC checks that times come back in UTC, so they print the
// same everywhere.
func TestRecordTimeIsUTC(t *testing.T) {
	recs := mustReadAll(t, newPcapFile(binary.LittleEndian, true, 0, LinkTypeEthernet).record(1, 1, 14, frame(14, 0)).bytes())
	assert.Equal(t, time.UTC, recs[0].Time.Location())
}

// NextInto fills the caller's Record exactly as Next returns it, for every
// shared capture read in place and as a stream, and leaves it alone at the
// end of the file.
func TestNextIntoSameAsNext(t *testing.T) {
	for _, name := range captureFiles(t) {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", filepath.Base(name), stream), func(t *testing.T) {
				if stream {
					t.Setenv("ROCEKIT_NO_MMAP", "1")
				}
				a, err := Open(name)
				require.NoError(t, err)
				defer a.Close()
				b, err := Open(name)
				require.NoError(t, err)
				defer b.Close()
				require.Equal(t, !stream && mapsFiles, b.Mapped())
				var got Record
				n := 0
				for {
					want, errA := a.Next()
					errB := b.NextInto(&got)
					require.Equal(t, errA, errB)
					if errA != nil {
						break
					}
					n++
					assert.Equal(t, *want, got, "record %d", n)
				}
				require.Greater(t, n, 0)
				assert.Equal(t, n, got.Index, "last record kept after io.EOF")
			})
		}
	}
}
