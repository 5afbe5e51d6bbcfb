package aeth

import (
	"fmt"
	"time"
)

// Kind is the syndrome type, bits 6-5 of the syndrome (ib-facts.md §5.6).
type Kind uint8

// Syndrome kinds.
const (
	ACK      Kind = 0 // 00: ACK, bits 4-0 are a credit code
	RNRNAK   Kind = 1 // 01: RNR NAK, bits 4-0 are an RNR timer code
	Reserved Kind = 2 // 10: reserved
	NAK      Kind = 3 // 11: NAK, bits 4-0 are a NAK code
)

func (k Kind) String() string {
	switch k {
	case ACK:
		return "ACK"
	case RNRNAK:
		return "RNR_NAK"
	case Reserved:
		return "RESERVED"
	case NAK:
		return "NAK"
	}
	return fmt.Sprintf("KIND_%d", uint8(k))
}

// NAKCode is the value of a NAK syndrome (bits 4-0 when Kind is NAK).
type NAKCode uint8

// NAK codes (ib-facts.md §5.6). Codes 5-31 are reserved.
const (
	PSNSequenceError       NAKCode = 0 // syndrome 0x60
	InvalidRequest         NAKCode = 1 // syndrome 0x61
	RemoteAccessError      NAKCode = 2 // syndrome 0x62
	RemoteOperationalError NAKCode = 3 // syndrome 0x63
	InvalidRDRequest       NAKCode = 4 // syndrome 0x64, RD only
)

// Valid reports whether c is a defined NAK code (0-4).
func (c NAKCode) Valid() bool { return c <= InvalidRDRequest }

func (c NAKCode) String() string {
	switch c {
	case PSNSequenceError:
		return "PSN_SEQUENCE_ERROR"
	case InvalidRequest:
		return "INVALID_REQUEST"
	case RemoteAccessError:
		return "REMOTE_ACCESS_ERROR"
	case RemoteOperationalError:
		return "REMOTE_OPERATIONAL_ERROR"
	case InvalidRDRequest:
		return "INVALID_RD_REQUEST"
	}
	return fmt.Sprintf("RESERVED_NAK_%d", uint8(c))
}

// Syndrome is the AETH syndrome byte: bit 7 reserved (0), bits 6-5 the Kind,
// bits 4-0 a value whose meaning depends on the Kind.
type Syndrome uint8

// Unlimited is the ACK credit code meaning "no flow-control information":
// the requester is not limited by credits (ib-facts.md §5.8).
const Unlimited = 0x1F

// ACKSyndrome returns the ACK syndrome carrying creditCode (masked to 5 bits).
func ACKSyndrome(creditCode uint8) Syndrome { return Syndrome(creditCode & 0x1F) }

// RNRNAKSyndrome returns the RNR NAK syndrome carrying timer (masked to 5 bits).
func RNRNAKSyndrome(timer uint8) Syndrome { return Syndrome(0x20 | timer&0x1F) }

// NAKSyndrome returns the NAK syndrome carrying code (masked to 5 bits).
func NAKSyndrome(code NAKCode) Syndrome { return Syndrome(0x60 | uint8(code)&0x1F) }

// Kind returns bits 6-5.
func (s Syndrome) Kind() Kind { return Kind(s>>5) & 3 }

// Value returns bits 4-0.
func (s Syndrome) Value() uint8 { return uint8(s) & 0x1F }

// Reserved reports whether the reserved bit 7 is set.
func (s Syndrome) Reserved() bool { return s&0x80 != 0 }

// CreditCode returns bits 4-0 read as an ACK credit code. It is meaningful
// only when Kind is ACK.
func (s Syndrome) CreditCode() uint8 { return s.Value() }

// Credits decodes the credit code (bits 4-0, meaningful only when Kind is
// ACK) with the table of ib-facts.md §5.8. Code 31 (Unlimited) returns
// n = 0, limited = false; every other code returns its credit count and
// limited = true.
func (s Syndrome) Credits() (n int, limited bool) {
	c := s.Value()
	if c == Unlimited {
		return 0, false
	}
	return int(creditTable[c]), true
}

