package packet

import "errors"

// ErrMAC is returned by ParseMAC for a string that is not a 6-byte MAC
// address.
var ErrMAC = errors.New("not a 6-byte MAC address")

// ParseMAC parses a 6-byte MAC address in the forms net.ParseMAC accepts
// for one: 00:00:5e:00:53:01, 00-00-5e-00-53-01, 0000.5e00.5301 and
// 00005e005301 (hex digits of either case). rocekit parses MACs itself so that it does not
// link the net package, which brings in cgo and a dynamically linked
// binary (slower to start).
func ParseMAC(s string) ([6]byte, error) {
	var m [6]byte
	switch {
	case len(s) == 17 && (s[2] == ':' || s[2] == '-'):
		sep := s[2]
		for i := 0; i < 6; i++ {
			if i > 0 && s[3*i-1] != sep {
				return m, ErrMAC
			}
			b, ok := hexByte(s[3*i], s[3*i+1])
			if !ok {
				return m, ErrMAC
			}
			m[i] = b
		}
		return m, nil
	case len(s) == 14 && s[4] == '.' && s[9] == '.':
		for i := 0; i < 6; i++ {
			j := 2*i + i/2 // 0, 2, 5, 7, 10, 12
			b, ok := hexByte(s[j], s[j+1])
			if !ok {
				return m, ErrMAC
			}
			m[i] = b
		}
		return m, nil
	case len(s) == 12:
		for i := 0; i < 6; i++ {
			b, ok := hexByte(s[2*i], s[2*i+1])
			if !ok {
				return m, ErrMAC
			}
			m[i] = b
		}
		return m, nil
	}
	return m, ErrMAC
}

func hexByte(a, b byte) (byte, bool) {
	x, ok1 := hexDigit(a)
	y, ok2 := hexDigit(b)
	return x<<4 | y, ok1 && ok2
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}
