package dpicore

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/gen"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/rc"
)

// A WRITE Only of 101 bytes over RoCEv2/IPv4 is 14 (Ethernet) + 20 (IPv4)
// + 8 (UDP) + 12 (BTH) + 16 (RETH) + 101 + 3 (pad) + 4 (ICRC) = 178 bytes;
// an ACK is 14 + 20 + 8 + 12 + 4 (AETH) + 4 = 62. Parse gives back every
// field built, and the ICRC verdict follows ICRCXor.
func TestBuildParse(t *testing.T) {
	var bl Builder
	var ps Parser
	buf := make([]byte, 4096)
	payload := bytes.Repeat([]byte{0xA5}, 101)
	b := BuildFields{Opcode: opcode.RCRDMAWriteOnly, DestQP: 0x12, PSN: 0xFFFFFE, AckReq: true,
		VA: 0x1000_0040, RKey: 0x300, DMALen: 101, Payload: payload}
	n, err := bl.Build(&b, buf)
	require.NoError(t, err)
	require.Equal(t, 178, n)
	var f Fields
	require.NoError(t, ps.Parse(buf[:n], &f))
	assert.Equal(t, Fields{Encap: packet.RoCEv2IPv4, Opcode: opcode.RCRDMAWriteOnly, DestQP: 0x12, PSN: 0xFFFFFE,
		AckReq: true, PKey: 0xFFFF, HasRETH: true, VA: 0x1000_0040, RKey: 0x300, DMALen: 101, PayloadLen: 101, ICRCOK: true}, f)
	// The bytes at the offsets a Verilog stand-in reads: opcode at 42,
	// DestQP 47-49, AckReq bit 7 of 50, PSN 51-53.
	assert.Equal(t, byte(0x0A), buf[42])
	assert.Equal(t, byte(0x80), buf[50]&0x80)
	assert.Equal(t, []byte{0, 0, 0x12}, buf[47:50])
	assert.Equal(t, []byte{0xFF, 0xFF, 0xFE}, buf[51:54])

	b.ICRCXor = 1
	n, err = bl.Build(&b, buf)
	require.NoError(t, err)
	require.NoError(t, ps.Parse(buf[:n], &f))
	assert.False(t, f.ICRCOK)

	ack := BuildFields{Opcode: opcode.RCAcknowledge, Reverse: true, DestQP: 0x11, PSN: 7,
		Syndrome: aeth.NAKSyndrome(aeth.PSNSequenceError), MSN: 3}
	n, err = bl.Build(&ack, buf)
	require.NoError(t, err)
	require.Equal(t, 62, n)
	require.NoError(t, ps.Parse(buf[:n], &f))
	assert.Equal(t, Fields{Encap: packet.RoCEv2IPv4, Opcode: opcode.RCAcknowledge, DestQP: 0x11, PSN: 7, PKey: 0xFFFF,
		HasAETH: true, Syndrome: 0x60, MSN: 3, ICRCOK: true}, f)
	assert.Equal(t, []byte{192, 168, 1, 2, 192, 168, 1, 1}, buf[26:34], "reversed IPv4 addresses")

	// Every opcode of the table builds and parses back.
	for o := 0; o < 256; o++ {
		op := opcode.Opcode(o)
		if !op.Valid() {
			continue
		}
		b := BuildFields{Opcode: op, DestQP: 1, PSN: uint32(o)}
		if op.HasPayload() {
			b.Payload = []byte{1, 2, 3}
		}
		n, err := bl.Build(&b, buf)
		require.NoError(t, err, "%s", op)
		require.NoError(t, ps.Parse(buf[:n], &f), "%s", op)
		assert.Equal(t, op, f.Opcode)
		assert.Equal(t, uint32(o), f.PSN)
		assert.True(t, f.ICRCOK, "%s", op)
	}
}

