package rc_test

import (
	"bytes"
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
	"github.com/rocekit/rocekit/rc/rctest"
	"github.com/rocekit/rocekit/sim"
)

var update = flag.Bool("update", false, "rewrite the golden output of rc/testdata/*.txt")

// A script (rc/testdata/*.txt) is a list of commands, a line "----", and
// the expected trace. Commands:
//
//	connect k=v...           set up QPs a and b (keys below), before anything else
//	post a|b OP k=v...       post a send WR (OP: send send_imm send_inv write write_imm
//	                         read cmpswap fetchadd atomic_write flush)
//	recv a|b size=N [id=N]   post a receive of N bytes
//	drop a->b k=v...         drop matching packets (psn=, op=, count=N|all; default count=1)
//	dup a->b k=v...          duplicate matching packets (same keys)
//	run [until=T]            run until quiet (or time T)
//	expect mem SIDE off=N SIDE off=N size=N   the two ranges hold the same bytes
//	expect recv SIDE id=N SIDE off=N size=N   receive buffer id starts with those bytes
//	expect u64 SIDE off=N value=N             little-endian uint64 in the region
//	expect state SIDE RTS|ERR
//	error SIDE               move the QP to the Error state
//
// connect keys: mtu, apsn, bpsn (each side's first send PSN), timeout,
// retry, rnr (rnr_retry), minrnr, ord, ird, delay, gap, window, rxe (1:
// retry_cnt 7 is infinite), access (a|b QP access: none/all).
//
// Each side has one memory region of 64 KiB: a at 0x10000 with R_Key
// 0x1111, b at 0x20000 with R_Key 0x2222, every access right; a holds
// bytes i*7+1, b bytes i*13+5. Offsets (off, loff, roff) are into these
// regions. WR ids count from 1 per side unless id= is given; every WR is
// signalled.
//
// Trace lines: "@T a->b OPCODE psn=N ..." for every packet sent (with
// "DROPPED" or "DUPLICATED" when the link did so), "@T complete a ...",
// "@T a timeout".

const regionSize = 64 << 10

type scriptSide struct {
	qp     *rc.QP
	mem    *rc.Memory
	mr     *rc.MR
	nextID uint64
	recvs  map[uint64][]byte
}

type rule struct {
	from    rctest.Side
	verdict rctest.Verdict
	psn     int64 // -1: any
	op      string
	count   int // -1: all
}

type script struct {
	t     *testing.T
	net   *rctest.Net
	side  [2]*scriptSide
	rules []*rule
	out   []string
}

func TestScripts(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txt"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			require.NoError(t, err)
			text := string(data)
			cmds, want, _ := strings.Cut(text, "\n----\n")
			s := &script{t: t}
			for i, line := range strings.Split(cmds, "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				if err := s.exec(line); err != nil {
					t.Fatalf("%s:%d: %s: %v", file, i+1, line, err)
				}
			}
			got := strings.Join(s.out, "\n") + "\n"
			if *update {
				require.NoError(t, os.WriteFile(file, []byte(cmds+"\n----\n"+got), 0o644))
				return
			}
			require.Equal(t, want, got, "trace differs; rerun with -update after checking the change")
		})
	}
}

func kv(args []string) map[string]string {
	m := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			v = "1"
		}
		m[k] = v
	}
	return m
}

func num(m map[string]string, k string, def uint64) (uint64, error) {
	v, ok := m[k]
	if !ok {
		return def, nil
	}
	return strconv.ParseUint(v, 0, 64)
}

func parseTime(s string) (sim.Time, error) {
	units := []struct {
		suf string
		u   sim.Time
	}{{"ps", sim.Picosecond}, {"ns", sim.Nanosecond}, {"us", sim.Microsecond}, {"ms", sim.Millisecond}, {"s", sim.Second}}
	for _, u := range units {
		if v, ok := strings.CutSuffix(s, u.suf); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, err
			}
			return sim.Time(f * float64(u.u)), nil
		}
	}
	return 0, fmt.Errorf("time %q needs a unit", s)
}

func parseSide(s string) (rctest.Side, error) {
	switch s {
	case "a":
		return rctest.A, nil
	case "b":
		return rctest.B, nil
	}
	return 0, fmt.Errorf("side %q: want a or b", s)
}

