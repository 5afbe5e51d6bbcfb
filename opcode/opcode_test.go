package opcode

import (
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The DETH rule from the design documents, written out as a list rather than
// derived, so the table is checked against an independent statement of it.
func TestHasDETHWalksAll256(t *testing.T) {
	want := map[Opcode]bool{
		0x64: true, 0x65: true, // UD SEND_ONLY, UD SEND_ONLY_WITH_IMMEDIATE
		0x40: true, 0x41: true, 0x42: true, 0x43: true, 0x44: true, 0x45: true, // RD SEND family
		0x46: true, 0x47: true, 0x48: true, 0x49: true, 0x4A: true, 0x4B: true, // RD RDMA WRITE family
		0x4C: true,             // RD RDMA READ request
		0x53: true, 0x54: true, // RD CmpSwap, FetchAdd
		0x55: true, // RD Resync
	}
	n := 0
	for i := 0; i < 256; i++ {
		o := Opcode(i)
		assert.Equal(t, want[o], o.HasDETH(), "opcode 0x%02X %s", i, o)
		if o.HasDETH() {
			n++
		}
	}
	assert.Equal(t, 18, n)
}

func TestValidSets(t *testing.T) {
	var got []int
	for i := 0; i < 256; i++ {
		if Opcode(i).Valid() {
			got = append(got, i)
		}
	}
	var want []int
	add := func(lo, hi int) {
		for i := lo; i <= hi; i++ {
			want = append(want, i)
		}
	}
	add(0x00, 0x14)
	want = append(want, 0x16, 0x17, 0x1C, 0x1D)
	add(0x20, 0x2B)
	add(0x40, 0x55)
	want = append(want, 0x5C, 0x64, 0x65, 0x80, 0x81)
	add(0xA0, 0xB4)
	want = append(want, 0xB6, 0xB7)
	assert.Equal(t, want, got)
	assert.Len(t, All(), len(want))
}

func TestNamesAndParse(t *testing.T) {
	cases := map[Opcode]string{
		0x04: "RC_SEND_ONLY", 0x65: "UD_SEND_ONLY_WITH_IMMEDIATE", 0x0D: "RC_RDMA_READ_RESPONSE_FIRST",
		0x81: "CNP", 0x80: "IB_CNP", 0x11: "RC_ACKNOWLEDGE", 0x55: "RD_RESYNC", 0x17: "RC_SEND_ONLY_WITH_INVALIDATE",
		0x1C: "RC_FLUSH", 0x1D: "RC_ATOMIC_WRITE", 0xB3: "XRC_COMPARE_SWAP", 0x2B: "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE",
		0x18: "UNKNOWN_0x18", 0x15: "UNKNOWN_0x15", 0xC0: "VENDOR_0xC0", 0xFF: "VENDOR_0xFF",
	}
	for o, name := range cases {
		assert.Equal(t, name, o.String())
		p, err := Parse(name)
		require.NoError(t, err)
		assert.Equal(t, o, p)
		p, err = Parse(strings.ToLower(name))
		require.NoError(t, err)
		assert.Equal(t, o, p)
	}
	for i := 0; i < 256; i++ {
		p, err := Parse(Opcode(i).String())
		require.NoError(t, err)
		assert.Equal(t, Opcode(i), p)
	}
	p, err := Parse("0x64")
	require.NoError(t, err)
	assert.Equal(t, Opcode(0x64), p)
	_, err = Parse("RC_SEND_SOMETIMES")
	assert.Error(t, err)
}

func TestHeaderSequences(t *testing.T) {
	H := func(h ...Header) []Header { return h }
	cases := []struct {
		o    Opcode
		want []Header
		hlen int
	}{
		{RCSendOnly, H(), 0},
		{RCRDMAWriteOnlyWithImmediate, H(RETH, ImmDt), 20},
		{RCAtomicAcknowledge, H(AETH, AtomicAckETH), 12},
		{RCCompareSwap, H(AtomicETH), 28},
		{RCFlush, H(FETH, RETH), 20},
		{RCAtomicWrite, H(RETH), 16},
		{RCSendOnlyWithInvalidate, H(IETH), 4},
		{UCRDMAWriteFirst, H(RETH), 16},
		{UDSendOnlyWithImmediate, H(DETH, ImmDt), 12},
		{RDRDMAWriteOnlyWithImmediate, H(RDETH, DETH, RETH, ImmDt), 32},
		{RDRDMAReadResponseMiddle, H(RDETH), 4},
		{RDAtomicAcknowledge, H(RDETH, AETH, AtomicAckETH), 16},
		{RDFlush, H(RDETH, FETH, RETH), 24},
		{RDResync, H(RDETH, DETH), 12},
		{XRCRDMAWriteOnlyWithImmediate, H(XRCETH, RETH, ImmDt), 24},
		{XRCRDMAReadResponseFirst, H(AETH), 4},
		{XRCAcknowledge, H(AETH), 4},
		{CNP, H(CNPBody), 16},
		{IBCNP, H(), 0},
	}
	for _, c := range cases {
		got := c.o.Headers()
		if len(c.want) == 0 {
			assert.Empty(t, got, c.o.String())
		} else {
			assert.Equal(t, c.want, got, c.o.String())
		}
		assert.Equal(t, c.hlen, c.o.HeaderLen(), c.o.String())
	}
	// ib-facts.md §2.2 offsets, counted from the first BTH byte.
	info := RCRDMAWriteOnlyWithImmediate.Info()
	assert.Equal(t, 12, 12+info.Offset(RETH))
	assert.Equal(t, 28, 12+info.Offset(ImmDt))
	assert.Equal(t, 32, 12+info.HeaderLen())
	assert.Equal(t, -1, info.Offset(AETH))
	assert.Equal(t, 24, 12+RCAtomicAcknowledge.HeaderLen())
}

func TestFlags(t *testing.T) {
	for _, o := range All() {
		in := o.Info()
		assert.Equal(t, in.Has(ImmDt), o.HasImmediate())
		assert.Equal(t, in.Has(IETH), o.HasInvalidate())
		assert.NotZero(t, in.Position, o.String())
		assert.NotZero(t, in.Direction, o.String())
	}
	assert.True(t, RCRDMAReadRequest.IsRequest())
	assert.False(t, RCRDMAReadRequest.HasPayload())
	assert.True(t, RCRDMAReadResponseLast.IsResponse())
	assert.Equal(t, Last, RCRDMAReadResponseLast.Position())
	assert.Equal(t, Middle, UCSendMiddle.Position())
	assert.False(t, CNP.IsRequest())
	assert.False(t, CNP.IsResponse())
	assert.True(t, XRCSendLastWithInvalidate.HasInvalidate())
	assert.False(t, Opcode(0x18).Valid())
	assert.Equal(t, Vendor, Opcode(0xE3).Transport())
	assert.Equal(t, XRC, Opcode(0xB4).Transport())
	assert.Equal(t, FetchAdd, Opcode(0xB4).Operation())
}

// Every valid opcode has a family, and the family agrees with the name.
func TestFamily(t *testing.T) {
	prefix := map[Family]string{FamilySend: "_SEND_", FamilyWrite: "_RDMA_WRITE_", FamilyRead: "_RDMA_READ_REQUEST",
		FamilyReadResponse: "_RDMA_READ_RESPONSE_", FamilyAck: "_ACKNOWLEDGE", FamilyAtomicAck: "_ATOMIC_ACKNOWLEDGE",
		FamilyFlush: "_FLUSH", FamilyAtomicWrite: "_ATOMIC_WRITE", FamilyResync: "_RESYNC", FamilyCNP: "CNP"}
	for _, o := range All() {
		f := o.Family()
		require.NotEqual(t, FamilyNone, f, o.String())
		if p, ok := prefix[f]; ok {
			assert.Contains(t, o.String(), p, o.String())
		}
		assert.Equal(t, f == FamilySend || f == FamilyWrite || f == FamilyReadResponse, f.Segmented(), o.String())
	}
	assert.Equal(t, FamilyAtomic, RCCompareSwap.Family())
	assert.Equal(t, FamilyAtomic, XRCFetchAdd.Family())
	assert.Equal(t, FamilyNone, Opcode(0x18).Family())
	assert.Equal(t, FamilyNone, Opcode(0xC0).Family())
	assert.Equal(t, "RDMA WRITE", FamilyWrite.String())
	assert.Equal(t, "Family(200)", Family(200).String())
}

// Every named constant must name a valid opcode whose table name matches the
// constant's own name (RCSendOnly <-> RC_SEND_ONLY).
func TestNamedConstants(t *testing.T) {
	consts := map[string]Opcode{
		"RC_SEND_ONLY": RCSendOnly, "UC_SEND_LAST_WITH_IMMEDIATE": UCSendLastWithImmediate,
		"RD_FLUSH": RDFlush, "UD_SEND_ONLY": UDSendOnly, "XRC_SEND_ONLY_WITH_INVALIDATE": XRCSendOnlyWithInvalidate,
		"RC_ATOMIC_WRITE": RCAtomicWrite, "CNP": CNP, "IB_CNP": IBCNP,
	}
	for name, o := range consts {
		assert.Equal(t, name, o.String())
		assert.True(t, o.Valid(), name)
	}
	assert.Equal(t, "RETH", RETH.String())
	assert.Equal(t, 28, AtomicETH.Len())
	assert.Equal(t, reflect.TypeOf(Opcode(0)), reflect.TypeOf(RCSendFirst))
}

func BenchmarkLookup(b *testing.B) {
	b.ReportAllocs()
	n := 0
	for i := 0; i < b.N; i++ {
		n += Opcode(i).HeaderLen() + len(Opcode(i).Headers())
	}
	_ = n
}
