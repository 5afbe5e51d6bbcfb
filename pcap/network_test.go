package pcap

import (
	"encoding/binary"
	"testing"

	"github.com/rocekit/rocekit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// erfRecord builds an ERF record: 16-byte header, extension headers, body.
func erfRecord(typ byte, wlen uint16, exts int, body []byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, 0x482B41EF_7FEBEA60) // ts
	if exts > 0 {
		typ |= 0x80
	}
	b = append(b, typ, 0x04)
	b = binary.BigEndian.AppendUint16(b, uint16(16+8*exts+len(body)+6)) // rlen, with padding not stored
	b = binary.BigEndian.AppendUint16(b, 0)                             // lctr
	b = binary.BigEndian.AppendUint16(b, wlen)
	for i := range exts {
		ext := []byte{0x05, 1, 2, 3, 4, 5, 6, 7}
		if i < exts-1 {
			ext[0] |= 0x80
		}
		b = append(b, ext...)
	}
	return append(b, body...)
}

func TestNetwork(t *testing.T) {
	ib := frame(30, 0xF0)
	eth := frame(64, 0x52)
	ip4 := append([]byte{0x45}, frame(39, 0)...)
	ip6 := append([]byte{0x60}, frame(59, 0)...)
	sll := append([]byte{0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x89, 0x15}, ib...)
	sll4 := append([]byte{0, 4, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x08, 0x00}, ip4...)
	sll2 := append([]byte{0x86, 0xDD, 0, 0, 0, 0, 0, 2, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0}, ip6...)
	cases := []struct {
		name  string
		lt    LinkType
		data  []byte
		layer Layer
		et    uint16
		want  []byte
	}{
		{"ethernet", LinkTypeEthernet, eth, LayerEthernet, 0, eth},
		{"infiniband", LinkTypeInfiniBand, ib, LayerInfiniBand, 0, ib},
		{"raw 101 IPv4", LinkTypeRaw, ip4, LayerIPv4, 0x0800, ip4},
		{"raw 12 IPv6", LinkTypeRaw12, ip6, LayerIPv6, 0x86DD, ip6},
		{"ipv4", LinkTypeIPv4, ip4, LayerIPv4, 0x0800, ip4},
		{"ipv6", LinkTypeIPv6, ip6, LayerIPv6, 0x86DD, ip6},
		{"sll RoCEv1", LinkTypeLinuxSLL, sll, LayerEtherType, 0x8915, ib},
		{"sll IPv4", LinkTypeLinuxSLL, sll4, LayerIPv4, 0x0800, ip4},
		{"sll2 IPv6", LinkTypeLinuxSLL2, sll2, LayerIPv6, 0x86DD, ip6},
		{"erf infiniband", LinkTypeERF, erfRecord(21, 30, 0, ib), LayerInfiniBand, 0, ib},
		{"erf infiniband link", LinkTypeERF, erfRecord(25, 30, 0, ib), LayerInfiniBand, 0, ib},
		{"erf infiniband, padding stored", LinkTypeERF, erfRecord(21, 30, 0, append(ib, 0, 0, 0, 0, 0, 0)), LayerInfiniBand, 0, ib},
		{"erf infiniband, snapped", LinkTypeERF, erfRecord(21, 300, 0, ib), LayerInfiniBand, 0, ib},
		{"erf infiniband, 2 extension headers", LinkTypeERF, erfRecord(21, 30, 2, ib), LayerInfiniBand, 0, ib},
		{"erf eth", LinkTypeERF, erfRecord(2, 64, 0, append([]byte{0, 0}, eth...)), LayerEthernet, 0, eth},
		{"erf color eth, extension", LinkTypeERF, erfRecord(11, 64, 1, append([]byte{0, 0}, eth...)), LayerEthernet, 0, eth},
		{"erf dsm color eth", LinkTypeERF, erfRecord(16, 64, 0, append([]byte{0, 0}, eth...)), LayerEthernet, 0, eth},
		{"erf color hash eth", LinkTypeERF, erfRecord(20, 64, 0, append([]byte{0, 0}, eth...)), LayerEthernet, 0, eth},
		{"erf ipv4", LinkTypeERF, erfRecord(22, 40, 0, ip4), LayerIPv4, 0x0800, ip4},
		{"erf ipv6", LinkTypeERF, erfRecord(23, 60, 0, ip6), LayerIPv6, 0x86DD, ip6},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Network(c.lt, c.data)
			require.NoError(t, err)
			assert.Equal(t, c.layer, p.Layer)
			assert.Equal(t, c.et, p.EtherType)
			assert.Equal(t, c.want, p.Data)
			// Zero copy: the payload lies at the end of the record's bytes
			// (less any stored padding).
			if len(p.Data) > 0 {
				off := len(c.data) - len(c.want)
				if c.name == "erf infiniband, padding stored" {
					off -= 6
				}
				assert.Same(t, &c.data[off], &p.Data[0])
			}
			rec := Record{LinkType: c.lt, Data: c.data}
			q, err := rec.Network()
			require.NoError(t, err)
			assert.Equal(t, p, q)
		})
	}
}

