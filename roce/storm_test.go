package roce

import (
	"encoding/binary"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A WR posted once the requester is in the Error state is flushed at once
// and never reaches the responder, so its READ source or atomic target is
// not written into the responder's region: on a dead link, the slots still
// hold what the WRs posted before the failure put there. (Writing them cost
// a 1 MiB copy for each of thousands of flushed READs in a retry storm.)
func TestFlushedWRsWriteNoSource(t *testing.T) {
	for _, op := range []string{"read", "fetch_add"} {
		t.Run(op, func(t *testing.T) {
			const q, count = 2, 6
			sc := twoHosts(false, nil, QPSpec{Timeout: u8(5), RetryCnt: u8(0), Outstanding: q,
				Work: WorkSpec{Op: op, Count: count, Size: 4096}})
			sc.Links[0].Dead = []DeadSpec{{FromNS: 0}}
			s, err := New(sc, Options{})
			require.NoError(t, err)
			sum, err := s.Run()
			require.NoError(t, err)
			require.Equal(t, map[string]uint64{"SUCCESS": 0, "RETRY_EXC_ERR": 1, "WR_FLUSH_ERR": count - 1}, sum.WRCompleted)
			c := s.conns[0]
			for n := int64(0); n < q; n++ {
				// WRs 0 and 1 were posted before the failure, 2 to 5 after,
				// into the same two slots.
				off := int(n) * int(c.slot)
				switch op {
				case "read":
					assert.Equal(t, s.pat.data(c.gen.key, n, 4096), c.mr.Buf[off:off+4096], "slot %d", n)
				default:
					orig, _, _, _ := atomicOperands(opFetchAdd, wrKey(c.gen.key, n))
					assert.Equal(t, orig, binary.LittleEndian.Uint64(c.mr.Buf[off:]), "slot %d", n)
				}
			}
		})
	}
}