func (s *script) connect(m map[string]string) error {
	var cfg [2]rc.Config
	var err error
	get := func(k string, def uint64) uint64 {
		v, e := num(m, k, def)
		if e != nil && err == nil {
			err = fmt.Errorf("%s: %v", k, e)
		}
		return v
	}
	for i := range cfg {
		c := rc.DefaultConfig()
		c.MTU = int(get("mtu", 1024))
		c.Timeout = uint8(get("timeout", 1))
		c.RetryCnt = uint8(get("retry", 7))
		c.RNRRetry = uint8(get("rnr", 7))
		c.MinRNRTimer = uint8(get("minrnr", 1))
		c.MaxRdAtomic = int(get("ord", 16))
		c.MaxDestRdAtomic = int(get("ird", 16))
		c.Window = uint32(get("window", 0))
		c.RetryCnt7Infinite = get("rxe", 0) == 1
		c.QPN = uint32(0x11 + i)
		c.DestQPN = uint32(0x12 - i)
		cfg[i] = c
	}
	apsn, bpsn := uint32(get("apsn", 100)), uint32(get("bpsn", 500))
	cfg[0].SQPSN, cfg[0].RQPSN = apsn, bpsn
	cfg[1].SQPSN, cfg[1].RQPSN = bpsn, apsn
	if err != nil {
		return err
	}
	for i, name := range []string{"a", "b"} {
		if v, ok := m["access_"+name]; ok && v == "none" {
			cfg[i].Access = 0
		}
	}
	for i := range s.side {
		mem := rc.NewMemory()
		mr := &rc.MR{Addr: uint64(0x10000 * (i + 1)), RKey: uint32(0x1111 * (i + 1)), Access: rc.AccessAll, Buf: make([]byte, regionSize)}
		for j := range mr.Buf {
			if i == 0 {
				mr.Buf[j] = byte(j*7 + 1)
			} else {
				mr.Buf[j] = byte(j*13 + 5)
			}
		}
		if err := mem.Register(mr); err != nil {
			return err
		}
		cfg[i].Memory = mem
		qp, err := rc.New(cfg[i])
		if err != nil {
			return err
		}
		s.side[i] = &scriptSide{qp: qp, mem: mem, mr: mr, nextID: 1, recvs: map[uint64][]byte{}}
	}
	s.net = rctest.New(s.side[0].qp, s.side[1].qp, 1)
	delay, gap := sim.Microsecond, sim.Time(0)
	if v, ok := m["delay"]; ok {
		if delay, err = parseTime(v); err != nil {
			return err
		}
	}
	if v, ok := m["gap"]; ok {
		if gap, err = parseTime(v); err != nil {
			return err
		}
	}
	for i := range s.net.Link {
		s.net.Link[i] = rctest.Link{Delay: delay, Gap: gap}
	}
	s.net.Filter = s.filter
	s.net.Trace = s.trace
	return nil
}

func (s *script) filter(from rctest.Side, f *packet.Fields) rctest.Verdict {
	for _, r := range s.rules {
		if r.count == 0 || r.from != from {
			continue
		}
		if r.psn >= 0 && uint32(r.psn) != f.BTH.PSN {
			continue
		}
		if r.op != "" && !strings.EqualFold(r.op, f.BTH.Opcode.String()) {
			continue
		}
		if r.count > 0 {
			r.count--
		}
		return r.verdict
	}
	return rctest.Deliver
}

func (s *script) trace(e *rctest.Event) {
	at := "@" + e.Time.String()
	switch e.Kind {
	case rctest.Sent:
		line := fmt.Sprintf("%s %s->%s %s", at, e.Side, e.Side.Peer(), describe(e.Packet))
		switch e.Verdict {
		case rctest.Drop:
			line += "  DROPPED"
		case rctest.Duplicate:
			line += "  DUPLICATED"
		}
		s.out = append(s.out, line)
	case rctest.Completed:
		s.out = append(s.out, fmt.Sprintf("%s complete %s %s", at, e.Side, e.Completion))
	case rctest.TimedOut:
		s.out = append(s.out, fmt.Sprintf("%s %s timeout", at, e.Side))
	}
}

