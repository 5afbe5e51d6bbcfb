package conform_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// steadyStream is a long conforming conversation: A sends 2-packet SENDs,
// WRITEs and 2-response READs, B ACKs (every other ACK coalesced), PSNs
// crossing the 2^24 wrap.
func steadyStream(t testing.TB, rounds int) [][]byte {
	psn := uint32(rc.PSNMask - 1000)
	msn := uint32(0)
	var pkts []pkt
	for i := 0; i < rounds; i++ {
		pkts = append(pkts, req(opcode.RCSendFirst, psn, 1024, false), req(opcode.RCSendLast, psn+1, 100, true))
		msn++
		w := write(opcode.RCRDMAWriteOnly, psn+2, 64, 64, true)
		msn++
		pkts = append(pkts, w, ack(psn+2, msn&rc.PSNMask))
		r := read(psn+3, 2000)
		msn++
		pkts = append(pkts, r,
			resp(opcode.RCRDMAReadResponseFirst, psn+3, unlimited, msn&rc.PSNMask, 1024),
			resp(opcode.RCRDMAReadResponseLast, psn+4, unlimited, msn&rc.PSNMask, 976))
		psn += 5
	}
	frames := make([][]byte, len(pkts))
	for i := range pkts {
		pkts[i].f.BTH.PSN &= rc.PSNMask
		frames[i] = encodeFrame(t.(tb), packet.RoCEv2IPv4, &pkts[i])
	}
	return frames
}

// TestSteadyStateNoAllocation: once warm, checking conforming frames
// allocates nothing.
func TestSteadyStateNoAllocation(t *testing.T) {
	frames := steadyStream(t, 3000)
	c := conform.New(conform.Options{})
	var f packet.Frame
	var out []conform.Finding
	ts := time.Unix(0, 0)
	next := 0
	feed := func(n int) {
		for end := next + n; next < end; next++ {
			err := f.DecodeEthernet(frames[next])
			out = c.Frame(next+1, ts, &f, err, out[:0])
		}
	}
	feed(len(frames) / 3)
	allocs := testing.AllocsPerRun(1, func() { feed(len(frames) / 3) })
	require.Zero(t, allocs)
	c.Finish(nil)
	require.Empty(t, c.Findings(), dump(c.Findings()))
}

func BenchmarkCheckerFrame(b *testing.B) {
	frames := steadyStream(b, 2000)
	var f packet.Frame
	ts := time.Unix(0, 0)
	b.ReportAllocs()
	b.ResetTimer()
	var c *conform.Checker
	for i := 0; i < b.N; i++ {
		k := i % len(frames)
		if k == 0 {
			b.StopTimer()
			c = conform.New(conform.Options{})
			b.StartTimer()
		}
		err := f.DecodeEthernet(frames[k])
		c.Frame(k+1, ts, &f, err, nil)
	}
}
