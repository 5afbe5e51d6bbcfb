package iverilog_test

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/rocekit/rocekit/internal/oracle"
	"github.com/rocekit/rocekit/opcode"
	"github.com/rocekit/rocekit/packet"
	"github.com/rocekit/rocekit/pcap"
	"github.com/rocekit/rocekit/stim"
)

var keep = flag.String("keep", "", "write the stimulus, pcap and simulator output into this directory and keep them")

// testFrames builds 52 RoCEv2 frames: RC SEND/WRITE/READ/ACK and UD SEND
// opcodes over IPv4 and IPv6, some with a VLAN tag, payloads from 1 to 2000
// bytes. A RoCEv2 frame's length is always 2 mod 4, so never a multiple of
// the beat width; four frames carry an Ethernet trailer (zero padding after
// the IP packet, as on a wire with minimum frame sizes) to a multiple of
// 64 bytes, so that their last beat is full at every width tested.
func testFrames(t *testing.T) [][]byte {
	ops := []opcode.Opcode{
		opcode.RCSendFirst, opcode.RCSendMiddle, opcode.RCSendLast, opcode.RCSendOnly,
		opcode.RCSendOnlyWithImmediate, opcode.RCRDMAWriteFirst, opcode.RCRDMAWriteOnly,
		opcode.RCRDMAWriteOnlyWithImmediate, opcode.RCRDMAReadRequest, opcode.RCRDMAReadResponseOnly,
		opcode.RCAcknowledge, opcode.UDSendOnly, opcode.RCSendLastWithInvalidate,
	}
	sizes := []int{1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128,
		129, 255, 256, 257, 511, 512, 513, 1000, 1023, 1024, 1025, 1500, 1999, 2000}
	var frames [][]byte
	buf := make([]byte, 4096)
	for i := range 52 {
		op := ops[i%len(ops)]
		encap := packet.RoCEv2IPv4
		if i%5 == 4 {
			encap = packet.RoCEv2IPv6
		}
		f := packet.DefaultFrame(encap)
		if i%7 == 3 {
			f.Eth.VLANs = []packet.VLANFields{{PCP: 3, VID: uint16(100 + i)}}
		}
		f.IPv4.ID = uint16(i)
		f.Transport.BTH.Opcode = op
		f.Transport.BTH.DestQP = 0x11 + uint32(i%3)
		f.Transport.BTH.PSN = 1000 + uint32(i)
		f.Transport.BTH.AckReq = op.IsRequest()
		f.Transport.RETH.VA = 0x7f0000001000 + uint64(i)*0x1000
		f.Transport.RETH.RKey = 0x220
		f.Transport.DETH.QKey = 0x11111111
		f.Transport.DETH.SrcQP = 0x22
		f.Transport.ImmDt.Imm = uint32(i)
		f.Transport.IETH.RKey = 0x330
		if op.HasPayload() {
			n := sizes[(i*7)%len(sizes)]
			f.Transport.Payload = make([]byte, n)
			for k := range f.Transport.Payload {
				f.Transport.Payload[k] = byte(i*31 + k)
			}
			f.Transport.RETH.DMALen = uint32(n)
		} else {
			f.Transport.RETH.DMALen = 4096
		}
		f.Transport.SetPad()
		n, err := f.Encode(buf)
		require.NoError(t, err, "frame %d (%v)", i, op)
		fr := append([]byte(nil), buf[:n]...)

		var d packet.Frame
		require.NoError(t, d.DecodeEthernet(fr), "frame %d", i)
		ok, _, _, err := d.CheckICRC()
		require.NoError(t, err)
		require.True(t, ok, "frame %d ICRC", i)

		if i%13 == 6 {
			fr = append(fr, make([]byte, (64-len(fr)%64)%64)...)
		}
		frames = append(frames, fr)
	}
	return frames
}

// writePcap writes frames to path and reads them back.
func writePcap(t *testing.T, path string, frames [][]byte) [][]byte {
	f, err := os.Create(path)
	require.NoError(t, err)
	w, err := pcap.NewWriter(f, pcap.FormatPcap, pcap.LinkTypeEthernet)
	require.NoError(t, err)
	for i, fr := range frames {
		require.NoError(t, w.WritePacket(time.Unix(1_700_000_000, int64(i)*1000), fr))
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())

	r, err := pcap.Open(path)
	require.NoError(t, err)
	defer r.Close()
	var got [][]byte
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		got = append(got, append([]byte(nil), rec.Data...))
	}
	return got
}

// writeStim writes frames in format f and returns the frame count and the
// number of data lines of its first file (words of PREFIX.mem, or beats of
// PREFIX.axis.mem including the end word).
func writeStim(t *testing.T, f stim.Format, prefix string, o stim.Options, frames [][]byte) (nframes, lines int) {
	w, err := stim.Create(f, prefix, o)
	require.NoError(t, err)
	for _, fr := range frames {
		require.NoError(t, w.WriteFrame(fr))
	}
	require.NoError(t, w.Close())
	return w.Frames(), countData(t, stim.Files(f, prefix)[0])
}

// countData counts the data lines of a $readmemh file: lines that are not
// blank or // comments.
func countData(t *testing.T, path string) int {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return 0
	}
	require.NoError(t, err)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "//") {
			n++
		}
	}
	return n
}

