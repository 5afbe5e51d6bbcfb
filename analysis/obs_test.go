package analysis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFlowKeySame(t *testing.T) {
	a := FlowKey{Encap: 1, Src: IPv4Addr([4]byte{1, 2, 3, 4}), Dst: IPv6Addr([16]byte{15: 9}), DstQP: 7}
	require.True(t, a.same(&a))
	for i, mut := range []func(k *FlowKey){
		func(k *FlowKey) { k.Encap++ },
		func(k *FlowKey) { k.Src.Kind = AddrGID },
		func(k *FlowKey) { k.Dst.Kind = AddrGID },
		func(k *FlowKey) { k.Src.b[0]++ },
		func(k *FlowKey) { k.Src.b[15]++ },
		func(k *FlowKey) { k.Dst.b[7]++ },
		func(k *FlowKey) { k.Dst.b[8]++ },
		func(k *FlowKey) { k.DstQP++ },
	} {
		b := a
		mut(&b)
		require.Equal(t, a == b, a.same(&b), "change %d", i)
		require.False(t, a.same(&b), "change %d", i)
	}
}