func TestNetworkErrors(t *testing.T) {
	cases := []struct {
		name   string
		lt     LinkType
		data   []byte
		header string
		cause  error
	}{
		{"short ethernet", LinkTypeEthernet, frame(13, 0), "ethernet", rocekit.ErrTruncated},
		{"empty raw", LinkTypeRaw, nil, "raw", rocekit.ErrTruncated},
		{"raw version 5", LinkTypeRaw, []byte{0x50, 0}, "raw", rocekit.ErrInvalid},
		{"short sll", LinkTypeLinuxSLL, frame(15, 0), "sll", rocekit.ErrTruncated},
		{"short sll2", LinkTypeLinuxSLL2, frame(19, 0), "sll2", rocekit.ErrTruncated},
		{"short erf", LinkTypeERF, frame(15, 0), "erf", rocekit.ErrTruncated},
		{"erf extension cut", LinkTypeERF, erfRecord(21, 30, 2, nil)[:30], "erf", rocekit.ErrTruncated},
		{"erf extensions never end", LinkTypeERF, erfRecord(21, 30, 2, nil)[:32], "erf", rocekit.ErrTruncated},
		{"erf eth without pad", LinkTypeERF, erfRecord(2, 64, 0, []byte{0}), "erf", rocekit.ErrTruncated},
		{"erf ATM", LinkTypeERF, erfRecord(3, 64, 0, frame(52, 0)), "erf", rocekit.ErrInvalid},
		{"unknown link type", 105, frame(40, 0), "link", rocekit.ErrInvalid},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "erf extensions never end" {
				c.data[24] |= 0x80 // the last extension header says another follows
			}
			_, err := Network(c.lt, c.data)
			var he *rocekit.HeaderError
			require.ErrorAs(t, err, &he)
			assert.Equal(t, c.header, he.Header)
			assert.ErrorIs(t, err, c.cause)
		})
	}
}

// TestERFRecordTime checks the ERF timestamp that replaces the pcap one:
// 32.32 fixed point, rounded to the nearest nanosecond, with carry.
func TestERFRecordTime(t *testing.T) {
	for _, c := range []struct {
		ts        uint64
		sec, nsec int64
	}{
		{0x482B41EF_7FEBEA60, 1210794479, 499693535}, // frame 1 of the IB capture
		{0x00000001_80000000, 1, 500000000},
		{0x00000001_FFFFFFFF, 2, 0}, // rounds up into the next second
		{0, 0, 0},
	} {
		b := binary.LittleEndian.AppendUint64(nil, c.ts)
		sec, nsec, ok := erfTime(b)
		require.True(t, ok)
		assert.Equal(t, [2]int64{c.sec, c.nsec}, [2]int64{sec, nsec}, "%#x", c.ts)
	}
	_, _, ok := erfTime(make([]byte, 7))
	assert.False(t, ok)

	// In a file: the record's Time is the ERF one; a record too short for an
	// ERF timestamp keeps the pcap header's.
	f := newPcapFile(binary.LittleEndian, false, 0, LinkTypeERF).
		record(1210794479, 499693, 46, erfRecord(21, 30, 0, frame(30, 0))).
		record(5, 6, 4, frame(4, 0))
	recs := mustReadAll(t, f.bytes())
	require.Len(t, recs, 2)
	assert.Equal(t, "1210794479.499693535", epoch(recs[0].Time))
	assert.Equal(t, "5.000006000", epoch(recs[1].Time))
}

