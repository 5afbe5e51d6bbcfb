package rc_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/sim"
)

// TestPropertyHostilePackets: random RC packets (any opcode, PSNs near
// what either side expects, random headers, payload and pad) injected into
// both QPs during normal traffic never make a QP panic, send a packet that
// does not encode, or complete a WR twice or out of order.
func TestPropertyHostilePackets(t *testing.T) {
	rcOps := []opcode.Opcode{}
	for _, o := range opcode.All() {
		if o.Transport() == opcode.RC {
			rcOps = append(rcOps, o)
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		cfg := rc.DefaultConfig()
		cfg.MTU = 256
		cfg.Timeout = 2
		cfg.MaxDestRdAtomic = rapid.IntRange(0, 2).Draw(t, "ird")
		p := newPair(t, cfg, cfg, 1<<14, 1<<14, 5)
		p.net.Link[0].Delay, p.net.Link[1].Delay = sim.Microsecond, sim.Microsecond
		for i := range 4 {
			require.NoError(t, p.b.PostRecv(rc.RecvWR{ID: uint64(i), Buf: make([]byte, 600)}))
			require.NoError(t, p.a.PostRecv(rc.RecvWR{ID: uint64(i), Buf: make([]byte, 600)}))
		}
		for i := range 6 {
			op := rapid.SampledFrom([]rc.WROpcode{rc.WRSend, rc.WRRDMAWrite, rc.WRRDMARead, rc.WRAtomicCmpSwap}).Draw(t, "op")
			_ = p.a.PostSend(rc.WR{ID: uint64(i + 1), Opcode: op, Local: p.mrA.Buf[i*600 : i*600+500], RemoteAddr: p.mrB.Addr + uint64(i*600),
				RKey: p.mrB.RKey})
		}
		var buf [rcMaxPacket]byte
		var pkt packet.Packet
		steps := rapid.IntRange(1, 60).Draw(t, "steps")
		for range steps {
			if rapid.Bool().Draw(t, "inject") {
				to := rapid.IntRange(0, 1).Draw(t, "to")
				q := []*rc.QP{p.a, p.b}[to]
				f := packet.Fields{}
				f.BTH.Opcode = rapid.SampledFrom(rcOps).Draw(t, "opcode")
				f.BTH.DestQP = q.Config().QPN
				f.BTH.PKey = 0xFFFF
				base := []uint32{q.ExpectedPSN(), q.UnackedPSN()}[rapid.IntRange(0, 1).Draw(t, "base")]
				f.BTH.PSN = rc.AddPSN(base, uint32(rapid.IntRange(-3, 3).Draw(t, "dpsn"))&rc.PSNMask)
				f.BTH.AckReq = rapid.Bool().Draw(t, "ackreq")
				f.RETH.VA = p.mrB.Addr + uint64(rapid.IntRange(-8, 1<<14).Draw(t, "va"))
				f.RETH.RKey = rapid.SampledFrom([]uint32{p.mrA.RKey, p.mrB.RKey, 0}).Draw(t, "rkey")
				f.RETH.DMALen = uint32(rapid.IntRange(0, 2000).Draw(t, "dmalen"))
				f.AtomicETH.VA, f.AtomicETH.RKey = f.RETH.VA, f.RETH.RKey
				f.AETH.Syndrome = aeth.Syndrome(rapid.IntRange(0, 0x7F).Draw(t, "syndrome"))
				f.AETH.MSN = uint32(rapid.IntRange(0, 5).Draw(t, "msn"))
				f.FETH.SEL, f.FETH.PLT = uint8(rapid.IntRange(0, 3).Draw(t, "sel")), uint8(rapid.IntRange(0, 3).Draw(t, "plt"))
				if f.BTH.Opcode.HasPayload() {
					f.Payload = make([]byte, rapid.IntRange(0, 300).Draw(t, "len"))
				}
				f.SetPad()
				if rapid.Bool().Draw(t, "badpad") {
					f.BTH.PadCnt = uint8(rapid.IntRange(0, 3).Draw(t, "pad"))
				}
				n, err := f.Encode(buf[:])
				require.NoError(t, err)
				if pkt.Decode(buf[:n+4]) == nil {
					q.Receive(rc.Time(p.net.Now), &pkt)
				}
			}
			if !p.net.Step() {
				break
			}
		}
		p.net.Run(p.net.Now + sim.Second)
		for side, comps := range p.net.Completions {
			seen := map[uint64]bool{}
			last := uint64(0)
			for _, c := range comps {
				if c.Opcode.IsRecv() {
					continue
				}
				require.False(t, seen[c.WRID], "side %d: WR %d completed twice", side, c.WRID)
				require.Greater(t, c.WRID, last, "side %d: out of order", side)
				seen[c.WRID], last = true, c.WRID
			}
		}
	})
}

const rcMaxPacket = 4096 + 128
