package analysis_test

import (
	"math/rand"
	"testing"
	"time"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/packet"
	"github.com/stretchr/testify/require"
)

// benchConversation is a synthetic RC conversation between two QPs (PMTU
// 1024): SENDs, WRITEs and READs of random sizes in both directions, with
// READ responses and coalesced ACKs released in random batches, encoded and
// decoded once. It can be replayed: each round moves every PSN on by what
// the round consumed, so round k+1 continues round k seamlessly.
type benchConversation struct {
	frames []packet.Frame
	base   []uint32 // each frame's PSN in round 0
	space  []uint8  // 0: A's PSN space (A's requests, B's responses), 1: B's
	step   [2]uint32
	round  uint32
}

func newBenchConversation(t tb, n int) *benchConversation {
	const pmtu = 1024
	rng := rand.New(rand.NewSource(1))
	sides := []*side{{fromB: false, psn: 0xFFFF00}, {fromB: true, psn: 0x100}}
	start := [2]uint32{sides[0].psn, sides[1].psn}
	var stream []pkt
	pending := func() int { return len(sides[0].pending) + len(sides[1].pending) }
	for len(stream)+pending() < n {
		s := sides[rng.Intn(2)]
		if len(s.pending) > 0 && rng.Intn(3) == 0 {
			k := 1 + rng.Intn(len(s.pending))
			stream = append(stream, s.pending[:k]...)
			s.pending = s.pending[k:]
			continue
		}
		m := genMsg{kind: []string{"send", "write", "read"}[rng.Intn(3)], imm: rng.Intn(2) == 0, size: rng.Intn(4 * pmtu)}
		reqs, used := m.requests(s.psn, pmtu, s.fromB)
		stream = append(stream, reqs...)
		s.pending = append(s.pending, m.responses(s.psn, used, pmtu, s.fromB, true)...)
		s.psn += used
	}
	for _, s := range sides {
		stream = append(stream, s.pending...)
		s.pending = nil
	}
	bc := &benchConversation{step: [2]uint32{sides[0].psn - start[0], sides[1].psn - start[1]}}
	// All frames live in one arena, in order, as a capture read would
	// deliver them.
	c := newConv(t, analysis.Options{})
	var arena []byte
	ends := make([]int, 0, len(stream))
	for _, p := range stream {
		p.psn &= 0xFFFFFF
		arena = append(arena, c.encode(p)...)
		ends = append(ends, len(arena))
		sp := uint8(0)
		if p.fromB == p.op.IsRequest() {
			sp = 1
		}
		bc.base = append(bc.base, p.psn)
		bc.space = append(bc.space, sp)
	}
	bc.frames = make([]packet.Frame, len(stream))
	off := 0
	for i, end := range ends {
		require.NoError(t, bc.frames[i].DecodeEthernet(arena[off:end:end]))
		off = end
	}
	return bc
}

// nextRound moves every frame's PSN on by one round.
func (bc *benchConversation) nextRound() {
	bc.round++
	for i := range bc.frames {
		d := bc.step[bc.space[i]] * bc.round
		bc.frames[i].Transport.BTH.SetPSN((bc.base[i] + d) & 0xFFFFFF)
	}
}

// play observes every frame of the current round.
func (bc *benchConversation) play(tr *analysis.Tracker, ts time.Time, w []analysis.Warning) []analysis.Warning {
	for i := range bc.frames {
		w = tr.Observe(i+1, ts.Add(time.Duration(i)*time.Microsecond), &bc.frames[i], true, w[:0])
	}
	return w
}

// TestBenchConversationClean checks the benchmark's conversation: several
// rounds give no warning, and steady state allocates nothing.
func TestBenchConversationClean(t *testing.T) {
	bc := newBenchConversation(t, 5000)
	tr := analysis.New(analysis.Options{})
	ts := time.Unix(1700000000, 0)
	var w []analysis.Warning
	for r := 0; r < 3; r++ {
		for i := range bc.frames {
			w = tr.Observe(i+1, ts, &bc.frames[i], true, w[:0])
			require.Empty(t, w, "round %d frame %d", r, i+1)
		}
		bc.nextRound()
	}
	s := tr.Summary()
	require.Len(t, s.Connections, 1)
	allocs := testing.AllocsPerRun(3, func() {
		w = bc.play(tr, ts, w)
		bc.nextRound()
	})
	require.Zero(t, allocs, "allocations per %d-frame round in steady state", len(bc.frames))
}

// BenchmarkObserve observes a 100,000-frame synthetic conversation, one
// frame per op, after a warm-up round (the two flows are created then). The
// frames and their decoded packet.Frame views (864 bytes each) are far larger
// than the CPU caches: every frame comes from memory, as from a capture
// being read.
func BenchmarkObserve(b *testing.B) { benchObserve(b, 100000) }

// BenchmarkObserveCacheResident is the same over a 2,000-frame
// conversation replayed (the frames stay in the CPU caches): the tracker's
// own cost.
func BenchmarkObserveCacheResident(b *testing.B) { benchObserve(b, 2000) }

func benchObserve(b *testing.B, frames int) {
	bc := newBenchConversation(b, frames)
	tr := analysis.New(analysis.Options{})
	ts := time.Unix(1700000000, 0)
	w := bc.play(tr, ts, make([]analysis.Warning, 0, 8))
	bc.nextRound()
	n := len(bc.frames)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		j := i % n
		if j == 0 && i > 0 {
			b.StopTimer()
			bc.nextRound()
			b.StartTimer()
		}
		w = tr.Observe(j+1, ts, &bc.frames[j], true, w[:0])
	}
	b.StopTimer()
	if len(w) != 0 {
		b.Fatalf("warnings in a clean conversation: %v", w)
	}
	if s := tr.Summary(); len(s.Connections) != 1 || s.Total(analysis.PSNGap)+s.Total(analysis.Retransmission)+s.Total(analysis.UnexpectedOpcodeSequence) != 0 {
		b.Fatalf("unexpected summary: %d connections, warnings %v", len(s.Connections), s.Warnings)
	}
	b.ReportMetric(float64(n), "frames/conversation")
}

// BenchmarkSummaryJSON builds and encodes the summary of a busy tracker.
func BenchmarkSummaryJSON(b *testing.B) {
	bc := newBenchConversation(b, 10000)
	tr := analysis.New(analysis.Options{})
	bc.play(tr, time.Unix(1700000000, 0), nil)
	var buf []byte
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		buf = tr.Summary().AppendJSON(buf[:0])
	}
}
