package gen

import (
	"fmt"

	"github.com/rocekit/rocekit/packet"
)

// Corrupts reports whether Corrupt applies fault kind k: the kinds that
// change one frame's bytes without knowing the DUT's QPs or memory
// regions (bad-icrc, bad-vcrc, flip-covered, flip-masked, truncate,
// wrong-padcnt, reserved-opcode, tver).
func (k Kind) Corrupts() bool {
	switch k {
	case BadICRC, BadVCRC, FlipCovered, FlipMasked, Truncate, WrongPadCnt, ReservedOpcode, TVer:
		return true
	}
	return false
}

// Corrupt applies fault k (one for which k.Corrupts()) to data, a frame of
// encapsulation e, in place, for a stream made one frame at a time rather
// than by Generate: a peer answering a device live. The details (which bit,
// which value) come from (seed, k, i), i the frame's index in its stream,
// as Generate's do from the source frame's index, and the record says what
// changed, as in a manifest. It returns the frame (shorter after truncate)
// and ok false, with data unchanged, when the fault cannot hit this frame
// (a truncate of a frame with no byte after its BTH, a wrong-padcnt of one
// without payload, a bad-vcrc of a RoCE frame).
func Corrupt(k Kind, e packet.Encap, data []byte, seed uint64, i int) (out []byte, f Fault, ok bool, err error) {
	if !k.Corrupts() {
		return data, Fault{}, false, fmt.Errorf("fault %s does not change one frame's bytes on its own", k)
	}
	var fr packet.Frame
	_ = decode(&fr, e, data)
	if !eligible(k, &fr, data, &info{qp: -1}, nil, false) {
		return data, Fault{}, false, nil
	}
	fa := faulter{}
	out, f, err = fa.apply(k, data, &fr, detailRNG(seed, k, i))
	if err != nil {
		return data, f, false, err
	}
	f.Source, f.Frame = i, i
	return out, f, true, nil
}
