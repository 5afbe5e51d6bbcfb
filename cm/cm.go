// Package cm decodes InfiniBand Communication Management MADs (IBA Vol. 1
// ch. 12): the 24-byte common MAD header and the CM messages REQ, MRA, REJ,
// REP, RTU, DREQ and DREP. CM MADs travel as UD SEND Only payloads to QP1
// (the GSI QP, DETH Q_Key 0x80010000); rdma_cm uses them to connect RC and UC
// QPs over InfiniBand and RoCE alike.
//
// Every type here is a zero-copy view over the caller's bytes: MAD over the
// whole 256-byte MAD, and one view type per message over the attribute data
// (the 232 bytes after the MAD header). Getters read the field in place;
// setters write it, for building test MADs. Constructors check that every
// fixed field of the message is present and, when one is not, return a
// *rocekit.HeaderError naming the first missing field (private data may be
// short: PrivateData returns what is there).
//
// Field layouts (byte offsets counted from the start of the attribute data,
// bit masks within the byte) follow IBA Vol. 1 §12.6 tables 106-113 as the
// Linux kernel's include/rdma/ibta_vol1_c12.h (CM_FIELD* macros) and
// Wireshark's packet-infiniband.c CM parsing (field masks in tshark -G fields)
// state them; the tests compare every decoded field with tshark's.
package cm

import (
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/rocekit/rocekit"
	"github.com/rocekit/rocekit/deth"
	"github.com/rocekit/rocekit/internal/be"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
)

// Sizes.
const (
	MADLen     = 256 // a MAD is always 256 bytes
	HeaderLen  = 24  // common MAD header
	DataLen    = MADLen - HeaderLen
	MgmtClass  = 0x07 // Communication Management class
	GSIQP      = 1    // CM MADs go to QP1
	GSIQKey    = deth.GSIQKey
	BaseVer    = 1 // common MAD header BaseVersion
	ClassVer   = 2 // CM class version (IBA 1.2 and later)
	headerName = "mad"
)

// ErrNotCM is returned by FromPacket for a packet that is not a CM MAD (not
// a UD SEND Only to QP1 with the GSI Q_Key, or another management class).
var ErrNotCM = errors.New("not a CM MAD")

// AttrID is the MAD AttributeID, which names the CM message.
type AttrID uint16

// CM attribute IDs (IBA Vol. 1 §12.6; Linux ib_cm.h CM_*_ATTR_ID).
const (
	AttrREQ     AttrID = 0x0010 // ConnectRequest
	AttrMRA     AttrID = 0x0011 // MessageReceiptAcknowledgement
	AttrREJ     AttrID = 0x0012 // ConnectReject
	AttrREP     AttrID = 0x0013 // ConnectReply
	AttrRTU     AttrID = 0x0014 // ReadyToUse
	AttrDREQ    AttrID = 0x0015 // DisconnectRequest
	AttrDREP    AttrID = 0x0016 // DisconnectReply
	AttrSIDRREQ AttrID = 0x0017 // ServiceIDResolutionRequest (not decoded)
	AttrSIDRREP AttrID = 0x0018 // ServiceIDResolutionResponse (not decoded)
	AttrLAP     AttrID = 0x0019 // LoadAlternatePath (not decoded)
	AttrAPR     AttrID = 0x001A // AlternatePathResponse (not decoded)
)

var attrNames = map[AttrID]string{
	AttrREQ: "REQ", AttrMRA: "MRA", AttrREJ: "REJ", AttrREP: "REP", AttrRTU: "RTU",
	AttrDREQ: "DREQ", AttrDREP: "DREP", AttrSIDRREQ: "SIDR_REQ", AttrSIDRREP: "SIDR_REP",
	AttrLAP: "LAP", AttrAPR: "APR",
}

func (a AttrID) String() string {
	if n, ok := attrNames[a]; ok {
		return n
	}
	return fmt.Sprintf("ATTR_0x%04X", uint16(a))
}

// MAD is a view over a management datagram: the 24-byte common header
// followed by the attribute data.
//
//	byte 0      BaseVersion
//	byte 1      MgmtClass
//	byte 2      ClassVersion
//	byte 3      R (bit 7) | Method (bits 6-0)
//	bytes 4-5   Status
//	bytes 6-7   ClassSpecific
//	bytes 8-15  TransactionID
//	bytes 16-17 AttributeID
//	bytes 18-19 reserved
//	bytes 20-23 AttributeModifier
//	bytes 24-   attribute data (232 bytes in a full MAD)
type MAD []byte

