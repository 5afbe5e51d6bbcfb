package roce

import (
	"testing"

	"github.com/rocekit/rocekit/cc"
	"github.com/rocekit/rocekit/sim"
	"github.com/stretchr/testify/require"
)

// TestHPCCRefWindowOncePerRTT: HPCC moves its reference window once per
// round trip (fabric-facts §5), for as long as the flow lasts. The NIC
// must count the sequence HPCC waits for as the ACKs count it: one lone
// 50 MB flow (4.2 ms at 95 Gb/s through one switch, base RTT 4.68 us) makes
// one reference update per base RTT plus the gap to the next packet, in
// its last millisecond as in its first. Counted in frame bytes while the
// ACKs count MTUs, the sequence ran ahead of them by 1.4% of every packet
// and the updates thinned out as the flow went on: 101 in the first
// millisecond, 20 in the fourth.
func TestHPCCRefWindowOncePerRTT(t *testing.T) {
	const js = `{"seed":1,"topology":"star:hosts=2","traffic":"incast:n=1,size=50MB","cc":{"algorithm":"hpcc"}}`
	sc, err := ParseScenario([]byte(js))
	require.NoError(t, err)
	s, err := New(sc, Options{})
	require.NoError(t, err)
	h := s.ccs[0].alg.(*cc.HPCC)
	rtt := s.baseRTT(s.conns[0])
	require.InDelta(t, 4680, float64(rtt)/float64(sim.Nanosecond), 10)
	// Count the updates in the first and the last millisecond.
	var at [4]uint64
	for i, ms := range []sim.Time{1, 2, 3, 4} {
		s.eng.Schedule(ms*sim.Millisecond, countRef{h, &at[i]}, 0, 0)
	}
	sum, err := s.Run()
	require.NoError(t, err)
	require.Equal(t, 1, sum.FlowsCompleted)
	first, last := at[0], at[3]-at[2]
	perMs := float64(sim.Millisecond) / float64(rtt)
	t.Logf("reference window updates: %d in the first ms, %d in the fourth; %.0f base RTTs a ms", first, last, perMs)
	require.InDelta(t, perMs, float64(first), perMs*0.2)
	require.InDelta(t, perMs, float64(last), perMs*0.2)
}

type countRef struct {
	h *cc.HPCC
	n *uint64
}

func (c countRef) Handle(sim.Event) { *c.n = c.h.RefUpdates() }
