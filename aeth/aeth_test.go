package aeth_test

import (
	"encoding/hex"
	"errors"
	"testing"
	"time"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/internal/hdrtest"
	"github.com/rocekit/rocekit/proptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Golden AETHs from ib-facts.md §3.4: vector D (RoCEv1 RC Acknowledge from a
// Mellanox NIC, syndrome 0x00, MSN 5) and vector E (syndrome 0x1F, MSN 5),
// plus frame 11 of srinivaskoritala-rdma-softroce-demo_infiniband.pcap (RC
// Acknowledge, native IB, AETH at IB offset 20: syndrome 0x1F, MSN 1).
func TestGolden(t *testing.T) {
	cases := []hdrtest.Case[aeth.Fields]{
		{Hex: "00000005", Want: aeth.Fields{Syndrome: 0x00, MSN: 5}},
		{Hex: "1f000005", Want: aeth.Fields{Syndrome: aeth.ACKSyndrome(aeth.Unlimited), MSN: 5}},
		{Hex: "1f000001", Want: aeth.Fields{Syndrome: 0x1F, MSN: 1}},
	}
	hdr.Golden(t, cases)
	strs := []string{
		"AETH syndrome=0x00 (ACK credits=0 (code 0)) msn=5",
		"AETH syndrome=0x1f (ACK unlimited) msn=5",
		"AETH syndrome=0x1f (ACK unlimited) msn=1",
	}
	for i, c := range cases {
		h, err := aeth.New(hdrtest.Unhex(t, c.Hex))
		require.NoError(t, err)
		assert.NoError(t, h.Validate(), c.Hex)
		assert.Equal(t, aeth.ACK, h.Syndrome().Kind(), c.Hex)
		assert.Equal(t, strs[i], h.String())
	}
}

func TestNewViewsPrefix(t *testing.T) {
	b := hdrtest.Unhex(t, "1f000005deadbeef")
	h, err := aeth.New(b)
	require.NoError(t, err)
	assert.Len(t, h, aeth.Len)
	h.SetMSN(6)
	assert.Equal(t, "1f000006deadbeef", hex.EncodeToString(b), "view writes through, leaves the rest alone")
}

func TestEveryFieldBits(t *testing.T) {
	b := make([]byte, aeth.Len)
	h, _ := aeth.New(b)
	h.SetSyndrome(0xA5)
	h.SetMSN(0xFEDCBA)
	assert.Equal(t, "a5fedcba", hex.EncodeToString(b))
	assert.Equal(t, aeth.Syndrome(0xA5), h.Syndrome())
	assert.Equal(t, uint32(0xFEDCBA), h.MSN())
	h.SetMSN(0x1FFFFFF) // masked to 24 bits
	assert.Equal(t, "a5ffffff", hex.EncodeToString(b))
	h.SetSyndrome(0)
	h.SetMSN(0x123456)
	assert.Equal(t, "00123456", hex.EncodeToString(b))
}

var hdr = hdrtest.Header[aeth.AETH, aeth.Fields]{
	Name:   "aeth",
	Len:    aeth.Len,
	New:    aeth.New,
	Decode: aeth.AETH.Fields,
	Encode: (*aeth.Fields).Encode,
	Gen:    proptest.AETHFields(),
}

// TestShared runs the truncation and round-trip checks every header shares.
func TestShared(t *testing.T) { hdr.All(t) }

// The shared check encodes into Len-1 bytes only; this covers every shorter
// length too.
func TestEncodeRejectsWideFields(t *testing.T) {
	b := make([]byte, aeth.Len)
	for _, f := range []aeth.Fields{{MSN: 1 << 24}, {Syndrome: 0x1F, MSN: 0xFFFFFFFF}} {
		err := f.Encode(b)
		assert.ErrorIs(t, err, rocekit.ErrInvalid, "%+v", f)
		assert.Contains(t, err.Error(), "aeth.MSN")
	}
	assert.Equal(t, make([]byte, aeth.Len), b, "nothing written on error")
}

func TestValidate(t *testing.T) {
	b := make([]byte, aeth.Len)
	h, _ := aeth.New(b)
	for s := 0; s < 256; s++ {
		h.SetSyndrome(aeth.Syndrome(s))
		err := h.Validate()
		valid := s < 0x40 || (s >= 0x60 && s <= 0x64)
		if valid {
			assert.NoError(t, err, "0x%02x", s)
			assert.True(t, aeth.Syndrome(s).Valid(), "0x%02x", s)
			continue
		}
		assert.False(t, aeth.Syndrome(s).Valid(), "0x%02x", s)
		require.Error(t, err, "0x%02x", s)
		assert.ErrorIs(t, err, rocekit.ErrInvalid)
		var he *rocekit.HeaderError
		require.True(t, errors.As(err, &he))
		assert.Equal(t, "aeth", he.Header)
		assert.Equal(t, "Syndrome", he.Field)
		assert.Equal(t, aeth.Syndrome(s), h.Syndrome(), "AETH still readable")
	}
	h.SetSyndrome(0x80)
	assert.Contains(t, h.Validate().Error(), "aeth.Syndrome: invalid: 0x80: reserved bit 7 set")
	h.SetSyndrome(0x45)
	assert.Contains(t, h.Validate().Error(), "reserved syndrome type")
	h.SetSyndrome(0x65)
	assert.Contains(t, h.Validate().Error(), "reserved NAK code 5")
}

func TestKind(t *testing.T) {
	cases := []struct {
		s    aeth.Syndrome
		kind aeth.Kind
		str  string
	}{
		{0x00, aeth.ACK, "ACK"}, {0x1F, aeth.ACK, "ACK"},
		{0x20, aeth.RNRNAK, "RNR_NAK"}, {0x3F, aeth.RNRNAK, "RNR_NAK"},
		{0x40, aeth.Reserved, "RESERVED"}, {0x5F, aeth.Reserved, "RESERVED"},
		{0x60, aeth.NAK, "NAK"}, {0x7F, aeth.NAK, "NAK"},
		{0x80, aeth.ACK, "ACK"}, {0xE4, aeth.NAK, "NAK"},
	}
	for _, c := range cases {
		assert.Equal(t, c.kind, c.s.Kind(), "0x%02x", uint8(c.s))
		assert.Equal(t, c.str, c.s.Kind().String())
	}
	assert.Equal(t, "KIND_4", aeth.Kind(4).String())
	assert.Equal(t, aeth.Kind(0), aeth.ACK)
	assert.Equal(t, aeth.Kind(1), aeth.RNRNAK)
	assert.Equal(t, aeth.Kind(2), aeth.Reserved)
	assert.Equal(t, aeth.Kind(3), aeth.NAK)
}

func TestSyndromeBits(t *testing.T) {
	s := aeth.Syndrome(0xB5) // 1 01 10101
	assert.True(t, s.Reserved())
	assert.Equal(t, aeth.RNRNAK, s.Kind())
	assert.Equal(t, uint8(0x15), s.Value())
	assert.Equal(t, uint8(0x15), s.CreditCode())
	assert.Equal(t, uint8(0x15), s.RNRTimer())
	assert.Equal(t, aeth.NAKCode(0x15), s.NAKCode())
	assert.False(t, aeth.Syndrome(0x7F).Reserved())
}

func TestConstructors(t *testing.T) {
	assert.Equal(t, aeth.Syndrome(0x05), aeth.ACKSyndrome(5))
	assert.Equal(t, aeth.Syndrome(0x1F), aeth.ACKSyndrome(aeth.Unlimited))
	assert.Equal(t, aeth.Syndrome(0x1F), aeth.ACKSyndrome(0xFF), "masked to 5 bits")
	assert.Equal(t, aeth.Syndrome(0x20), aeth.RNRNAKSyndrome(0))
	assert.Equal(t, aeth.Syndrome(0x2E), aeth.RNRNAKSyndrome(14))
	assert.Equal(t, aeth.Syndrome(0x3F), aeth.RNRNAKSyndrome(0xFF), "masked to 5 bits")
	assert.Equal(t, aeth.Syndrome(0x60), aeth.NAKSyndrome(aeth.PSNSequenceError))
	assert.Equal(t, aeth.Syndrome(0x61), aeth.NAKSyndrome(aeth.InvalidRequest))
	assert.Equal(t, aeth.Syndrome(0x62), aeth.NAKSyndrome(aeth.RemoteAccessError))
	assert.Equal(t, aeth.Syndrome(0x63), aeth.NAKSyndrome(aeth.RemoteOperationalError))
	assert.Equal(t, aeth.Syndrome(0x64), aeth.NAKSyndrome(aeth.InvalidRDRequest))
	assert.Equal(t, aeth.Syndrome(0x7F), aeth.NAKSyndrome(0xFF), "masked to 5 bits")
	for v := uint8(0); v < 32; v++ {
		assert.Equal(t, v, aeth.ACKSyndrome(v).CreditCode())
		assert.Equal(t, aeth.ACK, aeth.ACKSyndrome(v).Kind())
		assert.Equal(t, v, aeth.RNRNAKSyndrome(v).RNRTimer())
		assert.Equal(t, aeth.RNRNAK, aeth.RNRNAKSyndrome(v).Kind())
		assert.Equal(t, aeth.NAKCode(v), aeth.NAKSyndrome(aeth.NAKCode(v)).NAKCode())
		assert.Equal(t, aeth.NAK, aeth.NAKSyndrome(aeth.NAKCode(v)).Kind())
	}
}

func TestNAKCodeString(t *testing.T) {
	assert.Equal(t, "PSN_SEQUENCE_ERROR", aeth.PSNSequenceError.String())
	assert.Equal(t, "INVALID_REQUEST", aeth.InvalidRequest.String())
	assert.Equal(t, "REMOTE_ACCESS_ERROR", aeth.RemoteAccessError.String())
	assert.Equal(t, "REMOTE_OPERATIONAL_ERROR", aeth.RemoteOperationalError.String())
	assert.Equal(t, "INVALID_RD_REQUEST", aeth.InvalidRDRequest.String())
	assert.Equal(t, "RESERVED_NAK_5", aeth.NAKCode(5).String())
	assert.Equal(t, "RESERVED_NAK_31", aeth.NAKCode(31).String())
	assert.Equal(t, aeth.NAKCode(0), aeth.PSNSequenceError)
	assert.Equal(t, aeth.NAKCode(4), aeth.InvalidRDRequest)
	for c := aeth.NAKCode(0); c < 32; c++ {
		assert.Equal(t, c <= 4, c.Valid(), "%d", c)
	}
}

// rnrTable is ib-facts.md §5.7, typed from the document (code: delay in ms,
// written as hundredths of a millisecond to keep the doc's digits).
var rnrTable = [32]struct {
	code      uint8
	hundredth int64 // delay in 0.01 ms
}{
	{0, 65536}, {1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 6}, {6, 8}, {7, 12},
	{8, 16}, {9, 24}, {10, 32}, {11, 48}, {12, 64}, {13, 96}, {14, 128}, {15, 192},
	{16, 256}, {17, 384}, {18, 512}, {19, 768}, {20, 1024}, {21, 1536}, {22, 2048}, {23, 3072},
	{24, 4096}, {25, 6144}, {26, 8192}, {27, 12288}, {28, 16384}, {29, 24576}, {30, 32768}, {31, 49152},
}

func TestRNRTable(t *testing.T) {
	for i, e := range rnrTable {
		require.Equal(t, uint8(i), e.code)
		want := time.Duration(e.hundredth) * 10 * time.Microsecond
		assert.Equal(t, want, aeth.RNRDelay(e.code), "code %d", e.code)
		assert.Equal(t, want, aeth.RNRNAKSyndrome(e.code).RNRDelay(), "code %d", e.code)
	}
	assert.Equal(t, 655360*time.Microsecond, aeth.RNRDelay(0))
	assert.Equal(t, 61440*time.Microsecond, aeth.RNRDelay(25), "61.44 ms, not rxe's 61.41 ms typo")
	assert.Equal(t, 491520*time.Microsecond, aeth.RNRDelay(31))
	assert.Equal(t, 1280*time.Microsecond, aeth.RNRDelay(14))
	assert.Equal(t, aeth.RNRDelay(14), aeth.RNRDelay(14+32), "code masked to 5 bits")
}

// The closed form of §5.7 agrees with the table for every code.
func TestRNRClosedForm(t *testing.T) {
	for c := uint8(1); c < 32; c++ {
		var us int64
		switch {
		case c == 1:
			us = 10
		case c%2 == 0:
			us = 10 << (c / 2)
		default:
			us = 30 << ((c - 3) / 2)
		}
		assert.Equal(t, time.Duration(us)*time.Microsecond, aeth.RNRDelay(c), "code %d", c)
	}
}

func TestRNRTimerFor(t *testing.T) {
	// Exact table delays map back to their own code.
	for c := uint8(1); c < 32; c++ {
		assert.Equal(t, c, aeth.RNRTimerFor(aeth.RNRDelay(c)), "code %d", c)
		// One nanosecond more needs the next code (0 after 31).
		assert.Equal(t, (c+1)%32, aeth.RNRTimerFor(aeth.RNRDelay(c)+1), "code %d + 1ns", c)
	}
	assert.Equal(t, uint8(1), aeth.RNRTimerFor(0))
	assert.Equal(t, uint8(1), aeth.RNRTimerFor(-time.Second))
	assert.Equal(t, uint8(1), aeth.RNRTimerFor(time.Nanosecond))
	assert.Equal(t, uint8(14), aeth.RNRTimerFor(time.Millisecond))
	assert.Equal(t, uint8(31), aeth.RNRTimerFor(491520*time.Microsecond))
	assert.Equal(t, uint8(0), aeth.RNRTimerFor(500*time.Millisecond))
	assert.Equal(t, uint8(0), aeth.RNRTimerFor(655360*time.Microsecond))
	assert.Equal(t, uint8(0), aeth.RNRTimerFor(time.Hour))
	rapid.Check(t, func(t *rapid.T) {
		d := time.Duration(rapid.Int64Range(-1, int64(time.Second)).Draw(t, "d"))
		c := aeth.RNRTimerFor(d)
		if d <= 491520*time.Microsecond {
			if c == 0 {
				t.Fatalf("code 0 for %v", d)
			}
			if aeth.RNRDelay(c) < d {
				t.Fatalf("code %d delay %v < %v", c, aeth.RNRDelay(c), d)
			}
			if c > 1 && aeth.RNRDelay(c-1) >= d {
				t.Fatalf("code %d not the smallest for %v", c, d)
			}
		} else if c != 0 {
			t.Fatalf("code %d for %v, want 0", c, d)
		}
	})
}

// creditTable is ib-facts.md §5.8, typed from the document; -1 marks code 31
// ("invalid", no flow-control information).
var creditTable = [32]struct {
	code    uint8
	credits int
}{
	{0, 0}, {1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 6}, {6, 8}, {7, 12},
	{8, 16}, {9, 24}, {10, 32}, {11, 48}, {12, 64}, {13, 96}, {14, 128}, {15, 192},
	{16, 256}, {17, 384}, {18, 512}, {19, 768}, {20, 1024}, {21, 1536}, {22, 2048}, {23, 3072},
	{24, 4096}, {25, 6144}, {26, 8192}, {27, 12288}, {28, 16384}, {29, 24576}, {30, 32768}, {31, -1},
}

func TestCreditTable(t *testing.T) {
	for i, e := range creditTable {
		require.Equal(t, uint8(i), e.code)
		n, limited := aeth.ACKSyndrome(e.code).Credits()
		if e.credits < 0 {
			assert.False(t, limited, "code 31 is unlimited")
			assert.Equal(t, 0, n)
			continue
		}
		assert.True(t, limited, "code %d", e.code)
		assert.Equal(t, e.credits, n, "code %d", e.code)
		assert.Equal(t, e.code, aeth.CreditCodeFor(e.credits), "exact value %d", e.credits)
	}
}

func TestCreditCodeFor(t *testing.T) {
	cases := []struct {
		n    int
		code uint8
	}{
		{-5, 0}, {0, 0}, {1, 1}, {4, 4}, {5, 4}, {6, 5}, {7, 5}, {11, 6}, {12, 7}, {13, 7},
		{100, 13}, {1000, 19}, {32767, 29}, {32768, 30}, {1 << 30, 30},
	}
	for _, c := range cases {
		assert.Equal(t, c.code, aeth.CreditCodeFor(c.n), "n=%d", c.n)
	}
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 40000).Draw(t, "n")
		c := aeth.CreditCodeFor(n)
		if c >= aeth.Unlimited {
			t.Fatalf("code %d", c)
		}
		got, _ := aeth.ACKSyndrome(c).Credits()
		if got > n {
			t.Fatalf("n=%d: code %d gives %d > n", n, c, got)
		}
		if c < 30 {
			next, _ := aeth.ACKSyndrome(c + 1).Credits()
			if next <= n {
				t.Fatalf("n=%d: code %d not the largest (code %d gives %d)", n, c, c+1, next)
			}
		}
	})
}

