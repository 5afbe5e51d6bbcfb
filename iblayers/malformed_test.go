package iblayers_test

import (
	"errors"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/bth"
	"github.com/rocekit/rocekit/iblayers"
	"github.com/rocekit/rocekit/icrc"
	"github.com/rocekit/rocekit/lrh"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// feedback records SetTruncated.
type feedback struct{ truncated bool }

func (f *feedback) SetTruncated() { f.truncated = true }

func headerError(t *testing.T, err error) *rocekit.HeaderError {
	t.Helper()
	var he *rocekit.HeaderError
	require.True(t, errors.As(err, &he), "want a *rocekit.HeaderError, got %T: %v", err, err)
	return he
}

// TestTransportTruncated cuts the transport packet of every vector at every
// length short of its headers and ICRC: DecodeFromBytes fails with a
// truncation error naming the header that is cut, and reports truncation.
func TestTransportTruncated(t *testing.T) {
	for _, v := range vectors {
		t.Run(v.name, func(t *testing.T) {
			p := gopacket.NewPacket(unhex(t, v.hex), layers.LayerTypeEthernet, gopacket.Default)
			full := p.Layer(iblayers.LayerTypeBTH).(*iblayers.Transport)
			var whole []byte
			for _, l := range p.Layers() {
				if l.LayerType() == iblayers.LayerTypeBTH {
					break
				}
				whole = l.LayerPayload()
			}
			minLen := bth.Len + v.op.HeaderLen() + icrc.Len
			require.GreaterOrEqual(t, len(whole), minLen)
			require.Equal(t, []byte(full.BTH), whole[:bth.Len])
			for n := 0; n < minLen; n++ {
				var tr iblayers.Transport
				var fb feedback
				err := tr.DecodeFromBytes(whole[:n], &fb)
				require.Error(t, err, "cut at %d", n)
				he := headerError(t, err)
				assert.ErrorIs(t, err, rocekit.ErrTruncated, "cut at %d: %v", n, err)
				assert.True(t, fb.truncated, "cut at %d", n)
				switch {
				case n < bth.Len:
					assert.Equal(t, "bth", he.Header)
				case n < bth.Len+v.op.HeaderLen():
					assert.NotEqual(t, "bth", he.Header, "an extension header is cut: %v", err)
					assert.NotEqual(t, "icrc", he.Header)
				default:
					assert.Equal(t, "icrc", he.Header)
				}
			}
		})
	}
}

// TestNewPacketTruncatedFrames feeds every prefix of every test frame to
// gopacket.NewPacket with panic recovery off: it never panics, and a frame
// cut inside one of our headers (GRH, LRH, BTH, extension headers) or the
// ICRC ends in a gopacket.ErrorLayer holding the rocekit truncation error,
// with the packet marked truncated.
func TestNewPacketTruncatedFrames(t *testing.T) {
	type frame struct {
		name  string
		b     []byte
		first gopacket.Decoder
		ours  int // where the first of our layers starts
		hdrs  int // where the IB headers and ICRC end: cuts before that must fail
	}
	var frames []frame
	for _, v := range vectors {
		b := unhex(t, v.hex)
		ours := packet.EthernetLen // RoCEv1: the GRH
		switch b[12] {
		case 0x08:
			ours += packet.IPv4Len + packet.UDPLen
		case 0x86:
			ours += packet.IPv6Len + packet.UDPLen
		}
		frames = append(frames, frame{v.name, b, layers.LayerTypeEthernet, ours, len(b) - len(ibPayload(t, b, layers.LayerTypeEthernet)) - icrc.Len})
	}
	for _, e := range []packet.Encap{packet.IBLocal, packet.IBGlobal} {
		b, _ := ibFrame(t, e)
		frames = append(frames, frame{e.String(), b, iblayers.LayerTypeLRH, 0, len(b) - len("hello") - 3 - icrc.Len - icrc.VCRCLen})
	}
	for _, f := range frames {
		t.Run(f.name, func(t *testing.T) {
			for n := 0; n < len(f.b); n++ {
				p := gopacket.NewPacket(f.b[:n], f.first, gopacket.DecodeOptions{SkipDecodeRecovery: true})
				if n <= f.ours || n >= f.hdrs {
					continue
				}
				el := p.ErrorLayer()
				require.NotNil(t, el, "cut at %d of %d: layers %v", n, len(f.b), layerTypes(p))
				assert.Nil(t, p.Layer(iblayers.LayerTypeBTH), "cut at %d", n)
				assert.True(t, p.Metadata().Truncated, "cut at %d", n)
				he := headerError(t, el.Error())
				assert.ErrorIs(t, he, rocekit.ErrTruncated)
			}
		})
	}
}

// ibPayload returns the transport payload and pad of frame.
func ibPayload(t *testing.T, frame []byte, first gopacket.Decoder) []byte {
	p := gopacket.NewPacket(frame, first, gopacket.Default)
	tr := p.Layer(iblayers.LayerTypeBTH).(*iblayers.Transport)
	return append(append([]byte(nil), tr.Payload...), tr.Pad...)
}

// TestMalformed: frames that are complete but wrong decode to an ErrorLayer
// whose error names the header and field, never to a panic.
func TestMalformed(t *testing.T) {
	ack := func() []byte { return unhex(t, vecE) }
	const bthAt = 14 + 20 + 8
	for _, tc := range []struct {
		name   string
		frame  func() []byte
		first  gopacket.Decoder
		header string
		field  string
		cause  error
	}{
		{"unknown opcode", func() []byte { b := ack(); b[bthAt] = 0x18; return b }, layers.LayerTypeEthernet, "bth", "OpCode", rocekit.ErrUnknownOpcode},
		{"vendor opcode", func() []byte { b := ack(); b[bthAt] = 0xC0; return b }, layers.LayerTypeEthernet, "bth", "OpCode", rocekit.ErrUnknownOpcode},
		{"TVer", func() []byte { b := ack(); b[bthAt+1] |= 0x01; return b }, layers.LayerTypeEthernet, "bth", "TVer", rocekit.ErrInvalid},
		{"pad beyond payload", func() []byte { b := unhex(t, vecC); b[bthAt+1] |= 0x30; return b }, layers.LayerTypeEthernet, "bth", "PadCnt", rocekit.ErrInvalid},
		{"payload on an ACK", func() []byte {
			ff := packet.DefaultFrame(packet.RoCEv2IPv4)
			ff.Transport.BTH.Opcode = opcode.RCAcknowledge
			ff.Transport.Payload = []byte{1, 2, 3, 4}
			return encode(t, &ff)
		}, layers.LayerTypeEthernet, "payload", "", rocekit.ErrUnexpected},
		{"GRH IPVer", func() []byte { b := unhex(t, vecD2); b[14] = 0x40; return b }, layers.LayerTypeEthernet, "grh", "IPVer", rocekit.ErrInvalid},
		{"GRH PayLen", func() []byte { b := unhex(t, vecD2); b[14+4] = 0xFF; return b }, layers.LayerTypeEthernet, "grh", "PayLen", rocekit.ErrTruncated},
		{"LRH LVer", func() []byte { b, _ := ibFrame(t, packet.IBLocal); b[0] |= 0x01; return b }, iblayers.LayerTypeLRH, "lrh", "LVer", rocekit.ErrInvalid},
		{"LRH PktLen long", func() []byte { b, _ := ibFrame(t, packet.IBLocal); lrh.LRH(b).SetPktLen(0x7FF); return b }, iblayers.LayerTypeLRH, "lrh", "PktLen", rocekit.ErrTruncated},
		{"LRH PktLen short", func() []byte { b, _ := ibFrame(t, packet.IBLocal); lrh.LRH(b).SetPktLen(1); return b }, iblayers.LayerTypeLRH, "lrh", "PktLen", rocekit.ErrLength},
		{"LRH global, GRH IPVer", func() []byte { b, _ := ibFrame(t, packet.IBGlobal); b[8] = 0x40; return b }, iblayers.LayerTypeLRH, "grh", "IPVer", rocekit.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := gopacket.NewPacket(tc.frame(), tc.first, gopacket.DecodeOptions{SkipDecodeRecovery: true})
			el := p.ErrorLayer()
			require.NotNil(t, el, "layers %v", layerTypes(p))
			he := headerError(t, el.Error())
			assert.Equal(t, tc.header, he.Header, "%v", he)
			if tc.field != "" {
				assert.Equal(t, tc.field, he.Field, "%v", he)
			}
			assert.ErrorIs(t, he, tc.cause)
			assert.Equal(t, tc.cause == rocekit.ErrTruncated, p.Metadata().Truncated)
			assert.NotEmpty(t, el.LayerContents(), "the failure keeps the undecoded bytes")
		})
	}
}

