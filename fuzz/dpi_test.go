package fuzz

import (
	"encoding/binary"
	"testing"

	"github.com/rocekit/rocekit/internal/dpicore"
	"github.com/rocekit/rocekit/rc"
)

// dpiExchange is a real exchange between two librocekit peers (a WRITE and
// a READ of 3000 bytes at MTU 1024): every frame either sends, each
// prefixed with its length in two bytes, as FuzzDPI reads its input.
func dpiExchange() []byte {
	a, _ := dpicore.NewPeer(dpicore.PeerConfig{QPN: 0x11, DestQPN: 0x12, SQPSN: 100, RQPSN: 5000, MTU: 1024,
		MRAddr: 0x1000_0000, MRRKey: 0x100, MRLen: 1 << 13})
	b, _ := dpicore.NewPeer(dpicore.PeerConfig{QPN: 0x12, DestQPN: 0x11, SQPSN: 5000, RQPSN: 100, MTU: 1024,
		MRAddr: 0x2000_0000, MRRKey: 0x200, MRLen: 1 << 13})
	_ = b.SetOption("reverse", 1)
	_ = a.PostWrite(1, 0x1000_0000, 3000, 0x2000_0000, 0x200)
	_ = a.PostRead(2, 0x1000_0000, 3000, 0x2000_0000, 0x200)
	var out []byte
	buf := make([]byte, 9000)
	for round := 0; round < 20; round++ {
		moved := false
		for _, pr := range [][2]*dpicore.Peer{{a, b}, {b, a}} {
			for {
				n, err := pr[0].Tx(buf)
				if err != nil || n == 0 {
					break
				}
				moved = true
				out = binary.BigEndian.AppendUint16(out, uint16(n))
				out = append(out, buf[:n]...)
				_ = pr[1].Rx(buf[:n], int64(round)*int64(rc.Microsecond))
			}
		}
		if !moved {
			break
		}
	}
	return out
}

// FuzzDPI feeds arbitrary frames to what librocekit's C ABI calls on each
// frame of a device's port: the parser, the scoreboard (alternating
// directions) and a peer (then drained and ticked). None of it may panic,
// whatever the bytes; errors are the ABI's status codes.
func FuzzDPI(f *testing.F) {
	f.Add(dpiExchange())
	f.Add([]byte{0, 4, 1, 2, 3, 4})
	f.Fuzz(func(t *testing.T, in []byte) {
		if err := runDPI(in); err != nil {
			t.Fatal(err)
		}
	})
}

// runDPI is FuzzDPI's body: the input's frames through a fresh parser,
// scoreboard and peer.
func runDPI(in []byte) error {
	{
		peer, err := dpicore.NewPeer(dpicore.PeerConfig{QPN: 0x12, DestQPN: 0x11, SQPSN: 5000, RQPSN: 100, MTU: 1024,
			MRAddr: 0x2000_0000, MRRKey: 0x200, MRLen: 1 << 13})
		if err != nil {
			return err
		}
		_ = peer.SetOption("reverse", 1)
		sb, err := dpicore.NewScoreboard(1024)
		if err != nil {
			return err
		}
		var p dpicore.Parser
		var fields dpicore.Fields
		out := make([]byte, 9000)
		var c rc.Completion
		for i, now := 0, int64(0); len(in) >= 2; i++ {
			n := int(binary.BigEndian.Uint16(in))
			in = in[2:]
			n = min(n, len(in))
			frame := in[:n]
			in = in[n:]
			now += int64(rc.Microsecond)
			_ = p.Parse(frame, &fields)
			_, _ = sb.Feed(frame, now, []int{dpicore.ToDUT, dpicore.FromDUT}[i%2])
			_ = peer.Rx(frame, now)
			for k := 0; k < 64; k++ {
				if m, err := peer.Tx(out); err != nil || m == 0 {
					break
				}
			}
			_ = peer.Tick(now)
			for peer.Poll(&c) {
			}
		}
		_ = sb.Finish()
	}
	return nil
}
