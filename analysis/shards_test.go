package analysis_test

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/internal/obs"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// observations are package analysis's functions on observations, as
// package decode reaches them.
var observations = obs.Get[*analysis.Shards, analysis.Check, analysis.Warning]()

// observed is one frame as both trackers of a shard comparison see it.
type observed struct {
	index int
	ts    time.Time
	f     packet.Frame
	ok    bool
}

// checks returns the frame's ICRC result and its VCRC, checked here.
func (o *observed) checks() (icrc, vcrc analysis.Check) {
	icrc = analysis.CheckOK
	if !o.ok {
		icrc = analysis.CheckBad
	}
	if o.f.VCRC != nil && o.f.Transport.ICRC != nil {
		if ok, _, _, err := o.f.CheckVCRC(); err == nil {
			vcrc = analysis.CheckBad
			if ok {
				vcrc = analysis.CheckOK
			}
		}
	}
	return icrc, vcrc
}

// compareShards feeds frames to one Tracker and to n Shards (each frame to
// the shard Of names, with its position in the list) and requires the same
// warnings for every frame and the same summary, as JSON and as text.
func compareShards(t require.TestingT, frames []observed, n int) {
	one := analysis.New(analysis.Options{})
	sh := analysis.NewShards(n, analysis.Options{})
	var w1, w2 []analysis.Warning
	for i := range frames {
		o := &frames[i]
		ic, vc := o.checks()
		w1 = one.ObserveChecked(o.index, o.ts, &o.f, ic, vc, w1[:0])
		k := sh.Of(&o.f)
		require.True(t, k >= 0 && k < sh.Len(), "frame %d: shard %d of %d", o.index, k, sh.Len())
		w2 = sh.ObserveChecked(k, uint64(i+1), o.index, o.ts, &o.f, ic, vc, w2[:0])
		require.Equal(t, w1, w2, "frame %d: warnings", o.index)
	}
	s1, s2 := one.Summary(), sh.Summary()
	require.Equal(t, string(s1.AppendJSON(nil)), string(s2.AppendJSON(nil)), "%d shards: JSON summary", n)
	var t1, t2 bytesBuf
	s1.WriteText(&t1)
	s2.WriteText(&t2)
	require.Equal(t, string(t1), string(t2), "%d shards: text summary", n)
}

type bytesBuf []byte

func (b *bytesBuf) Write(p []byte) (int, error) { *b = append(*b, p...); return len(p), nil }

// Random traffic between five endpoints, every pair in both directions,
// with PSNs close together (so responses pair with requests by PSN), CM
// MADs and damaged ICRCs: split over 1 to 5 shards, the trackers give
// exactly what one tracker gives.
func TestPropertyShardsMatchOneTracker(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		encap := rapid.SampledFrom([]packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1, packet.IBLocal, packet.IBGlobal}).Draw(rt, "encap")
		buf := make([]byte, 1<<17)
		n := rapid.IntRange(1, 150).Draw(rt, "frames")
		ts := time.Unix(1700000000, 0)
		var frames []observed
		for i := 0; i < n; i++ {
			ff := anyTraffic(rt, encap, rapid.IntRange(0, 7).Draw(rt, "cm") == 0)
			src := byte(rapid.IntRange(1, 5).Draw(rt, "src"))
			dst := byte(rapid.IntRange(1, 5).Draw(rt, "dst"))
			ff.IPv4.Src[3], ff.IPv4.Dst[3] = src, dst
			ff.IPv6.Src[15], ff.IPv6.Dst[15] = src, dst
			ff.GRH.SGID[15], ff.GRH.DGID[15] = src, dst
			ff.LRH.SLID, ff.LRH.DLID = uint16(src), uint16(dst)
			m, err := ff.Encode(buf)
			if err != nil {
				continue // e.g. a native IB packet whose pad makes it not whole words
			}
			o := observed{index: i + 1, ts: ts.Add(time.Duration(i) * time.Microsecond), ok: true}
			b := slices.Clone(buf[:m])
			if encap == packet.IBLocal || encap == packet.IBGlobal {
				_ = o.f.DecodeIB(b)
			} else {
				_ = o.f.DecodeEthernet(b)
			}
			if o.f.IsRoCE() && o.f.Transport.ICRC != nil {
				o.ok, _, _, _ = o.f.CheckICRC()
			}
			frames = append(frames, o)
		}
		compareShards(rt, frames, rapid.IntRange(1, 5).Draw(rt, "shards"))
	})
}

