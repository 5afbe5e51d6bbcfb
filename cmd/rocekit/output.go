package main

import (
	"encoding/binary"
	"strconv"

	"github.com/rocekit/rocekit/aeth"
	"github.com/rocekit/rocekit/packet"
)

// Output is built by appending to one reused byte slice: no per-frame
// allocation, and no reflection (encoding/json would be far slower than the
// decode itself).

const hexDigits = "0123456789abcdef"

func appendHex(b []byte, v uint64, width int) []byte {
	b = append(b, '0', 'x')
	var tmp [16]byte
	i := len(tmp)
	for v != 0 || len(tmp)-i < max(width, 1) {
		i--
		tmp[i] = hexDigits[v&0xF]
		v >>= 4
	}
	return append(b, tmp[i:]...)
}

func appendMAC(b []byte, m []byte) []byte {
	var s [17]byte
	for i := 0; i < 6; i++ {
		x := m[i]
		s[3*i], s[3*i+1] = hexDigits[x>>4], hexDigits[x&0xF]
		if i < 5 {
			s[3*i+2] = ':'
		}
	}
	return append(b, s[:]...)
}

func appendBytesHex(b []byte, p []byte) []byte {
	for _, x := range p {
		b = append(b, hexDigits[x>>4], hexDigits[x&0xF])
	}
	return b
}

// icrcWire is the ICRC as Wireshark shows it: the four wire bytes read as a
// big-endian number.
func icrcWire(v uint32) uint32 {
	var w [4]byte
	binary.LittleEndian.PutUint32(w[:], v)
	return binary.BigEndian.Uint32(w[:])
}

func vcrcWire(v uint32) uint32 { return uint32(uint16(v)>>8 | uint16(v)<<8) }

// appendLine writes the one-line, tcpdump-like form of a frame.
func appendLine(b []byte, fi *frameInfo) []byte {
	f := fi.f
	if fi.file != "" {
		b = append(b, fi.file...)
		b = append(b, ':')
	}
	b = strconv.AppendInt(b, int64(fi.Record.Index), 10)
	b = append(b, ' ')
	b = fi.stamp.append(b, fi.Record.Time)
	b = appendAddrs(b, f)
	t := &f.Transport
	if t.BTH != nil {
		op := t.BTH.Opcode()
		b = append(b, ' ')
		b = append(b, op.String()...)
		b = append(b, " qp="...)
		b = appendHex(b, uint64(t.BTH.DestQP()), 6)
		b = append(b, " psn="...)
		b = strconv.AppendUint(b, uint64(t.BTH.PSN()), 10)
		if t.BTH.AckReq() {
			b = append(b, " A"...)
		}
		if t.BTH.SE() {
			b = append(b, " SE"...)
		}
		if t.BTH.FECN() {
			b = append(b, " FECN"...)
		}
		if t.BTH.BECN() {
			b = append(b, " BECN"...)
		}
		if t.DETH != nil {
			b = append(b, " deth qkey="...)
			b = appendHex(b, uint64(t.DETH.QKey()), 8)
			b = append(b, " srcqp="...)
			b = appendHex(b, uint64(t.DETH.SrcQP()), 6)
		}
		if t.RETH != nil {
			b = append(b, " reth va="...)
			b = appendHex(b, t.RETH.VA(), 0)
			b = append(b, " rkey="...)
			b = appendHex(b, uint64(t.RETH.RKey()), 8)
			b = append(b, " dmalen="...)
			b = strconv.AppendUint(b, uint64(t.RETH.DMALen()), 10)
		}
		if t.AtomicETH != nil {
			b = append(b, " atomic va="...)
			b = appendHex(b, t.AtomicETH.VA(), 0)
			b = append(b, " rkey="...)
			b = appendHex(b, uint64(t.AtomicETH.RKey()), 8)
			b = append(b, " swap="...)
			b = appendHex(b, t.AtomicETH.SwapAdd(), 0)
			b = append(b, " cmp="...)
			b = appendHex(b, t.AtomicETH.Compare(), 0)
		}
		if t.AETH != nil {
			s := t.AETH.Syndrome()
			b = append(b, " aeth "...)
			b = append(b, s.Kind().String()...)
			switch s.Kind() {
			case aeth.NAK:
				b = append(b, ' ')
				b = append(b, s.NAKCode().String()...)
			case aeth.RNRNAK:
				b = append(b, " timer="...)
				b = strconv.AppendUint(b, uint64(s.RNRTimer()), 10)
			}
			b = append(b, " msn="...)
			b = strconv.AppendUint(b, uint64(t.AETH.MSN()), 10)
		}
		if t.AtomicAckETH != nil {
			b = append(b, " orig="...)
			b = appendHex(b, t.AtomicAckETH.OrigRemDt(), 0)
		}
		if t.ImmDt != nil {
			b = append(b, " imm="...)
			b = appendHex(b, uint64(t.ImmDt.Imm()), 8)
		}
		if t.IETH != nil {
			b = append(b, " inv_rkey="...)
			b = appendHex(b, uint64(t.IETH.RKey()), 8)
		}
		if t.XRCETH != nil {
			b = append(b, " xrcsrq="...)
			b = appendHex(b, uint64(t.XRCETH.XRCSRQ()), 6)
		}
		if t.RDETH != nil {
			b = append(b, " eecnxt="...)
			b = appendHex(b, uint64(t.RDETH.EEContext()), 6)
		}
		b = append(b, " len="...)
		b = strconv.AppendInt(b, int64(t.PayloadLen()), 10)
	} else {
		b = append(b, " len="...)
		b = strconv.AppendInt(b, int64(fi.Record.OrigLen), 10)
	}
	if f.Cut > 0 {
		b = appendCut(b, fi)
		if !fi.ICRC.Checked && f.IsRoCE() {
			b = append(b, " icrc "...)
			b = append(b, icrcNotCut...)
		}
	}
	if fi.ICRC.Checked {
		if fi.ICRC.OK {
			b = append(b, " icrc ok"...)
		} else {
			b = append(b, " ICRC BAD (want "...)
			b = appendHex(b, uint64(icrcWire(fi.ICRC.Want)), 8)
			b = append(b, ", got "...)
			b = appendHex(b, uint64(icrcWire(fi.ICRC.Got)), 8)
			b = append(b, ')')
		}
	}
	if fi.VCRC.Checked {
		if fi.VCRC.OK {
			b = append(b, " vcrc ok"...)
		} else {
			b = append(b, " VCRC BAD (want "...)
			b = appendHex(b, uint64(vcrcWire(fi.VCRC.Want)), 4)
			b = append(b, ", got "...)
			b = appendHex(b, uint64(vcrcWire(fi.VCRC.Got)), 4)
			b = append(b, ')')
		}
	}
	for _, w := range fi.Warnings {
		if w == "icrc_bad" || w == "vcrc_bad" {
			continue
		}
		b = append(b, " ["...)
		b = append(b, w...)
		b = append(b, ']')
	}
	if err := fi.Err; err != nil {
		b = append(b, " ERROR: "...)
		b = append(b, err.Error()...)
	} else if err := fi.ReadErr; err != nil {
		b = append(b, " ERROR: "...)
		b = append(b, err.Error()...)
	}
	return append(b, '\n')
}