func TestBadInput(t *testing.T) {
	var bl Builder
	var ps Parser
	var f Fields
	err := ps.Parse(make([]byte, 20), &f)
	assert.Equal(t, ErrFrame, Code(err))
	assert.Contains(t, err.Error(), "frame of 20 bytes")
	err = ps.Parse(nil, &f)
	assert.Equal(t, ErrFrame, Code(err))

	buf := make([]byte, 4096)
	n, err := bl.Build(&BuildFields{Opcode: opcode.RCRDMAWriteOnly, Payload: make([]byte, 64)}, buf)
	require.NoError(t, err)
	for _, cut := range []int{n - 1, 54, 45, 13} { // inside the ICRC, the RETH, the BTH, the Ethernet header
		err := ps.Parse(buf[:cut], &f)
		assert.Equal(t, ErrFrame, Code(err), "cut at %d", cut)
	}

	_, err = bl.Build(&BuildFields{Opcode: 0x15}, buf)
	assert.Equal(t, ErrArg, Code(err))
	assert.Contains(t, err.Error(), "opcode 0x15")
	_, err = bl.Build(&BuildFields{Opcode: opcode.RCAcknowledge, Payload: []byte{1}}, buf)
	assert.Equal(t, ErrArg, Code(err))
	_, err = bl.Build(&BuildFields{Opcode: opcode.RCSendOnly, PSN: 1 << 24}, buf)
	assert.Equal(t, ErrArg, Code(err))
	_, err = bl.Build(&BuildFields{Opcode: opcode.RCSendOnly, Encap: packet.IBLocal}, buf)
	assert.Equal(t, ErrArg, Code(err))
	_, err = bl.Build(&BuildFields{Opcode: opcode.RCSendOnly, Payload: make([]byte, 100)}, buf[:100])
	assert.Equal(t, ErrSpace, Code(err))
	assert.Equal(t, "buffer of 100 bytes: the frame needs 158", err.Error())

	_, err = NewPeer(PeerConfig{MTU: 1000})
	assert.Equal(t, ErrArg, Code(err))
	_, err = NewPeer(PeerConfig{MTU: 1024, QPN: 1 << 24})
	assert.Equal(t, ErrArg, Code(err))
	p, err := NewPeer(PeerConfig{MTU: 1024, MRAddr: 0x1000, MRLen: 4096})
	require.NoError(t, err)
	assert.Equal(t, ErrArg, Code(p.SetOption("no_such", 1)))
	assert.Equal(t, ErrArg, Code(p.SetOption("ack_every", 0)))
	assert.Equal(t, ErrArg, Code(p.AddFault("ghost-ack:0.5")))
	assert.Equal(t, ErrArg, Code(p.AddFault("drop")))
	assert.Equal(t, ErrArg, Code(p.AddFault("nonsense:0.1")))
	assert.Equal(t, ErrArg, Code(p.PostWrite(1, 0x1000+4000, 100, 0, 0)), "local buffer past the region")
	assert.Equal(t, ErrFrame, Code(p.Rx(make([]byte, 10), 0)))
	assert.Equal(t, ErrArg, Code(p.Tick(-1)), "time goes back")
	assert.Equal(t, ErrState, Code(p.SetOption("recv_wqes", 1)), "QP option after traffic")
	_, err = p.Tx(buf)
	assert.Equal(t, Empty, Code(err))

	_, err = NewScoreboard(1000)
	assert.Equal(t, ErrArg, Code(err))
	sb, err := NewScoreboard(0)
	require.NoError(t, err)
	_, err = sb.Feed(buf[:n], 0, 2)
	assert.Equal(t, ErrArg, Code(err))
	_, err = sb.Feed(nil, 0, 0)
	assert.Equal(t, ErrFrame, Code(err))
	_, _, err = sb.Finding(0)
	assert.Equal(t, ErrArg, Code(err))

	var h Handles
	id, err := h.Add(p)
	require.NoError(t, err)
	_, err = h.Scoreboard(id)
	assert.Equal(t, ErrHandle, Code(err))
	assert.Contains(t, err.Error(), "is a peer, not a scoreboard")
	require.NoError(t, h.Free(id))
	_, err = h.Peer(id)
	assert.Equal(t, ErrHandle, Code(err))
	assert.Equal(t, ErrHandle, Code(h.Free(id)))
}

