// resp_bench.sv: the device under test is an RC responder. resp_dut is a
// stand-in small enough to be obviously right: it keeps the expected PSN
// and the MSN of one QP and ACKs the RDMA WRITEs it receives (each packet
// with AckReq), re-ACKs duplicates and NAKs the first packet of a PSN gap
// (PSN sequence error). Frames pass as byte streams (valid, data, last);
// the DUT reads the BTH at the offsets of an untagged RoCEv2/IPv4 frame and
// builds its ACKs with rocekit_build, its framer. The rocekit requester
// peer drives it through DPI-C, posting WRITEs of 1 to 3000 bytes and
// losing a share of its frames, and the scoreboard checks every frame on
// the DUT's port.
//
// Parameter BREAK of resp_dut: 0 correct; 1 ACKs the wrong PSN (one past
// the packet acknowledged). tb_resp instantiates both and connects the one
// +break=0|1 names. The bench prints "tb_resp: PASS" or calls $fatal.
//
// Plusargs: +break=0|1 (default 0), +writes=N (default 40), +seed=N
// (default 1), +loss=PERMILLE (default 50: 5% of the peer's frames lost),
// +cycles=N (default 1000000: the bench gives up after so many cycles).

module resp_dut #(
    parameter int BREAK = 0,
    parameter int unsigned QPN = 'h12,
    parameter int unsigned PEER_QPN = 'h11,
    parameter int unsigned RQ_PSN = 0
) (
    input  logic clk,
    input  logic rx_valid,
    input  logic [7:0] rx_data,
    input  logic rx_last,
    output logic tx_valid,
    output logic [7:0] tx_data,
    output logic tx_last
);
  import rocekit_pkg::*;

  localparam int unsigned WRITE_FIRST = 'h06, WRITE_MIDDLE = 'h07, WRITE_LAST = 'h08, WRITE_ONLY = 'h0A;
  localparam int unsigned ACKNOWLEDGE = 'h11;

  int unsigned epsn = RQ_PSN;  // expected PSN
  int unsigned msn = 0;  // messages completed
  bit nak_sent = 0;  // the NAK for the current gap went out
  byte unsigned hdr[64];  // the first bytes of the frame being received
  int rx_pos = 0;
  byte unsigned out[ROCEKIT_MAX_FRAME], none[ROCEKIT_MAX_FRAME];
  int out_len = 0, tx_pos = 0;
  int unsigned op, qp, psn;
  bit ackreq;
  logic signed [23:0] diff;

  // ack asks for an ACK (syndrome 0x1F: unlimited credits) or a NAK for PSN
  // p. A request is longer than an ACK, so one is never still going out.
  int unsigned ack_psn, ack_syndrome;
  event build;
  function automatic void ack(int unsigned p, int unsigned syndrome);
    if (tx_pos < out_len) $fatal(1, "resp_dut: an ACK is still going out");
    ack_psn = p & 'hFFFFFF;
    ack_syndrome = syndrome;
    ->build;
  endfunction

  // The framer. (A block of its own: Verilator sets up the DPI-C call's
  // frame buffer where the call is, and this runs only per ACK, not per
  // clock edge.)
  always @(build) begin
    int st = rocekit_build(ACKNOWLEDGE, PEER_QPN, ack_psn, ROCEKIT_F_REVERSE, ack_syndrome, msn,
                           0, 0, 0, 0, none, 0, 0, out, ROCEKIT_MAX_FRAME, out_len);
    if (st != ROCEKIT_OK) $fatal(1, "resp_dut: rocekit_build: %s", rocekit_error_string());
    tx_pos = 0;
  end

  function automatic void frame_done(int len);
    if (len < 58) return;
    op = hdr[42];
    qp = {8'h0, hdr[47], hdr[48], hdr[49]};
    ackreq = hdr[50][7];
    psn = {8'h0, hdr[51], hdr[52], hdr[53]};
    diff = psn[23:0] - epsn[23:0];
    if (qp != QPN || !(op == WRITE_FIRST || op == WRITE_MIDDLE || op == WRITE_LAST || op == WRITE_ONLY)) return;
    if (diff == 0) begin  // in sequence
      epsn = (epsn + 1) & 'hFFFFFF;
      nak_sent = 0;
      if (op == WRITE_LAST || op == WRITE_ONLY) msn = msn + 1;
      if (ackreq) ack(BREAK == 1 ? psn + 1 : psn, 'h1F);
    end else if (diff < 0) begin  // duplicate: ACK the last PSN received
      ack(epsn - 1, 'h1F);
    end else if (!nak_sent) begin  // too new: NAK PSN sequence error
      ack(epsn, 'h60);
      nak_sent = 1;
    end
  endfunction

  always @(posedge clk) begin
    if (rx_valid) begin
      if (rx_pos < 64) hdr[rx_pos] = rx_data;
      rx_pos++;
      if (rx_last) begin
        frame_done(rx_pos);
        rx_pos = 0;
      end
    end
    tx_valid = tx_pos < out_len;
    tx_data  = tx_valid ? out[tx_pos] : 0;
    tx_last  = tx_valid && tx_pos == out_len - 1;
    if (tx_valid) tx_pos++;
  end
endmodule

module tb_resp;
  import rocekit_pkg::*;

  localparam string TB = "tb_resp";
  `include "port.svh"

  localparam longint unsigned PEER_MR = 'h1000_0000, DUT_MR = 'h2000_0000;
  int writes = 40, seed = 1, loss = 50, max_cycles = 1_000_000;
  int done = 0, failed = 0;
  longint unsigned wr_id;
  int unsigned status, wc_op, byte_len;

  resp_dut #(.BREAK(0)) good (clk, rx_valid && brk == 0, rx_data, rx_last, tx_valid[0], tx_data[0], tx_last[0]);
  resp_dut #(.BREAK(1)) broken (clk, rx_valid && brk == 1, rx_data, rx_last, tx_valid[1], tx_data[1], tx_last[1]);

  initial begin
    longint unsigned off = 0;
    void'($value$plusargs("break=%d", brk));
    void'($value$plusargs("writes=%d", writes));
    void'($value$plusargs("seed=%d", seed));
    void'($value$plusargs("loss=%d", loss));
    void'($value$plusargs("cycles=%d", max_cycles));
    check(rocekit_peer_new('h11, 'h12, 0, 0, 1024, PEER_MR, 'h100, 1 << 20, peer), "peer_new");
    check(rocekit_peer_option(peer, "timeout", 4), "timeout");  // 65.5 us
    check(rocekit_peer_option(peer, "seed", 64'(seed)), "seed");
    if (loss > 0) check(rocekit_peer_fault(peer, $sformatf("drop:%0d.%03d", loss / 1000, loss % 1000)), "fault");
    check(rocekit_sb_new(1024, sb), "sb_new");
    for (int i = 0; i < writes; i++) begin
      int unsigned len = 1 + (i * 997) % 3000;
      check(rocekit_peer_post_write(peer, 64'(i), PEER_MR + off, len, DUT_MR + off, 'h200), "post_write");
      off += 64'(len);
    end
    $display("tb_resp: break=%0d writes=%0d seed=%0d loss=%0d/1000", brk, writes, seed, loss);
  end

  always @(negedge clk) begin
    port_step();
    while (rocekit_peer_poll(peer, wr_id, status, wc_op, byte_len) == ROCEKIT_OK) begin
      done++;
      if (status != 0) begin
        failed++;
        $display("tb_resp: WRITE %0d completed with status %0d", wr_id, status);
      end
    end
    if (done == writes || cycle == max_cycles) finish();
  end

  task automatic finish();
    port_report($sformatf("%0d of %0d WRITEs completed, %0d in error", done, writes, failed));
    if (done != writes || failed != 0 || findings != 0) $fatal(1, "tb_resp: FAIL: %0d findings", findings);
    $display("tb_resp: PASS");
    $finish;
  endtask
endmodule