func TestSyndromeString(t *testing.T) {
	cases := []struct {
		s   aeth.Syndrome
		str string
	}{
		{aeth.ACKSyndrome(5), "ACK credits=6 (code 5)"},
		{aeth.ACKSyndrome(0), "ACK credits=0 (code 0)"},
		{aeth.ACKSyndrome(30), "ACK credits=32768 (code 30)"},
		{aeth.ACKSyndrome(aeth.Unlimited), "ACK unlimited"},
		{aeth.RNRNAKSyndrome(14), "RNR_NAK timer=14 (1.28ms)"},
		{aeth.RNRNAKSyndrome(0), "RNR_NAK timer=0 (655.36ms)"},
		{aeth.RNRNAKSyndrome(1), "RNR_NAK timer=1 (10µs)"},
		{aeth.NAKSyndrome(aeth.PSNSequenceError), "NAK PSN_SEQUENCE_ERROR"},
		{aeth.NAKSyndrome(aeth.RemoteAccessError), "NAK REMOTE_ACCESS_ERROR"},
		{aeth.NAKSyndrome(9), "NAK RESERVED_NAK_9"},
		{0x43, "RESERVED value=3"},
		{0x9F, "ACK unlimited resv=1"},
	}
	for _, c := range cases {
		assert.Equal(t, c.str, c.s.String(), "0x%02x", uint8(c.s))
	}
}

