// req_bench.sv: the device under test is an RC requester. req_dut is a
// stand-in small enough to be obviously right: one request outstanding at
// a time, alternately an RDMA WRITE Only of 256 bytes and an RDMA READ of
// 2048 bytes (two responses at path MTU 1024, so the READ reserves two
// PSNs); it checks each READ response's data, completes a WRITE on an ACK
// covering its PSN and a READ when both responses arrived, and sends the
// request again, unchanged, after a NAK or when 3000 cycles pass without
// its answer. Frames pass as byte streams (valid, data, last); the DUT reads
// headers at the offsets of an untagged RoCEv2/IPv4 frame and builds its
// requests with rocekit_build, its framer. The rocekit responder peer
// answers live through DPI-C, coalescing ACKs (every 2nd), pacing READ
// responses (2000 bytes/us) and losing a share of what it sends; the
// scoreboard checks every frame on the DUT's port and, at the end, the
// bench compares the peer's memory with what the WRITEs carried.
//
// Parameter BREAK of req_dut: 0 correct; 1 does not skip the PSNs a READ
// reserves: the request after a READ takes the READ's second PSN. tb_req
// instantiates both and connects the one +break=0|1 names. The bench
// prints "tb_req: PASS" or calls $fatal.
//
// Plusargs: +break=0|1 (default 0), +requests=N (default 40), +seed=N
// (default 1), +loss=PERMILLE (default 200: 20% of the peer's frames lost),
// +cycles=N (default 2000000).

