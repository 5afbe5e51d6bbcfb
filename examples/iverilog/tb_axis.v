// tb_axis.v: replays a rocekit stimulus stream (package stim) as an
// AXI4-Stream and writes what a sink receives as one hex line per frame.
//
// Compile and run with Icarus Verilog (run.sh does this):
//
//   iverilog -g2012 -P tb_axis.W=64 -P tb_axis.BE=0 -o tb.vvp tb_axis.v
//   vvp -n tb.vvp +mem=s.mem +idx=s.idx.mem +out=got.hex [+words=N +frames=N] [+seed=S]
//   vvp -n tb.vvp +axismem=s.axis.mem +out=got.hex [+beats=N] [+seed=S]
//
// Parameters (compile time, -P tb_axis.NAME=VALUE):
//   W          tdata width in bits: 64, 128, 256, 512 or 1024; the files must
//              have been written with the same width
//   BE         0: byte-order le (frame byte k is tdata[8k+7:8k], tkeep[k]);
//              1: byte-order be (frame byte k is tdata[W-1-8k -: 8], tkeep[NB-1-k])
//   MAXWORDS   depth of the word / beat array (>= words or beats + 1)
//   MAXFRAMES  depth of the index array (>= frames + 1)
//
// Plusargs (run time):
//   +mem=F +idx=F   memh mode: F.mem holds one W-bit word per line, frames
//                   word-aligned; F.idx.mem one 64-bit entry per frame,
//                   {start word[31:0], length in bytes[31:0]}, ended by an
//                   entry of length 0 (its start is the word count)
//   +axismem=F      axismem mode: one beat per line, {3'b000, tlast,
//                   tkeep[NB-1:0], tdata[W-1:0]}, ended by a word with tkeep 0
//   +out=F          where the sink writes the frames: lower-case hex, one
//                   frame per line (the format stim.ReadHex reads)
//   +words=N +frames=N / +beats=N
//                   optional: how many data lines the files hold, so that
//                   $readmemh reads exactly that range (without them it reads
//                   the whole array and warns that the file is shorter; the
//                   end entry / end word still stops the stream)
//   +seed=S         seed of the $random streams that make tvalid idle and
//                   tready low on some cycles (default 1; the run is
//                   deterministic for a given seed)
//
// The source holds tdata/tkeep/tlast stable while tvalid is high and tready
// low, as AXI4-Stream requires, and inserts idle cycles (tvalid low) between
// beats. It prints "tb_axis: ..." at the end and "ERROR: ..." on any problem
// it or the sink sees.

`timescale 1ns / 1ps
`default_nettype none

