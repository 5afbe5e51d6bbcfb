// rocekit_pkg.sv: SystemVerilog DPI-C declarations of librocekit, the C ABI
// of dpi/rocekit.h (read it for what each function does). Build the library
// with `go build -buildmode=c-archive -o librocekit.a ./dpi` (or c-shared)
// from the rocekit module root and link it into the simulation.
//
// Frames pass as byte arrays of ROCEKIT_MAX_FRAME bytes (a C pointer to the
// first byte, by the DPI-C rules for sized unpacked arrays) with their length
// beside them. Times are picoseconds. Handles are ints. Every function but
// the two that return a string returns a status: ROCEKIT_OK, ROCEKIT_EMPTY or
// a negative ROCEKIT_ERR_*, whose message rocekit_error_string() returns.
// The two C functions that fill a char buffer, rocekit_last_error and
// rocekit_sb_finding, are not declared here: rocekit_error_string and
// rocekit_sb_finding_text return the same text as a string.
//
// With Verilator, make the calls that pass frames from blocks that run once
// per frame (always @(an_event)), not from clocked blocks: Verilator sets up
// the buffer of such a call wherever the call sits, on every evaluation of
// the block (see examples/verilator).
package rocekit_pkg;

  // ROCEKIT_MAX_FRAME holds any RoCE frame up to the largest path MTU, 4096:
  // payload, two VLAN tags, IPv6, UDP, BTH, the longest extension headers,
  // and ICRC come to at most 4214 bytes. Simulators that copy DPI-C array
  // arguments copy this many bytes per call.
  localparam int ROCEKIT_MAX_FRAME = 4352;

  localparam int ROCEKIT_OK           = 0;
  localparam int ROCEKIT_EMPTY        = 1;
  localparam int ROCEKIT_ERR_ARG      = -1;
  localparam int ROCEKIT_ERR_FRAME    = -2;
  localparam int ROCEKIT_ERR_HANDLE   = -3;
  localparam int ROCEKIT_ERR_SPACE    = -4;
  localparam int ROCEKIT_ERR_STATE    = -5;
  localparam int ROCEKIT_ERR_INTERNAL = -6;

  localparam int unsigned ROCEKIT_F_ACKREQ  = 1;
  localparam int unsigned ROCEKIT_F_SE      = 2;
  localparam int unsigned ROCEKIT_F_REVERSE = 4;
  localparam int unsigned ROCEKIT_F_IPV6    = 8;
  localparam int unsigned ROCEKIT_F_ROCEV1  = 16;

  localparam int ROCEKIT_TO_DUT   = 0;
  localparam int ROCEKIT_FROM_DUT = 1;

  import "DPI-C" function string rocekit_error_string();

  import "DPI-C" function int rocekit_parse(
      input byte unsigned frame[ROCEKIT_MAX_FRAME], input int len,
      output int unsigned opcode, output int unsigned dest_qp, output int unsigned psn,
      output int unsigned ack_req, output int unsigned syndrome, output int unsigned msn,
      output longint unsigned va, output int unsigned rkey, output int unsigned dma_len,
      output int unsigned payload_len, output int unsigned icrc_ok);

  import "DPI-C" function int rocekit_build(
      input int unsigned opcode, input int unsigned dest_qp, input int unsigned psn,
      input int unsigned flags, input int unsigned syndrome, input int unsigned msn,
      input longint unsigned va, input int unsigned rkey, input int unsigned dma_len,
      input int unsigned imm,
      input byte unsigned payload[ROCEKIT_MAX_FRAME], input int payload_len,
      input int unsigned icrc_xor,
      output byte unsigned dst[ROCEKIT_MAX_FRAME], input int cap, output int len);

  import "DPI-C" function int rocekit_peer_new(
      input int unsigned qpn, input int unsigned dest_qpn, input int unsigned sq_psn,
      input int unsigned rq_psn, input int unsigned mtu, input longint unsigned mr_addr,
      input int unsigned mr_rkey, input int unsigned mr_len, output int handle);
  import "DPI-C" function int rocekit_free(input int handle);
  import "DPI-C" function int rocekit_peer_option(input int handle, input string name, input longint value);
  import "DPI-C" function int rocekit_peer_fault(input int handle, input string spec);
  import "DPI-C" function int rocekit_peer_rx(
      input int handle, input byte unsigned frame[ROCEKIT_MAX_FRAME], input int len, input longint time_ps);
  import "DPI-C" function int rocekit_peer_tick(input int handle, input longint time_ps);
  import "DPI-C" function int rocekit_peer_tx(
      input int handle, output byte unsigned dst[ROCEKIT_MAX_FRAME], input int cap, output int len);
  import "DPI-C" function int rocekit_peer_next_wake(input int handle, output longint time_ps);
  import "DPI-C" function int rocekit_peer_poll(
      input int handle, output longint unsigned wr_id, output int unsigned status,
      output int unsigned opcode, output int unsigned byte_len);
  import "DPI-C" function int rocekit_peer_post_write(
      input int handle, input longint unsigned wr_id, input longint unsigned local_addr,
      input int unsigned len, input longint unsigned remote_addr, input int unsigned rkey);
  import "DPI-C" function int rocekit_peer_post_read(
      input int handle, input longint unsigned wr_id, input longint unsigned local_addr,
      input int unsigned len, input longint unsigned remote_addr, input int unsigned rkey);
  import "DPI-C" function int rocekit_peer_post_send(
      input int handle, input longint unsigned wr_id, input longint unsigned local_addr,
      input int unsigned len);
  import "DPI-C" function int rocekit_peer_mem_write(
      input int handle, input longint unsigned addr, input byte unsigned data[ROCEKIT_MAX_FRAME], input int len);
  import "DPI-C" function int rocekit_peer_mem_read(
      input int handle, input longint unsigned addr, output byte unsigned dst[ROCEKIT_MAX_FRAME], input int len);
  import "DPI-C" function int rocekit_peer_stats(
      input int handle, output longint unsigned sent, output longint unsigned received,
      output longint unsigned rejected, output longint unsigned faults, output longint unsigned retransmitted);

  import "DPI-C" function int rocekit_sb_new(input int unsigned pmtu, output int handle);
  import "DPI-C" function int rocekit_sb_feed(
      input int handle, input byte unsigned frame[ROCEKIT_MAX_FRAME], input int len,
      input longint time_ps, input int direction);
  import "DPI-C" function int rocekit_sb_findings(input int handle, output int count);
  import "DPI-C" function int rocekit_sb_finish(input int handle, output int count);
  import "DPI-C" function string rocekit_sb_finding_text(input int handle, input int i);

endpackage
