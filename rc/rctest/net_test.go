package rctest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/rc/rctest"
	"github.com/rocekit/rocekit/sim"
)

// run plays one lossy scenario and returns its trace.
func run(t *testing.T, seed uint64) string {
	var qp [2]*rc.QP
	var mr [2]*rc.MR
	for i := range qp {
		mem := rc.NewMemory()
		mr[i] = &rc.MR{Addr: 0x1000, RKey: 7, Access: rc.AccessAll, Buf: make([]byte, 1<<15)}
		require.NoError(t, mem.Register(mr[i]))
		cfg := rc.DefaultConfig()
		cfg.QPN, cfg.DestQPN, cfg.MTU, cfg.Timeout, cfg.Window, cfg.Memory = uint32(1+i), uint32(2-i), 256, 2, 32, mem
		cfg.RetryCnt7Infinite = true
		var err error
		qp[i], err = rc.New(cfg)
		require.NoError(t, err)
	}
	n := rctest.New(qp[0], qp[1], seed)
	for i := range n.Link {
		n.Link[i] = rctest.Link{Delay: sim.Microsecond, Gap: 10 * sim.Nanosecond, Drop: 0.1, Dup: 0.1, Reorder: 0.1}
	}
	var b strings.Builder
	n.Trace = func(e *rctest.Event) {
		switch e.Kind {
		case rctest.Sent:
			fmt.Fprintf(&b, "%s %s %s %d %s\n", e.Time, e.Side, e.Packet.BTH.Opcode, e.Packet.BTH.PSN, e.Verdict)
		case rctest.Completed:
			fmt.Fprintf(&b, "%s %s %s\n", e.Time, e.Side, e.Completion)
		case rctest.TimedOut:
			fmt.Fprintf(&b, "%s %s timeout\n", e.Time, e.Side)
		}
	}
	for i := range 4 {
		require.NoError(t, qp[0].PostSend(rc.WR{ID: uint64(i), Opcode: rc.WRRDMAWrite, Local: mr[0].Buf[:5000], RemoteAddr: 0x1000, RKey: 7}))
		require.NoError(t, qp[0].PostSend(rc.WR{ID: uint64(10 + i), Opcode: rc.WRRDMARead, Local: mr[0].Buf[8192 : 8192+3000], RemoteAddr: 0x1000, RKey: 7}))
	}
	require.True(t, n.RunUntil(func() bool { return len(n.Completions[rctest.A]) == 8 }, sim.Second))
	require.True(t, n.Lost > 0 && n.Delivered > 0)
	return b.String()
}

// The network and the QPs are deterministic: the same seed gives the same
// trace, another seed another one.
func TestDeterministic(t *testing.T) {
	a, b, c := run(t, 42), run(t, 42), run(t, 43)
	require.Equal(t, a, b)
	require.NotEqual(t, a, c)
	require.Contains(t, a, "drop")
	require.Contains(t, a, "duplicate")
}