// TestIverilog writes ~50 RoCEv2 frames as a pcap and as memh and axismem
// stimulus, replays the stimulus through tb_axis.v in Icarus Verilog at
// widths 64, 256, 512 and 1024 in both byte orders, and checks that the frames
// the testbench's sink received are the frames of the pcap, byte for byte.
func TestIverilog(t *testing.T) {
	iv := oracle.Need(t, "iverilog")
	vvp, err := exec.LookPath("vvp")
	require.NoError(t, err, "iverilog is installed but vvp is not on PATH")

	dir := t.TempDir()
	if *keep != "" {
		dir = *keep
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	frames := testFrames(t)
	want := writePcap(t, filepath.Join(dir, "frames.pcap"), frames)
	require.Equal(t, frames, want, "pcap round trip")
	require.Len(t, want, 52)

	tb, err := filepath.Abs("tb_axis.v")
	require.NoError(t, err)

	for _, width := range []int{64, 256, 512, 1024} {
		for _, order := range []stim.Order{stim.LE, stim.BE} {
			name := fmt.Sprintf("w%d-%v", width, order)
			t.Run(name, func(t *testing.T) {
				prefix := filepath.Join(dir, name)
				o := stim.Options{Width: width, Order: order, FrameComments: true,
					Comments: []string{"52 RoCEv2 frames of examples/iverilog/iverilog_test.go"}}
				nframes, nwords := writeStim(t, stim.FormatMemh, prefix, o, want)
				_, nbeats := writeStim(t, stim.FormatAXISMem, prefix, o, want)
				nbeats-- // the end word
				require.Equal(t, len(want), nframes)

				// The files read back in Go, too.
				mem, err := os.Open(prefix + ".mem")
				require.NoError(t, err)
				defer mem.Close()
				idx, err := os.Open(prefix + ".idx.mem")
				require.NoError(t, err)
				defer idx.Close()
				back, err := stim.ReadMemh(mem, idx, width, order)
				require.NoError(t, err)
				require.Equal(t, want, back)

				be := 0
				if order == stim.BE {
					be = 1
				}
				sim := prefix + ".vvp"
				run(t, iv, "-g2012", "-Wall",
					"-P", "tb_axis.W="+strconv.Itoa(width),
					"-P", "tb_axis.BE="+strconv.Itoa(be),
					"-P", "tb_axis.MAXWORDS="+strconv.Itoa(max(nwords, nbeats+1)),
					"-P", "tb_axis.MAXFRAMES="+strconv.Itoa(nframes+1),
					"-o", sim, tb)

				for _, mode := range []struct {
					name string
					args []string
				}{
					{"memh", []string{"+mem=" + prefix + ".mem", "+idx=" + prefix + ".idx.mem",
						"+words=" + strconv.Itoa(nwords), "+frames=" + strconv.Itoa(nframes)}},
					{"axismem", []string{"+axismem=" + prefix + ".axis.mem", "+beats=" + strconv.Itoa(nbeats)}},
				} {
					out := prefix + "." + mode.name + ".out.hex"
					args := append([]string{"-n", sim, "+out=" + out, "+seed=" + strconv.Itoa(width+be)}, mode.args...)
					log := run(t, vvp, args...)
					assert.NotContains(t, log, "ERROR", mode.name)
					assert.NotContains(t, log, "WARNING", mode.name)
					assert.Contains(t, log, fmt.Sprintf("tb_axis: W=%d BE=%d mode=%s frames=%d beats=", width, be, mode.name, len(want)))

					b, err := os.ReadFile(out)
					require.NoError(t, err)
					got, err := stim.ReadHex(bytes.NewReader(b))
					require.NoError(t, err, mode.name)
					require.Len(t, got, len(want), mode.name)
					for i := range want {
						require.Equal(t, want[i], got[i], "%s: frame %d (%d bytes)", mode.name, i, len(want[i]))
					}
				}
			})
		}
	}
}

// run runs a program and returns its combined output; it fails the test
// if the program fails.
func run(t *testing.T, prog string, args ...string) string {
	t.Helper()
	cmd := exec.Command(prog, args...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s\n%s", prog, strings.Join(args, " "), out)
	return string(out)
}

// TestRunScript runs run.sh, the way a person runs the bench, on the
// golden 2-frame stream of package stim.
func TestRunScript(t *testing.T) {
	oracle.Need(t, "iverilog")
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	dir := t.TempDir()
	frames := [][]byte{
		{0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09},
		{0xa0, 0xa1, 0xa2, 0xa3, 0xa4, 0xa5, 0xa6, 0xa7},
	}
	for _, mode := range []stim.Format{stim.FormatMemh, stim.FormatAXISMem} {
		for _, order := range []stim.Order{stim.LE, stim.BE} {
			prefix := filepath.Join(dir, "s-"+order.String())
			writeStim(t, mode, prefix, stim.Options{Width: 128, Order: order}, frames)
			out := filepath.Join(dir, mode.String()+"-"+order.String()+".hex")
			log := run(t, bash, "run.sh", "-w", "128", "-b", order.String(), "-s", "7", mode.String(), prefix, out)
			assert.Contains(t, log, "frames=2 ")
			b, err := os.ReadFile(out)
			require.NoError(t, err)
			got, err := stim.ReadHex(bytes.NewReader(b))
			require.NoError(t, err)
			assert.Equal(t, frames, got, "%v %v", mode, order)
		}
	}
	// Bad usage fails.
	cmd := exec.Command(bash, "run.sh", "vcd", "x", "y")
	assert.Error(t, cmd.Run())
}
