package cm

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/rocekit/rocekit/internal/be"
)

// Offsets below count from the first byte of the attribute data (MAD byte
// 24), as IBA Vol. 1 tables 106-113 and the Linux CM_FIELD macros do. A
// sub-byte field is described by its byte and mask; the most significant bit
// is the first bit on the wire.

// Private data sizes (IBA Vol. 1 §12.6).
const (
	REQPrivateLen  = 92
	MRAPrivateLen  = 222
	REJPrivateLen  = 148
	REJARILen      = 72
	REPPrivateLen  = 196
	RTUPrivateLen  = 224
	DREQPrivateLen = 220
	DREPPrivateLen = 224
)

// Private data offsets.
const (
	reqPrivate  = 140
	mraPrivate  = 10
	rejARI      = 12
	rejPrivate  = 84
	repPrivate  = 36
	rtuPrivate  = 8
	dreqPrivate = 12
	drepPrivate = 8
)

func u24(b []byte, off int) uint32       { return be.Uint24(b[off:]) }
func putU24(b []byte, off int, v uint32) { be.PutUint24(b[off:], v) }
func bits(b []byte, off int, mask uint8) uint8 {
	return (b[off] & mask) >> shift(mask)
}
func setBits(b []byte, off int, mask uint8, v uint8) {
	b[off] = b[off]&^mask | (v<<shift(mask))&mask
}
func shift(mask uint8) uint8 {
	var s uint8
	for mask&1 == 0 && s < 8 {
		mask >>= 1
		s++
	}
	return s
}

func private(b []byte, off, n int) []byte {
	if off >= len(b) {
		return b[len(b):]
	}
	end := off + n
	if end > len(b) {
		end = len(b)
	}
	return b[off:end:end]
}

func gid(b []byte, off int) netip.Addr { return netip.AddrFrom16([16]byte(b[off : off+16])) }

// TransportType is the REQ Transport Service Type (2 bits).
type TransportType uint8

// Transport service types (IBA Vol. 1 table 106).
const (
	ServiceRC TransportType = 0
	ServiceUC TransportType = 1
	ServiceRD TransportType = 2
	// 3 is reserved; with Extended Transport Type 1 it means XRC.
)

func (t TransportType) String() string {
	switch t {
	case ServiceRC:
		return "RC"
	case ServiceUC:
		return "UC"
	case ServiceRD:
		return "RD"
	}
	return fmt.Sprintf("TRANSPORT_%d", uint8(t))
}

// MTUBytes returns the byte count of an IBA MTU code (1=256 ... 5=4096), or
// 0 for a code outside 1-5.
func MTUBytes(code uint8) int {
	if code < 1 || code > 5 {
		return 0
	}
	return 128 << code
}

// REQ is a view over ConnectRequest attribute data (IBA Vol. 1 table 106).
//
//	0   Local Communication ID (32)
//	4   reserved (32)
//	8   ServiceID (64)
//	16  Local CA GUID (64)
//	24  reserved (32)
//	28  Local Q_Key (32)
//	32  Local QPN (24) | Responder Resources (8)
//	36  Local EECN (24) | Initiator Depth (8)
//	40  Remote EECN (24) | Remote CM Response Timeout (5) Transport Service Type (2) End-to-End Flow Control (1)
//	44  Starting PSN (24) | Local CM Response Timeout (5) Retry Count (3)
//	48  Partition Key (16)
//	50  Path Packet Payload MTU (4) RDC Exists (1) RNR Retry Count (3)
//	51  Max CM Retries (4) SRQ (1) Extended Transport Type (3)
//	52  Primary Local Port LID (16), 54 Primary Remote Port LID (16)
//	56  Primary Local Port GID (128), 72 Primary Remote Port GID (128)
//	88  Primary Flow Label (20) reserved (6) Primary Packet Rate (6)
//	92  Primary Traffic Class (8), 93 Primary Hop Limit (8)
//	94  Primary SL (4) Primary Subnet Local (1) reserved (3)
//	95  Primary Local ACK Timeout (5) reserved (3)
//	96  Alternate path: the same 44-byte layout
//	140 Private Data (92 bytes)
type REQ []byte

