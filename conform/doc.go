// Package conform checks captured RC traffic against the Reliable
// Connection rules of ib-facts.md §5: it replays a capture per connection
// and reports every departure from the spec it can prove, with the frame,
// the rule (a section of ib-facts.md) and what was expected instead.
//
// # Connections
//
// A flow is one direction between two QPs (encapsulation, source and
// destination address, destination QP), as package analysis keys it; the
// flows, their pairing and what the CM teaches are kept by analysis.Conns,
// shared with the capture analysis. Two flows form a connection when a CM
// REQ/REP pair for a reliable connection names both QPs (which also gives
// the starting PSN of each side's requests, the path MTU and the P_Key), or
// else when a response's PSN falls inside the requests one reverse flow
// sent. A response names its requester's QP but not its own, so when its
// PSN falls inside the requests of several unpaired reverse flows (QPs
// between the same two hosts whose PSNs overlap, with no CM in the
// capture) the pairing is ambiguous: the connection is listed as such, and
// neither those responses nor the answers those requests await are judged
// until a later response names one flow alone. Each connection has two channels: the requests one
// side sends and the other side's answers to them, and the same the other
// way round.
//
// # What a capture can prove
//
// The capture is taken at one point of the path. A packet lost before that
// point is never seen; one lost after it is seen although its receiver
// never got it. The checker accepts every behaviour that some such pattern
// of losses explains, and so reports only what no loss pattern can
// explain. It keeps, per channel:
//
//   - the requests by PSN, as first sent (opcode, length, RETH, a CRC of
//     the payload), which a go-back-N must resend unchanged (§5.5), and the
//     N PSNs each READ reserves (§5.3);
//   - level: the PSN after the highest one any captured response
//     acknowledged (ACK PSN + 1, NAK PSN, READ response PSN + 1). The
//     requester cannot know more, so a go-back-N must start at or before it;
//   - contig: the highest PSN the responder can have reached, the end of the
//     requests seen without a gap (and, after a NAK or RNR NAK at PSN p, seen
//     again since: the responder lacks p). An ACK past it, or a NAK naming a
//     PSN past it, is impossible;
//   - the MSN the responder must carry: the number of messages (SEND/WRITE
//     Last or Only, READ, atomic, FLUSH, ATOMIC WRITE) it completed before
//     the acknowledged PSN (§5.9). The count starts at 0 when the CM
//     announced the connection, else at the first AETH seen.
//
// The opcode sequence (§5.6) and a WRITE's length are judged in PSN order,
// between packets both seen, so a capture that starts inside a message or
// misses packets raises nothing. The path MTU comes from Options.PMTU,
// else the CM REQ, else the first full First or Middle packet (or READ
// response); until it is known a READ's N is only bounded.
//
// Assumptions: each direction is FIFO (no reordering, no duplication by the
// network); the capture saw every packet that passed its point.
//
// One rule needs more than bounds: a go-back-N run that seems to start
// after the PSN the responder needs may only have lost its first packet
// before the capture point. A BadRetransmission is therefore decided at the
// end of the capture and reported only when the skipped PSN was never sent
// again and never acknowledged, and the capture is known to sit at the
// requester: requests of the channel were seen lost after the capture point
// (a PSN sequence NAK for a PSN the capture saw in order) and never before it
// (no PSN skipped). Findings of this kind come from Finish, not Frame.
//
// # Missing and outstanding answers
//
// A capture is a window: its end proves nothing about the requests still
// awaiting an answer. Every request that needs one (AckReq, or a READ,
// FLUSH, ATOMIC WRITE or atomic, §5.2) and has none at the end of the
// capture is outstanding: counted per channel in the Summary
// (Channel.Outstanding, with the oldest such request), never a finding; a
// connection in the Error state has none (its requests complete in error,
// §5.10). A SEND or WRITE is answered by an ACK for its PSN or any later
// one (ACK coalescing, §5.3), by a NAK for a later PSN (a NAK at PSN p
// acknowledges every PSN before p; one at the request's own PSN asks for
// it again, §5.5) or by a READ response or ATOMIC ACK for a later PSN
// (implicit ACK, §5.3); a READ by its last response; an atomic by its
// ATOMIC ACK. A later ACK or response does not answer a READ or atomic:
// the requester treats it as a retry condition (§5.3).
//
// A missing answer is a finding (MissingACK) only when the capture proves
// it, decided at Finish: a READ or atomic whose own answer never passed
// the capture point while the responder answered a later PSN (an ACK for a
// PSN at or past the request's last reserved PSN, a NAK naming a PSN past
// it, a response to a later READ or atomic). The responder works in PSN
// order and moves its expected PSN past a READ only once the READ's last
// response is generated (§5.4), so it had answered the request by then.
// Those answers may still have been lost before the capture point: the
// finding needs the capture to be known to sit at the responder, where
// nothing the responder sends is lost before it: requests of the channel
// were seen lost before the capture point (a PSN skipped) and never after
// it (no PSN sequence NAK for a PSN the capture saw in order). Elsewhere
// such a request stays outstanding. A SEND or WRITE never makes this
// finding: a later ACK covers it.
//
// A fatal NAK (invalid request, remote access or remote operational
// error) moves the connection to the Error state (§5.10): later packets of
// that connection are counted, not checked.
//
// # Rules shared with package rc, and rules bounded here
//
// The facts that are arithmetic on the specification come from the one
// place that states them: each opcode's family, position and headers from
// package opcode; 24-bit PSN comparison, the PSNs a READ reserves
// (rc.Packets), path MTU validity, which requests end a message (the MSN),
// take a receive WQE (may be RNR-NAKed) or are always answered, from
// package rc, whose endpoint applies the same functions. What rc decides
// from state a capture does not show is modelled here as bounds instead:
// the responder's expected PSN (between level and contig above), its MSN
// until an AETH or the CM fixes it, a READ's N while the path MTU or the
// RETH is unknown (analysis.MaxReadPSNs), ACK coalescing, and whether the
// capture point sits at the requester or the responder.
//
// # Why not a shadow rc.QP
//
// Package rc is an exact endpoint: it must be told exactly which packets
// arrived, and its memory regions and receive queue decide ACK versus NAK.
// A capture gives neither: the capture point sees a superset or a subset of
// what each end received, and the R_Keys, buffers and receive WQEs behind
// the traffic are unknown. So the responder's expectations are modelled
// here, as bounds; package rc (through rc/rctest) produces the conforming
// and faulted exchanges the tests check. Driving rc itself would need a
// Memory that accepts any R_Key and address and a mode that never RNR-NAKs.
//
// # Use
//
//	findings, summary, err := conform.CheckFile("trace.pcapng", conform.Options{})
//
// or, frame by frame, New, Frame for each decoded frame (allocation-free for
// conforming traffic once warm), Finish, then Findings and Summary. The
// finding kinds are stable strings, listed in Kinds, each citing one rule
// (Kind.Rule).
package conform