// headerFields are the common header's fields, in order, with where each
// ends: the first one past the bytes present is named in a truncation error.
var headerFields = []field{
	{"BaseVersion", 1}, {"MgmtClass", 2}, {"ClassVersion", 3}, {"Method", 4},
	{"Status", 6}, {"ClassSpecific", 8}, {"TransactionID", 16}, {"AttributeID", 18},
	{"Reserved", 20}, {"AttributeModifier", 24},
}

// New returns a view over b (at most MADLen bytes of it), or a truncation
// error naming the first header field b does not hold.
func New(b []byte) (MAD, error) {
	if err := need(headerName, headerFields, b, 0); err != nil {
		return nil, err
	}
	if len(b) > MADLen {
		b = b[:MADLen]
	}
	return MAD(b[:len(b):len(b)]), nil
}

// FromPacket returns the MAD a decoded transport packet carries when it is a
// CM MAD: UD SEND Only (with or without immediate) to QP1, DETH Q_Key
// 0x80010000, MgmtClass 0x07. Other packets give ErrNotCM; a CM MAD too short
// for its header gives a truncation error. It allocates nothing for ErrNotCM.
func FromPacket(p *packet.Packet) (MAD, error) {
	if p.BTH == nil || p.DETH == nil {
		return nil, ErrNotCM
	}
	op := p.BTH.Opcode()
	if (op != opcode.UDSendOnly && op != opcode.UDSendOnlyWithImmediate) ||
		p.BTH.DestQP() != GSIQP || p.DETH.QKey() != GSIQKey {
		return nil, ErrNotCM
	}
	if len(p.Payload) < 2 || p.Payload[1] != MgmtClass {
		return nil, ErrNotCM
	}
	return New(p.Payload)
}

// Header getters.

func (m MAD) BaseVersion() uint8        { return m[0] }
func (m MAD) MgmtClass() uint8          { return m[1] }
func (m MAD) ClassVersion() uint8       { return m[2] }
func (m MAD) Response() bool            { return m[3]&0x80 != 0 } // the R bit
func (m MAD) Method() uint8             { return m[3] & 0x7F }
func (m MAD) Status() uint16            { return binary.BigEndian.Uint16(m[4:]) }
func (m MAD) ClassSpecific() uint16     { return binary.BigEndian.Uint16(m[6:]) }
func (m MAD) TransactionID() uint64     { return binary.BigEndian.Uint64(m[8:]) }
func (m MAD) AttributeID() AttrID       { return AttrID(binary.BigEndian.Uint16(m[16:])) }
func (m MAD) Reserved() uint16          { return binary.BigEndian.Uint16(m[18:]) }
func (m MAD) AttributeModifier() uint32 { return binary.BigEndian.Uint32(m[20:]) }

// Data returns the attribute data (everything after the header).
func (m MAD) Data() []byte { return m[HeaderLen:] }

// Header setters.

func (m MAD) SetBaseVersion(v uint8)        { m[0] = v }
func (m MAD) SetMgmtClass(v uint8)          { m[1] = v }
func (m MAD) SetClassVersion(v uint8)       { m[2] = v }
func (m MAD) SetResponse(v bool)            { be.SetFlag(&m[3], 0x80, v) }
func (m MAD) SetMethod(v uint8)             { m[3] = m[3]&0x80 | v&0x7F }
func (m MAD) SetStatus(v uint16)            { binary.BigEndian.PutUint16(m[4:], v) }
func (m MAD) SetClassSpecific(v uint16)     { binary.BigEndian.PutUint16(m[6:], v) }
func (m MAD) SetTransactionID(v uint64)     { binary.BigEndian.PutUint64(m[8:], v) }
func (m MAD) SetAttributeID(v AttrID)       { binary.BigEndian.PutUint16(m[16:], uint16(v)) }
func (m MAD) SetAttributeModifier(v uint32) { binary.BigEndian.PutUint32(m[20:], v) }

// Method values used by CM (IBA 13.4.5): CM messages are sent with Send.
const (
	MethodGet     = 0x01
	MethodSet     = 0x02
	MethodSend    = 0x03
	MethodGetResp = 0x81
)

