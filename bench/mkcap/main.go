// Command mkcap writes a pcap of synthetic but protocol-correct RoCEv2
// traffic for benchmarks: several RC connections doing RDMA WRITEs, SENDs
// with immediate and READs of mixed sizes at PMTU 1024 (segmented into
// first/middle/last packets, acknowledged by the responder), a UD flow and
// an occasional CNP. Every frame is built by rocekit's packet builder with
// a valid ICRC.
//
//	go run ./bench/mkcap -n 300000 -o bench/out/mixed.pcap
package main

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
)

func main() {
	n := flag.Int("n", 300000, "number of frames")
	out := flag.String("o", "mixed.pcap", "output file")
	seed := flag.Uint64("seed", 1, "random seed")
	flag.Parse()
	if err := write(*out, *n, *seed); err != nil {
		fmt.Fprintln(os.Stderr, "mkcap:", err)
		os.Exit(1)
	}
}

const pmtu = 1024

type conn struct {
	req, resp packet.FrameFields // requester -> responder, responder -> requester
	psn       uint32
	msn       uint32
}

// mixer writes the frames of the mix to a pcap writer, n at the most.
type mixer struct {
	w       *pcap.Writer
	rng     *rand.Rand
	n       int
	written int
	ts      time.Time
	buf     []byte
	payload []byte // 4096 bytes 0, 1, 2, ...; payloads are slices of it
	conns   []*conn
}

