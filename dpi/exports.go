package main

/*
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/internal/dpicore"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// Build flags of rocekit_build (ROCEKIT_F_* in rocekit.h).
const (
	flagAckReq  = 1
	flagSE      = 2
	flagReverse = 4
	flagIPv6    = 8
	flagRoCEv1  = 16
)

// State shared by every call; one simulator thread calls at a time.
var (
	handles dpicore.Handles
	parser  dpicore.Parser
	builder dpicore.Builder
	fields  dpicore.Fields
	bfields dpicore.BuildFields
	lastErr = "no error"
	errStr  *C.char // C copy of lastErr for rocekit_error_string
	textStr *C.char // C copy of the last rocekit_sb_finding_text
)

// fail records err as the last error and returns its status.
func fail(err error) C.int {
	lastErr = err.Error()
	return C.int(dpicore.Code(err))
}

func failf(code int, format string, args ...any) C.int {
	return fail(&dpicore.Error{Code: code, Msg: fmt.Sprintf(format, args...)})
}

// status turns a Go error into a status, recording its message.
func status(err error) C.int {
	if err == nil {
		return 0
	}
	return fail(err)
}

// guard turns a panic into ROCEKIT_ERR_INTERNAL; every export defers it.
func guard(st *C.int, fn string) {
	if r := recover(); r != nil {
		buf := make([]byte, 4096)
		buf = buf[:runtime.Stack(buf, false)]
		*st = failf(dpicore.ErrInternal, "%s: internal error (a rocekit defect, please report it): %v\n%s", fn, r, buf)
	}
}

// in views n bytes of C memory at p as a Go slice (nothing is copied; the
// slice is not kept after the call). A null p is allowed only for n == 0.
func in(what string, p *C.uint8_t, n C.int32_t) ([]byte, C.int) {
	switch {
	case n < 0:
		return nil, failf(dpicore.ErrArg, "%s: negative length %d", what, int32(n))
	case p == nil && n > 0:
		return nil, failf(dpicore.ErrArg, "%s: null pointer with length %d", what, int32(n))
	case n == 0:
		return nil, 0
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), int(n)), 0
}

func u32(p *C.uint32_t, v uint32) {
	if p != nil {
		*p = C.uint32_t(v)
	}
}

func b32(p *C.uint32_t, v bool) {
	if v {
		u32(p, 1)
	} else {
		u32(p, 0)
	}
}

// cstring replaces *p with a C copy of s.
func cstring(p **C.char, s string) *C.char {
	if *p != nil {
		C.free(unsafe.Pointer(*p))
	}
	*p = C.CString(s)
	return *p
}

// copyText copies s into buf (len bytes), NUL-terminated, truncated if
// need be.
func copyText(s string, buf *C.char, n C.int32_t) {
	if buf == nil || n <= 0 {
		return
	}
	d := unsafe.Slice((*byte)(unsafe.Pointer(buf)), int(n))
	k := copy(d[:n-1], s)
	d[k] = 0
}

//export rocekit_last_error
func rocekit_last_error(buf *C.char, n C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_last_error")
	if buf == nil || n <= 0 {
		return failf(dpicore.ErrArg, "rocekit_last_error: null buffer or length %d <= 0", int32(n))
	}
	copyText(lastErr, buf, n)
	return 0
}

//export rocekit_error_string
func rocekit_error_string() *C.char {
	defer func() { _ = recover() }()
	return cstring(&errStr, lastErr)
}

//export rocekit_parse
func rocekit_parse(frame *C.uint8_t, n C.int32_t, op, destQP, psn, ackReq, syndrome, msn *C.uint32_t,
	va *C.uint64_t, rkey, dmaLen, payloadLen, icrcOK *C.uint32_t) (st C.int) {
	defer guard(&st, "rocekit_parse")
	if frame == nil {
		return failf(dpicore.ErrArg, "rocekit_parse: null frame")
	}
	b, st := in("rocekit_parse: frame", frame, n)
	if st != 0 {
		return st
	}
	f := &fields
	if err := parser.Parse(b, f); err != nil {
		return fail(err)
	}
	u32(op, uint32(f.Opcode))
	u32(destQP, f.DestQP)
	u32(psn, f.PSN)
	b32(ackReq, f.AckReq)
	u32(syndrome, uint32(f.Syndrome))
	u32(msn, f.MSN)
	if va != nil {
		*va = C.uint64_t(f.VA)
	}
	u32(rkey, f.RKey)
	u32(dmaLen, f.DMALen)
	u32(payloadLen, uint32(f.PayloadLen))
	b32(icrcOK, f.ICRCOK)
	return 0
}

//export rocekit_build
func rocekit_build(op, destQP, psn, flags, syndrome, msn C.uint32_t, va C.uint64_t, rkey, dmaLen, imm C.uint32_t,
	payload *C.uint8_t, payloadLen C.int32_t, icrcXor C.uint32_t, buf *C.uint8_t, capacity C.int32_t, n *C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_build")
	switch {
	case buf == nil || n == nil:
		return failf(dpicore.ErrArg, "rocekit_build: null buf or len")
	case op > 255:
		return failf(dpicore.ErrArg, "rocekit_build: opcode %d is not a byte", uint32(op))
	case syndrome > 255:
		return failf(dpicore.ErrArg, "rocekit_build: syndrome %d is not a byte", uint32(syndrome))
	case flags&^(flagAckReq|flagSE|flagReverse|flagIPv6|flagRoCEv1) != 0 || flags&flagIPv6 != 0 && flags&flagRoCEv1 != 0:
		return failf(dpicore.ErrArg, "rocekit_build: flags 0x%x: unknown bits, or both IPv6 and RoCEv1", uint32(flags))
	}
	pl, st := in("rocekit_build: payload", payload, payloadLen)
	if st != 0 {
		return st
	}
	out, st := in("rocekit_build: buf", buf, capacity)
	if st != 0 {
		return st
	}
	b := &bfields
	*b = dpicore.BuildFields{Encap: packet.RoCEv2IPv4, Reverse: flags&flagReverse != 0, Opcode: opcode.Opcode(op),
		DestQP: uint32(destQP), PSN: uint32(psn), AckReq: flags&flagAckReq != 0, SE: flags&flagSE != 0,
		Syndrome: aeth.Syndrome(syndrome), MSN: uint32(msn), VA: uint64(va), RKey: uint32(rkey), DMALen: uint32(dmaLen),
		Imm: uint32(imm), Payload: pl, ICRCXor: uint32(icrcXor)}
	switch {
	case flags&flagIPv6 != 0:
		b.Encap = packet.RoCEv2IPv6
	case flags&flagRoCEv1 != 0:
		b.Encap = packet.RoCEv1
	}
	k, err := builder.Build(b, out)
	b.Payload = nil
	if err != nil {
		return fail(err)
	}
	*n = C.int32_t(k)
	return 0
}

//export rocekit_peer_new
func rocekit_peer_new(qpn, destQPN, sqPSN, rqPSN, mtu C.uint32_t, mrAddr C.uint64_t, mrRKey, mrLen C.uint32_t, h *C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_peer_new")
	if h == nil {
		return failf(dpicore.ErrArg, "rocekit_peer_new: null handle pointer")
	}
	p, err := dpicore.NewPeer(dpicore.PeerConfig{QPN: uint32(qpn), DestQPN: uint32(destQPN), SQPSN: uint32(sqPSN),
		RQPSN: uint32(rqPSN), MTU: int(mtu), MRAddr: uint64(mrAddr), MRRKey: uint32(mrRKey), MRLen: int(mrLen)})
	if err != nil {
		return fail(err)
	}
	id, err := handles.Add(p)
	if err != nil {
		return fail(err)
	}
	*h = C.int32_t(id)
	return 0
}

//export rocekit_free
func rocekit_free(h C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_free")
	return status(handles.Free(int32(h)))
}

func peer(h C.int32_t) (*dpicore.Peer, C.int) {
	p, err := handles.Peer(int32(h))
	if err != nil {
		return nil, fail(err)
	}
	return p, 0
}

//export rocekit_peer_option
func rocekit_peer_option(h C.int32_t, name *C.char, v C.int64_t) (st C.int) {
	defer guard(&st, "rocekit_peer_option")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	if name == nil {
		return failf(dpicore.ErrArg, "rocekit_peer_option: null name")
	}
	return status(p.SetOption(C.GoString(name), int64(v)))
}

//export rocekit_peer_fault
func rocekit_peer_fault(h C.int32_t, spec *C.char) (st C.int) {
	defer guard(&st, "rocekit_peer_fault")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	if spec == nil {
		return failf(dpicore.ErrArg, "rocekit_peer_fault: null spec")
	}
	return status(p.AddFault(C.GoString(spec)))
}

//export rocekit_peer_rx
func rocekit_peer_rx(h C.int32_t, frame *C.uint8_t, n C.int32_t, t C.int64_t) (st C.int) {
	defer guard(&st, "rocekit_peer_rx")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	if frame == nil {
		return failf(dpicore.ErrArg, "rocekit_peer_rx: null frame")
	}
	b, st := in("rocekit_peer_rx: frame", frame, n)
	if st != 0 {
		return st
	}
	return status(p.Rx(b, int64(t)))
}

//export rocekit_peer_tick
func rocekit_peer_tick(h C.int32_t, t C.int64_t) (st C.int) {
	defer guard(&st, "rocekit_peer_tick")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	return status(p.Tick(int64(t)))
}

//export rocekit_peer_tx
func rocekit_peer_tx(h C.int32_t, buf *C.uint8_t, capacity C.int32_t, n *C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_peer_tx")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	if buf == nil || n == nil {
		return failf(dpicore.ErrArg, "rocekit_peer_tx: null buf or len")
	}
	out, st := in("rocekit_peer_tx: buf", buf, capacity)
	if st != 0 {
		return st
	}
	k, err := p.Tx(out)
	if dpicore.Code(err) == dpicore.Empty {
		*n = 0
		return dpicore.Empty
	}
	if err != nil {
		return fail(err)
	}
	*n = C.int32_t(k)
	return 0
}

//export rocekit_peer_next_wake
func rocekit_peer_next_wake(h C.int32_t, t *C.int64_t) (st C.int) {
	defer guard(&st, "rocekit_peer_next_wake")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	if t == nil {
		return failf(dpicore.ErrArg, "rocekit_peer_next_wake: null time pointer")
	}
	w, ok := p.NextWake()
	if !ok {
		return dpicore.Empty
	}
	*t = C.int64_t(w)
	return 0
}

//export rocekit_peer_poll
func rocekit_peer_poll(h C.int32_t, wrID *C.uint64_t, stat, op, byteLen *C.uint32_t) (st C.int) {
	defer guard(&st, "rocekit_peer_poll")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	var c rc.Completion
	if !p.Poll(&c) {
		return dpicore.Empty
	}
	if wrID != nil {
		*wrID = C.uint64_t(c.WRID)
	}
	u32(stat, uint32(c.Status))
	u32(op, uint32(c.Opcode))
	u32(byteLen, c.ByteLen)
	return 0
}

//export rocekit_peer_post_write
func rocekit_peer_post_write(h C.int32_t, id, local C.uint64_t, n C.uint32_t, remote C.uint64_t, rkey C.uint32_t) (st C.int) {
	defer guard(&st, "rocekit_peer_post_write")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	return status(p.PostWrite(uint64(id), uint64(local), uint32(n), uint64(remote), uint32(rkey)))
}

//export rocekit_peer_post_read
func rocekit_peer_post_read(h C.int32_t, id, local C.uint64_t, n C.uint32_t, remote C.uint64_t, rkey C.uint32_t) (st C.int) {
	defer guard(&st, "rocekit_peer_post_read")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	return status(p.PostRead(uint64(id), uint64(local), uint32(n), uint64(remote), uint32(rkey)))
}

//export rocekit_peer_post_send
func rocekit_peer_post_send(h C.int32_t, id, local C.uint64_t, n C.uint32_t) (st C.int) {
	defer guard(&st, "rocekit_peer_post_send")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	return status(p.PostSend(uint64(id), uint64(local), uint32(n)))
}

//export rocekit_peer_mem_write
func rocekit_peer_mem_write(h C.int32_t, addr C.uint64_t, data *C.uint8_t, n C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_peer_mem_write")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	b, st := in("rocekit_peer_mem_write: data", data, n)
	if st != 0 {
		return st
	}
	return status(p.MemWrite(uint64(addr), b))
}

//export rocekit_peer_mem_read
func rocekit_peer_mem_read(h C.int32_t, addr C.uint64_t, buf *C.uint8_t, n C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_peer_mem_read")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	b, st := in("rocekit_peer_mem_read: buf", buf, n)
	if st != 0 {
		return st
	}
	return status(p.MemRead(uint64(addr), b))
}

//export rocekit_peer_stats
func rocekit_peer_stats(h C.int32_t, sent, received, rejected, faults, retransmitted *C.uint64_t) (st C.int) {
	defer guard(&st, "rocekit_peer_stats")
	p, st := peer(h)
	if st != 0 {
		return st
	}
	s := p.Stats()
	for _, v := range []struct {
		p *C.uint64_t
		v uint64
	}{{sent, s.Sent}, {received, s.Received}, {rejected, s.Rejected}, {faults, s.FaultsTotal}, {retransmitted, s.QP.Retransmitted}} {
		if v.p != nil {
			*v.p = C.uint64_t(v.v)
		}
	}
	return 0
}

//export rocekit_sb_new
func rocekit_sb_new(pmtu C.uint32_t, h *C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_sb_new")
	if h == nil {
		return failf(dpicore.ErrArg, "rocekit_sb_new: null handle pointer")
	}
	s, err := dpicore.NewScoreboard(int(pmtu))
	if err != nil {
		return fail(err)
	}
	id, err := handles.Add(s)
	if err != nil {
		return fail(err)
	}
	*h = C.int32_t(id)
	return 0
}

func scoreboard(h C.int32_t) (*dpicore.Scoreboard, C.int) {
	s, err := handles.Scoreboard(int32(h))
	if err != nil {
		return nil, fail(err)
	}
	return s, 0
}

//export rocekit_sb_feed
func rocekit_sb_feed(h C.int32_t, frame *C.uint8_t, n C.int32_t, t C.int64_t, dir C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_sb_feed")
	s, st := scoreboard(h)
	if st != 0 {
		return st
	}
	if frame == nil {
		return failf(dpicore.ErrArg, "rocekit_sb_feed: null frame")
	}
	b, st := in("rocekit_sb_feed: frame", frame, n)
	if st != 0 {
		return st
	}
	_, err := s.Feed(b, int64(t), int(dir))
	return status(err)
}

//export rocekit_sb_findings
func rocekit_sb_findings(h C.int32_t, count *C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_sb_findings")
	s, st := scoreboard(h)
	if st != 0 {
		return st
	}
	if count == nil {
		return failf(dpicore.ErrArg, "rocekit_sb_findings: null count pointer")
	}
	*count = C.int32_t(s.Count())
	return 0
}

//export rocekit_sb_finish
func rocekit_sb_finish(h C.int32_t, count *C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_sb_finish")
	s, st := scoreboard(h)
	if st != 0 {
		return st
	}
	n := s.Finish()
	if count != nil {
		*count = C.int32_t(n)
	}
	return 0
}

//export rocekit_sb_finding
func rocekit_sb_finding(h C.int32_t, i C.int32_t, frame, dir *C.int32_t, buf *C.char, n C.int32_t) (st C.int) {
	defer guard(&st, "rocekit_sb_finding")
	s, st := scoreboard(h)
	if st != 0 {
		return st
	}
	f, d, err := s.Finding(int(i))
	if err != nil {
		return fail(err)
	}
	if frame != nil {
		*frame = C.int32_t(f.Frame)
	}
	if dir != nil {
		*dir = C.int32_t(d)
	}
	if buf != nil && n > 0 {
		copyText(f.String(), buf, n)
	}
	return 0
}

//export rocekit_sb_finding_text
func rocekit_sb_finding_text(h C.int32_t, i C.int32_t) (p *C.char) {
	defer func() {
		if r := recover(); r != nil {
			p = cstring(&textStr, "")
		}
	}()
	s, err := handles.Scoreboard(int32(h))
	if err != nil {
		fail(err)
		return cstring(&textStr, "")
	}
	f, _, err := s.Finding(int(i))
	if err != nil {
		fail(err)
		return cstring(&textStr, "")
	}
	return cstring(&textStr, f.String())
}