var reqFields = []field{
	{"LocalCommID", 4}, {"Reserved", 8}, {"ServiceID", 16}, {"LocalCAGUID", 24}, {"Reserved2", 28},
	{"LocalQKey", 32}, {"LocalQPN", 35}, {"ResponderResources", 36}, {"LocalEECN", 39}, {"InitiatorDepth", 40},
	{"RemoteEECN", 43}, {"RemoteCMResponseTimeout", 44}, {"StartingPSN", 47}, {"LocalCMResponseTimeout", 48},
	{"PKey", 50}, {"PathMTU", 51}, {"MaxCMRetries", 52}, {"PrimaryLocalLID", 54}, {"PrimaryRemoteLID", 56},
	{"PrimaryLocalGID", 72}, {"PrimaryRemoteGID", 88}, {"PrimaryFlowLabel", 92}, {"PrimaryTrafficClass", 93},
	{"PrimaryHopLimit", 94}, {"PrimarySL", 95}, {"PrimaryLocalACKTimeout", 96},
	{"AlternateLocalLID", 98}, {"AlternateRemoteLID", 100}, {"AlternateLocalGID", 116}, {"AlternateRemoteGID", 132},
	{"AlternateFlowLabel", 136}, {"AlternateTrafficClass", 137}, {"AlternateHopLimit", 138},
	{"AlternateSL", 139}, {"AlternateLocalACKTimeout", 140},
}

// NewREQ returns a view over b, or an error naming the first fixed field b
// does not hold.
func NewREQ(b []byte) (REQ, error) {
	if err := need("cm_req", reqFields, b, HeaderLen); err != nil {
		return nil, err
	}
	return REQ(b), nil
}

func (r REQ) LocalCommID() uint32             { return binary.BigEndian.Uint32(r[0:]) }
func (r REQ) ServiceID() uint64               { return binary.BigEndian.Uint64(r[8:]) }
func (r REQ) LocalCAGUID() uint64             { return binary.BigEndian.Uint64(r[16:]) }
func (r REQ) LocalQKey() uint32               { return binary.BigEndian.Uint32(r[28:]) }
func (r REQ) LocalQPN() uint32                { return u24(r, 32) }
func (r REQ) ResponderResources() uint8       { return r[35] }
func (r REQ) LocalEECN() uint32               { return u24(r, 36) }
func (r REQ) InitiatorDepth() uint8           { return r[39] }
func (r REQ) RemoteEECN() uint32              { return u24(r, 40) }
func (r REQ) RemoteCMResponseTimeout() uint8  { return bits(r, 43, 0xF8) }
func (r REQ) TransportType() TransportType    { return TransportType(bits(r, 43, 0x06)) }
func (r REQ) EndToEndFlowControl() bool       { return r[43]&0x01 != 0 }
func (r REQ) StartingPSN() uint32             { return u24(r, 44) }
func (r REQ) LocalCMResponseTimeout() uint8   { return bits(r, 47, 0xF8) }
func (r REQ) RetryCount() uint8               { return bits(r, 47, 0x07) }
func (r REQ) PKey() uint16                    { return binary.BigEndian.Uint16(r[48:]) }
func (r REQ) PathMTU() uint8                  { return bits(r, 50, 0xF0) } // IBA MTU code; see MTUBytes
func (r REQ) RDCExists() bool                 { return r[50]&0x08 != 0 }
func (r REQ) RNRRetryCount() uint8            { return bits(r, 50, 0x07) }
func (r REQ) MaxCMRetries() uint8             { return bits(r, 51, 0xF0) }
func (r REQ) SRQ() bool                       { return r[51]&0x08 != 0 }
func (r REQ) ExtendedTransportType() uint8    { return bits(r, 51, 0x07) }
func (r REQ) PrimaryLocalLID() uint16         { return binary.BigEndian.Uint16(r[52:]) }
func (r REQ) PrimaryRemoteLID() uint16        { return binary.BigEndian.Uint16(r[54:]) }
func (r REQ) PrimaryLocalGID() netip.Addr     { return gid(r, 56) }
func (r REQ) PrimaryRemoteGID() netip.Addr    { return gid(r, 72) }
func (r REQ) PrimaryFlowLabel() uint32        { return binary.BigEndian.Uint32(r[88:]) >> 12 }
func (r REQ) PrimaryPacketRate() uint8        { return r[91] & 0x3F }
func (r REQ) PrimaryTrafficClass() uint8      { return r[92] }
func (r REQ) PrimaryHopLimit() uint8          { return r[93] }
func (r REQ) PrimarySL() uint8                { return bits(r, 94, 0xF0) }
func (r REQ) PrimarySubnetLocal() bool        { return r[94]&0x08 != 0 }
func (r REQ) PrimaryLocalACKTimeout() uint8   { return bits(r, 95, 0xF8) }
func (r REQ) AlternateLocalLID() uint16       { return binary.BigEndian.Uint16(r[96:]) }
func (r REQ) AlternateRemoteLID() uint16      { return binary.BigEndian.Uint16(r[98:]) }
func (r REQ) AlternateLocalGID() netip.Addr   { return gid(r, 100) }
func (r REQ) AlternateRemoteGID() netip.Addr  { return gid(r, 116) }
func (r REQ) AlternateLocalACKTimeout() uint8 { return bits(r, 139, 0xF8) }

