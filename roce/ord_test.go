package roce

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The requester's ORD is at most the responder's IRD, as CM negotiates
// them: a contradicting pair is refused naming both keys; an ORD left out
// is lowered to the IRD.
func TestORDAtMostIRD(t *testing.T) {
	_, err := ParseScenario([]byte(strings.Replace(minimal, `"to": "b"`, `"to": "b", "ord": 8, "ird": 1`, 1)))
	require.Error(t, err)
	assert.Equal(t, "scenario: qps[0].ord: 8 is more than the responder's qps[0].ird 1", err.Error())

	sc, err := ParseScenario([]byte(strings.Replace(minimal, `"to": "b"`, `"to": "b", "ird": 4`, 1)))
	require.NoError(t, err)
	s, err := New(sc, Options{})
	require.NoError(t, err)
	assert.Equal(t, 4, s.conns[0].req.qp.Config().MaxRdAtomic, "ord left out: 16 lowered to ird 4")
	assert.Equal(t, 4, s.conns[0].rsp.qp.Config().MaxDestRdAtomic)

	// READs against one responder resource, over a lossy link: with the ORD
	// lowered to 1 every lost response is re-requested from a resource the
	// responder still has.
	sc = twoHosts(false, &FaultSpec{Loss: 0.05}, QPSpec{MTU: 1024, Timeout: u8(6), IRD: intp(1), Outstanding: 8,
		Work: WorkSpec{Op: "read", Count: 200, Size: 3000}})
	require.NoError(t, sc.Validate())
	sum := run(t, sc, Options{})
	assert.Equal(t, map[string]uint64{"SUCCESS": 200}, sum.WRCompleted)
	assert.True(t, sum.DataIntegrityOK)
}
