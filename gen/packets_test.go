package gen

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// A packet list sets any field; what it leaves out follows the DUT and the
// sequence: PSNs continue (a READ takes one per response), AckReq on
// Last/Only requests, PadCnt from the payload, DestQP the DUT QP, R_Key and
// VA its first memory region, DMA length the payload.
func TestPacketList(t *testing.T) {
	src, err := ParsePackets([]byte(`[
	  {"opcode": "RC_SEND_FIRST", "payload": {"len": 1024, "pattern": "incr"}},
	  {"opcode": "rc_send_last", "payload": "0102 0304 05", "bth": {"se": true}},
	  {"opcode": 12, "reth": {"dma_len": 2500}},
	  {"opcode": "0x0a", "payload": {"len": 3, "pattern": "0x5a"}, "reth": {"va": "0x10000100"}},
	  {"opcode": "RC_COMPARE_SWAP", "atomic_eth": {"compare": 1, "swap_add": "0xffffffffffffffff"}, "time_ns": 5000},
	  {"opcode": "RC_SEND_ONLY", "bth": {"psn": "0xffffff", "pkey": "0x7fff", "ack_req": false, "resv7": 3, "tver": 1},
	   "eth": {"dst": "02:00:00:00:00:02", "src": "aa:bb:cc:dd:ee:ff", "vlans": [{"pcp": 3, "vid": 100}]},
	   "ipv4": {"tos": "0xb8", "ttl": 7, "id": 99}, "udp": {"sport": 49999}, "icrc": "0xdeadbeef", "purpose": "hand made"},
	  {"opcode": "UNKNOWN_0x18", "payload": "aabbccdd"}
	]`))
	require.NoError(t, err)
	require.Len(t, src.Frames, 7)
	dec := func(i int) *packet.Frame {
		fr, _ := decodeT(src, src.Frames[i].Data)
		require.NotNil(t, fr.Transport.BTH, "frame %d", i)
		return fr
	}
	p := &dec(0).Transport
	assert.Equal(t, opcode.RCSendFirst, p.Opcode())
	assert.Equal(t, uint32(0), p.BTH.PSN())
	assert.False(t, p.BTH.AckReq())
	assert.Equal(t, uint32(0x12), p.BTH.DestQP())
	assert.Equal(t, byte(255), p.Payload[255])
	p = &dec(1).Transport
	assert.Equal(t, uint32(1), p.BTH.PSN())
	assert.True(t, p.BTH.AckReq())
	assert.True(t, p.BTH.SE())
	assert.Equal(t, uint8(3), p.BTH.PadCnt())
	assert.Equal(t, []byte{1, 2, 3, 4, 5}, p.Payload)
	p = &dec(2).Transport
	assert.Equal(t, opcode.RCRDMAReadRequest, p.Opcode())
	assert.Equal(t, uint32(2), p.BTH.PSN())
	assert.Equal(t, uint32(2500), p.RETH.DMALen())
	assert.Equal(t, uint32(0x100), p.RETH.RKey())
	assert.Equal(t, uint64(0x10000000), p.RETH.VA())
	p = &dec(3).Transport
	assert.Equal(t, uint32(5), p.BTH.PSN(), "the 2500-byte READ at MTU 1024 took PSNs 2-4")
	assert.Equal(t, uint32(3), p.RETH.DMALen())
	assert.Equal(t, uint64(0x10000100), p.RETH.VA())
	assert.Equal(t, []byte{0x5a, 0x5a, 0x5a}, p.Payload)
	fr := dec(4)
	p = &fr.Transport
	assert.Equal(t, uint64(1), p.AtomicETH.Compare())
	assert.Equal(t, ^uint64(0), p.AtomicETH.SwapAdd())
	assert.Equal(t, int64(5000), src.Frames[4].Time.Picoseconds()/1000)
	fr = dec(5)
	p = &fr.Transport
	assert.Equal(t, uint32(0xFFFFFF), p.BTH.PSN())
	assert.Equal(t, uint16(0x7FFF), p.BTH.PKey())
	assert.False(t, p.BTH.AckReq())
	assert.Equal(t, uint8(3), p.BTH.Resv7())
	assert.Equal(t, uint8(1), p.BTH.TVer())
	assert.Equal(t, 1, fr.NVLAN)
	assert.Equal(t, uint16(100), fr.VLANs[0].VID())
	assert.Equal(t, [6]byte{0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}, fr.Eth.Src())
	assert.Equal(t, uint8(0xb8), fr.IPv4.TOS())
	assert.Equal(t, uint8(7), fr.IPv4.TTL())
	assert.Equal(t, uint16(49999), fr.UDP.SrcPort())
	assert.Equal(t, uint32(0xdeadbeef), icrc.Get(p.ICRC))
	assert.Equal(t, "hand made", src.Frames[5].Purpose)
	assert.Equal(t, uint32(0), dec(6).Transport.BTH.PSN(), "the sequence continues after an explicit PSN, modulo 2^24")

	// Times: back to back at the link rate unless time_ns says later.
	for i := 1; i < len(src.Frames); i++ {
		assert.GreaterOrEqual(t, src.Frames[i].Time, src.Frames[i-1].Time+src.DUT.txTime(len(src.Frames[i-1].Data)))
	}

	g := collect(t, src, Options{})
	want := []Reaction{Accept, Accept, Accept, Accept, Accept, SilentDrop, SilentDrop}
	for i, r := range want {
		assert.Equal(t, r, g.in[i].Reaction, "packet %d: %s", i, g.in[i].Reason)
	}
	assert.Contains(t, g.in[5].Reason, "bad ICRC")
	assert.Contains(t, g.in[6].Reason, "reserved")
	require.Len(t, g.in[1].Completions, 1)
	assert.Equal(t, uint32(1029), g.in[1].Completions[0].ByteLen, "the SEND of 1024+5 bytes")
	replayCheck(t, src, g)
}