// TestRandomInputNoPanic: arbitrary bytes from any of our first layers, and
// valid frames of every encapsulation with random bytes of our headers
// changed and cut short, never make a decoder panic (panic recovery off).
func TestRandomInputNoPanic(t *testing.T) {
	firsts := []gopacket.LayerType{iblayers.LayerTypeBTH, iblayers.LayerTypeGRH, iblayers.LayerTypeLRH}
	rapid.Check(t, func(rt *rapid.T) {
		b := rapid.SliceOfN(rapid.Byte(), 0, 200).Draw(rt, "bytes")
		for _, first := range firsts {
			gopacket.NewPacket(b, first, gopacket.DecodeOptions{SkipDecodeRecovery: true})
		}
		var tr iblayers.Transport
		var g iblayers.GRH
		var l iblayers.LRH
		_ = tr.DecodeFromBytes(b, gopacket.NilDecodeFeedback)
		_ = g.DecodeFromBytes(b, gopacket.NilDecodeFeedback)
		_ = l.DecodeFromBytes(b, gopacket.NilDecodeFeedback)
	})
	rapid.Check(t, func(rt *rapid.T) {
		ff := proptest.FrameFields().Draw(rt, "frame")
		b := make([]byte, ff.Len())
		n, err := ff.Encode(b)
		require.NoError(rt, err)
		b = b[:n]
		// Change bytes only from the first of our layers on: gopacket's own
		// decoders are not under test (its CDP decoder, for one, panics on a
		// short frame).
		ours := 0
		switch ff.Encap {
		case packet.RoCEv2IPv4:
			ours = packet.EthernetLen + packet.VLANLen*len(ff.Eth.VLANs) + packet.IPv4Len + packet.UDPLen
		case packet.RoCEv2IPv6:
			ours = packet.EthernetLen + packet.VLANLen*len(ff.Eth.VLANs) + packet.IPv6Len + packet.UDPLen
		case packet.RoCEv1:
			ours = packet.EthernetLen + packet.VLANLen*len(ff.Eth.VLANs)
		}
		for i := rapid.IntRange(0, 4).Draw(rt, "flips"); i > 0; i-- {
			b[rapid.IntRange(ours, len(b)-1).Draw(rt, "at")] = rapid.Byte().Draw(rt, "to")
		}
		b = b[:rapid.IntRange(0, len(b)).Draw(rt, "len")]
		p := gopacket.NewPacket(b, firstLayer(ff.Encap), gopacket.DecodeOptions{SkipDecodeRecovery: true})
		if el := p.ErrorLayer(); el != nil {
			assert.Error(rt, el.Error())
		}
	})
}