func TestLinkTypeAndLayerNames(t *testing.T) {
	names := map[LinkType]string{
		LinkTypeEthernet: "Ethernet", LinkTypeRaw12: "Raw IP", LinkTypeRaw: "Raw IP",
		LinkTypeLinuxSLL: "Linux SLL", LinkTypeERF: "ERF", LinkTypeIPv4: "IPv4", LinkTypeIPv6: "IPv6",
		LinkTypeInfiniBand: "InfiniBand", LinkTypeLinuxSLL2: "Linux SLL2",
	}
	values := map[LinkType]uint16{
		LinkTypeEthernet: 1, LinkTypeRaw12: 12, LinkTypeRaw: 101, LinkTypeLinuxSLL: 113, LinkTypeERF: 197,
		LinkTypeIPv4: 228, LinkTypeIPv6: 229, LinkTypeInfiniBand: 247, LinkTypeLinuxSLL2: 276,
	}
	for lt, name := range names {
		assert.Equal(t, name, lt.String())
		assert.True(t, lt.Known())
		assert.Equal(t, values[lt], uint16(lt))
	}
	assert.Equal(t, "LinkType(105)", LinkType(105).String())
	assert.False(t, LinkType(105).Known())
	assert.False(t, LinkType(0).Known())
	for l, name := range map[Layer]string{LayerEthernet: "Ethernet", LayerIPv4: "IPv4", LayerIPv6: "IPv6",
		LayerEtherType: "EtherType payload", LayerInfiniBand: "InfiniBand", 0: "Layer(0)"} {
		assert.Equal(t, name, l.String())
	}
	assert.Equal(t, "pcap", FormatPcap.String())
	assert.Equal(t, "pcapng", FormatPcapng.String())
	assert.Equal(t, "Format(0)", Format(0).String())
}

// Payload.Cut says how many bytes of the packet the capture did not keep:
// from the record's lengths (a snap length), or from an ERF header's wire
// length; 0 for a packet captured whole.
func TestNetworkCut(t *testing.T) {
	eth := frame(64, 0x52)
	ib := frame(30, 0xF0)
	cases := []struct {
		name string
		rec  Record
		cut  int
	}{
		{"whole", Record{LinkType: LinkTypeEthernet, Data: eth, CapLen: 64, OrigLen: 64}, 0},
		{"snapped", Record{LinkType: LinkTypeEthernet, Data: eth, CapLen: 64, OrigLen: 1500}, 1436},
		{"no original length", Record{LinkType: LinkTypeEthernet, Data: eth}, 0},
		{"original shorter than captured", Record{LinkType: LinkTypeEthernet, Data: eth, CapLen: 64, OrigLen: 60}, 0},
		{"erf whole", Record{LinkType: LinkTypeERF, Data: erfRecord(21, 30, 0, ib), OrigLen: 46}, 0},
		{"erf snapped by its wlen", Record{LinkType: LinkTypeERF, Data: erfRecord(21, 300, 0, ib), OrigLen: 46}, 270},
		{"erf snapped by the record", Record{LinkType: LinkTypeERF, Data: erfRecord(21, 300, 0, ib), OrigLen: 316}, 270},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := c.rec.Network()
			require.NoError(t, err)
			assert.Equal(t, c.cut, p.Cut)
		})
	}
}