// What is said of the ICRC of a frame the capture cut (text; JSON gives
// the reason).
const (
	cutReason  = "frame cut by capture"
	icrcNotCut = "not checked: " + cutReason
)

// appendCut appends " [cut to N of M bytes]": the record's captured length
// and its length on the wire.
func appendCut(b []byte, fi *frameInfo) []byte {
	b = append(b, " [cut to "...)
	b = strconv.AppendInt(b, int64(fi.Record.CapLen), 10)
	b = append(b, " of "...)
	b = strconv.AppendInt(b, int64(fi.Record.CapLen+fi.f.Cut), 10)
	return append(b, " bytes]"...)
}

// appendAddrs writes "src > dst" for the frame's outermost addressing.
func appendAddrs(b []byte, f *packet.Frame) []byte {
	switch {
	case f.IPv4 != nil:
		b = f.IPv4.Src().AppendTo(b)
		b = append(b, " > "...)
		return f.IPv4.Dst().AppendTo(b)
	case f.IPv6 != nil:
		b = f.IPv6.Src().AppendTo(b)
		b = append(b, " > "...)
		return f.IPv6.Dst().AppendTo(b)
	case f.LRH != nil:
		b = append(b, "lid "...)
		b = strconv.AppendUint(b, uint64(f.LRH.SLID()), 10)
		b = append(b, " > lid "...)
		return strconv.AppendUint(b, uint64(f.LRH.DLID()), 10)
	case f.GRH != nil:
		b = f.GRH.SGIDAddr().AppendTo(b)
		b = append(b, " > "...)
		return f.GRH.DGIDAddr().AppendTo(b)
	case f.Eth != nil:
		b = appendMAC(b, f.Eth[6:12])
		b = append(b, " > "...)
		b = appendMAC(b, f.Eth[0:6])
		b = append(b, " ethertype "...)
		return appendHex(b, uint64(f.EtherType), 4)
	}
	return append(b, '?')
}