// PrivateData returns the private data present (up to 92 bytes).
func (r REQ) PrivateData() []byte { return private(r, reqPrivate, REQPrivateLen) }

func (r REQ) SetLocalCommID(v uint32)            { binary.BigEndian.PutUint32(r[0:], v) }
func (r REQ) SetServiceID(v uint64)              { binary.BigEndian.PutUint64(r[8:], v) }
func (r REQ) SetLocalCAGUID(v uint64)            { binary.BigEndian.PutUint64(r[16:], v) }
func (r REQ) SetLocalQKey(v uint32)              { binary.BigEndian.PutUint32(r[28:], v) }
func (r REQ) SetLocalQPN(v uint32)               { putU24(r, 32, v) }
func (r REQ) SetResponderResources(v uint8)      { r[35] = v }
func (r REQ) SetLocalEECN(v uint32)              { putU24(r, 36, v) }
func (r REQ) SetInitiatorDepth(v uint8)          { r[39] = v }
func (r REQ) SetRemoteEECN(v uint32)             { putU24(r, 40, v) }
func (r REQ) SetRemoteCMResponseTimeout(v uint8) { setBits(r, 43, 0xF8, v) }
func (r REQ) SetTransportType(v TransportType)   { setBits(r, 43, 0x06, uint8(v)) }
func (r REQ) SetEndToEndFlowControl(v bool)      { be.SetFlag(&r[43], 0x01, v) }
func (r REQ) SetStartingPSN(v uint32)            { putU24(r, 44, v) }
func (r REQ) SetLocalCMResponseTimeout(v uint8)  { setBits(r, 47, 0xF8, v) }
func (r REQ) SetRetryCount(v uint8)              { setBits(r, 47, 0x07, v) }
func (r REQ) SetPKey(v uint16)                   { binary.BigEndian.PutUint16(r[48:], v) }
func (r REQ) SetPathMTU(v uint8)                 { setBits(r, 50, 0xF0, v) }
func (r REQ) SetRDCExists(v bool)                { be.SetFlag(&r[50], 0x08, v) }
func (r REQ) SetRNRRetryCount(v uint8)           { setBits(r, 50, 0x07, v) }
func (r REQ) SetMaxCMRetries(v uint8)            { setBits(r, 51, 0xF0, v) }
func (r REQ) SetSRQ(v bool)                      { be.SetFlag(&r[51], 0x08, v) }
func (r REQ) SetPrimaryLocalLID(v uint16)        { binary.BigEndian.PutUint16(r[52:], v) }
func (r REQ) SetPrimaryRemoteLID(v uint16)       { binary.BigEndian.PutUint16(r[54:], v) }
func (r REQ) SetPrimaryLocalGID(v netip.Addr)    { a := v.As16(); copy(r[56:72], a[:]) }
func (r REQ) SetPrimaryRemoteGID(v netip.Addr)   { a := v.As16(); copy(r[72:88], a[:]) }

// REP is a view over ConnectReply attribute data (IBA Vol. 1 table 110).
//
//	0   Local Communication ID (32)
//	4   Remote Communication ID (32)
//	8   Local Q_Key (32)
//	12  Local QPN (24) | reserved (8)
//	16  Local EE Context Number (24) | reserved (8)
//	20  Starting PSN (24) | reserved (8)
//	24  Responder Resources (8)
//	25  Initiator Depth (8)
//	26  Target ACK Delay (5) Failover Accepted (2) End-to-End Flow Control (1)
//	27  RNR Retry Count (3) SRQ (1) reserved (4)
//	28  Local CA GUID (64)
//	36  Private Data (196 bytes)
type REP []byte