// RNRTimer returns bits 4-0 read as an RNR timer code. It is meaningful only
// when Kind is RNRNAK.
func (s Syndrome) RNRTimer() uint8 { return s.Value() }

// RNRDelay decodes the RNR timer code (bits 4-0, meaningful only when Kind is
// RNRNAK) with the table of ib-facts.md §5.7.
func (s Syndrome) RNRDelay() time.Duration { return RNRDelay(s.Value()) }

// NAKCode returns bits 4-0 read as a NAK code. It is meaningful only when
// Kind is NAK.
func (s Syndrome) NAKCode() NAKCode { return NAKCode(s.Value()) }

// Valid reports whether a receiver may accept s: bit 7 clear, Kind not
// Reserved, and for a NAK a defined NAK code (0-4).
func (s Syndrome) Valid() bool {
	switch {
	case s.Reserved(), s.Kind() == Reserved:
		return false
	case s.Kind() == NAK:
		return s.NAKCode().Valid()
	}
	return true
}

// String describes the syndrome: "ACK credits=6 (code 5)", "ACK unlimited",
// "RNR_NAK timer=14 (1.28ms)", "NAK PSN_SEQUENCE_ERROR", "RESERVED value=3".
// A set bit 7 adds " resv=1".
func (s Syndrome) String() string {
	var str string
	switch s.Kind() {
	case ACK:
		if n, limited := s.Credits(); limited {
			str = fmt.Sprintf("ACK credits=%d (code %d)", n, s.CreditCode())
		} else {
			str = "ACK unlimited"
		}
	case RNRNAK:
		str = fmt.Sprintf("RNR_NAK timer=%d (%s)", s.RNRTimer(), s.RNRDelay())
	case NAK:
		str = "NAK " + s.NAKCode().String()
	default:
		str = fmt.Sprintf("RESERVED value=%d", s.Value())
	}
	if s.Reserved() {
		str += " resv=1"
	}
	return str
}

// creditTable is ib-facts.md §5.8: credit count for codes 0-30 (code 31 is
// Unlimited and has no count).
var creditTable = [32]uint16{
	0, 1, 2, 3, 4, 6, 8, 12,
	16, 24, 32, 48, 64, 96, 128, 192,
	256, 384, 512, 768, 1024, 1536, 2048, 3072,
	4096, 6144, 8192, 12288, 16384, 24576, 32768, 0,
}

// CreditCodeFor returns the credit code to advertise for n posted receive
// WQEs: the code of the largest table value <= n (ib-facts.md §5.8). It
// returns 0 for n <= 0 and 30 (32768 credits) for n >= 32768; it never
// returns Unlimited.
func CreditCodeFor(n int) uint8 {
	var code uint8
	for c := uint8(1); c < Unlimited; c++ {
		if int(creditTable[c]) > n {
			break
		}
		code = c
	}
	return code
}

// rnrMicros is ib-facts.md §5.7: the RNR NAK delay for each timer code, in
// microseconds (code 25 is 61440, not rxe's typo 61410).
var rnrMicros = [32]uint32{
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
}

// RNRDelay returns the delay of RNR timer code (masked to 5 bits).
func RNRDelay(code uint8) time.Duration {
	return time.Duration(rnrMicros[code&0x1F]) * time.Microsecond
}

// RNRTimerFor returns the timer code with the smallest delay >= d. Codes 1-31
// are in increasing order of delay (10µs ... 491.52ms); code 0 (655.36ms) is
// returned only when d > 491.52ms, including any d longer than 655.36ms.
func RNRTimerFor(d time.Duration) uint8 {
	for c := uint8(1); c < 32; c++ {
		if RNRDelay(c) >= d {
			return c
		}
	}
	return 0
}