// The shared captures (one pair of endpoints each, CM exchanges, READs,
// native IB) give the same warnings and summary over 1 to 4 shards, each
// alone and all of them one after the other (as decode reads several
// files: frame numbers start again with each).
func TestShardsMatchOneTrackerOnCaptures(t *testing.T) {
	var all []observed
	for _, name := range []string{
		"montybeatnik-rdma-roce-lab_roce_capture_read-write-ecn.pcap",
		"montybeatnik-rdma-roce-lab_test.pcap",
		"oferby-proxy_roce.pcap",
		"seladb-PcapPlusPlus-pr1603_InfiniBandPacket.pcap",
		"srinivaskoritala-rdma-softroce-demo_infiniband.pcap",
	} {
		t.Run(name, func(t *testing.T) {
			r, err := pcap.Open(capturePath(t, name))
			require.NoError(t, err)
			defer r.Close()
			var frames []observed
			for {
				rec, err := r.Next()
				if err == io.EOF {
					break
				}
				require.NoError(t, err)
				_, err = rec.Network()
				require.NoError(t, err)
				o := observed{index: rec.Index, ts: rec.Time, ok: true}
				kept := *rec
				kept.Data = slices.Clone(rec.Data) // the frame outlives the reader's buffer
				_ = o.f.DecodeRecord(&kept)
				if o.f.IsRoCE() && o.f.Transport.ICRC != nil {
					o.ok, _, _, _ = o.f.CheckICRC()
				}
				frames = append(frames, o)
			}
			require.NotEmpty(t, frames)
			for n := 1; n <= 4; n++ {
				compareShards(t, frames, n)
			}
			all = append(all, frames...)
		})
	}
	if len(all) > 0 {
		for n := 1; n <= 4; n++ {
			compareShards(t, all, n)
		}
	}
}

// Of sends both directions between two endpoints to one shard, and spreads
// consecutively numbered clients of one server over the shards in turn.
func TestShardsOf(t *testing.T) {
	sh := analysis.NewShards(4, analysis.Options{})
	buf := make([]byte, 256)
	shardOf := func(encap packet.Encap, src, dst byte) int {
		ff := packet.DefaultFrame(encap)
		ff.Transport.BTH.Opcode = opcode.RCAcknowledge
		ff.IPv4.Src[3], ff.IPv4.Dst[3] = src, dst
		ff.IPv6.Src[15], ff.IPv6.Dst[15] = src, dst
		ff.GRH.SGID[15], ff.GRH.DGID[15] = src, dst
		ff.LRH.SLID, ff.LRH.DLID = uint16(src), uint16(dst)
		m, err := ff.Encode(buf)
		require.NoError(t, err)
		var f packet.Frame
		require.NoError(t, decode(&f, encap, buf[:m]))
		var o obs.Obs
		observations.Set(&o, 1, 1, time.Time{}, &f, analysis.CheckOK, analysis.NotChecked)
		require.Equal(t, sh.Of(&f), observations.Of(sh, &o), "%v: the shard of an observation and Of", encap)
		return sh.Of(&f)
	}
	for _, e := range []packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1, packet.IBLocal, packet.IBGlobal} {
		var got []int
		for c := byte(10); c < 18; c++ {
			k := shardOf(e, c, 2)
			require.Equal(t, k, shardOf(e, 2, c), "%v: both directions between .%d and .2", e, c)
			got = append(got, k)
		}
		// Clients .10 to .17 of server .2: sums 12 to 19, modulo 4.
		require.Equal(t, []int{0, 1, 2, 3, 0, 1, 2, 3}, got, "%v", e)
	}
	var f packet.Frame
	require.NoError(t, f.DecodeEthernet(make([]byte, 60)))
	require.Equal(t, 0, sh.Of(&f), "a frame with no IB transport")
	var o obs.Obs
	observations.Set(&o, 1, 1, time.Time{}, &f, analysis.NotChecked, analysis.NotChecked)
	require.Equal(t, 0, observations.Of(sh, &o), "a frame with no IB transport")
}