var repFields = []field{
	{"LocalCommID", 4}, {"RemoteCommID", 8}, {"LocalQKey", 12}, {"LocalQPN", 16}, {"LocalEECN", 20},
	{"StartingPSN", 24}, {"ResponderResources", 25}, {"InitiatorDepth", 26}, {"TargetACKDelay", 27},
	{"RNRRetryCount", 28}, {"LocalCAGUID", 36},
}

// NewREP returns a view over b, or an error naming the first fixed field b
// does not hold.
func NewREP(b []byte) (REP, error) {
	if err := need("cm_rep", repFields, b, HeaderLen); err != nil {
		return nil, err
	}
	return REP(b), nil
}

func (r REP) LocalCommID() uint32           { return binary.BigEndian.Uint32(r[0:]) }
func (r REP) RemoteCommID() uint32          { return binary.BigEndian.Uint32(r[4:]) }
func (r REP) LocalQKey() uint32             { return binary.BigEndian.Uint32(r[8:]) }
func (r REP) LocalQPN() uint32              { return u24(r, 12) }
func (r REP) LocalEECN() uint32             { return u24(r, 16) }
func (r REP) StartingPSN() uint32           { return u24(r, 20) }
func (r REP) ResponderResources() uint8     { return r[24] }
func (r REP) InitiatorDepth() uint8         { return r[25] }
func (r REP) TargetACKDelay() uint8         { return bits(r, 26, 0xF8) }
func (r REP) FailoverAccepted() uint8       { return bits(r, 26, 0x06) }
func (r REP) EndToEndFlowControl() bool     { return r[26]&0x01 != 0 }
func (r REP) RNRRetryCount() uint8          { return bits(r, 27, 0xE0) }
func (r REP) SRQ() bool                     { return r[27]&0x10 != 0 }
func (r REP) LocalCAGUID() uint64           { return binary.BigEndian.Uint64(r[28:]) }
func (r REP) PrivateData() []byte           { return private(r, repPrivate, REPPrivateLen) }
func (r REP) SetLocalCommID(v uint32)       { binary.BigEndian.PutUint32(r[0:], v) }
func (r REP) SetRemoteCommID(v uint32)      { binary.BigEndian.PutUint32(r[4:], v) }
func (r REP) SetLocalQKey(v uint32)         { binary.BigEndian.PutUint32(r[8:], v) }
func (r REP) SetLocalQPN(v uint32)          { putU24(r, 12, v) }
func (r REP) SetLocalEECN(v uint32)         { putU24(r, 16, v) }
func (r REP) SetStartingPSN(v uint32)       { putU24(r, 20, v) }
func (r REP) SetResponderResources(v uint8) { r[24] = v }
func (r REP) SetInitiatorDepth(v uint8)     { r[25] = v }
func (r REP) SetTargetACKDelay(v uint8)     { setBits(r, 26, 0xF8, v) }
func (r REP) SetFailoverAccepted(v uint8)   { setBits(r, 26, 0x06, v) }
func (r REP) SetEndToEndFlowControl(v bool) { be.SetFlag(&r[26], 0x01, v) }
func (r REP) SetRNRRetryCount(v uint8)      { setBits(r, 27, 0xE0, v) }
func (r REP) SetSRQ(v bool)                 { be.SetFlag(&r[27], 0x10, v) }
func (r REP) SetLocalCAGUID(v uint64)       { binary.BigEndian.PutUint64(r[28:], v) }

// REJ is a view over ConnectReject attribute data (IBA Vol. 1 table 108).
//
//	0   Local Communication ID (32)
//	4   Remote Communication ID (32)
//	8   Message REJected (2) reserved (6)
//	9   Reject Info Length (7) reserved (1)
//	10  Reason (16)
//	12  Additional Reject Information (72 bytes)
//	84  Private Data (148 bytes)
type REJ []byte

var rejFields = []field{
	{"LocalCommID", 4}, {"RemoteCommID", 8}, {"MessageRejected", 9}, {"RejectInfoLength", 10}, {"Reason", 12},
}

// NewREJ returns a view over b, or an error naming the first fixed field b
// does not hold.
func NewREJ(b []byte) (REJ, error) {
	if err := need("cm_rej", rejFields, b, HeaderLen); err != nil {
		return nil, err
	}
	return REJ(b), nil
}

