/*
 * rocekit.h: the C ABI of librocekit, rocekit's RoCE/RC models for
 * SystemVerilog DPI-C and C/C++ testbenches.
 *
 * Build the library from the rocekit module root:
 *   go build -buildmode=c-shared  -o librocekit.so ./dpi
 *   go build -buildmode=c-archive -o librocekit.a  ./dpi   (link with -lpthread)
 * SystemVerilog benches import the same functions with dpi/rocekit_pkg.sv.
 *
 * Conventions
 *  - Every function but the two *_string/_text accessors returns a status:
 *    ROCEKIT_OK (0), ROCEKIT_EMPTY (1: nothing to return, not an error) or a
 *    negative ROCEKIT_ERR_*; after an error rocekit_last_error gives the
 *    message, which names the argument or field at fault.
 *  - Frames are Ethernet frames as bytes (const uint8_t* + length), without
 *    the FCS. Times are int64_t picoseconds and never go back, per peer.
 *  - Peers and scoreboards are opaque int32_t handles; rocekit_free frees
 *    either. Handles are never reused.
 *  - The library keeps no pointer the caller passed once a call returns, and
 *    hands out no pointer to its own memory except the two string accessors.
 *  - Output pointers marked "may be NULL" are skipped when NULL; every other
 *    NULL pointer is ROCEKIT_ERR_ARG.
 *  - Calls must not overlap: one simulator thread.
 */
#ifndef ROCEKIT_H
#define ROCEKIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes. */
#define ROCEKIT_OK            0
#define ROCEKIT_EMPTY         1  /* peer_tx: no frame due; peer_poll: no completion; peer_next_wake: no timer */
#define ROCEKIT_ERR_ARG      -1  /* invalid argument: null pointer, negative length, value out of range */
#define ROCEKIT_ERR_FRAME    -2  /* a frame is too short or does not decode as RoCE; peer_rx: also a bad ICRC (dropped) */
#define ROCEKIT_ERR_HANDLE   -3  /* no peer/scoreboard with this handle (never made, freed, or the other kind) */
#define ROCEKIT_ERR_SPACE    -4  /* the buffer is too small; the message gives the size needed; nothing consumed */
#define ROCEKIT_ERR_STATE    -5  /* refused now: a QP option after traffic began, a feed after sb_finish */
#define ROCEKIT_ERR_INTERNAL -6  /* a defect in rocekit caught at the boundary (never a crash) */

/* Copies the message of the last error, NUL-terminated (truncated to len-1
 * bytes) into buf. */
int rocekit_last_error(char* buf, int32_t len);
/* The message of the last error, in a buffer of the library valid until the
 * next call of this function (for SystemVerilog: function string). */
const char* rocekit_error_string(void);

/* ---- Frames ---------------------------------------------------------------
 * Encapsulations: Ethernet (up to two VLAN tags) carrying RoCEv2 over IPv4 or
 * IPv6 (UDP 4791) or RoCEv1 (Ethertype 0x8915). */

/* Parses a frame. Outputs (each may be NULL): the BTH opcode, DestQP, PSN
 * and AckReq (0/1); the AETH syndrome and MSN (0 when the opcode has no
 * AETH); the RETH VA, R_Key and DMA length (0 without a RETH); the payload
 * length (pad excluded); icrc_ok 1 if the ICRC matches the frame, else 0.
 * ROCEKIT_ERR_FRAME if the frame does not decode. */
int rocekit_parse(const uint8_t* frame, int32_t len,
                  uint32_t* opcode, uint32_t* dest_qp, uint32_t* psn, uint32_t* ack_req,
                  uint32_t* syndrome, uint32_t* msn,
                  uint64_t* va, uint32_t* rkey, uint32_t* dma_len,
                  uint32_t* payload_len, uint32_t* icrc_ok);

/* Flags of rocekit_build. */
#define ROCEKIT_F_ACKREQ  1u   /* BTH AckReq */
#define ROCEKIT_F_SE      2u   /* BTH SE */
#define ROCEKIT_F_REVERSE 4u   /* from 192.168.1.2 / 02:00:00:00:00:02 to .1 / :01 (default: .1 -> .2) */
#define ROCEKIT_F_IPV6    8u   /* RoCEv2 over IPv6 (fd00::1 -> fd00::2) instead of IPv4 */
#define ROCEKIT_F_ROCEV1 16u   /* RoCEv1 (GRH) instead of RoCEv2 */

