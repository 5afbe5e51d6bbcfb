package sim

import (
	"fmt"
	"math"
	"math/bits"
)

// BufferConfig is a switch's shared packet buffer with dynamic thresholds
// (Choudhury and Hahne, "Dynamic queue length thresholds for shared-memory
// packet switches", IEEE/ACM ToN 1998), as Broadcom-style switches manage
// theirs. Every frame in the switch, from its arrival to the end of its
// serialisation on the output port, takes its bytes from the buffer.
//
// A frame of size bytes arriving when U bytes are in the switch is dropped
// with cause DropBuffer if U + size > Bytes, whatever its priority. A frame
// of a lossy priority (one PFC does not cover) that must wait in a queue
// already holding q bytes of its (port, priority) is dropped with cause
// DropQueue if q + size > Alpha*(Bytes - U): the more of the buffer is
// free, the longer a queue may grow, and a few congested queues leave room
// for the others. Lossless priorities are held back by PFC instead and are
// not subject to the threshold. The static QueueLimit of each port still
// applies on top.
type BufferConfig struct {
	Bytes int     // buffer size; 0 disables the shared buffer
	Alpha float64 // dynamic threshold factor, > 0 when Bytes > 0 (1 or 2 are usual)
}

// SetBuffer sets the switch's shared buffer (Bytes 0 removes it). It panics
// if Bytes is negative or, with a buffer, Alpha is not positive and finite.
// Change it only before frames flow.
func (s *Switch) SetBuffer(cfg BufferConfig) {
	if cfg.Bytes < 0 {
		panic(fmt.Sprintf("sim: SetBuffer: Bytes %d is negative", cfg.Bytes))
	}
	if cfg.Bytes > 0 && !(cfg.Alpha > 0 && !math.IsInf(cfg.Alpha, 1)) {
		panic(fmt.Sprintf("sim: SetBuffer: Alpha %v must be positive and finite", cfg.Alpha))
	}
	s.buf = cfg
	s.account = s.pfc.XOff > 0 || s.buf.Bytes > 0
	for _, p := range s.ports {
		p.shared = cfg.Bytes > 0
	}
}

// overThreshold reports whether a frame of size bytes of priority prio,
// which would take its queue on switch port p to q bytes, is over the
// dynamic threshold: a lossy frame, and q > Alpha x (Bytes - U), where U,
// the bytes in the switch before the frame came, excludes the frame.
func (p *Port) overThreshold(prio uint8, q, size int) bool {
	s := p.sw
	return !s.lossless(prio) && float64(q) > s.buf.Alpha*float64(s.buf.Bytes-(s.used-size))
}

// Buffer returns the switch's shared buffer configuration.
func (s *Switch) Buffer() BufferConfig { return s.buf }

// BufferedBytes returns the bytes of frames in the switch (queued or being
// sent on) when it has PFC or a shared buffer, else 0.
func (s *Switch) BufferedBytes() int { return s.used }

// PeakBufferedBytes returns the largest BufferedBytes seen.
func (s *Switch) PeakBufferedBytes() int { return s.peakUsed }

// PFCHeadroom returns the bytes that may still reach a switch input port
// after it has decided to pause its peer, on a link of rateBps bits per
// second and propagation delay delay, with frames of at most mtu bytes:
//
//	headroom = ceil(2 x delay x rateBps / 8) + 2 x mtu + 60
//
// The pause waits for the frame the switch port is sending (mtu; this
// simulator sends it at once, real switches may not), takes the PFC frame's
// own 60 bytes of serialisation and one delay to reach the peer, during
// which the peer keeps sending; the peer then finishes the frame it has
// begun (mtu); and what it sent is still one delay on the wire. A port that
// may buffer XOff + PFCHeadroom bytes per lossless priority loses nothing.
// It panics on a negative argument, and returns math.MaxInt if the result
// does not fit an int.
func PFCHeadroom(rateBps int64, delay Time, mtu int) int {
	if rateBps < 0 || delay < 0 || mtu < 0 {
		panic("sim: PFCHeadroom: negative argument")
	}
	hi, lo := bits.Mul64(2*uint64(delay), uint64(rateBps))
	if hi >= 8e12 {
		return math.MaxInt
	}
	q, r := bits.Div64(hi, lo, 8e12)
	if r != 0 {
		q++
	}
	if q > uint64(math.MaxInt-2*mtu-pfcFrameLen) || mtu > (math.MaxInt-pfcFrameLen)/2 {
		return math.MaxInt
	}
	return int(q) + 2*mtu + pfcFrameLen
}
