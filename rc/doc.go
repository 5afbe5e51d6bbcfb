// Package rc is the InfiniBand Reliable Connection transport (IBA Vol. 1
// ch. 9, as Linux rxe implements it) as a pure, deterministic state
// machine, in the manner of etcd's raft: no I/O, no clock, no goroutines,
// no randomness. Time (integer picoseconds) is passed in.
//
// A QP is one end of a connection: a requester that turns this end's work
// requests into request packets and completes them from the responses, and
// a responder that executes the peer's requests on real memory (Memory,
// MR) and answers them. The caller posts work (PostSend, PostRecv), feeds
// arriving packets (Receive with a packet.Packet from packet.Decode, or
// ReceiveFields), calls Tick at NextWake, and drains packets (NextPacket,
// AppendOutgoing) and completions (AppendCompletions). After warm-up none
// of this allocates. Package rctest connects two QPs through a simulated
// lossy network.
//
// Rules implemented, with their ib-facts.md sections:
//
//   - §5.1 24-bit PSNs, the signed 24-bit compare (DiffPSN), at most 2^23
//     PSNs in flight (Config.Window can lower it; a READ wider than the
//     window goes alone).
//   - §5.2 segmentation by path MTU 256..4096 into First/Middle/Last/Only,
//     RETH on the first packet of a WRITE, ImmDt/IETH on the last, PadCnt,
//     SE on the last packet of a solicited SEND or WRITE with immediate,
//     AckReq on every Last/Only and at least every 64 packets, or every
//     half window when Config.Window is below 128 (so that a small window
//     never idles until the local ACK timer).
//   - §5.3 READ requests reserve one PSN per response; implicit ACK by READ
//     responses and ATOMIC ACKs; a response past an unanswered READ/atomic
//     starts a retry; a gap in READ responses re-requests the READ from
//     the first missing response at once (as the rdmavt drivers do; rxe
//     waits for its timer).
//   - §5.4 responder ePSN check: in order, too new (one NAK PSN sequence
//     error per gap), duplicate (SEND/WRITE re-ACKed with ePSN-1 and
//     unlimited credits; READ replayed from a saved resource when it asks
//     for a sub-range with the same R_Key, re-reading memory, its
//     responses still queued dropped and later READs' moved behind the
//     replay; atomic answered from the saved original value, never
//     re-executed; else dropped). A ring of max_dest_rd_atomic resources;
//     none means NAK invalid request.
//   - §5.5 ORD (max_rd_atomic) and Fence; local ACK timeout 4.096 us x 2^t
//     (0: none); retry_cnt (7 is seven retries unless RetryCnt7Infinite);
//     rnr_retry (7 infinite); both reloaded on progress; go-back-N from the
//     NAKed PSN or, on timeout, from the oldest unacknowledged one, a
//     partially answered READ re-requested from its first missing response;
//     one NAK-started retry at a time (rxe started_retry); RNR waits keep
//     the transport timer off; NAK invalid request / remote access / remote
//     operational error (and unknown codes) fail the WR and the QP.
//   - §5.6, §5.7 AETH syndromes; RNR NAK with min_rnr_timer for SENDs and
//     WRITEs with immediate that find no receive WQE (ePSN kept); class C
//     errors (bad opcode sequence, opcode not allowed on the QP, misaligned
//     atomic, length/PadCnt violations, SEND longer than the receive
//     buffer: NAK invalid request; bad R_Key, range or rights: NAK remote
//     access error) move the QP to Error; a zero-length READ/WRITE needs no
//     valid R_Key (C9-88).
//   - §5.8 ACKs carry "unlimited" (0x1F) like rxe, or the posted receive
//     count with Config.AdvertiseCredits; the requester records MSN and
//     credits (RemoteMSN, Credits).
//   - §5.9 MSN counted at the end of each SEND/WRITE, when a READ is
//     accepted and when an atomic, ATOMIC WRITE or FLUSH executes.
//   - §5.10 Error state: the failing WR completes with its status, every
//     other posted WR (send and receive, and any posted later) with
//     WR_FLUSH_ERR; failures are reported for unsignalled WRs too.
//   - §5.11 packets for another QP, with a non-matching P_Key, TVer not 0
//     or a non-RC opcode are dropped.
//   - §2.2 FLUSH (FETH SEL/PLT checked against FLUSH_GLOBAL and
//     FLUSH_PERSISTENT rights) and ATOMIC WRITE, both answered with an empty
//     READ Response Only and saved as responder resources.
//
// Choices and omissions: atomics treat memory as little-endian uint64s; a
// WR has one local buffer, not a scatter/gather list, and local keys are
// not checked; credits never hold back SENDs (end-to-end flow control is
// recorded, not enforced); there is no SRQ, no path migration, no QP state
// transitions other than to Error, no UC/UD; responses queued before the
// QP entered Error are still sent.
package rc