// Validate checks what a CM receiver requires of the header: BaseVersion 1,
// MgmtClass 0x07, ClassVersion 2.
func (m MAD) Validate() error {
	switch {
	case m.BaseVersion() != BaseVer:
		return rocekit.Invalid(headerName, "BaseVersion", "%d, want %d", m.BaseVersion(), BaseVer)
	case m.MgmtClass() != MgmtClass:
		return rocekit.Invalid(headerName, "MgmtClass", "0x%02x, want 0x%02x (CM)", m.MgmtClass(), MgmtClass)
	case m.ClassVersion() != ClassVer:
		return rocekit.Invalid(headerName, "ClassVersion", "%d, want %d", m.ClassVersion(), ClassVer)
	}
	return nil
}

// LocalCommID returns bytes 0-3 of the attribute data: the sender's Local
// Communication ID in every connection message (REQ, MRA, REJ, REP, RTU,
// DREQ, DREP). It returns 0 when the data is shorter.
func (m MAD) LocalCommID() uint32 {
	d := m.Data()
	if len(d) < 4 {
		return 0
	}
	return binary.BigEndian.Uint32(d)
}

// RemoteCommID returns bytes 4-7 of the attribute data: the Remote
// Communication ID in MRA, REJ, REP, RTU, DREQ and DREP. In a REQ these
// bytes are reserved (0). It returns 0 when the data is shorter.
func (m MAD) RemoteCommID() uint32 {
	d := m.Data()
	if len(d) < 8 {
		return 0
	}
	return binary.BigEndian.Uint32(d[4:])
}

// REQ returns the attribute data as a ConnectRequest, or an error if the
// AttributeID is not REQ or a fixed field is missing.
func (m MAD) REQ() (REQ, error) {
	if err := m.want(AttrREQ); err != nil {
		return nil, err
	}
	return NewREQ(m.Data())
}

// REP returns the attribute data as a ConnectReply.
func (m MAD) REP() (REP, error) {
	if err := m.want(AttrREP); err != nil {
		return nil, err
	}
	return NewREP(m.Data())
}

// REJ returns the attribute data as a ConnectReject.
func (m MAD) REJ() (REJ, error) {
	if err := m.want(AttrREJ); err != nil {
		return nil, err
	}
	return NewREJ(m.Data())
}

// MRA returns the attribute data as a MessageReceiptAcknowledgement.
func (m MAD) MRA() (MRA, error) {
	if err := m.want(AttrMRA); err != nil {
		return nil, err
	}
	return NewMRA(m.Data())
}

// RTU returns the attribute data as a ReadyToUse.
func (m MAD) RTU() (RTU, error) {
	if err := m.want(AttrRTU); err != nil {
		return nil, err
	}
	return NewRTU(m.Data())
}

// DREQ returns the attribute data as a DisconnectRequest.
func (m MAD) DREQ() (DREQ, error) {
	if err := m.want(AttrDREQ); err != nil {
		return nil, err
	}
	return NewDREQ(m.Data())
}

// DREP returns the attribute data as a DisconnectReply.
func (m MAD) DREP() (DREP, error) {
	if err := m.want(AttrDREP); err != nil {
		return nil, err
	}
	return NewDREP(m.Data())
}

func (m MAD) want(a AttrID) error {
	if got := m.AttributeID(); got != a {
		return rocekit.Invalid(headerName, "AttributeID", "0x%04x (%s), want 0x%04x (%s)", uint16(got), got, uint16(a), a)
	}
	return nil
}

// String summarises the header: "CM REP method=0x03 tid=0x0000000252b5cf34".
func (m MAD) String() string {
	return fmt.Sprintf("CM %s method=0x%02x tid=0x%016x", m.AttributeID(), m.Method(), m.TransactionID())
}

// field is a named field and the offset just past it.
type field struct {
	name string
	end  int
}

// need checks that b holds every field of fields (ends counted from base);
// the error names the first field that does not fit.
func need(header string, fields []field, b []byte, base int) error {
	for _, f := range fields {
		if f.end > len(b) {
			return &rocekit.HeaderError{Header: header, Field: f.name, Err: rocekit.ErrTruncated,
				Need: f.end, Have: len(b), Detail: detail(f, base)}
		}
	}
	return nil
}

func detail(f field, base int) string {
	if base == 0 {
		return fmt.Sprintf("%s ends at MAD byte %d", f.name, f.end)
	}
	return fmt.Sprintf("%s ends at attribute data byte %d (MAD byte %d)", f.name, f.end, base+f.end)
}
