package analysis_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/rocekit/rocekit/analysis"
	"github.com/rocekit/rocekit/cm"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/proptest"
	"pgregory.net/rapid"
)

// TestPropertyArbitraryTraffic feeds random valid packets of every opcode
// (and random CM MADs) between two endpoints and three QPs, in both
// directions and every encapsulation, with random ICRC damage: the tracker
// must not panic, every IB frame must land in exactly one direction, and the
// summary must render as valid JSON and text.
func TestPropertyArbitraryTraffic(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		encap := rapid.SampledFrom([]packet.Encap{packet.RoCEv2IPv4, packet.RoCEv2IPv6, packet.RoCEv1, packet.IBLocal, packet.IBGlobal}).Draw(rt, "encap")
		tr := analysis.New(analysis.Options{PMTU: rapid.SampledFrom([]int{0, 256, 1024, 4096, 777}).Draw(rt, "pmtu")})
		buf := make([]byte, 1<<17)
		var f packet.Frame
		var w []analysis.Warning
		n := rapid.IntRange(1, 80).Draw(rt, "frames")
		ts := time.Unix(1700000000, 0)
		for i := 0; i < n; i++ {
			ff := anyTraffic(rt, encap, rapid.Bool().Draw(rt, "cm"))
			if rapid.Bool().Draw(rt, "reverse") {
				ff.IPv4.Src, ff.IPv4.Dst = ff.IPv4.Dst, ff.IPv4.Src
				ff.IPv6.Src, ff.IPv6.Dst = ff.IPv6.Dst, ff.IPv6.Src
				ff.GRH.SGID, ff.GRH.DGID = ff.GRH.DGID, ff.GRH.SGID
				ff.LRH.SLID, ff.LRH.DLID = ff.LRH.DLID, ff.LRH.SLID
			}
			m, err := ff.Encode(buf)
			if err != nil {
				continue // e.g. a native IB packet whose pad makes it not whole words
			}
			if encap == packet.IBLocal || encap == packet.IBGlobal {
				err = f.DecodeIB(buf[:m])
			} else {
				err = f.DecodeEthernet(buf[:m])
			}
			ok := true
			if f.IsRoCE() && f.Transport.ICRC != nil {
				ok, _, _, _ = f.CheckICRC()
			}
			_ = err
			w = tr.Observe(i+1, ts.Add(time.Duration(i)*time.Microsecond), &f, ok, w[:0])
		}
		s := tr.Summary()
		var pk uint64
		for _, c := range s.Connections {
			pk += c.A.Packets
			if c.B != nil {
				pk += c.B.Packets
			}
		}
		if pk != s.IBFrames {
			rt.Fatalf("%d IB frames, %d in directions", s.IBFrames, pk)
		}
		js := s.AppendJSON(nil)
		if !json.Valid(js) {
			rt.Fatalf("invalid JSON: %s", js)
		}
		var b bytes.Buffer
		if err := s.WriteText(&b); err != nil {
			rt.Fatal(err)
		}
	})
}

// anyTraffic draws a frame of encap carrying a random valid packet of any
// opcode to one of three QPs, its PSN near the 2^24 wrap (so that responses
// and requests meet), or with isCM a random CM MAD to QP1; one in ten has a
// bad ICRC.
func anyTraffic(rt *rapid.T, encap packet.Encap, isCM bool) packet.FrameFields {
	ff := packet.DefaultFrame(encap)
	ff.Transport = proptest.AnyPacketFields().Draw(rt, "packet")
	ff.Transport.BTH.TVer = 0
	ff.Transport.BTH.DestQP = rapid.SampledFrom([]uint32{1, 0x11, 0x22}).Draw(rt, "qp")
	ff.Transport.BTH.PSN = rapid.Uint32Range(0xFFFFF0, 0xFFFFFF+20).Draw(rt, "psn") & 0xFFFFFF
	if isCM {
		mad := cm.MAD(rapid.SliceOfN(rapid.Byte(), 0, cm.MADLen).Draw(rt, "mad"))
		if len(mad) >= 2 {
			mad[1] = cm.MgmtClass
		}
		if len(mad) >= 18 {
			mad.SetAttributeID(rapid.SampledFrom([]cm.AttrID{cm.AttrREQ, cm.AttrREP, cm.AttrREJ, cm.AttrRTU, cm.AttrDREQ, cm.AttrDREP}).Draw(rt, "attr"))
		}
		ff.Transport.BTH.Opcode = opcode.UDSendOnly
		ff.Transport.BTH.DestQP = 1
		ff.Transport.DETH.QKey = cm.GSIQKey
		ff.Transport.Payload = mad
		ff.Transport.SetPad()
	}
	if rapid.IntRange(0, 9).Draw(rt, "damage") == 0 {
		ff.ICRCXor = 1
	}
	return ff
}
