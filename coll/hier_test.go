package coll

import (
	"fmt"
	"testing"

	"github.com/rocekit/rocekit/sim"
)

// nodeShapes are (GPUs per node, nodes) pairs for Hier.
var nodeShapes = [][2]int{{1, 4}, {2, 1}, {2, 3}, {4, 2}, {3, 3}, {4, 4}}

// The hierarchical all-reduce gives #wrong 0 for every type and
// reduction, on every node shape, at counts the ranks do not divide, with
// small chunks over two channels, in order and with chunks overtaking one
// another.
func TestHierCorrect(t *testing.T) {
	for _, sh := range nodeShapes {
		g, m := sh[0], sh[1]
		for _, dt := range []DType{Float32, Int32, BFloat16} {
			for _, red := range []RedOp{Sum, Prod, Max, Min} {
				for _, count := range []int{0, 1, 5, 37, 1003} {
					cfg := Config{Ranks: g * m, Local: g, Op: AllReduce, Algo: Hier, Count: count, DType: dt, RedOp: red,
						ChunkSize: 64, Channels: 2}
					if w := runCheck(t, cfg, 0, 0); w != 0 {
						t.Errorf("%dx%d %s %s count=%d: #wrong %d", m, g, dt, red, count, w)
					}
				}
			}
		}
		cfg := Config{Ranks: g * m, Local: g, Op: AllReduce, Algo: Hier, Count: 4099, DType: Float32, ChunkSize: 512, Channels: 3}
		w, o := runCheckN(t, cfg, 0, 50*sim.Microsecond)
		if w != 0 || (g*m > 2 && o == 0) {
			t.Errorf("%dx%d reordered: #wrong %d, %d overtaken", m, g, w, o)
		}
		if g*m > 1 {
			if w := runCheck(t, cfg, 5, 0); w == 0 {
				t.Errorf("%dx%d: chunk 5 corrupted, #wrong 0", m, g)
			}
		}
	}
}

// Each rank of M nodes of G ranks sends (G-1)/G n inside its node twice
// (reduce-scatter, all-gather) and 2(M-1)/M n/G to other nodes, in
// 2(G-1) + 2(M-1) steps: a node's ranks together send 2(M-1)/M n out of
// it, what one rank per node sends in a ring all-reduce between nodes.
func TestHierStepsAndBytes(t *testing.T) {
	for _, sh := range nodeShapes {
		g, m := sh[0], sh[1]
		p := g * m
		count := 96 * p
		n := int64(count * 4)
		cfg := Config{Ranks: p, Local: g, Op: AllReduce, Algo: Hier, Count: count, DType: Float32, ChunkSize: 1 << 30}
		for r := range p {
			cfg.Rank = r
			c, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var in, out int64
			for _, s := range c.sends {
				if int(s.to)/g == r/g {
					in += int64(s.n)
				} else {
					out += int64(s.n)
				}
			}
			name := fmt.Sprintf("%dx%d rank %d", m, g, r)
			G, M := int64(g), int64(m)
			if want := 2 * (G - 1) * n / G; in != want {
				t.Errorf("%s: %d bytes inside the node, want 2(G-1)/G n = %d", name, in, want)
			}
			if want := 2 * (M - 1) * n / M / G; out != want {
				t.Errorf("%s: %d bytes to other nodes, want 2(M-1)/M n/G = %d", name, out, want)
			}
			if want := 2*(g-1) + 2*(m-1); c.Stats().Steps != want {
				t.Errorf("%s: %d steps, want %d", name, c.Stats().Steps, want)
			}
		}
	}
}

// Hier needs Local to divide the ranks, and serves all-reduce only.
func TestHierConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Ranks: 6, Local: 4, Op: AllReduce, Algo: Hier, Count: 8}, "coll: Config.Local 4: does not divide the 6 ranks into nodes"},
		{Config{Ranks: 6, Local: -1, Op: AllReduce, Algo: Ring, Count: 8}, "coll: Config.Local -1: negative"},
		{Config{Ranks: 4, Local: 2, Op: AllGather, Algo: Hier, Count: 8}, "coll: Config.Algo hier: cannot carry out allgather"},
	} {
		if _, err := New(tc.cfg); err == nil || err.Error() != tc.want {
			t.Errorf("%+v: error %v, want %q", tc.cfg, err, tc.want)
		}
	}
}
