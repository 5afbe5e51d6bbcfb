package rc

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Access is a set of memory-region (and QP) access rights with the
// ibv_access_flags numbers.
type Access uint16

// Access rights.
const (
	LocalWrite      Access = 1
	RemoteWrite     Access = 2
	RemoteRead      Access = 4
	RemoteAtomic    Access = 8
	FlushGlobal     Access = 1 << 8
	FlushPersistent Access = 1 << 9

	// AccessAll is every right this package checks.
	AccessAll = LocalWrite | RemoteWrite | RemoteRead | RemoteAtomic | FlushGlobal | FlushPersistent
)

// MR is a registered memory region: Buf holds the bytes of the addresses
// [Addr, Addr+len(Buf)). Remote operations name it by RKey.
//
// Atomics read and write the 8 target bytes as a little-endian uint64, the
// byte order of the x86 and ARM hosts RoCE NICs serve; the original value
// the requester receives is stored into its local buffer the same way.
type MR struct {
	Addr   uint64
	RKey   uint32
	Access Access
	Buf    []byte

	invalid bool // invalidated by a SEND with Invalidate
}

// Valid reports whether the region can still be used remotely (it has not
// been invalidated).
func (m *MR) Valid() bool { return !m.invalid }

// Slice returns the n bytes at address addr, for building work requests.
// It panics if they are outside the region.
func (m *MR) Slice(addr uint64, n int) []byte {
	off := addr - m.Addr
	if addr < m.Addr || off > uint64(len(m.Buf)) || uint64(n) > uint64(len(m.Buf))-off {
		panic(fmt.Sprintf("rc: MR.Slice(0x%x, %d) outside [0x%x, 0x%x)", addr, n, m.Addr, m.Addr+uint64(len(m.Buf))))
	}
	return m.Buf[off : off+uint64(n) : off+uint64(n)]
}

// span returns the bytes [va, va+n) if they lie inside the region.
func (m *MR) span(va uint64, n uint64) ([]byte, bool) {
	if va < m.Addr {
		return nil, false
	}
	off := va - m.Addr
	if off > uint64(len(m.Buf)) || n > uint64(len(m.Buf))-off {
		return nil, false
	}
	return m.Buf[off : off+n], true
}

// Memory is a protection domain: the memory regions remote operations may
// reach, by R_Key. QPs may share one Memory. The zero Memory is empty and
// ready to use, so it can be embedded next to the state that uses it.
type Memory struct {
	byKey map[uint32]*MR
	gen   uint64 // changes with every Register and Deregister (see responder.check)
}

// NewMemory returns an empty protection domain.
func NewMemory() *Memory { return &Memory{byKey: map[uint32]*MR{}} }

// ErrKeyInUse is returned by Register for an R_Key already registered.
var ErrKeyInUse = errors.New("rc: R_Key already registered")

// Register adds mr. Its R_Key must be new.
func (m *Memory) Register(mr *MR) error {
	if _, ok := m.byKey[mr.RKey]; ok {
		return fmt.Errorf("%w: 0x%x", ErrKeyInUse, mr.RKey)
	}
	if m.byKey == nil {
		m.byKey = map[uint32]*MR{}
	}
	m.byKey[mr.RKey] = mr
	m.gen++
	return nil
}

// Deregister removes the region with R_Key rkey, if any.
func (m *Memory) Deregister(rkey uint32) {
	delete(m.byKey, rkey)
	m.gen++
}

// Lookup returns the region with R_Key rkey, or nil.
func (m *Memory) Lookup(rkey uint32) *MR { return m.byKey[rkey] }

// invalidate marks the region with R_Key rkey invalid; it fails if there is
// no valid region with that key.
func (m *Memory) invalidate(rkey uint32) bool {
	mr := m.byKey[rkey]
	if mr == nil || mr.invalid {
		return false
	}
	mr.invalid = true
	return true
}

// check returns the bytes [va, va+n) of the valid region rkey if it grants
// need; ok is false for an unknown or invalidated key, missing rights or a
// range outside the region (ib-facts.md §5.6 "R_Key / MR / range / access
// violation").
func (m *Memory) check(rkey uint32, va uint64, n uint64, need Access) (*MR, []byte, bool) {
	if m == nil {
		return nil, nil, false
	}
	return m.checkMR(m.byKey[rkey], va, n, need)
}

func (m *Memory) checkMR(mr *MR, va uint64, n uint64, need Access) (*MR, []byte, bool) {
	if mr == nil || mr.invalid || mr.Access&need != need {
		return nil, nil, false
	}
	b, ok := mr.span(va, n)
	return mr, b, ok
}

func loadU64(b []byte) uint64     { return binary.LittleEndian.Uint64(b) }
func storeU64(b []byte, v uint64) { binary.LittleEndian.PutUint64(b, v) }