func (r REJ) LocalCommID() uint32         { return binary.BigEndian.Uint32(r[0:]) }
func (r REJ) RemoteCommID() uint32        { return binary.BigEndian.Uint32(r[4:]) }
func (r REJ) MessageRejected() uint8      { return bits(r, 8, 0xC0) } // 0 REQ, 1 REP, 2 no message
func (r REJ) RejectInfoLength() uint8     { return bits(r, 9, 0xFE) }
func (r REJ) Reason() RejectReason        { return RejectReason(binary.BigEndian.Uint16(r[10:])) }
func (r REJ) ARI() []byte                 { return private(r, rejARI, REJARILen) }
func (r REJ) PrivateData() []byte         { return private(r, rejPrivate, REJPrivateLen) }
func (r REJ) SetLocalCommID(v uint32)     { binary.BigEndian.PutUint32(r[0:], v) }
func (r REJ) SetRemoteCommID(v uint32)    { binary.BigEndian.PutUint32(r[4:], v) }
func (r REJ) SetMessageRejected(v uint8)  { setBits(r, 8, 0xC0, v) }
func (r REJ) SetRejectInfoLength(v uint8) { setBits(r, 9, 0xFE, v) }
func (r REJ) SetReason(v RejectReason)    { binary.BigEndian.PutUint16(r[10:], uint16(v)) }

// RejectReason is the REJ Reason code (IBA Vol. 1 table 109; Linux
// enum ib_cm_rej_reason).
type RejectReason uint16

var rejectNames = [...]string{
	1: "NO_QP", 2: "NO_EEC", 3: "NO_RESOURCES", 4: "TIMEOUT", 5: "UNSUPPORTED",
	6: "INVALID_COMM_ID", 7: "INVALID_COMM_INSTANCE", 8: "INVALID_SERVICE_ID",
	9: "INVALID_TRANSPORT_TYPE", 10: "STALE_CONN", 11: "RDC_NOT_EXIST", 12: "INVALID_GID",
	13: "INVALID_LID", 14: "INVALID_SL", 15: "INVALID_TRAFFIC_CLASS", 16: "INVALID_HOP_LIMIT",
	17: "INVALID_PACKET_RATE", 18: "INVALID_ALT_GID", 19: "INVALID_ALT_LID", 20: "INVALID_ALT_SL",
	21: "INVALID_ALT_TRAFFIC_CLASS", 22: "INVALID_ALT_HOP_LIMIT", 23: "INVALID_ALT_PACKET_RATE",
	24: "PORT_CM_REDIRECT", 25: "PORT_REDIRECT", 26: "INVALID_MTU", 27: "INSUFFICIENT_RESP_RESOURCES",
	28: "CONSUMER_DEFINED", 29: "INVALID_RNR_RETRY", 30: "DUPLICATE_LOCAL_COMM_ID",
	31: "INVALID_CLASS_VERSION", 32: "INVALID_FLOW_LABEL", 33: "INVALID_ALT_FLOW_LABEL",
}

func (r RejectReason) String() string {
	if int(r) < len(rejectNames) && rejectNames[r] != "" {
		return rejectNames[r]
	}
	return fmt.Sprintf("REASON_%d", uint16(r))
}

// MRA is a view over MessageReceiptAcknowledgement attribute data (IBA Vol. 1
// table 107).
//
//	0   Local Communication ID (32)
//	4   Remote Communication ID (32)
//	8   Message MRAed (2) reserved (6)
//	9   Service Timeout (5) reserved (3)
//	10  Private Data (222 bytes)
type MRA []byte

var mraFields = []field{{"LocalCommID", 4}, {"RemoteCommID", 8}, {"MessageMRAed", 9}, {"ServiceTimeout", 10}}

// NewMRA returns a view over b, or an error naming the first fixed field b
// does not hold.
func NewMRA(b []byte) (MRA, error) {
	if err := need("cm_mra", mraFields, b, HeaderLen); err != nil {
		return nil, err
	}
	return MRA(b), nil
}