// link carries frames between two peers, a and b (b stands for the
// device), with no delay, feeding the scoreboard what passes b's port; it
// records those frames for a pcap.
type link struct {
	a, b   *Peer
	sb     *Scoreboard
	now    int64
	frames [][]byte
	buf    []byte
}

func (l *link) move(t *testing.T, from, to *Peer, dir int) int {
	moved := 0
	for {
		n, err := from.Tx(l.buf)
		if Code(err) == Empty {
			return moved
		}
		require.NoError(t, err)
		moved++
		fr := l.buf[:n]
		if l.sb != nil {
			_, err = l.sb.Feed(fr, l.now, dir)
			require.NoError(t, err)
			l.frames = append(l.frames, append([]byte(nil), fr...))
		}
		if err := to.Rx(fr, l.now); err != nil {
			require.Equal(t, ErrFrame, Code(err), "%v", err) // a corrupted frame
		}
	}
}

// run moves frames and time until done says so, stepping 100 ns while
// frames flow and jumping to the next timer when none do.
func (l *link) run(t *testing.T, done func() bool) {
	if l.buf == nil {
		l.buf = make([]byte, 9000)
	}
	for step := 0; !done(); step++ {
		require.Less(t, step, 2_000_000, "no progress by %d ps", l.now)
		moved := l.move(t, l.a, l.b, ToDUT) + l.move(t, l.b, l.a, FromDUT)
		next := l.now + 100*int64(rc.Nanosecond)
		if moved == 0 {
			wa, oka := l.a.NextWake()
			wb, okb := l.b.NextWake()
			switch {
			case oka && okb:
				next = max(next, min(wa, wb))
			case oka:
				next = max(next, wa)
			case okb:
				next = max(next, wb)
			}
		}
		l.now = next
		require.NoError(t, l.a.Tick(l.now))
		require.NoError(t, l.b.Tick(l.now))
	}
}

func newPair(t *testing.T) (a, b *Peer) {
	a, err := NewPeer(PeerConfig{QPN: 0x11, DestQPN: 0x12, SQPSN: 100, RQPSN: 5000, MTU: 1024,
		MRAddr: 0x1000_0000, MRRKey: 0x100, MRLen: 1 << 20})
	require.NoError(t, err)
	b, err = NewPeer(PeerConfig{QPN: 0x12, DestQPN: 0x11, SQPSN: 5000, RQPSN: 100, MTU: 1024,
		MRAddr: 0x2000_0000, MRRKey: 0x200, MRLen: 1 << 20})
	require.NoError(t, err)
	require.NoError(t, b.SetOption("reverse", 1))
	for _, p := range []*Peer{a, b} {
		require.NoError(t, p.SetOption("timeout", 8)) // 1 ms
	}
	return a, b
}