// write writes n frames of the mix, drawn from seed, to the pcap file path.
func write(path string, n int, seed uint64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	w, err := pcap.NewWriter(bw, pcap.FormatPcap, pcap.LinkTypeEthernet)
	if err != nil {
		return err
	}
	m := newMixer(w, n, rand.New(rand.NewPCG(seed, 0)))
	for m.written < n {
		c := m.conns[m.rng.IntN(len(m.conns))]
		switch k := m.rng.IntN(10); {
		case k < 5: // RDMA WRITE, 1..8 KiB, or SEND with immediate
			err = m.writeOrSend(c, k < 3)
		case k < 8: // RDMA READ, 1..4 KiB
			err = m.read(c)
		case k < 9:
			err = m.udSend(c)
		default:
			err = m.cnp(c)
		}
		if err != nil {
			return err
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// newMixer returns a mixer of 8 RC connections, each from its own source
// IPv4 address and with its own random first PSN.
func newMixer(w *pcap.Writer, n int, rng *rand.Rand) *mixer {
	m := &mixer{w: w, rng: rng, n: n, buf: make([]byte, 9000), payload: make([]byte, 4096),
		ts: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	for i := range m.payload {
		m.payload[i] = byte(i)
	}
	for i := 0; i < 8; i++ {
		c := &conn{req: packet.DefaultFrame(packet.RoCEv2IPv4), psn: rng.Uint32N(1 << 24)}
		c.req.IPv4.Src[3] = byte(10 + i)
		c.req.UDP.SrcPort = packet.UDPSourcePort(0, uint32(0x100+i), uint32(0x200+i))
		c.req.Transport.BTH.DestQP = uint32(0x200 + i)
		c.resp = c.req
		c.resp.IPv4.Src, c.resp.IPv4.Dst = c.req.IPv4.Dst, c.req.IPv4.Src
		c.resp.Eth.Src, c.resp.Eth.Dst = c.req.Eth.Dst, c.req.Eth.Src
		c.resp.Transport.BTH.DestQP = uint32(0x100 + i)
		m.conns = append(m.conns, c)
	}
	return m
}

// emit writes frame fr 200 to 1000 ns after the previous one and counts
// it; the IPv4 ID of fr goes up by one.
func (m *mixer) emit(fr *packet.FrameFields) error {
	n, err := fr.Encode(m.buf)
	if err != nil {
		return err
	}
	m.ts = m.ts.Add(time.Duration(200+m.rng.IntN(800)) * time.Nanosecond)
	m.written++
	fr.IPv4.ID++
	return m.w.WritePacket(m.ts, m.buf[:n])
}

// writeOrSend writes an RDMA WRITE (write) or SEND with immediate of 1 to
// 8 KiB on c in PMTU segments, then its ACK.
func (m *mixer) writeOrSend(c *conn, write bool) error {
	t := &c.req.Transport
	size := 1 + m.rng.IntN(8192)
	segs := (size + pmtu - 1) / pmtu
	for s := 0; s < segs && m.written < m.n; s++ {
		first, last := s == 0, s == segs-1
		lo := s * pmtu
		hi := min(size, lo+pmtu)
		var op opcode.Opcode
		switch {
		case write && first && last:
			op = opcode.RCRDMAWriteOnly
		case write && first:
			op = opcode.RCRDMAWriteFirst
		case write && last:
			op = opcode.RCRDMAWriteLast
		case write:
			op = opcode.RCRDMAWriteMiddle
		case first && last:
			op = opcode.RCSendOnlyWithImmediate
		case first:
			op = opcode.RCSendFirst
		case last:
			op = opcode.RCSendLastWithImmediate
		default:
			op = opcode.RCSendMiddle
		}
		t.BTH.Opcode, t.BTH.PSN, t.BTH.AckReq = op, c.psn, last
		t.RETH.VA, t.RETH.RKey, t.RETH.DMALen = 0x7f0000000000, 0x1234, uint32(size)
		t.ImmDt.Imm = uint32(m.written)
		t.Payload = m.payload[lo%4096 : lo%4096+(hi-lo)]
		t.SetPad()
		if err := m.emit(&c.req); err != nil {
			return err
		}
		c.psn = (c.psn + 1) & 0xFFFFFF
	}
	c.msn++
	r := &c.resp.Transport
	r.BTH.Opcode, r.BTH.PSN = opcode.RCAcknowledge, (c.psn-1)&0xFFFFFF
	r.AETH.Syndrome, r.AETH.MSN = aeth.Unlimited, c.msn&0xFFFFFF
	r.Payload = nil
	r.SetPad()
	if m.written < m.n {
		return m.emit(&c.resp)
	}
	return nil
}

// read writes an RDMA READ request of 1 to 4 KiB on c and its responses
// in PMTU segments.
func (m *mixer) read(c *conn) error {
	t := &c.req.Transport
	size := 1 + m.rng.IntN(4096)
	t.BTH.Opcode, t.BTH.PSN, t.BTH.AckReq = opcode.RCRDMAReadRequest, c.psn, true
	t.RETH.DMALen = uint32(size)
	t.Payload = nil
	t.SetPad()
	if err := m.emit(&c.req); err != nil {
		return err
	}
	c.msn++
	segs := (size + pmtu - 1) / pmtu
	r := &c.resp.Transport
	for s := 0; s < segs && m.written < m.n; s++ {
		first, last := s == 0, s == segs-1
		lo := s * pmtu
		hi := min(size, lo+pmtu)
		switch {
		case first && last:
			r.BTH.Opcode = opcode.RCRDMAReadResponseOnly
		case first:
			r.BTH.Opcode = opcode.RCRDMAReadResponseFirst
		case last:
			r.BTH.Opcode = opcode.RCRDMAReadResponseLast
		default:
			r.BTH.Opcode = opcode.RCRDMAReadResponseMiddle
		}
		r.BTH.PSN = (c.psn + uint32(s)) & 0xFFFFFF
		r.AETH.Syndrome, r.AETH.MSN = aeth.Unlimited, c.msn&0xFFFFFF
		r.Payload = m.payload[lo%4096 : lo%4096+(hi-lo)]
		r.SetPad()
		if err := m.emit(&c.resp); err != nil {
			return err
		}
	}
	c.psn = (c.psn + uint32(segs)) & 0xFFFFFF
	return nil
}

// udSend writes a UD SEND Only of up to 1 KiB from c's requester.
func (m *mixer) udSend(c *conn) error {
	u := c.req
	u.Transport.BTH.Opcode, u.Transport.BTH.PSN = opcode.UDSendOnly, c.psn
	u.Transport.BTH.DestQP = 0x300
	u.Transport.DETH.QKey, u.Transport.DETH.SrcQP = 0x11111111, 0x301
	u.Transport.Payload = m.payload[:m.rng.IntN(1024)]
	u.Transport.SetPad()
	return m.emit(&u)
}

// cnp writes a CNP back to c's requester.
func (m *mixer) cnp(c *conn) error {
	cn := c.resp
	cn.IPv4.TOS = 0xC2
	cn.Transport.BTH.Opcode, cn.Transport.BTH.PSN, cn.Transport.BTH.BECN = opcode.CNP, 0, true
	cn.Transport.Payload = nil
	cn.Transport.SetPad()
	return m.emit(&cn)
}
