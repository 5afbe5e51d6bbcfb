package rc

import "fmt"

// State is a QP state, numbered as ibv_qp_state (ib-facts.md §5.10). A QP
// made by New is connected: it starts in RTS. It leaves RTS only for Error.
type State uint8

// QP states.
const (
	StateReset State = 0
	StateInit  State = 1
	StateRTR   State = 2
	StateRTS   State = 3
	StateSQD   State = 4
	StateSQE   State = 5
	StateError State = 6
)

func (s State) String() string {
	switch s {
	case StateReset:
		return "RESET"
	case StateInit:
		return "INIT"
	case StateRTR:
		return "RTR"
	case StateRTS:
		return "RTS"
	case StateSQD:
		return "SQD"
	case StateSQE:
		return "SQE"
	case StateError:
		return "ERR"
	}
	return fmt.Sprintf("STATE_%d", uint8(s))
}

// Status is a work-completion status with the ibv_wc_status numbers
// (ib-facts.md §5.10). Only the statuses this package produces have names.
type Status uint8

// Completion statuses.
const (
	Success        Status = 0  // IBV_WC_SUCCESS
	LocLenErr      Status = 1  // IBV_WC_LOC_LEN_ERR: a SEND larger than the receive buffer
	WRFlushErr     Status = 5  // IBV_WC_WR_FLUSH_ERR
	BadRespErr     Status = 7  // IBV_WC_BAD_RESP_ERR: a response that makes no sense
	RemInvReqErr   Status = 9  // IBV_WC_REM_INV_REQ_ERR
	RemAccessErr   Status = 10 // IBV_WC_REM_ACCESS_ERR
	RemOpErr       Status = 11 // IBV_WC_REM_OP_ERR
	RetryExcErr    Status = 12 // IBV_WC_RETRY_EXC_ERR
	RNRRetryExcErr Status = 13 // IBV_WC_RNR_RETRY_EXC_ERR
)

var statusNames = map[Status]string{
	Success: "SUCCESS", LocLenErr: "LOC_LEN_ERR", WRFlushErr: "WR_FLUSH_ERR", BadRespErr: "BAD_RESP_ERR",
	RemInvReqErr: "REM_INV_REQ_ERR", RemAccessErr: "REM_ACCESS_ERR", RemOpErr: "REM_OP_ERR",
	RetryExcErr: "RETRY_EXC_ERR", RNRRetryExcErr: "RNR_RETRY_EXC_ERR",
}

func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("STATUS_%d", uint8(s))
}

// WROpcode is a send work-request opcode with the ibv_wr_opcode numbers
// (ib-facts.md §5.10).
type WROpcode uint8

// Send work-request opcodes.
const (
	WRRDMAWrite        WROpcode = 0
	WRRDMAWriteWithImm WROpcode = 1
	WRSend             WROpcode = 2
	WRSendWithImm      WROpcode = 3
	WRRDMARead         WROpcode = 4
	WRAtomicCmpSwap    WROpcode = 5
	WRAtomicFetchAdd   WROpcode = 6
	WRSendWithInv      WROpcode = 9
	WRFlush            WROpcode = 14
	WRAtomicWrite      WROpcode = 15
)

var wrNames = map[WROpcode]string{
	WRRDMAWrite: "RDMA_WRITE", WRRDMAWriteWithImm: "RDMA_WRITE_WITH_IMM", WRSend: "SEND",
	WRSendWithImm: "SEND_WITH_IMM", WRRDMARead: "RDMA_READ", WRAtomicCmpSwap: "ATOMIC_CMP_AND_SWP",
	WRAtomicFetchAdd: "ATOMIC_FETCH_AND_ADD", WRSendWithInv: "SEND_WITH_INV", WRFlush: "FLUSH",
	WRAtomicWrite: "ATOMIC_WRITE",
}

func (o WROpcode) String() string {
	if n, ok := wrNames[o]; ok {
		return n
	}
	return fmt.Sprintf("WR_OPCODE_%d", uint8(o))
}

func (o WROpcode) valid() bool { _, ok := wrNames[o]; return ok }

// isSend: the message consumes a receive WQE at the responder.
func (o WROpcode) isSend() bool { return o == WRSend || o == WRSendWithImm || o == WRSendWithInv }

// isWrite: RDMA WRITE with or without immediate.
func (o WROpcode) isWrite() bool { return o == WRRDMAWrite || o == WRRDMAWriteWithImm }

// needsResponse: the operation is answered by READ responses or an ATOMIC
// ACK, takes an ORD slot at the requester and an IRD resource at the
// responder (ib-facts.md §5.4, §5.5; FLUSH's use of a resource is UNVERIFIED
// in §2.2, we count it like ATOMIC WRITE).
func (o WROpcode) needsResponse() bool {
	switch o {
	case WRRDMARead, WRAtomicCmpSwap, WRAtomicFetchAdd, WRFlush, WRAtomicWrite:
		return true
	}
	return false
}

func (o WROpcode) isAtomic() bool { return o == WRAtomicCmpSwap || o == WRAtomicFetchAdd }

