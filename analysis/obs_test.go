package analysis

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/rocekit/rocekit/cm"
	iobs "github.com/rocekit/rocekit/internal/obs"
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

// An obs is two cache lines and holds no pointer (package decode moves
// them with stores the garbage collector does not see), as internal/obs's
// Obs, which it is.
func TestObsLayout(t *testing.T) {
	require.Equal(t, uintptr(128), unsafe.Sizeof(obs{}))
	require.Equal(t, uintptr(128), unsafe.Sizeof(iobs.Obs{}))
	var walk func(reflect.Type) bool // reports whether t holds a pointer
	walk = func(t reflect.Type) bool {
		switch t.Kind() {
		case reflect.Struct:
			for i := range t.NumField() {
				if walk(t.Field(i).Type) {
					return true
				}
			}
			return false
		case reflect.Array:
			return walk(t.Elem())
		case reflect.Pointer, reflect.Slice, reflect.String, reflect.Map, reflect.Chan,
			reflect.Func, reflect.Interface, reflect.UnsafePointer:
			return true
		}
		return false
	}
	require.False(t, walk(reflect.TypeOf(obs{})), "obs holds a pointer")
	require.False(t, walk(reflect.TypeOf(iobs.Obs{})), "internal/obs's Obs holds a pointer")
	require.True(t, walk(reflect.TypeOf(struct{ _ [2]cm.MAD }{})), "the check finds a pointer")
}