module req_dut #(
    parameter int BREAK = 0,
    parameter int unsigned PEER_QPN = 'h11,
    parameter int unsigned SQ_PSN = 0,
    parameter longint unsigned PEER_VA = 'h1000_0000,
    parameter int unsigned PEER_RKEY = 'h100,
    parameter int TIMEOUT = 3000
) (
    input  logic clk,
    input  int   requests,
    input  logic rx_valid,
    input  logic [7:0] rx_data,
    input  logic rx_last,
    output logic tx_valid,
    output logic [7:0] tx_data,
    output logic tx_last,
    output int   completed,
    output int   errors
);
  import rocekit_pkg::*;

  localparam int unsigned WRITE_ONLY = 'h0A, READ_REQUEST = 'h0C, READ_FIRST = 'h0D, READ_LAST = 'h0F;
  localparam int unsigned ACKNOWLEDGE = 'h11;
  localparam int WLEN = 256, RLEN = 2048, MTU = 1024;

  int unsigned psn = SQ_PSN;  // PSN of the current request
  bit busy = 0;  // the current request is out, unanswered
  bit got_first = 0, got_last = 0;
  int timer = 0;
  byte unsigned rxf[ROCEKIT_MAX_FRAME];
  int rx_pos = 0;
  byte unsigned out[ROCEKIT_MAX_FRAME], pl[ROCEKIT_MAX_FRAME];
  int out_len = 0, tx_pos = 0;
  int unsigned op, rpsn, syndrome;
  logic signed [23:0] diff;
  event build;

  initial begin
    completed = 0;
    errors = 0;
  end

  // What request i is: even WRITEs, odd READs, each at its own address.
  function automatic bit is_read(int i);
    return i % 2 == 1;
  endfunction
  function automatic longint unsigned remote(int i);
    return is_read(i) ? PEER_VA + 'h10000 + 64'(i) * RLEN : PEER_VA + 64'(i) * WLEN;
  endfunction
  // The peer's memory starts with rocekit gen's pattern.
  function automatic byte unsigned pattern(longint unsigned off);
    return 8'(off + (off >> 8) + (off >> 16) + (off >> 24));
  endfunction

  // send (re)builds the current request; the framer block below runs it.
  function automatic void send();
    if (!is_read(completed)) for (int k = 0; k < WLEN; k++) pl[k] = 8'(completed * 7 + k);
    busy = 1;
    timer = 0;
    ->build;
  endfunction

  // The framer, in a block of its own so that Verilator sets up the DPI-C
  // call's frame buffers per request, not per clock edge.
  always @(build) begin
    int st;
    if (is_read(completed))
      st = rocekit_build(READ_REQUEST, PEER_QPN, psn, ROCEKIT_F_ACKREQ | ROCEKIT_F_REVERSE, 0, 0,
                         remote(completed), PEER_RKEY, RLEN, 0, pl, 0, 0, out, ROCEKIT_MAX_FRAME, out_len);
    else
      st = rocekit_build(WRITE_ONLY, PEER_QPN, psn, ROCEKIT_F_ACKREQ | ROCEKIT_F_REVERSE, 0, 0,
                         remote(completed), PEER_RKEY, WLEN, 0, pl, WLEN, 0, out, ROCEKIT_MAX_FRAME, out_len);
    if (st != ROCEKIT_OK) $fatal(1, "req_dut: rocekit_build: %s", rocekit_error_string());
    tx_pos = 0;
  end

  function automatic void complete();
    // A READ reserves one PSN per response (ib-facts.md §5.3).
    psn = (psn + (is_read(completed) ? (BREAK == 1 ? 1 : RLEN / MTU) : 1)) & 'hFFFFFF;
    completed++;
    busy = 0;
    got_first = 0;
    got_last = 0;
  endfunction

  // check_data compares a READ response's payload with the peer's memory.
  function automatic void check_data(int part);
    longint unsigned off = remote(completed) - PEER_VA + 64'(part) * MTU;
    for (int k = 0; k < MTU; k++)
      if (rxf[58+k] != pattern(off + 64'(k))) begin
        if (errors < 5) $display("req_dut: READ %0d byte %0d: 0x%02x, expected 0x%02x", completed, part * MTU + k, rxf[58+k], pattern(off + 64'(k)));
        errors++;
      end
  endfunction

  function automatic void frame_done(int len);
    if (!busy || len < 62) return;
    op = rxf[42];
    rpsn = {8'h0, rxf[51], rxf[52], rxf[53]};
    syndrome = rxf[54];  // AETH
    diff = rpsn[23:0] - psn[23:0];
    if (op == ACKNOWLEDGE && syndrome[6:5] == 2'b11) begin  // NAK: send again
      if (tx_pos == out_len) send();
    end else if (!is_read(completed)) begin
      if (op == ACKNOWLEDGE && syndrome[6:5] == 2'b00 && diff >= 0) complete();
    end else if (op == READ_FIRST && diff == 0 && len == 58 + MTU + 4) begin
      check_data(0);
      got_first = 1;
    end else if (op == READ_LAST && diff == 1 && len == 58 + MTU + 4) begin
      check_data(1);
      got_last = 1;
    end
    if (busy && got_first && got_last) complete();
  endfunction

  always @(posedge clk) begin
    if (rx_valid) begin
      rxf[rx_pos] = rx_data;
      rx_pos++;
      if (rx_last) begin
        frame_done(rx_pos);
        rx_pos = 0;
      end
    end
    if (busy) begin
      timer++;
      if (timer >= TIMEOUT && tx_pos == out_len) send();
    end else if (completed < requests && tx_pos == out_len) send();
    tx_valid = tx_pos < out_len;
    tx_data  = tx_valid ? out[tx_pos] : 0;
    tx_last  = tx_valid && tx_pos == out_len - 1;
    if (tx_valid) tx_pos++;
  end
endmodule

module tb_req;
  import rocekit_pkg::*;

  localparam string TB = "tb_req";
  `include "port.svh"

  localparam longint unsigned PEER_MR = 'h1000_0000;
  int requests = 40, seed = 1, loss = 200, max_cycles = 2_000_000;
  int completed[2], errors[2];

  req_dut #(.BREAK(0)) good (clk, requests, rx_valid && brk == 0, rx_data, rx_last,
                             tx_valid[0], tx_data[0], tx_last[0], completed[0], errors[0]);
  req_dut #(.BREAK(1)) broken (clk, requests, rx_valid && brk == 1, rx_data, rx_last,
                               tx_valid[1], tx_data[1], tx_last[1], completed[1], errors[1]);

  initial begin
    void'($value$plusargs("break=%d", brk));
    void'($value$plusargs("requests=%d", requests));
    void'($value$plusargs("seed=%d", seed));
    void'($value$plusargs("loss=%d", loss));
    void'($value$plusargs("cycles=%d", max_cycles));
    check(rocekit_peer_new('h11, 'h12, 0, 0, 1024, PEER_MR, 'h100, 1 << 20, peer), "peer_new");
    check(rocekit_peer_option(peer, "seed", 64'(seed)), "seed");
    check(rocekit_peer_option(peer, "ack_every", 2), "ack_every");
    check(rocekit_peer_option(peer, "read_bytes_per_us", 2000), "read_bytes_per_us");
    if (loss > 0) check(rocekit_peer_fault(peer, $sformatf("drop:%0d.%03d", loss / 1000, loss % 1000)), "fault");
    check(rocekit_sb_new(1024, sb), "sb_new");
    $display("tb_req: break=%0d requests=%0d seed=%0d loss=%0d/1000", brk, requests, seed, loss);
  end

  always @(negedge clk) begin
    port_step();
    if (completed[brk] == requests || cycle == max_cycles) ->finish;
  end

  event finish;
  always @(finish) begin
    byte unsigned mem[ROCEKIT_MAX_FRAME];
    int bad = 0;
    // Every WRITE's 256 bytes reached the peer's memory.
    for (int i = 0; i < requests; i += 2) begin
      check(rocekit_peer_mem_read(peer, PEER_MR + 64'(i) * 256, mem, 256), "mem_read");
      for (int k = 0; k < 256; k++) if (mem[k] != 8'(i * 7 + k)) bad++;
    end
    port_report($sformatf("%0d of %0d requests completed, %0d READ data errors, %0d WRITE bytes wrong in the peer's memory",
                          completed[brk], requests, errors[brk], bad));
    if (completed[brk] != requests || errors[brk] != 0 || bad != 0 || findings != 0)
      $fatal(1, "tb_req: FAIL: %0d findings", findings);
    $display("tb_req: PASS");
    $finish;
  end
endmodule