module tb_axis #(
    parameter integer W = 64,
    parameter integer BE = 0,
    parameter integer MAXWORDS = 16384,
    parameter integer MAXFRAMES = 1024
);
  localparam integer NB = W / 8;  // bytes per beat

  reg clk = 1'b0;
  reg rst = 1'b1;
  always #5 clk = ~clk;

  reg  [W-1:0]  tdata;
  reg  [NB-1:0] tkeep;
  reg           tlast;
  reg           tvalid;
  wire          tready;
  wire [31:0]   rx_frames, rx_beats, rx_errors;

  axis_sink #(.W(W), .BE(BE)) sink (
      .clk(clk), .rst(rst),
      .tdata(tdata), .tkeep(tkeep), .tlast(tlast), .tvalid(tvalid), .tready(tready),
      .frames(rx_frames), .beats(rx_beats), .errors(rx_errors)
  );

  // Stimulus memories. Only the one of the chosen mode is loaded.
  reg [W-1:0]      mem   [0:MAXWORDS-1];   // memh: words
  reg [63:0]       idx   [0:MAXFRAMES-1];  // memh: {start, len} per frame
  reg [W+NB+3:0]   beat  [0:MAXWORDS-1];   // axismem: {3'b0, tlast, tkeep, tdata}

  reg [8*1024-1:0] memfile, idxfile, beatfile;
  reg              axismem_mode;
  integer          nwords, nframes, nbeats, seed, errors;

  // keep_of returns the tkeep of a beat carrying n (1..NB) bytes: the low
  // n bits for byte-order le, the high n bits for be.
  function [NB-1:0] keep_of(input integer n);
    integer k;
    begin
      keep_of = {NB{1'b0}};
      for (k = 0; k < NB; k = k + 1)
        if (k < n) keep_of[BE ? NB-1-k : k] = 1'b1;
    end
  endfunction

  // Source. fi/bi: frame and beat within it (memh); ki: beat (axismem).
  integer     fi, bi, ki, rem, beats_sent;
  reg [31:0]  start, len;
  reg [63:0]  e;
  reg [W+NB+3:0] bw;
  reg         done;

  always @(posedge clk) begin
    if (rst) begin
      tvalid <= 1'b0; tdata <= {W{1'b0}}; tkeep <= {NB{1'b0}}; tlast <= 1'b0;
      fi = 0; bi = 0; ki = 0; beats_sent = 0;
      done <= 1'b0;
    end else if (!done && (!tvalid || tready)) begin
      // The current beat (if any) is taken this cycle: present the next one,
      // or an idle cycle one time in eight.
      if (($random(seed) & 7) == 0) begin
        tvalid <= 1'b0;
      end else if (axismem_mode) begin
        bw = beat[ki];
        if (^bw === 1'bx) begin
          $display("ERROR: %0s word %0d is undefined: no end word (tkeep 0)?", beatfile, ki);
          errors = errors + 1;
          tvalid <= 1'b0; done <= 1'b1;
        end else if (bw[W+NB-1:W] == {NB{1'b0}} || ki == nbeats) begin
          tvalid <= 1'b0; done <= 1'b1;            // end word
        end else begin
          tdata <= bw[W-1:0];
          tkeep <= bw[W+NB-1:W];
          tlast <= bw[W+NB];
          tvalid <= 1'b1;
          ki = ki + 1; beats_sent = beats_sent + 1;
        end
      end else begin
        e = idx[fi];
        start = e[63:32];
        len = e[31:0];
        if (^e === 1'bx) begin
          $display("ERROR: %0s entry %0d is undefined: no end entry (length 0)?", idxfile, fi);
          errors = errors + 1;
          tvalid <= 1'b0; done <= 1'b1;
        end else if (len == 0 || fi == nframes) begin
          tvalid <= 1'b0; done <= 1'b1;            // end entry
        end else begin
          rem = len - bi * NB;                     // bytes left in the frame
          tdata <= mem[start + bi];
          tkeep <= keep_of(rem < NB ? rem : NB);
          tlast <= (rem <= NB);
          tvalid <= 1'b1;
          beats_sent = beats_sent + 1;
          if (rem <= NB) begin fi = fi + 1; bi = 0; end
          else bi = bi + 1;
        end
      end
    end
  end

  initial begin
    errors = 0;
    if (!$value$plusargs("seed=%d", seed)) seed = 1;
    seed = seed ^ 32'h5eed;  // the sink uses +seed itself; keep the streams apart
    if (!$value$plusargs("words=%d", nwords)) nwords = -1;
    if (!$value$plusargs("frames=%d", nframes)) nframes = -1;
    if (!$value$plusargs("beats=%d", nbeats)) nbeats = -1;
    axismem_mode = $value$plusargs("axismem=%s", beatfile);
    if (axismem_mode) begin
      if (nbeats >= MAXWORDS) begin
        $display("ERROR: %0d beats + end word do not fit MAXWORDS=%0d", nbeats, MAXWORDS);
        $finish;
      end
      if (nbeats >= 0) $readmemh(beatfile, beat, 0, nbeats);  // the beats and the end word
      else $readmemh(beatfile, beat);
    end else begin
      if (!$value$plusargs("mem=%s", memfile) || !$value$plusargs("idx=%s", idxfile)) begin
        $display("ERROR: give +mem=PREFIX.mem +idx=PREFIX.idx.mem, or +axismem=PREFIX.axis.mem");
        $finish;
      end
      if (nwords > MAXWORDS || nframes >= MAXFRAMES) begin
        $display("ERROR: %0d words / %0d frames do not fit MAXWORDS=%0d / MAXFRAMES=%0d-1",
                 nwords, nframes, MAXWORDS, MAXFRAMES);
        $finish;
      end
      if (nwords > 0) $readmemh(memfile, mem, 0, nwords - 1);
      else if (nwords < 0) $readmemh(memfile, mem);
      if (nframes >= 0) $readmemh(idxfile, idx, 0, nframes);  // the entries and the end entry
      else $readmemh(idxfile, idx);
    end

    repeat (4) @(posedge clk);
    rst <= 1'b0;
    wait (done);
    repeat (8) @(posedge clk);
    sink.close_output;
    if (nframes >= 0 && rx_frames != nframes) begin
      $display("ERROR: %0d frames received, %0d expected", rx_frames, nframes);
      errors = errors + 1;
    end
    if (rx_beats != beats_sent) begin
      $display("ERROR: %0d beats received, %0d sent", rx_beats, beats_sent);
      errors = errors + 1;
    end
    $display("tb_axis: W=%0d BE=%0d mode=%0s frames=%0d beats=%0d cycles=%0d errors=%0d",
             W, BE, axismem_mode ? "axismem" : "memh", rx_frames, rx_beats, $time / 10,
             errors + rx_errors);
    $finish;
  end
endmodule

// axis_sink: always-ready-ish AXI4-Stream sink. tready is low on a random
// quarter of the cycles. On every handshake it appends the bytes whose tkeep
// bit is set, in frame byte order, to the current line of +out=FILE; tlast
// ends the line. It flags a beat with tkeep 0 and a partial beat without
// tlast.
module axis_sink #(
    parameter integer W = 64,
    parameter integer BE = 0
) (
    input  wire          clk,
    input  wire          rst,
    input  wire [W-1:0]  tdata,
    input  wire [W/8-1:0] tkeep,
    input  wire          tlast,
    input  wire          tvalid,
    output reg           tready,
    output reg  [31:0]   frames,
    output reg  [31:0]   beats,
    output reg  [31:0]   errors
);
  localparam integer NB = W / 8;

  integer fd, rnd, j, lane;
  reg [8*1024-1:0] outfile;

  initial begin
    if (!$value$plusargs("out=%s", outfile)) begin
      $display("ERROR: give +out=FILE");
      $finish;
    end
    fd = $fopen(outfile, "w");
    if (fd == 0) begin
      $display("ERROR: cannot write %0s", outfile);
      $finish;
    end
    if (!$value$plusargs("seed=%d", rnd)) rnd = 1;
  end

  task close_output;
    $fclose(fd);
  endtask

  always @(posedge clk) begin
    if (rst) begin
      tready <= 1'b0;
      frames <= 0; beats <= 0; errors <= 0;
    end else begin
      if (tvalid && tready) begin
        beats <= beats + 1;
        if (tkeep == {NB{1'b0}}) begin
          $display("ERROR: beat %0d has tkeep 0", beats);
          errors <= errors + 1;
        end else if (!tlast && tkeep != {NB{1'b1}}) begin
          $display("ERROR: beat %0d is partial (tkeep %h) without tlast", beats, tkeep);
          errors <= errors + 1;
        end
        for (j = 0; j < NB; j = j + 1) begin
          lane = BE ? NB - 1 - j : j;
          if (tkeep[lane]) $fwrite(fd, "%02x", tdata[8*lane +: 8]);
        end
        if (tlast) begin
          $fwrite(fd, "\n");
          frames <= frames + 1;
        end
      end
      tready <= ($random(rnd) & 3) != 0;
    end
  end
endmodule

`default_nettype wire