// The DUT object: QPs, memory regions, encapsulation; native IB frames get
// an LRH and a VCRC, which "vcrc" may set.
func TestPacketListDUT(t *testing.T) {
	src, err := ParsePackets([]byte(`{"dut": {
	   "encap": "ib", "self": {"lid": 7}, "link_gbps": 25, "latency_ns": 100,
	   "qps": [{"qpn": 100, "dest_qpn": 200, "rq_psn": 1000, "mtu": 256, "recv_wqes": 0, "peer": {"lid": 9}},
	           {"qpn": 101, "dest_qpn": 201, "access": ["remote_write"], "pkey": "0x8001"}],
	   "mrs": [{"addr": 4096, "rkey": 5, "length": 256, "access": ["remote_read"], "init": "zero"}]},
	 "packets": [
	   {"opcode": "RC_SEND_ONLY", "payload": "00"},
	   {"opcode": "RC_RDMA_READ_REQUEST", "qp": 101, "reth": {"dma_len": 16}, "bth": {"pkey": "0x8001"}},
	   {"opcode": "RC_RDMA_READ_REQUEST", "reth": {"dma_len": 16, "va": 4096}, "bth": {"psn": 1000}},
	   {"opcode": "RC_RDMA_READ_REQUEST", "reth": {"dma_len": 16, "va": 8192}},
	   {"opcode": "RC_SEND_ONLY", "vcrc": 4660, "qp": 101, "bth": {"pkey": "0x8001"}}
	 ]}`))
	require.NoError(t, err)
	d := src.DUT
	assert.Equal(t, packet.IBLocal, d.Encap)
	assert.Equal(t, uint16(7), d.Self.LID)
	require.Len(t, d.QPs, 2)
	assert.Equal(t, uint32(1000), d.QPs[0].RQPSN)
	assert.Equal(t, 256, d.QPs[0].MTU)
	assert.Equal(t, 1024, d.QPs[1].MTU, "defaults fill what a QP leaves out")
	fr, err := decodeT(src, src.Frames[0].Data)
	require.NoError(t, err)
	assert.Equal(t, uint16(7), fr.LRH.DLID())
	assert.Equal(t, uint16(9), fr.LRH.SLID())
	assert.Equal(t, uint32(1000), fr.Transport.BTH.PSN())
	ok, _, _, err := fr.CheckVCRC()
	require.NoError(t, err)
	assert.True(t, ok)
	fr, _ = decodeT(src, src.Frames[4].Data)
	ok, _, got, _ := fr.CheckVCRC()
	assert.False(t, ok)
	assert.Equal(t, uint16(4660), got)

	g := collect(t, src, Options{})
	assert.Equal(t, RNR, g.in[0].Reaction, "no receive WQE posted")
	assert.Equal(t, NAKInvalid, g.in[1].Reaction, "QP 101 allows no remote read")
	assert.Equal(t, Accept, g.in[2].Reaction)
	require.Equal(t, 1, g.in[2].NumOut)
	rsp, _ := decodeT(src, g.out[g.in[2].FirstOut].Data)
	assert.Equal(t, opcode.RCRDMAReadResponseOnly, rsp.Transport.Opcode())
	assert.Equal(t, make([]byte, 16), rsp.Transport.Payload, "zero-filled region")
	assert.Equal(t, NAKAccess, g.in[3].Reaction, "outside the region")
	assert.Equal(t, SilentDrop, g.in[4].Reaction)
	assert.Contains(t, g.in[4].Reason, "VCRC")
	assert.Equal(t, aeth.RNRNAK, decodeAETH(t, src, g.out[0].Data).Kind())
	assert.GreaterOrEqual(t, g.out[0].Time, g.in[0].Time+d.txTime(len(g.in[0].Data))+d.Latency)
	replayCheck(t, src, g)
}