// wcOpcode is the completion opcode of a send WR.
func (o WROpcode) wcOpcode() WCOpcode {
	switch o {
	case WRRDMAWrite, WRRDMAWriteWithImm:
		return WCRDMAWrite
	case WRSend, WRSendWithImm, WRSendWithInv:
		return WCSend
	case WRRDMARead:
		return WCRDMARead
	case WRAtomicCmpSwap:
		return WCCompSwap
	case WRAtomicFetchAdd:
		return WCFetchAdd
	case WRFlush:
		return WCFlush
	case WRAtomicWrite:
		return WCAtomicWrite
	}
	return WCSend
}

// WCOpcode is a completion opcode with the ibv_wc_opcode numbers
// (ib-facts.md §5.10); receive completions have bit 7 set.
type WCOpcode uint8

// Completion opcodes.
const (
	WCSend            WCOpcode = 0
	WCRDMAWrite       WCOpcode = 1
	WCRDMARead        WCOpcode = 2
	WCCompSwap        WCOpcode = 3
	WCFetchAdd        WCOpcode = 4
	WCFlush           WCOpcode = 8
	WCAtomicWrite     WCOpcode = 9
	WCRecv            WCOpcode = 128
	WCRecvRDMAWithImm WCOpcode = 129
)

var wcNames = map[WCOpcode]string{
	WCSend: "SEND", WCRDMAWrite: "RDMA_WRITE", WCRDMARead: "RDMA_READ", WCCompSwap: "COMP_SWAP",
	WCFetchAdd: "FETCH_ADD", WCFlush: "FLUSH", WCAtomicWrite: "ATOMIC_WRITE", WCRecv: "RECV",
	WCRecvRDMAWithImm: "RECV_RDMA_WITH_IMM",
}

func (o WCOpcode) String() string {
	if n, ok := wcNames[o]; ok {
		return n
	}
	return fmt.Sprintf("WC_OPCODE_%d", uint8(o))
}

// IsRecv reports whether o is a receive completion (bit 7 set).
func (o WCOpcode) IsRecv() bool { return o&128 != 0 }

// SendFlags are ibv_send_flags.
type SendFlags uint8

// Send flags (ibverbs numbers; IBV_SEND_INLINE has no meaning here).
const (
	// Fence: do not start this WR before every earlier READ and atomic of
	// the send queue has completed.
	Fence SendFlags = 1
	// Signaled: report a completion on success (errors are always reported,
	// ib-facts.md §5.5). Config.SignalAll signals every WR.
	Signaled SendFlags = 2
	// Solicited: set BTH.SE on the last packet of a SEND or WRITE with
	// immediate (ib-facts.md §5.2).
	Solicited SendFlags = 4
)

// WCFlags are ibv_wc_flags.
type WCFlags uint8

// Completion flags.
const (
	WithImm WCFlags = 1 << 1 // IBV_WC_WITH_IMM: Imm is valid
	WithInv WCFlags = 1 << 3 // IBV_WC_WITH_INV: InvRKey is valid
)

// WR is a send work request.
//
// Local is the one local buffer (a slice of the caller's registered memory):
// the data of a SEND, WRITE or ATOMIC WRITE (exactly 8 bytes); the
// destination of a READ (the READ length is len(Local)); the 8 bytes that
// receive the original value of an atomic. Packets carry sub-slices of Local
// as their payload: do not change it until the WR completes.
type WR struct {
	ID     uint64
	Opcode WROpcode
	Flags  SendFlags
	Local  []byte

	RemoteAddr uint64 // RDMA and atomic target address
	RKey       uint32 // RDMA and atomic target R_Key
	Imm        uint32 // immediate data (WITH_IMM opcodes)
	InvRKey    uint32 // R_Key the responder invalidates (SEND_WITH_INV)

	// Atomics: CompareAdd is the compare value of CmpSwap or the addend of
	// FetchAdd; Swap is the swap value of CmpSwap (ibv_send_wr.wr.atomic).
	CompareAdd uint64
	Swap       uint64

	// FLUSH (IBA 1.5): Length of the range at RemoteAddr, FlushType the
	// placement type (FETH PLT: 1 global visibility, 2 persistence) and
	// FlushLevel the selectivity (FETH SEL: 0 range, 1 whole region).
	Length     uint32
	FlushType  uint8
	FlushLevel uint8
}

// RecvWR is a receive work request: a SEND is written into Buf.
type RecvWR struct {
	ID  uint64
	Buf []byte
}

// Completion is a work completion, as ibv_wc.
type Completion struct {
	WRID    uint64
	Status  Status
	Opcode  WCOpcode
	ByteLen uint32
	Flags   WCFlags
	Imm     uint32 // valid with WithImm
	InvRKey uint32 // valid with WithInv
	QPN     uint32
}

func (c Completion) String() string {
	s := fmt.Sprintf("wr=%d %s %s len=%d", c.WRID, c.Status, c.Opcode, c.ByteLen)
	if c.Flags&WithImm != 0 {
		s += fmt.Sprintf(" imm=0x%x", c.Imm)
	}
	if c.Flags&WithInv != 0 {
		s += fmt.Sprintf(" inv=0x%x", c.InvRKey)
	}
	return s
}
