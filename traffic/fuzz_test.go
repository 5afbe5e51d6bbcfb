package traffic

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

// FuzzParse: Parse never panics, and what it accepts is valid and
// survives String and Parse unchanged.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"permutation:size=10MB", "incast:n=15,size=2MB,dst=3,start=1us", "all-to-all:size=1MiB",
		"poisson:load=0.3,cdf=websearch,duration=10ms,seed=7", "permutation:size=1.5KB,seed=1",
		"poisson:load=1e-3,cdf=a=b,duration=0.5s", "incast:n=,size=", ":", "permutation:size=99999999999999999999B",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		s, err := Parse(in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "traffic: spec ") {
				t.Fatalf("%q: error %q does not name the spec", in, err)
			}
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("%q parsed to an invalid spec: %v", in, err)
		}
		again, err := Parse(s.String())
		if err != nil || again != s {
			t.Fatalf("%q -> %q -> %#v, %v; want %#v", in, s.String(), again, err, s)
		}
	})
}

// FuzzReadHPCCFlows: ReadHPCCFlows never panics, and what it accepts is
// written back by WriteHPCCFlows and read again unchanged.
func FuzzReadHPCCFlows(f *testing.F) {
	for _, s := range []string{
		"2\n1 0 3 100 2000000 0\n2 0 3 100 2000000 0.000001\n",
		"1\n\n3 2 0 65535 1 1.500000000250\n",
		"0\n", "3\n0 1 3 100 5 2\n", "1\n0 1 3 100 5 0\nx\n",
	} {
		f.Add([]byte(s), uint8(4))
	}
	f.Fuzz(func(t *testing.T, in []byte, hosts uint8) {
		flows, err := ReadHPCCFlows(bytes.NewReader(in), "fuzz", int(hosts))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := WriteHPCCFlows(&buf, flows); err != nil {
			t.Fatalf("read %v but cannot write it: %v", flows, err)
		}
		back, err := ReadHPCCFlows(&buf, "again", int(hosts))
		if err != nil || !slices.Equal(back, flows) {
			t.Fatalf("round trip: %v, %v; want %v", back, err, flows)
		}
	})
}