func (r MRA) LocalCommID() uint32       { return binary.BigEndian.Uint32(r[0:]) }
func (r MRA) RemoteCommID() uint32      { return binary.BigEndian.Uint32(r[4:]) }
func (r MRA) MessageMRAed() uint8       { return bits(r, 8, 0xC0) } // 0 REQ, 1 REP, 2 LAP
func (r MRA) ServiceTimeout() uint8     { return bits(r, 9, 0xF8) }
func (r MRA) PrivateData() []byte       { return private(r, mraPrivate, MRAPrivateLen) }
func (r MRA) SetLocalCommID(v uint32)   { binary.BigEndian.PutUint32(r[0:], v) }
func (r MRA) SetRemoteCommID(v uint32)  { binary.BigEndian.PutUint32(r[4:], v) }
func (r MRA) SetMessageMRAed(v uint8)   { setBits(r, 8, 0xC0, v) }
func (r MRA) SetServiceTimeout(v uint8) { setBits(r, 9, 0xF8, v) }

// RTU is a view over ReadyToUse attribute data (IBA Vol. 1 table 111):
// Local Communication ID (0), Remote Communication ID (4), Private Data (8,
// 224 bytes).
type RTU []byte

var commFields = []field{{"LocalCommID", 4}, {"RemoteCommID", 8}}

// NewRTU returns a view over b, or an error naming the first fixed field b
// does not hold.
func NewRTU(b []byte) (RTU, error) {
	if err := need("cm_rtu", commFields, b, HeaderLen); err != nil {
		return nil, err
	}
	return RTU(b), nil
}

func (r RTU) LocalCommID() uint32      { return binary.BigEndian.Uint32(r[0:]) }
func (r RTU) RemoteCommID() uint32     { return binary.BigEndian.Uint32(r[4:]) }
func (r RTU) PrivateData() []byte      { return private(r, rtuPrivate, RTUPrivateLen) }
func (r RTU) SetLocalCommID(v uint32)  { binary.BigEndian.PutUint32(r[0:], v) }
func (r RTU) SetRemoteCommID(v uint32) { binary.BigEndian.PutUint32(r[4:], v) }

// DREQ is a view over DisconnectRequest attribute data (IBA Vol. 1 table
// 112): Local Communication ID (0), Remote Communication ID (4), Remote
// QPN/EECN (8, 24 bits) and reserved (8 bits), Private Data (12, 220 bytes).
type DREQ []byte

var dreqFields = []field{{"LocalCommID", 4}, {"RemoteCommID", 8}, {"RemoteQPN", 11}}

// NewDREQ returns a view over b, or an error naming the first fixed field b
// does not hold.
func NewDREQ(b []byte) (DREQ, error) {
	if err := need("cm_dreq", dreqFields, b, HeaderLen); err != nil {
		return nil, err
	}
	return DREQ(b), nil
}

func (r DREQ) LocalCommID() uint32      { return binary.BigEndian.Uint32(r[0:]) }
func (r DREQ) RemoteCommID() uint32     { return binary.BigEndian.Uint32(r[4:]) }
func (r DREQ) RemoteQPN() uint32        { return u24(r, 8) } // QPN (or EECN) at the receiver
func (r DREQ) PrivateData() []byte      { return private(r, dreqPrivate, DREQPrivateLen) }
func (r DREQ) SetLocalCommID(v uint32)  { binary.BigEndian.PutUint32(r[0:], v) }
func (r DREQ) SetRemoteCommID(v uint32) { binary.BigEndian.PutUint32(r[4:], v) }
func (r DREQ) SetRemoteQPN(v uint32)    { putU24(r, 8, v) }

// DREP is a view over DisconnectReply attribute data (IBA Vol. 1 table 113):
// Local Communication ID (0), Remote Communication ID (4), Private Data (8,
// 224 bytes).
type DREP []byte

// NewDREP returns a view over b, or an error naming the first fixed field b
// does not hold.
func NewDREP(b []byte) (DREP, error) {
	if err := need("cm_drep", commFields, b, HeaderLen); err != nil {
		return nil, err
	}
	return DREP(b), nil
}

func (r DREP) LocalCommID() uint32      { return binary.BigEndian.Uint32(r[0:]) }
func (r DREP) RemoteCommID() uint32     { return binary.BigEndian.Uint32(r[4:]) }
func (r DREP) PrivateData() []byte      { return private(r, drepPrivate, DREPPrivateLen) }
func (r DREP) SetLocalCommID(v uint32)  { binary.BigEndian.PutUint32(r[0:], v) }
func (r DREP) SetRemoteCommID(v uint32) { binary.BigEndian.PutUint32(r[4:], v) }