func TestString(t *testing.T) {
	f := aeth.Fields{Syndrome: aeth.ACKSyndrome(5), MSN: 0x123456}
	assert.Equal(t, "AETH syndrome=0x05 (ACK credits=6 (code 5)) msn=1193046", f.String())
	f = aeth.Fields{Syndrome: aeth.RNRNAKSyndrome(14), MSN: 7}
	assert.Equal(t, "AETH syndrome=0x2e (RNR_NAK timer=14 (1.28ms)) msn=7", f.String())
	f = aeth.Fields{Syndrome: aeth.NAKSyndrome(aeth.InvalidRequest)}
	assert.Equal(t, "AETH syndrome=0x61 (NAK INVALID_REQUEST) msn=0", f.String())
}

func TestValidSyndrome(t *testing.T) {
	seen := map[aeth.Kind]bool{}
	rapid.Check(t, func(t *rapid.T) {
		s := proptest.ValidSyndrome().Draw(t, "s")
		seen[s.Kind()] = true
		h, _ := aeth.New([]byte{uint8(s), 0, 0, 0})
		if err := h.Validate(); err != nil {
			t.Fatalf("0x%02x: %v", uint8(s), err)
		}
	})
	assert.True(t, seen[aeth.ACK] && seen[aeth.RNRNAK] && seen[aeth.NAK], "%v", seen)
}

var sink aeth.Fields

func BenchmarkView(b *testing.B) {
	buf := hdrtest.Unhex(b, "1f000005")
	b.ReportAllocs()
	var n uint32
	for i := 0; i < b.N; i++ {
		h, err := aeth.New(buf)
		if err != nil {
			b.Fatal(err)
		}
		c, _ := h.Syndrome().Credits()
		n += h.MSN() + uint32(c)
	}
	_ = n
}

func BenchmarkDecode(b *testing.B) {
	buf := hdrtest.Unhex(b, "1f000005")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h, _ := aeth.New(buf)
		sink = h.Fields()
	}
}

func BenchmarkEncode(b *testing.B) {
	f := aeth.Fields{Syndrome: aeth.ACKSyndrome(aeth.Unlimited), MSN: 5}
	buf := make([]byte, aeth.Len)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := f.Encode(buf); err != nil {
			b.Fatal(err)
		}
	}
}