// describe prints a packet's fields that matter for RC.
func describe(f *packet.Fields) string {
	op := f.BTH.Opcode
	var b strings.Builder
	fmt.Fprintf(&b, "%s psn=%d", op, f.BTH.PSN)
	if op.HasPayload() {
		fmt.Fprintf(&b, " len=%d", len(f.Payload))
	}
	if f.BTH.PadCnt != 0 {
		fmt.Fprintf(&b, " pad=%d", f.BTH.PadCnt)
	}
	if f.BTH.AckReq {
		b.WriteString(" ackreq")
	}
	if f.BTH.SE {
		b.WriteString(" se")
	}
	info := op.Info()
	if info.Has(opcode.RETH) {
		fmt.Fprintf(&b, " va=0x%x rkey=0x%x dmalen=%d", f.RETH.VA, f.RETH.RKey, f.RETH.DMALen)
	}
	if info.Has(opcode.AtomicETH) {
		fmt.Fprintf(&b, " va=0x%x rkey=0x%x swapadd=0x%x compare=0x%x", f.AtomicETH.VA, f.AtomicETH.RKey, f.AtomicETH.SwapAdd, f.AtomicETH.Compare)
	}
	if info.Has(opcode.ImmDt) {
		fmt.Fprintf(&b, " imm=0x%x", f.ImmDt.Imm)
	}
	if info.Has(opcode.IETH) {
		fmt.Fprintf(&b, " inv=0x%x", f.IETH.RKey)
	}
	if info.Has(opcode.FETH) {
		fmt.Fprintf(&b, " sel=%d plt=%d", f.FETH.SEL, f.FETH.PLT)
	}
	if info.Has(opcode.AETH) {
		syn := f.AETH.Syndrome
		switch syn.Kind() {
		case aeth.ACK:
			if n, lim := syn.Credits(); lim {
				fmt.Fprintf(&b, " aeth=ACK(credits=%d)", n)
			} else {
				b.WriteString(" aeth=ACK")
			}
		case aeth.RNRNAK:
			fmt.Fprintf(&b, " aeth=RNR_NAK(timer=%d)", syn.RNRTimer())
		case aeth.NAK:
			fmt.Fprintf(&b, " aeth=NAK(%s)", syn.NAKCode())
		default:
			fmt.Fprintf(&b, " aeth=0x%02x", uint8(syn))
		}
		fmt.Fprintf(&b, " msn=%d", f.AETH.MSN)
	}
	if info.Has(opcode.AtomicAckETH) {
		fmt.Fprintf(&b, " orig=0x%x", f.AtomicAckETH.OrigRemDt)
	}
	return b.String()
}

var wrOps = map[string]rc.WROpcode{
	"send": rc.WRSend, "send_imm": rc.WRSendWithImm, "send_inv": rc.WRSendWithInv, "write": rc.WRRDMAWrite,
	"write_imm": rc.WRRDMAWriteWithImm, "read": rc.WRRDMARead, "cmpswap": rc.WRAtomicCmpSwap,
	"fetchadd": rc.WRAtomicFetchAdd, "atomic_write": rc.WRAtomicWrite, "flush": rc.WRFlush,
}

func (s *script) exec(line string) error {
	f := strings.Fields(line)
	if f[0] != "connect" && s.net == nil {
		if err := s.connect(nil); err != nil {
			return err
		}
	}
	switch f[0] {
	case "connect":
		return s.connect(kv(f[1:]))
	case "post":
		if len(f) < 3 {
			return fmt.Errorf("post SIDE OP ...")
		}
		sd, err := parseSide(f[1])
		if err != nil {
			return err
		}
		op, ok := wrOps[f[2]]
		if !ok {
			return fmt.Errorf("unknown op %q", f[2])
		}
		return s.post(sd, op, kv(f[3:]))
	case "recv":
		sd, err := parseSide(f[1])
		if err != nil {
			return err
		}
		m := kv(f[2:])
		size, _ := num(m, "size", 4096)
		side := s.side[sd]
		id, _ := num(m, "id", side.nextID)
		side.nextID = max(side.nextID, id+1)
		buf := make([]byte, size)
		side.recvs[id] = buf
		return side.qp.PostRecv(rc.RecvWR{ID: id, Buf: buf})
	case "drop", "dup":
		from, to, ok := strings.Cut(f[1], "->")
		if !ok {
			return fmt.Errorf("want a->b or b->a")
		}
		sd, err := parseSide(from)
		if err != nil {
			return err
		}
		if _, err := parseSide(to); err != nil || to == from {
			return fmt.Errorf("bad direction %q", f[1])
		}
		m := kv(f[2:])
		r := &rule{from: sd, verdict: rctest.Drop, psn: -1, op: m["op"], count: 1}
		if f[0] == "dup" {
			r.verdict = rctest.Duplicate
		}
		if v, ok := m["psn"]; ok {
			p, err := strconv.ParseUint(v, 0, 24)
			if err != nil {
				return err
			}
			r.psn = int64(p)
		}
		if v, ok := m["count"]; ok {
			if v == "all" {
				r.count = -1
			} else if r.count, err = strconv.Atoi(v); err != nil {
				return err
			}
		}
		if _, ok := m["all"]; ok {
			r.count = -1
		}
		s.rules = append(s.rules, r)
		return nil
	case "run":
		until := sim.Second
		if len(f) > 1 {
			m := kv(f[1:])
			var err error
			if until, err = parseTime(m["until"]); err != nil {
				return err
			}
		}
		s.net.Run(until)
		if s.net.Now < until && len(f) > 1 {
			s.net.Now = until
		}
		return nil
	case "error":
		sd, err := parseSide(f[1])
		if err != nil {
			return err
		}
		s.side[sd].qp.SetError()
		s.net.Pump()
		return nil
	case "expect":
		return s.expect(f[1:])
	}
	return fmt.Errorf("unknown command %q", f[0])
}