/* Builds a frame with any opcode of the IBA opcode table (0x00-0xFF but the
 * reserved ones) into buf (cap bytes) and sets *len. The opcode decides which
 * headers are written: AETH (syndrome, msn), RETH (va, rkey, dma_len),
 * AtomicETH (va, rkey; swap/compare 0), ImmDt or IETH (imm); others are zero.
 * P_Key 0xFFFF, PadCnt from the payload length; lengths, checksums and the
 * ICRC are computed, then icrc_xor is XORed into the ICRC (0: a correct
 * frame, else a deliberately wrong one). payload may be NULL if payload_len
 * is 0. ROCEKIT_ERR_SPACE if cap is too small. */
int rocekit_build(uint32_t opcode, uint32_t dest_qp, uint32_t psn, uint32_t flags,
                  uint32_t syndrome, uint32_t msn,
                  uint64_t va, uint32_t rkey, uint32_t dma_len, uint32_t imm,
                  const uint8_t* payload, int32_t payload_len, uint32_t icrc_xor,
                  uint8_t* buf, int32_t cap, int32_t* len);

/* ---- Peer: an RC QP (requester and responder) answering the DUT -----------
 * The peer is 192.168.1.1 / 02:00:00:00:00:01 and sends to .2 / :02 (option
 * "reverse" swaps them). Its QP starts in RTS with qpn, dest_qpn (the DUT's
 * QP), sq_psn (first PSN of its requests), rq_psn (first PSN it expects),
 * path MTU mtu (256..4096), timeout 14, retry_cnt 7, rnr_retry 7, ORD/IRD 16,
 * and one memory region: mr_len bytes at mr_addr, R_Key mr_rkey, every right,
 * filled with rocekit gen's pattern (byte i = (i + (i>>8) + (i>>16) +
 * (i>>24)) & 0xff); 16 receive buffers of 4096 bytes are kept posted (one
 * posted again for each SEND received). Completions wait until polled. */
int rocekit_peer_new(uint32_t qpn, uint32_t dest_qpn, uint32_t sq_psn, uint32_t rq_psn,
                     uint32_t mtu, uint64_t mr_addr, uint32_t mr_rkey, uint32_t mr_len,
                     int32_t* handle);
/* Frees a peer or a scoreboard. */
int rocekit_free(int32_t handle);

/* Options (name, value):
 *   ack_every N          send only every Nth ACK (ACK coalescing; 1 = all)
 *   ack_delay_ns N       longest an ACK is held (default 2000)
 *   read_bytes_per_us N  pace READ response frames (0 = unpaced)
 *   recv_wqes N          receive buffers kept posted (0: SENDs get RNR NAKs)
 *   recv_bytes N         size of a receive buffer (default 4096)
 *   rnr_naks N           post no receive buffer until N SENDs got an RNR NAK
 *   min_rnr_timer N      RNR timer code of the peer's RNR NAKs (0-31)
 *   rnr_retry N          RNR NAKs the peer's requester sits out (0-7, 7 infinite)
 *   retry_cnt N          retransmission limit (0-7)
 *   timeout N            local ACK timeout 4.096 us x 2^N (0-31, 0: none)
 *   seed N               seed of the faults
 *   encap N              1 RoCEv2/IPv4, 2 RoCEv2/IPv6, 3 RoCEv1
 *   reverse N            1: the peer is .2 and the DUT .1
 * recv_wqes and the options after it are accepted only before the first
 * rx, tick or post (ROCEKIT_ERR_STATE). RNR: with recv_wqes 0, or until
 * rnr_naks RNR NAKs went out, SENDs meet RNR NAKs (ib-facts.md §5.7). */
int rocekit_peer_option(int32_t handle, const char* name, int64_t value);
/* Adds a fault on what the peer sends, written as for `rocekit gen --fault`:
 * "KIND:RATE" (probability per frame) or "KIND:@N" (the Nth frame, from 0).
 * KIND: drop (loss), duplicate, reorder (swap with the next frame), bad-icrc,
 * flip-covered, flip-masked, truncate, wrong-padcnt, reserved-opcode, tver. */
