package dpicore

import "fmt"

// Status codes, as the C ABI returns them (dpi/rocekit.h names them
// ROCEKIT_OK, ROCEKIT_EMPTY, ROCEKIT_ERR_*).
const (
	OK          = 0  // done
	Empty       = 1  // nothing to return: no frame to send (Peer.Tx), no completion (Peer.Poll)
	ErrArg      = -1 // an argument is invalid: a null pointer, a negative length, a value out of range
	ErrFrame    = -2 // a frame is too short or does not decode as a RoCE frame
	ErrHandle   = -3 // no object of the right kind has this handle
	ErrSpace    = -4 // the caller's buffer is too small; nothing was consumed
	ErrState    = -5 // refused in the current state (e.g. an option set after traffic began)
	ErrInternal = -6 // a defect in rocekit, caught at the boundary; the message says where
)

// Error is a failure with its status code.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

func errf(code int, format string, args ...any) *Error {
	return &Error{Code: code, Msg: fmt.Sprintf(format, args...)}
}

// Code returns the status code of err: OK for nil, the code of an *Error,
// else ErrInternal.
func Code(err error) int {
	if err == nil {
		return OK
	}
	if e, ok := err.(*Error); ok {
		return e.Code
	}
	return ErrInternal
}

// Handles maps int32 handles to objects (peers, scoreboards). Handles count
// from 1 and are never reused, so a stale handle is always unknown.
type Handles struct {
	next int32
	objs map[int32]any
}

// Add stores v and returns its handle.
func (h *Handles) Add(v any) (int32, error) {
	if h.objs == nil {
		h.objs = map[int32]any{}
	}
	if h.next == 1<<31-1 {
		return 0, errf(ErrState, "no handles left (2^31-1 objects made)")
	}
	h.next++
	h.objs[h.next] = v
	return h.next, nil
}

// Free forgets handle id; it fails for an unknown handle.
func (h *Handles) Free(id int32) error {
	if _, ok := h.objs[id]; !ok {
		return errf(ErrHandle, "handle %d: no such object (never made, or freed)", id)
	}
	delete(h.objs, id)
	return nil
}

// Peer returns the peer with handle id.
func (h *Handles) Peer(id int32) (*Peer, error) {
	p, ok := h.objs[id].(*Peer)
	if !ok {
		return nil, errf(ErrHandle, "handle %d: %s", id, h.what(id, "peer"))
	}
	return p, nil
}

// Scoreboard returns the scoreboard with handle id.
func (h *Handles) Scoreboard(id int32) (*Scoreboard, error) {
	s, ok := h.objs[id].(*Scoreboard)
	if !ok {
		return nil, errf(ErrHandle, "handle %d: %s", id, h.what(id, "scoreboard"))
	}
	return s, nil
}

func (h *Handles) what(id int32, want string) string {
	switch h.objs[id].(type) {
	case nil:
		return "no such object (never made, or freed)"
	case *Peer:
		return "is a peer, not a " + want
	case *Scoreboard:
		return "is a scoreboard, not a " + want
	}
	return "not a " + want
}
