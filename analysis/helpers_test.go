package analysis_test

import (
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/stretchr/testify/require"
)

// capturePath returns the path of a shared capture, or skips t when
// ../shared/captures is absent.
func capturePath(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(oracle.Captures(t), name)
}

// runCapture feeds every frame of a capture to a new Tracker and returns it
// with the warnings of each frame (by frame number).
func runCapture(t testing.TB, name string, opts analysis.Options) (*analysis.Tracker, map[int][]analysis.Warning) {
	t.Helper()
	r, err := pcap.Open(capturePath(t, name))
	require.NoError(t, err)
	defer r.Close()
	tr := analysis.New(opts)
	got := map[int][]analysis.Warning{}
	var f packet.Frame
	var w []analysis.Warning
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return tr, got
		}
		require.NoError(t, err)
		_, err = rec.Network()
		require.NoError(t, err)
		err = f.DecodeRecord(rec)
		if f.IsRoCE() {
			require.NoError(t, err, "%s frame %d", name, rec.Index)
		}
		ok := true
		if f.IsRoCE() {
			ok, _, _, err = f.CheckICRC()
			require.NoError(t, err)
		}
		w = tr.Observe(rec.Index, rec.Time, &f, ok, w[:0])
		if len(w) > 0 {
			got[rec.Index] = append([]analysis.Warning(nil), w...)
		}
	}
}

// conv builds synthetic frames between two endpoints A (192.168.1.1, QP
// qa) and B (192.168.1.2, QP qb) and feeds them to a Tracker, one frame per
// call, recording the warnings of each.
// tb is what conv needs of a *testing.T or *rapid.T.
type tb interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	FailNow()
}

type conv struct {
	t      tb
	tr     *analysis.Tracker
	encap  packet.Encap
	qa, qb uint32
	frame  int
	ts     time.Time
	buf    []byte
	f      packet.Frame
	warns  map[int][]analysis.Warning
	// edit, when set, changes each frame's fields before it is built.
	edit func(*packet.FrameFields)
}

func newConv(t tb, opts analysis.Options) *conv {
	return &conv{t: t, tr: analysis.New(opts), encap: packet.RoCEv2IPv4, qa: 0x11, qb: 0x22,
		ts: time.Unix(1700000000, 0), buf: make([]byte, 9000), warns: map[int][]analysis.Warning{}}
}

// pkt describes one packet of the synthetic stream.
type pkt struct {
	op      opcode.Opcode
	psn     uint32
	payload int
	ackReq  bool
	reth    uint32 // RETH DMA length
	syn     uint8  // AETH syndrome
	fromB   bool   // B -> A (to QP qa); else A -> B (to QP qb)
	mad     []byte // a CM MAD: UD SEND Only to QP1 with the GSI Q_Key
	srcQP   uint32 // DETH SrcQP (default 7)
}

// send builds p as a frame, observes it and returns its warnings.
func (c *conv) send(p pkt) []analysis.Warning {
	c.t.Helper()
	require.NoError(c.t, decode(&c.f, c.encap, c.encode(p)))
	ok, _, _, err := c.f.CheckICRC()
	require.NoError(c.t, err)
	c.frame++
	c.ts = c.ts.Add(10 * time.Microsecond)
	w := c.tr.Observe(c.frame, c.ts, &c.f, ok, nil)
	if len(w) > 0 {
		c.warns[c.frame] = w
	}
	return w
}

// encode builds p as a frame in c.buf and returns it.
func (c *conv) encode(p pkt) []byte {
	c.t.Helper()
	ff := packet.DefaultFrame(c.encap)
	ff.Transport.BTH.Opcode = p.op
	ff.Transport.BTH.PSN = p.psn & 0xFFFFFF
	ff.Transport.BTH.AckReq = p.ackReq
	ff.Transport.BTH.DestQP = c.qb
	if p.fromB {
		ff.Transport.BTH.DestQP = c.qa
		ff.Eth.Src, ff.Eth.Dst = ff.Eth.Dst, ff.Eth.Src
		ff.IPv4.Src, ff.IPv4.Dst = ff.IPv4.Dst, ff.IPv4.Src
		ff.IPv6.Src, ff.IPv6.Dst = ff.IPv6.Dst, ff.IPv6.Src
		ff.GRH.SGID, ff.GRH.DGID = ff.GRH.DGID, ff.GRH.SGID
		ff.LRH.SLID, ff.LRH.DLID = ff.LRH.DLID, ff.LRH.SLID
	}
	ff.Transport.RETH.DMALen = p.reth
	ff.Transport.AETH.Syndrome = aeth.Syndrome(p.syn)
	ff.Transport.AETH.MSN = 1
	ff.Transport.DETH.QKey = 0x1234
	ff.Transport.DETH.SrcQP = 7
	ff.Transport.Payload = payloadBytes[:p.payload]
	if p.srcQP != 0 {
		ff.Transport.DETH.SrcQP = p.srcQP
	}
	if p.mad != nil {
		ff.Transport.BTH.Opcode = opcode.UDSendOnly
		ff.Transport.BTH.DestQP = 1
		ff.Transport.DETH.QKey = 0x80010000
		ff.Transport.DETH.SrcQP = 1
		ff.Transport.Payload = p.mad
	}
	ff.Transport.SetPad()
	if c.edit != nil {
		c.edit(&ff)
	}
	n, err := ff.Encode(c.buf)
	require.NoError(c.t, err)
	return c.buf[:n]
}

var payloadBytes = make([]byte, 65536)

func decode(f *packet.Frame, e packet.Encap, b []byte) error {
	if e == packet.IBLocal || e == packet.IBGlobal {
		return f.DecodeIB(b)
	}
	return f.DecodeEthernet(b)
}
