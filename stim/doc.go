// Package stim writes streams of frames as text stimulus for hardware
// verification benches (Verilog, SystemVerilog, UVM, cocotb) and reads them
// back.
//
// There are four formats. Every writer streams to an io.Writer, rejects empty
// frames, and allocates nothing per frame once its scratch buffer has grown
// to the longest frame; Close writes the end marker and trailer and flushes
// (it does not close the io.Writer; Create's writers do close their files).
// Every reader returns the frames in order; on malformed input it fails with
// a *SyntaxError naming the file, the line and what is wrong (bad hex, a
// wrong digit count, tkeep 0 or with holes, a partial beat without tlast,
// input ending inside a frame, a header contradicting the width or order
// asked for, ...), together with the frames read before it. Readers never
// panic.
//
// # Common rules
//
// W is the data width in bits, one of 64, 128, 256, 512, 1024; NB = W/8 is
// the bytes per beat or word. A frame of L bytes takes ceil(L/NB) beats or
// words; the last one is partial when L is not a multiple of NB, and its
// unused bytes are written as 0 (readers ignore them).
//
// The byte order (Order) says where frame byte k (0-based, first on the wire)
// of a beat goes; it applies to tdata, tkeep and memh words alike:
//
//	le (LE, the default; the AXI4-Stream convention): byte k of the beat is
//	   tdata[8k+7:8k] and is qualified by tkeep[k]. Written as a hex number,
//	   most significant digit first, byte 0 is therefore the LAST two digits.
//	be (BE): byte k is tdata[W-1-8k:W-8-8k] and is qualified by
//	   tkeep[NB-1-k]; the hex number reads in wire order.
//
// Kept bytes are contiguous from byte 0: a partial beat of n bytes has tkeep
// = (1<<n)-1 in le and the n most significant tkeep bits set in be. Only the
// last beat of a frame (tlast 1) may be partial. Frames are back to back:
// there are no idle lines; a frame boundary is tlast alone.
//
// All hex is written in lower case and always has the full digit count of
// its field; readers accept upper case too but insist on the digit count.
// Header lines (unless Options.NoHeader) state the format, width and byte
// order, e.g. "# rocekit stimulus format=axis width=64 byte-order=le"; a
// reader fails when such a header contradicts the width or order it was
// given. With Options.FrameComments a comment "frame N len L" (N counts from
// 0, L in bytes) precedes each frame. Comment lines start with "#" in the
// hex and axis formats and with "//" (which $readmemh skips) in the memh and
// axismem formats; blank lines are ignored everywhere.
//
// # Format hex (FormatHex, file PREFIX.hex)
//
// One frame per line: its bytes as lower-case hex without separators, first
// byte first, like scapy's bytes(p).hex(). Width and order do not apply.
//
//	# rocekit stimulus format=hex
//	00010203040506070809
//	a0a1a2a3a4a5a6a7
//
// # Format axis (FormatAXIS, file PREFIX.axis)
//
// One AXI-Stream beat per line, "tdata tkeep tlast" separated by one space:
// tdata as W/4 hex digits, tkeep as W/32 hex digits (NB bits), tlast as 0 or
// 1. The two frames above at W=64:
//
//	le:                         be:
//	0706050403020100 ff 0       0001020304050607 ff 0
//	0000000000000908 03 1       0809000000000000 c0 1
//	a7a6a5a4a3a2a1a0 ff 1       a0a1a2a3a4a5a6a7 ff 1
//
// # Format memh (FormatMemh, files PREFIX.mem and PREFIX.idx.mem)
//
// For $readmemh. PREFIX.mem holds one W-bit word per line (W/4 hex digits),
// laid out like tdata above; every frame starts on a new word, and the words
// of all frames follow each other with no gap. PREFIX.idx.mem holds one
// 64-bit entry per frame (16 hex digits), {start[31:0], len[31:0]}: start is
// the index in PREFIX.mem of the frame's first word, len its length in
// bytes. The table ends with an entry of length 0 whose start is the number
// of words in PREFIX.mem, so a bench loads it with
//
//	reg [W-1:0] mem [0:MAXWORDS-1];  $readmemh("s.mem", mem);
//	reg [63:0]  idx [0:MAXFRAMES];   $readmemh("s.idx.mem", idx);
//	// frame i: bytes from mem[idx[i][63:32]], idx[i][31:0] of them; stop at length 0
//
// ReadMemh also accepts a table without the end entry, and gaps between
// frames in PREFIX.mem, but not entries out of word order or overlapping.
// The same two frames at W=64, le (be words as in the axis example):
//
//	s.mem:              s.idx.mem:
//	0706050403020100    000000000000000a   start 0, 10 bytes
//	0000000000000908    0000000200000008   start 2, 8 bytes
//	a7a6a5a4a3a2a1a0    0000000300000000   end: 3 words, 0 bytes
//
// # Format axismem (FormatAXISMem, file PREFIX.axis.mem)
//
// For $readmemh: one AXI-Stream beat per line packed into one word of
// W+NB+4 bits, {3'b000, tlast, tkeep[NB-1:0], tdata[W-1:0]}, written as
// 1+W/32+W/4 hex digits: the tlast digit (0 or 1), the tkeep digits, the
// tdata digits, i.e. the axis line reordered with its spaces removed. After
// the last beat comes one all-zero word: tkeep 0 marks the end of the stream.
// A bench declares reg [W+NB+3:0] beat [0:MAXBEATS-1] and slices tdata =
// beat[k][W-1:0], tkeep = beat[k][W+NB-1:W], tlast = beat[k][W+NB]. The
// same two frames at W=64, le:
//
//	0ff0706050403020100
//	1030000000000000908
//	1ffa7a6a5a4a3a2a1a0
//	0000000000000000000
//
// # Trailer
//
// Unless Options.NoHeader, Close ends each file with a comment counting what
// it holds: "# end frames=N" (hex), "# end frames=N beats=M" (axis), "// end
// frames=N words=M" (memh, both files), "// end frames=N beats=M" (axismem;
// M excludes the end word).
//
// The Verilog testbench in examples/iverilog reads the memh and axismem
// formats with Icarus Verilog and drives them as an AXI-Stream.
package stim
