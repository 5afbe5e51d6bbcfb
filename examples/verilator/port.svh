// port.svh: the part of a bench that joins a stand-in DUT's byte streams
// to a rocekit peer and scoreboard through DPI-C, included inside a bench
// module after it declares `localparam string TB` (its name in messages)
// and imports rocekit_pkg. It declares the clock, the time, the peer and
// scoreboard handles, the frame buffers and the DUT's two instances' ports
// (index brk: 0 the stand-in, 1 its broken variant); the bench calls
// port_step() from its falling-edge block and sets up peer and sb.

localparam longint PERIOD_PS = 4000;  // 250 MHz, a byte per cycle

logic clk = 0;
always #2ns clk = ~clk;

int brk = 0;
longint cycle = 0, now, wake;
int peer, sb, st, findings = 0;

// to the DUT: the peer's frame being streamed
byte unsigned txf[ROCEKIT_MAX_FRAME];
int tx_len = 0, tx_pos = 0;
logic rx_valid = 0, rx_last = 0;
logic [7:0] rx_data = 0;
// from the DUT
byte unsigned rxf[ROCEKIT_MAX_FRAME];
int rx_pos = 0, rx_len = 0;
event from_dut, to_dut;
bit fetching = 0;
logic tx_valid[2], tx_last[2];
logic [7:0] tx_data[2];

function automatic void check(int st, string what);
  if (st != ROCEKIT_OK) $fatal(1, "%s: %s: status %0d: %s", TB, what, st, rocekit_error_string());
endfunction

// port_step moves a cycle: the time, a byte from the DUT (a whole frame
// triggers from_dut), the peer's clock, the next frame of the peer when
// it is due (to_dut), and a byte to the DUT. The DUT works on the rising
// edge; the bench calls this on the falling one.
task automatic port_step();
  cycle++;
  now = cycle * PERIOD_PS;
  if (tx_valid[brk]) begin
    rxf[rx_pos] = tx_data[brk];
    rx_pos++;
    if (tx_last[brk]) begin
      rx_len = rx_pos;
      rx_pos = 0;
      ->from_dut;
    end
  end
  check(rocekit_peer_tick(peer, now), "peer_tick");
  if (tx_pos == tx_len && !fetching && rocekit_peer_next_wake(peer, wake) == ROCEKIT_OK && wake <= now) begin
    fetching = 1;
    ->to_dut;
  end
  rx_valid = tx_pos < tx_len;
  rx_data  = rx_valid ? txf[tx_pos] : 0;
  rx_last  = rx_valid && tx_pos == tx_len - 1;
  if (rx_valid) tx_pos++;
endtask

// The calls that pass frames run in blocks of their own, once per frame
// (Verilator sets up a DPI-C call's frame buffer where the call is).
// from_dut hands the frame the DUT sent to the scoreboard and the peer.
always @(from_dut) begin
  check(rocekit_sb_feed(sb, rxf, rx_len, now, ROCEKIT_FROM_DUT), "sb_feed");
  st = rocekit_peer_rx(peer, rxf, rx_len, now);
  if (st != ROCEKIT_OK) $display("%s: the peer dropped a DUT frame: %s", TB, rocekit_error_string());
end

// to_dut takes the peer's next frame for the DUT and the scoreboard; it
// goes out from the next falling edge.
always @(to_dut) begin
  st = rocekit_peer_tx(peer, txf, ROCEKIT_MAX_FRAME, tx_len);
  if (st == ROCEKIT_OK) check(rocekit_sb_feed(sb, txf, tx_len, now, ROCEKIT_TO_DUT), "sb_feed");
  else if (st != ROCEKIT_EMPTY) check(st, "peer_tx");
  tx_pos = 0;
  fetching = 0;
end

// port_report prints the scoreboard's findings and the peer's counts
// after the bench's own summary, what.
task automatic port_report(string what);
  longint unsigned sent, received, rejected, faults, retx;
  check(rocekit_sb_finish(sb, findings), "sb_finish");
  check(rocekit_peer_stats(peer, sent, received, rejected, faults, retx), "peer_stats");
  $display("%s: %0d cycles, %s; the peer sent %0d frames (%0d lost by the fault, %0d retransmitted) and received %0d",
           TB, cycle, what, sent, faults, retx, received);
  for (int i = 0; i < findings; i++) $display("%s: finding: %s", TB, rocekit_sb_finding_text(sb, i));
endtask