func decodeAETH(t *testing.T, src *Source, b []byte) aeth.Syndrome {
	fr, err := decodeT(src, b)
	require.NoError(t, err)
	require.NotNil(t, fr.Transport.AETH)
	return fr.Transport.AETH.Syndrome()
}

// "repeat" sends a packet N times, each copy taking the defaults anew (the
// PSN continues) unless the entry fixes them (the same PSN: duplicates).
func TestPacketListRepeat(t *testing.T) {
	src, err := ParsePackets([]byte(`[
	  {"opcode": "RC_RDMA_WRITE_ONLY", "payload": {"len": 64}, "repeat": 5},
	  {"opcode": "RC_RDMA_READ_REQUEST", "reth": {"dma_len": 2048}, "repeat": 2},
	  {"opcode": "RC_SEND_ONLY", "bth": {"psn": 9}, "payload": "01", "repeat": 3}
	]`))
	require.NoError(t, err)
	require.Len(t, src.Frames, 10)
	var psns []uint32
	for _, f := range src.Frames {
		fr, err := decodeT(src, f.Data)
		require.NoError(t, err)
		psns = append(psns, fr.Transport.BTH.PSN())
	}
	assert.Equal(t, []uint32{0, 1, 2, 3, 4, 5, 7, 9, 9, 9}, psns)
	g := collect(t, src, Options{})
	var got []Reaction
	for _, f := range g.in {
		got = append(got, f.Reaction)
	}
	assert.Equal(t, []Reaction{Accept, Accept, Accept, Accept, Accept, Accept, Accept, Accept, DupReACK, DupReACK}, got)
	_, err = ParsePackets([]byte(`[{"opcode": 4, "repeat": 0}]`))
	assert.ErrorContains(t, err, "repeat")
}

func TestPacketListErrors(t *testing.T) {
	for _, c := range []struct{ list, err string }{
		{`[{"opcode": "RC_SEND_ONLY", "bogus": 1}]`, `packet list: [0].bogus: unknown key at line 1 column 29`},
		{"{\"packets\": [{\"opcode\": 4},\n  {\"opcode\": 4, \"ipv4\": {\"src\": 7}}]}", "packet list: packets[1].ipv4.src: expected a string, got a number at line 2 column 33"},
		{"[{\"opcode\": 4},\n {\"opcode\": 4,}]", "packet list: invalid character '}' looking for beginning of object key string at line 2 column 15"},
		{`7`, "the packet list must be an array of packets or an object, got a number at line 1 column 1"},
		{"[{\"opcode\": 4,\n  \"bth\": {\"psn\": \"zz\"}}]", `packet list: [0].bth.psn: "zz": want an unsigned number (decimal, or a string such as "0x1f") at line 2 column 18`},
		{`[{"opcode": "RC_SEND_ONLY", "bth": {"psn": 16777216}}]`, "bth.psn"},
		{`[{"opcode": "RC_SEND_NOTHING"}]`, "RC_SEND_NOTHING"},
		{`[{"opcode": 256}]`, "opcode"},
		{`[{"payload": "00"}]`, "opcode missing"},
		{`[{"opcode": 4, "payload": "0g"}]`, "payload"},
		{`[{"opcode": 4, "payload": {"len": 2, "pattern": "stripes"}}]`, "pattern"},
		{`[{"opcode": 4, "vcrc": 1}]`, "VCRC"},
		{`[{"opcode": 4, "qp": 5}]`, "not a DUT QP"},
		{`[{"opcode": 4, "ipv4": {"src": "1.2.3"}}]`, "IPv4 address"},
		{`{"dut": {"qps": [{"mtu": 1000}]}, "packets": []}`, "MTU"},
		{`{"dut": {"encap": "ethernet"}, "packets": []}`, "encapsulation"},
		{`{"dut": {"qps": [{"access": ["everything"]}]}, "packets": []}`, "access right"},
		{`[] []`, "after the JSON value"},
	} {
		_, err := ParsePackets([]byte(c.list))
		assert.ErrorContains(t, err, c.err, c.list)
		if strings.Contains(c.err, " at line ") {
			assert.EqualError(t, err, c.err, c.list)
		}
	}
}
