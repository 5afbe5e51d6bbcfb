// Package plural writes counts with their nouns in the right number, for
// the summaries people read: "1 fault", "2 faults", "1 retry", "3 retries".
package plural

import "strconv"

// Append appends n, a space and noun, in the plural unless n is 1.
func Append[N ~int | ~int64 | ~uint64 | ~uint32](b []byte, n N, noun string) []byte {
	if n < 0 {
		b = strconv.AppendInt(b, int64(n), 10)
	} else {
		b = strconv.AppendUint(b, uint64(n), 10)
	}
	b = append(b, ' ')
	if n == 1 {
		return append(b, noun...)
	}
	return appendPlural(b, noun)
}

// Count is Append's text as a string.
func Count[N ~int | ~int64 | ~uint64 | ~uint32](n N, noun string) string {
	return string(Append(nil, n, noun))
}

// appendPlural appends the plural of an English noun: an s, ies for a y
// after a consonant (retry, retries), or es after s, x, z, ch and sh
// (switch, switches).
func appendPlural(b []byte, noun string) []byte {
	k := len(noun)
	if k >= 2 && noun[k-1] == 'y' && !isVowel(noun[k-2]) {
		return append(append(b, noun[:k-1]...), "ies"...)
	}
	if k >= 1 && (noun[k-1] == 's' || noun[k-1] == 'x' || noun[k-1] == 'z') ||
		k >= 2 && noun[k-1] == 'h' && (noun[k-2] == 'c' || noun[k-2] == 's') {
		return append(append(b, noun...), "es"...)
	}
	return append(append(b, noun...), 's')
}

func isVowel(c byte) bool {
	switch c {
	case 'a', 'e', 'i', 'o', 'u', 'A', 'E', 'I', 'O', 'U':
		return true
	}
	return false
}