int rocekit_peer_fault(int32_t handle, const char* spec);

/* A frame the DUT sent arrives at time_ps. ROCEKIT_ERR_FRAME: dropped (does
 * not decode, or bad ICRC), as a receiver drops it. */
int rocekit_peer_rx(int32_t handle, const uint8_t* frame, int32_t len, int64_t time_ps);
/* The time is time_ps: timers, held ACKs and paced frames. */
int rocekit_peer_tick(int32_t handle, int64_t time_ps);
/* Copies the next frame due into buf and sets *len; ROCEKIT_EMPTY (and *len
 * 0) when none is due. Call until ROCEKIT_EMPTY after every rx, tick, post. */
int rocekit_peer_tx(int32_t handle, uint8_t* buf, int32_t cap, int32_t* len);
/* When the peer next needs a tick; ROCEKIT_EMPTY if nothing is pending. */
int rocekit_peer_next_wake(int32_t handle, int64_t* time_ps);
/* The next work completion (each output may be NULL): status and opcode
 * with the ibv_wc_status / ibv_wc_opcode numbers; ROCEKIT_EMPTY if none. */
int rocekit_peer_poll(int32_t handle, uint64_t* wr_id, uint32_t* status,
                      uint32_t* opcode, uint32_t* byte_len);
/* Work requests; local_addr..+len must lie in the peer's memory region. */
int rocekit_peer_post_write(int32_t handle, uint64_t wr_id, uint64_t local_addr, uint32_t len,
                            uint64_t remote_addr, uint32_t rkey);
int rocekit_peer_post_read(int32_t handle, uint64_t wr_id, uint64_t local_addr, uint32_t len,
                           uint64_t remote_addr, uint32_t rkey);
int rocekit_peer_post_send(int32_t handle, uint64_t wr_id, uint64_t local_addr, uint32_t len);
/* Writes or reads the peer's memory region. */
int rocekit_peer_mem_write(int32_t handle, uint64_t addr, const uint8_t* data, int32_t len);
int rocekit_peer_mem_read(int32_t handle, uint64_t addr, uint8_t* buf, int32_t len);
/* Counters (each may be NULL): frames sent (by peer_tx), received (by
 * peer_rx), rejected (of those, dropped before the QP), faults applied,
 * request packets retransmitted. */
int rocekit_peer_stats(int32_t handle, uint64_t* sent, uint64_t* received, uint64_t* rejected,
                       uint64_t* faults, uint64_t* retransmitted);

/* ---- Scoreboard: the checks of `rocekit check`, frame by frame ----------- */

#define ROCEKIT_TO_DUT   0
#define ROCEKIT_FROM_DUT 1

/* pmtu: 256..4096, or 0 to learn it from the traffic. */
int rocekit_sb_new(uint32_t pmtu, int32_t* handle);
/* Feeds every frame on the DUT's port, in order: direction ROCEKIT_TO_DUT or
 * ROCEKIT_FROM_DUT. Frames are numbered from 1 as fed. */
int rocekit_sb_feed(int32_t handle, const uint8_t* frame, int32_t len, int64_t time_ps,
                    int32_t direction);
/* The number of findings so far. */
int rocekit_sb_findings(int32_t handle, int32_t* count);
/* Ends the run: adds the findings only a whole run proves (missing_ack,
 * bad_retransmission) and numbers connections; *count (may be NULL) is the
 * total. No feed may follow. */
int rocekit_sb_finish(int32_t handle, int32_t* count);
/* Finding i (from 0, in frame order): its frame number and the direction of
 * that frame (each may be NULL), and its text as `rocekit check` prints it,
 * "frame N: §5.3 ack_psn: ...; expected ..." (UTF-8), into buf (may be NULL). */
int rocekit_sb_finding(int32_t handle, int32_t i, int32_t* frame, int32_t* direction,
                       char* buf, int32_t len);
/* The text of finding i in a buffer of the library, valid until the next
 * call of this function; "" on error (for SystemVerilog: function string). */
const char* rocekit_sb_finding_text(int32_t handle, int32_t i);

#ifdef __cplusplus
}
#endif

#endif /* ROCEKIT_H */