// Two peers back to back, b standing for a responder device that
// coalesces ACKs (every 4th) and paces READ responses (1000 bytes/us); a,
// the requester, loses 10% of what it sends, duplicates 5% and corrupts
// the ICRC of 5%. 40 WRITEs and 20 READs of 1 to 5000 bytes all complete
// with success, in order; b's memory holds what a wrote and a's what it
// read. The scoreboard, fed what passes b's port, finds exactly one
// bad_icrc per corrupted frame and nothing else, the findings rocekit check
// reports for a capture of the same frames.
func TestPeersBackToBack(t *testing.T) {
	a, b := newPair(t)
	require.NoError(t, b.SetOption("ack_every", 4))
	require.NoError(t, b.SetOption("read_bytes_per_us", 1000))
	require.NoError(t, a.SetOption("seed", 7))
	for _, f := range []string{"drop:0.1", "duplicate:0.05", "bad-icrc:0.05"} {
		require.NoError(t, a.AddFault(f))
	}
	sb, err := NewScoreboard(0)
	require.NoError(t, err)

	const writes, reads = 40, 20
	var want []uint64
	var off uint64
	sizes := map[uint64]uint32{}
	for i := range uint64(writes + reads) {
		n := uint32(1 + (i*997)%5000)
		sizes[i] = n
		if i < writes {
			require.NoError(t, a.PostWrite(i, 0x1000_0000+off, n, 0x2000_0000+off, 0x200))
		} else {
			// READ back into a's region past what the WRITEs used.
			require.NoError(t, a.PostRead(i, 0x1008_0000+off, n, 0x2004_0000+off, 0x200))
		}
		want = append(want, i)
		off += uint64(n)
	}
	var got []uint64
	l := &link{a: a, b: b, sb: sb}
	var c rc.Completion
	l.run(t, func() bool {
		for a.Poll(&c) {
			require.Equal(t, rc.Success, c.Status, "%v", c)
			require.Equal(t, sizes[c.WRID], c.ByteLen)
			got = append(got, c.WRID)
		}
		return len(got) == writes+reads
	})
	assert.Equal(t, want, got)

	// Memory: b's region got a's pattern bytes at the same offsets; a's
	// READ area got b's pattern bytes from 0x40000 on.
	off = 0
	for i := range uint64(writes + reads) {
		n := int(sizes[i])
		if i < writes {
			wb := make([]byte, n)
			require.NoError(t, b.MemRead(0x2000_0000+off, wb))
			for k := range wb {
				require.Equal(t, gen.PatternByte(int(off)+k), wb[k], "WRITE %d byte %d", i, k)
			}
		} else {
			ra := make([]byte, n)
			require.NoError(t, a.MemRead(0x1008_0000+off, ra))
			for k := range ra {
				require.Equal(t, gen.PatternByte(0x40000+int(off)+k), ra[k], "READ %d byte %d", i, k)
			}
		}
		off += uint64(n)
	}

	sa, sbs := a.Stats(), b.Stats()
	assert.Greater(t, sa.Faults[gen.Drop], uint64(0))
	assert.Greater(t, sa.Faults[gen.Duplicate], uint64(0))
	require.Greater(t, sa.Faults[gen.BadICRC], uint64(0))
	assert.Greater(t, sbs.Coalesced, uint64(0), "b coalesced ACKs")
	assert.Equal(t, sa.Faults[gen.BadICRC], sbs.Rejected, "b dropped exactly the corrupted frames")
	assert.Greater(t, sa.QP.Retransmitted, uint64(0))

	nf := sb.Finish()
	require.Equal(t, int(sa.Faults[gen.BadICRC]), nf)
	for i := range nf {
		f, dir, err := sb.Finding(i)
		require.NoError(t, err)
		assert.Equal(t, conform.BadICRC, f.Kind, "%v", f)
		assert.Equal(t, ToDUT, dir)
		assert.Equal(t, 1, f.Conn)
	}

	// rocekit check on a capture of the same frames reports the same.
	path := filepath.Join(t.TempDir(), "port.pcap")
	writePcap(t, path, l.frames)
	fs, _, err := conform.CheckFile(path, conform.Options{})
	require.NoError(t, err)
	require.Len(t, fs, nf)
	for i := range fs {
		f, _, _ := sb.Finding(i)
		assert.Equal(t, fs[i].String(), f.String())
	}
}

