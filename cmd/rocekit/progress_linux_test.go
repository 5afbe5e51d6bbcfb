package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// openPTY opens a pseudo-terminal and returns its master and slave ends.
func openPTY(t *testing.T) (master, slave *os.File) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("no pseudo-terminals here:", err)
	}
	t.Cleanup(func() { m.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Skip("cannot unlock the pseudo-terminal:", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, m.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Skip("cannot name the pseudo-terminal:", e)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skip("cannot open the pseudo-terminal's slave:", err)
	}
	t.Cleanup(func() { s.Close() })
	return m, s
}

// With standard error on a terminal, a long run (here: any run, with the
// half-second delay set to 0) draws a progress line there (carriage return,
// bar, percentage, WRs done of all, simulated and wall time) and erases it
// at the end, and the summary on standard output is the same as without the
// bar. Off a terminal (a pipe, a file, a buffer) nothing is drawn: the
// other sim tests' stderr stays empty.
func TestSimProgressBarOnTerminal(t *testing.T) {
	defer func(d time.Duration) { progressDelay = d }(progressDelay)
	progressDelay = 0
	master, slave := openPTY(t)
	got := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(master) // until the slave is closed (EIO)
		got <- b
	}()
	args := []string{"sim", "--messages", "500", "--loss", "0.001", "--json"}
	var out bytes.Buffer
	code := run(args, &out, slave)
	slave.Close()
	drawn := string(<-got)
	require.Equal(t, 0, code)
	assert.Contains(t, drawn, "\r[=")
	assert.Regexp(t, `\d+\.\d%  \d+/500 WRs  sim \S+  \d+\.\ds`, drawn)
	assert.True(t, strings.HasSuffix(drawn, "\r\x1b[K"), "the bar is erased at the end: %q", drawn[max(0, len(drawn)-40):])

	var plain, errs bytes.Buffer
	require.Equal(t, 0, run(args, &plain, &errs))
	assert.Empty(t, errs.String())
	// The summaries differ only in wall-clock figures.
	strip := func(s string) map[string]any {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(s), &m))
		for k := range m {
			if strings.Contains(k, "wall") || strings.HasSuffix(k, "per_second") {
				delete(m, k)
			}
		}
		return m
	}
	assert.Equal(t, strip(plain.String()), strip(out.String()))
}

func TestNewProgressBarOnlyOnTerminal(t *testing.T) {
	assert.Nil(t, newProgressBar(&bytes.Buffer{}))
	f, err := os.Create(t.TempDir() + "/stderr")
	require.NoError(t, err)
	defer f.Close()
	assert.Nil(t, newProgressBar(f))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	assert.Nil(t, newProgressBar(w))
	_, slave := openPTY(t)
	assert.NotNil(t, newProgressBar(slave))
}
