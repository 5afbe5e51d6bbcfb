package dpicore

import (
	"time"

	"github.com/rocekit/rocekit/conform"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/rc"
)

// Directions of a frame fed to a Scoreboard.
const (
	ToDUT   = 0 // sent to the device under test (by the peer)
	FromDUT = 1 // sent by the device under test
)

// Scoreboard checks the frames on the device's port with the checker of
// rocekit check (conform.Checker): its findings are those rocekit check
// reports for a capture of the same frames, with the same kinds and rules.
// Feed it every frame the device sends and, so that responses can be
// matched with their requests, every frame it receives.
type Scoreboard struct {
	c        *conform.Checker
	fr       packet.Frame
	dirs     []uint8 // direction of frame n at dirs[n-1]
	scratch  []conform.Finding
	count    int // findings so far
	finished bool
	final    []conform.Finding // the findings with connection numbers, made at Finish
	snap     []conform.Finding // before Finish: the findings when there were snapN
	snapN    int
}

// NewScoreboard returns a scoreboard for a path MTU of pmtu bytes (256,
// 512, 1024, 2048 or 4096), or 0 to learn it from the traffic as rocekit
// check does.
func NewScoreboard(pmtu int) (*Scoreboard, error) {
	if pmtu != 0 && !rc.ValidMTU(pmtu) {
		return nil, errf(ErrArg, "pmtu %d: want 0 (learn it), 256, 512, 1024, 2048 or 4096", pmtu)
	}
	return &Scoreboard{c: conform.New(conform.Options{PMTU: pmtu})}, nil
}

// Feed checks the next frame, seen at time now (picoseconds) going in
// direction dir (ToDUT or FromDUT), and returns how many findings it
// raised. Frames are numbered from 1 in the order fed, as in a capture.
func (s *Scoreboard) Feed(data []byte, now int64, dir int) (int, error) {
	switch {
	case s.finished:
		return 0, errf(ErrState, "scoreboard finished: no frame may follow sb_finish")
	case dir != ToDUT && dir != FromDUT:
		return 0, errf(ErrArg, "direction %d: want 0 (to the DUT) or 1 (from the DUT)", dir)
	case len(data) == 0:
		return 0, errf(ErrFrame, "empty frame")
	}
	s.dirs = append(s.dirs, uint8(dir))
	n := len(s.dirs)
	derr := s.fr.DecodeEthernet(data)
	s.scratch = s.c.Frame(n, time.Unix(0, now/1000), &s.fr, derr, s.scratch[:0])
	s.count += len(s.scratch)
	return len(s.scratch), nil
}

// Finish ends the run: it adds the findings only the whole run proves
// (conform's bad_retransmission and missing_ack), numbers the connections
// and returns the number of findings. Later calls return the same.
func (s *Scoreboard) Finish() int {
	if !s.finished {
		s.count += len(s.c.Finish(nil))
		s.finished = true
		s.final = s.c.Findings()
	}
	return len(s.final)
}

// Count returns the number of findings so far.
func (s *Scoreboard) Count() int { return s.count }

// Frames returns the number of frames fed.
func (s *Scoreboard) Frames() int { return len(s.dirs) }

// Finding returns finding i (0-based, in frame order) and the direction of
// its frame. Before Finish the connection numbers (Finding.Conn) are 0.
func (s *Scoreboard) Finding(i int) (conform.Finding, int, error) {
	fs := s.final
	if !s.finished {
		if s.snap == nil || s.snapN != s.count {
			s.snap, s.snapN = s.c.Findings(), s.count
			for k := range s.snap {
				s.snap[k].Conn = 0
			}
		}
		fs = s.snap
	}
	if i < 0 || i >= len(fs) {
		return conform.Finding{}, 0, errf(ErrArg, "finding %d: there are %d (0..%d)", i, len(fs), len(fs)-1)
	}
	f := fs[i]
	dir := -1
	if f.Frame >= 1 && f.Frame <= len(s.dirs) {
		dir = int(s.dirs[f.Frame-1])
	}
	return f, dir, nil
}