func writePcap(t *testing.T, path string, frames [][]byte) {
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pcap.NewWriter(f, pcap.FormatPcap, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	for i, fr := range frames {
		require.NoError(t, w.WritePacket(time.Unix(0, int64(i)*1000), fr))
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
}

// A responder device that ACKs a PSN it has not received is caught: three
// WRITEs, each ACKed, the third with PSN 3, which was never sent: frame 6,
// §5.3 ack_psn, in the direction from the device.
func TestScoreboardCatchesWrongACK(t *testing.T) {
	var bl Builder
	sb, err := NewScoreboard(1024)
	require.NoError(t, err)
	buf := make([]byte, 2048)
	feed := func(b BuildFields, dir int) int {
		n, err := bl.Build(&b, buf)
		require.NoError(t, err)
		k, err := sb.Feed(buf[:n], 0, dir)
		require.NoError(t, err)
		return k
	}
	for psn := uint32(0); psn < 3; psn++ {
		assert.Equal(t, 0, feed(BuildFields{Opcode: opcode.RCRDMAWriteOnly, DestQP: 0x12, PSN: psn, AckReq: true,
			VA: 0x1000, RKey: 1, DMALen: 8, Payload: make([]byte, 8)}, ToDUT))
		ack := psn
		if psn == 2 {
			ack = 3 // ACK the wrong PSN: one never sent
		}
		k := feed(BuildFields{Opcode: opcode.RCAcknowledge, Reverse: true, DestQP: 0x11, PSN: ack, MSN: psn + 1}, FromDUT)
		if psn < 2 {
			assert.Equal(t, 0, k)
		} else {
			assert.Greater(t, k, 0)
		}
	}
	// Before Finish: the finding, without a connection number yet.
	f, dir, err := sb.Finding(0)
	require.NoError(t, err)
	assert.Equal(t, conform.ACKPSN, f.Kind)
	assert.Equal(t, 0, f.Conn)
	require.Greater(t, sb.Finish(), 0)
	f, dir, err = sb.Finding(0)
	require.NoError(t, err)
	assert.Equal(t, conform.ACKPSN, f.Kind)
	assert.Equal(t, FromDUT, dir)
	assert.Equal(t, 6, f.Frame)
	assert.True(t, strings.HasPrefix(f.String(), "frame 6: §5.3 ack_psn: "), f.String())
	assert.Equal(t, 1, f.Conn)
}

// drainAll returns the PSNs and lengths of every frame p has due at now,
// with the ICRC verdicts.
func drainAll(t *testing.T, p *Peer) (psns []uint32, lens []int, icrcOK []bool) {
	var ps Parser
	var f Fields
	buf := make([]byte, 9000)
	for {
		n, err := p.Tx(buf)
		if Code(err) == Empty {
			return
		}
		require.NoError(t, err)
		require.NoError(t, ps.Parse(buf[:n], &f))
		psns, lens, icrcOK = append(psns, f.PSN), append(lens, n), append(icrcOK, f.ICRCOK)
	}
}

// The faults hit exactly the frames named: the first frame goes after the
// second (reorder:@0), the third twice (duplicate:@2), the fourth never
// (drop:@3), the fifth with a wrong ICRC (bad-icrc:@4).
func TestPeerFaultsAt(t *testing.T) {
	a, _ := newPair(t)
	for _, f := range []string{"reorder:@0", "duplicate:@2", "drop:@3", "bad-icrc:@4"} {
		require.NoError(t, a.AddFault(f))
	}
	for i := range uint64(6) {
		require.NoError(t, a.PostWrite(i, 0x1000_0000, 8, 0x2000_0000, 0x200))
	}
	psns, _, ok := drainAll(t, a)
	assert.Equal(t, []uint32{101, 100, 102, 102, 104, 105}, psns)
	assert.Equal(t, []bool{true, true, true, true, false, true}, ok)
	s := a.Stats()
	assert.Equal(t, uint64(4), s.FaultsTotal)
	assert.Equal(t, uint64(1), s.Faults[gen.Reorder])
}

// READ responses leave at the paced rate: with 1000 bytes per microsecond
// a frame of n bytes holds the next back n ns. A READ of 4096 bytes at MTU
// 1024 is four responses: First and Last carry an AETH (14 + 20 + 8 + 12 +
// 4 + 1024 + 4 = 1086 bytes), the Middles none (1082 bytes).
func TestPeerReadPacing(t *testing.T) {
	a, b := newPair(t)
	require.NoError(t, b.SetOption("read_bytes_per_us", 1000))
	require.NoError(t, a.PostRead(1, 0x1000_0000, 4096, 0x2000_0000, 0x200))
	buf := make([]byte, 9000)
	n, err := a.Tx(buf)
	require.NoError(t, err)
	t0 := int64(5 * rc.Microsecond)
	require.NoError(t, b.Rx(buf[:n], t0))
	var times []int64
	var lens []int
	now := t0
	for len(times) < 4 {
		_, l, _ := drainAll(t, b)
		for range l {
			times = append(times, now)
		}
		lens = append(lens, l...)
		if len(times) == 4 {
			break
		}
		w, ok := b.NextWake()
		require.True(t, ok)
		require.Greater(t, w, now)
		now = w
		require.NoError(t, b.Tick(now))
	}
	assert.Equal(t, []int{1086, 1082, 1082, 1086}, lens)
	ns := int64(rc.Nanosecond)
	assert.Equal(t, []int64{t0, t0 + 1086*ns, t0 + (1086+1082)*ns, t0 + (1086+2*1082)*ns}, times)
	_, pending := b.NextWake()
	assert.False(t, pending)
}

// ACK coalescing: with ack_every 3 b sends every third ACK at once and a
// held one when ack_delay_ns passes; a queue that never empties does not
// grow.
func TestPeerCoalescing(t *testing.T) {
	a, b := newPair(t)
	require.NoError(t, b.SetOption("ack_every", 3))
	require.NoError(t, b.SetOption("ack_delay_ns", 500))
	for i := range uint64(4) {
		require.NoError(t, a.PostWrite(i, 0x1000_0000, 8, 0x2000_0000, 0x200))
	}
	buf := make([]byte, 9000)
	for {
		n, err := a.Tx(buf)
		if Code(err) == Empty {
			break
		}
		require.NoError(t, b.Rx(buf[:n], 1000))
	}
	psns, _, _ := drainAll(t, b)
	assert.Equal(t, []uint32{102}, psns, "the third ACK; the first two coalesced into it")
	require.NoError(t, b.Tick(1000+499*int64(rc.Nanosecond)))
	psns, _, _ = drainAll(t, b)
	assert.Empty(t, psns, "the fourth is held for 500 ns")
	require.NoError(t, b.Tick(1000+500*int64(rc.Nanosecond)))
	psns, _, _ = drainAll(t, b)
	assert.Equal(t, []uint32{103}, psns)
	assert.Equal(t, uint64(2), b.Stats().Coalesced)

	// 2000 WRITEs with always a frame left queued: the queue stays small.
	a, b = newPair(t)
	l := &link{a: a, b: b, buf: make([]byte, 9000), now: int64(rc.Microsecond)}
	var c rc.Completion
	var posted, done uint64
	for step := 0; done < 2000; step++ {
		require.Less(t, step, 100000)
		for posted < 2000 && posted-done < 8 {
			require.NoError(t, a.PostWrite(posted, 0x1000_0000, 64, 0x2000_0000, 0x200))
			posted++
		}
		if n, err := a.Tx(l.buf); err == nil {
			require.NoError(t, b.Rx(l.buf[:n], l.now))
		}
		if n, err := b.Tx(l.buf); err == nil {
			require.NoError(t, a.Rx(l.buf[:n], l.now))
		}
		for a.Poll(&c) {
			require.Equal(t, rc.Success, c.Status)
			require.Equal(t, done, c.WRID)
			done++
		}
		l.now += 100 * int64(rc.Nanosecond)
		require.NoError(t, a.Tick(l.now))
		require.NoError(t, b.Tick(l.now))
	}
	assert.Less(t, cap(a.q), 64)
	assert.Less(t, cap(b.q), 64)
}

// RNR: b answers the first two SENDs with RNR NAKs (rnr_naks 2, no
// receive buffer posted until then), a sits them out (min_rnr_timer 1:
// 10 us, ib-facts.md §5.7) and both SENDs then complete, at a with
// success and at b as receives of their lengths. 20 more SENDs than b
// has buffers complete too: b posts a buffer again for each one used.
func TestPeerRNR(t *testing.T) {
	a, b := newPair(t)
	require.NoError(t, b.SetOption("rnr_naks", 2))
	require.NoError(t, b.SetOption("min_rnr_timer", 1))
	require.NoError(t, b.SetOption("recv_wqes", 4))
	require.NoError(t, a.PostSend(1, 0x1000_0000, 100))
	require.NoError(t, a.PostSend(2, 0x1000_0000, 200))
	for i := range uint64(20) {
		require.NoError(t, a.PostSend(3+i, 0x1000_0000, 64))
	}
	l := &link{a: a, b: b}
	var c rc.Completion
	var sends, recvs []uint32
	l.run(t, func() bool {
		for a.Poll(&c) {
			require.Equal(t, rc.Success, c.Status, "%v", c)
			sends = append(sends, c.ByteLen)
		}
		for b.Poll(&c) {
			require.Equal(t, rc.Success, c.Status, "%v", c)
			require.Equal(t, rc.WCRecv, c.Opcode)
			recvs = append(recvs, c.ByteLen)
		}
		return len(sends) == 22 && len(recvs) == 22
	})
	assert.Equal(t, []uint32{100, 200}, sends[:2])
	assert.Equal(t, []uint32{100, 200}, recvs[:2])
	assert.Equal(t, uint64(2), b.Stats().QP.RNRNAKsSent)
	assert.Equal(t, uint64(2), a.Stats().QP.RNRNAKsReceived)
}

// Damaged frames never make Parse, Peer.Rx or Scoreboard.Feed panic: every
// frame of a WRITE/READ exchange, cut at every length and with seeded
// random bytes changed (ICRC fixed up or not), gives a result or an error.
func TestGarbage(t *testing.T) {
	a, b := newPair(t)
	require.NoError(t, a.PostWrite(1, 0x1000_0000, 3000, 0x2000_0000, 0x200))
	require.NoError(t, a.PostRead(2, 0x1000_0000, 3000, 0x2000_0000, 0x200))
	var frames [][]byte
	l := &link{a: a, b: b, buf: make([]byte, 9000)}
	var c rc.Completion
	done := 0
	l.run(t, func() bool {
		for a.Poll(&c) {
			done++
		}
		return done == 2
	})
	// Collect a fresh exchange's frames by hand.
	a2, b2 := newPair(t)
	require.NoError(t, a2.PostWrite(1, 0x1000_0000, 3000, 0x2000_0000, 0x200))
	require.NoError(t, a2.PostRead(2, 0x1000_0000, 3000, 0x2000_0000, 0x200))
	buf := make([]byte, 9000)
	for {
		n, err := a2.Tx(buf)
		if err != nil {
			break
		}
		frames = append(frames, append([]byte(nil), buf[:n]...))
		require.NoError(t, b2.Rx(buf[:n], 0))
	}
	for {
		n, err := b2.Tx(buf)
		if err != nil {
			break
		}
		frames = append(frames, append([]byte(nil), buf[:n]...))
	}
	require.Greater(t, len(frames), 6)

	sb, err := NewScoreboard(0)
	require.NoError(t, err)
	var ps Parser
	var f Fields
	seed := uint64(1)
	rnd := func(n int) int { // xorshift, enough to pick bytes
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	now := l.now
	try := func(fr []byte) {
		now++
		_ = ps.Parse(fr, &f)
		_ = b.Rx(fr, now)
		_ = a.Rx(fr, now)
		if len(fr) > 0 {
			_, err := sb.Feed(fr, now, int(now%2))
			require.NoError(t, err)
		}
	}
	for _, fr := range frames {
		for cut := 0; cut <= len(fr); cut += 1 + cut/8 {
			try(fr[:cut])
		}
		for range 200 {
			g := append([]byte(nil), fr...)
			for range 1 + rnd(4) {
				g[rnd(len(g))] ^= byte(1 + rnd(255))
			}
			if rnd(2) == 0 { // a matching ICRC, so the QP sees it
				var d packet.Frame
				if d.DecodeEthernet(g) == nil && d.IsRoCE() {
					if v, err := d.ComputeICRC(); err == nil {
						icrc.Put(g[len(g)-icrc.Len:], v)
					}
				}
			}
			try(g)
		}
	}
	st := b.Stats()
	assert.Greater(t, st.Received-st.Rejected, uint64(500), "damaged frames with a matching ICRC reached the QP")
	sb.Finish()
	for i := range sb.Count() {
		_, _, err := sb.Finding(i)
		require.NoError(t, err)
	}
}