func (s *script) post(sd rctest.Side, op rc.WROpcode, m map[string]string) error {
	side, peer := s.side[sd], s.side[sd.Peer()]
	g := func(k string, def uint64) uint64 { v, _ := num(m, k, def); return v }
	size := g("size", 0)
	loff := g("loff", 0)
	roff := g("roff", 0)
	id := g("id", side.nextID)
	side.nextID = max(side.nextID, id+1)
	wr := rc.WR{ID: id, Opcode: op, RemoteAddr: peer.mr.Addr + roff, RKey: uint32(g("rkey", uint64(peer.mr.RKey))),
		Imm: uint32(g("imm", 0)), InvRKey: uint32(g("inv", 0))}
	if _, ok := m["solicited"]; ok {
		wr.Flags |= rc.Solicited
	}
	if _, ok := m["fence"]; ok {
		wr.Flags |= rc.Fence
	}
	switch op {
	case rc.WRAtomicCmpSwap:
		wr.CompareAdd, wr.Swap, size = g("cmp", 0), g("swap", 0), 8
	case rc.WRAtomicFetchAdd:
		wr.CompareAdd, size = g("add", 0), 8
	case rc.WRAtomicWrite:
		size = 8
		binary.LittleEndian.PutUint64(side.mr.Buf[loff:], g("value", 0))
	case rc.WRFlush:
		wr.Length, wr.FlushType, wr.FlushLevel = uint32(size), uint8(g("type", 1)), uint8(g("level", 0))
		size = 0
	}
	wr.Local = side.mr.Buf[loff : loff+size]
	return side.qp.PostSend(wr)
}

func (s *script) expect(f []string) error {
	if len(f) < 2 {
		return fmt.Errorf("expect what?")
	}
	switch f[0] {
	case "state":
		sd, err := parseSide(f[1])
		if err != nil {
			return err
		}
		if got := s.side[sd].qp.State().String(); got != f[2] {
			return fmt.Errorf("state of %s is %s, want %s", f[1], got, f[2])
		}
		return nil
	case "mem", "recv":
		// expect mem SIDE off=N SIDE off=N size=N / expect recv SIDE id=N SIDE off=N size=N:
		// keys after each side belong to it; size may be given on either.
		var sides []rctest.Side
		var keys []map[string]string
		for _, tok := range f[1:] {
			if sd, err := parseSide(tok); err == nil {
				sides = append(sides, sd)
				keys = append(keys, map[string]string{})
				continue
			}
			if len(keys) == 0 {
				return fmt.Errorf("expect %s: side first", f[0])
			}
			for k, v := range kv([]string{tok}) {
				keys[len(keys)-1][k] = v
			}
		}
		if len(sides) != 2 {
			return fmt.Errorf("expect %s: want two sides", f[0])
		}
		size, _ := num(keys[0], "size", 0)
		size, _ = num(keys[1], "size", size)
		off2, _ := num(keys[1], "off", 0)
		var got []byte
		if f[0] == "mem" {
			off1, _ := num(keys[0], "off", 0)
			got = s.side[sides[0]].mr.Buf[off1 : off1+size]
		} else {
			id, _ := num(keys[0], "id", 0)
			got = s.side[sides[0]].recvs[id][:size]
		}
		want := s.side[sides[1]].mr.Buf[off2 : off2+size]
		if !bytes.Equal(got, want) {
			return fmt.Errorf("bytes differ")
		}
		return nil
	case "u64":
		sd, err := parseSide(f[1])
		if err != nil {
			return err
		}
		m := kv(f[2:])
		off, _ := num(m, "off", 0)
		want, _ := num(m, "value", 0)
		if got := binary.LittleEndian.Uint64(s.side[sd].mr.Buf[off:]); got != want {
			return fmt.Errorf("u64 at %s+%d is %d, want %d", f[1], off, got, want)
		}
		return nil
	}
	return fmt.Errorf("expect %q?", f[0])
}
