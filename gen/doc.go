// Package gen makes hardware-verification stimulus for an RC responder, the
// device under test (DUT), with the RC model (package rc) as the golden
// model: the frames the DUT receives, optionally with faults injected, the
// frames a conforming DUT sends back, in order and timed, and a manifest
// saying what every frame is for and what the DUT must do with it.
// `rocekit gen` is its command line.
//
// # Pipeline
//
//  1. Source: the requester side's traffic, before any fault. FromScenario
//     runs the simulator (package roce) on a copy of a scenario whose links
//     and switch lose, reorder, duplicate, corrupt and mark nothing, and
//     keeps, in arrival order, the frames that reach the DUT (the responder
//     host of the scenario's first QP entry) for one of its responder QPs,
//     timed at the arrival of their first bit. ParsePackets builds frames
//     from a packet list (below) for directed tests. Either gives a Source:
//     the frames and the DUT description (QPs, memory regions, receive
//     queues, addresses).
//  2. Faults (Options.Faults, FaultSpec): each kind hits each eligible
//     source frame with a probability, or exactly frame N, or exactly one
//     frame the seed picks. A frame takes one fault at most. Every choice
//     (which frames, which bit, which value) comes from Options.Seed, so the
//     same source, faults and seed give byte-identical files.
//  3. Golden model: the faulted stream is replayed, frame by frame, into a
//     fresh model of the DUT: first the checks a receiver makes on every
//     frame (it decodes as an IB transport packet, the ICRC matches
//     (ib-facts.md §3), and the VCRC on native IB (§3.3), the IPv4 header
//     checksum is right, the frame is addressed to the DUT and names one of
//     its QPs), then one rc.QP per DUT QP, sharing one rc.Memory, which
//     applies §5.11 (TVer 0, P_Key, RC opcode) and the rest of §5. What the
//     QP sends back is the output stream. Each input frame's reaction is
//     read off what the model did (its counters and the AETH of what it
//     sent), never assumed per fault.
//  4. Output: PREFIX.in.EXT and PREFIX.out.EXT in one of Formats (classic
//     pcap or pcapng with the frame times as timestamps, or the stim
//     formats hex, axis, memh, axismem at a width and byte order), and
//     PREFIX.manifest.json.
//
// The stimulus is open loop: the recorded requester does not react to the
// faults (a real one would retransmit after a NAK or a timeout). So a
// fault that makes the DUT drop or NAK a request usually leaves the rest of
// that QP's stream out of sequence (silently dropped after one PSN
// sequence error NAK, §5.4), or in the Error state after a NAK invalid
// request / remote access error (§5.10): the manifest says so frame by
// frame. Use @N near the end of a stream, or several runs, to test faults
// one at a time.
//
// # Timing
//
// Input frame times come from the source (a packet list: back to back at
// the DUT's link rate unless "time_ns" says later); after faults, a frame
// starts no earlier than the end of the one before it (a duplicate or
// ghost ACK pushes the next frames back only as far as needed). An output
// frame's time is the earliest a DUT with DUT.Latency of processing could
// start sending it: the end of the input frame that caused it plus the
// latency, or the end of the output before it if later. Benches compare
// order and content; the times are a budget, not a requirement.
//
// # The DUT
//
// A bench sets the DUT up as the manifest's "dut" object says before the
// first frame: QPs in RTS with the given QPN, peer QPN, rq_psn (first
// expected PSN), path MTU, P_Key, max_dest_rd_atomic (ird), min_rnr_timer
// and access flags; recv_wqes receive WQEs of recv_bytes bytes each posted
// on each QP (with recv_repost, each one posted again as soon as it
// completes; WQE ids count from 0 in posting order); memory regions at
// addr, length bytes, with rkey, access and initial content "pattern"
// (byte at offset i = (i + (i>>8) + (i>>16) + (i>>24)) & 0xff) or "zero".
// Atomics treat memory as little-endian 64-bit words (package rc).
//
// # Faults
//
// Each fault changes exactly what it says; every CRC the fault is not about
// is recomputed (the ICRC over the changed frame, a native IB frame's
// VCRC). The record of each injected fault (Fault) names the field, its
// byte offset and size in the faulted frame, the flipped bit, the old and
// new values and what became of the ICRC. Run `rocekit gen --list-faults`.
//
//	bad-icrc             ICRC XOR a random non-zero value          -> silent drop (bad ICRC)
//	bad-vcrc             VCRC XOR a random non-zero value (IB)     -> silent drop (bad VCRC)
//	flip-covered         one bit of a covered BTH/ETH field or
//	                     payload byte, ICRC as built               -> silent drop (bad ICRC)
//	flip-masked          one bit of a masked field (IPv4 DSCP/ECN/
//	                     TTL + header checksum, IPv6/GRH class,
//	                     flow, hop limit, LRH VL, BTH FECN/BECN/
//	                     resv6)                                    -> as the unchanged frame (accept)
//	psn-gap              remove a request frame a later one of
//	                     its QP follows                            -> the next one: NAK PSN sequence error
//	drop                 remove any frame                          -> as psn-gap when a frame follows
//	duplicate            the frame again, right after it           -> the copy: duplicate: re-ACK (SEND/WRITE),
//	                                                                  READ response / ATOMIC ACK replayed
//	reorder              swap with the next frame                  -> the later PSN first: NAK PSN sequence error,
//	                                                                  then the earlier: accept
//	truncate             cut inside the transport packet, lengths
//	                     not adjusted                              -> silent drop (malformed)
//	wrong-padcnt         another BTH.PadCnt on a frame with
//	                     payload                                   -> NAK invalid request for a WRITE or a First/
//	                                                                  Middle packet; a SEND Last/Only is accepted
//	                                                                  with a shorter or longer payload (the
//	                                                                  completion's byte_len shows it)
//	reserved-opcode      opcode 0x15, 0x18-0x1B, 0x1E or 0x1F      -> silent drop (§5.11)
//	tver                 BTH.TVer 1-15                             -> silent drop (§5.11)
//	wrong-pkey           a P_Key that does not match the QP's      -> silent drop (§5.11)
//	wrong-qkey           DETH.Q_Key changed (UD/RD frames only)    -> silent drop (an RC QP takes no UD opcode)
//	rkey-violation       R_Key of a RETH or AtomicETH no region has -> NAK remote access error
//	dmalen-violation     RETH DMA length 1-4096 bytes past the
//	                     region's end                              -> NAK remote access error
//	middle-without-first a SEND/WRITE First made a Middle (RETH
//	                     removed)                                  -> NAK invalid request
//	ghost-ack            an ACK (0x1F) for the DUT's sq_psn, which
//	                     it never sent, inserted after the frame   -> silent drop: the DUT's requester side
//	                                                                  has nothing outstanding (§5.3)
//
// The reactions listed are what the model gives for a frame that arrives
// in sequence on a QP not in the Error state; the manifest has the actual
// one of every frame.
//
// # Packet list
//
// A JSON array of packets, or an object {"dut": {...}, "packets": [...]}.
// Unknown keys are errors. Numbers may be JSON numbers or strings in
// decimal or 0x hex ("0x1f"). Every key is optional except "opcode".
//
//	{"dut": {                                   // optional; defaults: DefaultDUT
//	   "encap": "rocev2",                       // rocev2, rocev2-ipv6, rocev1, ib, ib-global
//	   "self": {"mac": "02:00:00:00:00:02", "ipv4": "192.168.1.2", "ipv6": "fd00::2", "lid": 2},
//	   "link_gbps": 100, "latency_ns": 0,
//	   "qps": [{"qpn": 18, "dest_qpn": 17, "rq_psn": 0, "sq_psn": 0, "mtu": 1024,
//	            "pkey": 65535, "ird": 16, "min_rnr_timer": 12,
//	            "access": ["remote_write", "remote_read", "remote_atomic"],  // or "all"; default all
//	            "recv_wqes": 16, "recv_bytes": 4096, "recv_repost": true,
//	            "peer": {"mac": "02:00:00:00:00:01", "ipv4": "192.168.1.1", "ipv6": "fd00::1", "lid": 1}}],
//	   "mrs": [{"addr": 268435456, "rkey": 256, "length": 1048576, "access": ["all"], "init": "pattern"}]},
//	 "packets": [
//	   {"opcode": "RC_RDMA_WRITE_FIRST",       // name, or number 0-255 (reserved ones too)
//	    "qp": 18,                              // DUT QP the defaults come from (default: the first)
//	    "time_ns": 1000,                       // no earlier than this (default: back to back)
//	    "purpose": "first of a 3-packet WRITE",
//	    "repeat": 1,                           // send it N times, defaults (PSN) taken anew each time
//	    "bth": {"se": false, "m": false, "pad_cnt": 0, "tver": 0, "pkey": 65535, "fecn": false,
//	            "becn": false, "resv6": 0, "dest_qp": 18, "ack_req": false, "resv7": 0, "psn": 0},
//	    "reth": {"va": "0x10000000", "rkey": "0x100", "dma_len": 2048},
//	    "payload": {"len": 1024, "pattern": "incr"},   // or "0a0b0c" (hex); patterns: zero, incr,
//	                                                   // random (seeded by the packet's index), "0xAB"
//	    "icrc": "auto",                        // or a value, sent least significant byte first
//	    "eth": {"dst": "...", "src": "...", "vlans": [{"pcp": 3, "dei": false, "vid": 100}]},
//	    "ipv4": {"tos": 2, "id": 0, "df": true, "ttl": 64, "src": "...", "dst": "..."},
//	    "udp": {"sport": 49152, "dport": 4791, "checksum": false}}]}
//
// Other headers, used when the opcode carries them: "rdeth" {ee_context,
// resv8}, "deth" {qkey, src_qp, resv8}, "xrceth" {xrcsrq, resv8},
// "atomic_eth" {va, rkey, swap_add, compare}, "aeth" {syndrome, msn},
// "atomic_ack_eth" {orig_rem_dt}, "immdt" {imm}, "ieth" {rkey}, "feth"
// {sel, plt, resv}; lower layers "ipv6" {traffic_class, flow_label,
// hop_limit, src, dst}, "lrh" {vl, lver, sl, resv2, lnh, dlid, resv5,
// slid}, "grh" {ipver, tclass, flow_label, nxt_hdr, hop_lmt, sgid, dgid};
// "pad_bytes" (hex, up to 3 bytes), "vcrc" ("auto" or a value; native IB
// only). Defaults: the PSN continues the QP's sequence from rq_psn (an RC
// request takes one PSN, a READ one per response packet), AckReq is set on
// Last and Only requests, PadCnt is what the payload needs, DestQP is the
// DUT QP, SrcQP the peer's, R_Key and VA those of the first memory region,
// the DMA length the payload's, the AETH syndrome 0x1F; lengths, checksums
// and CRCs are computed. Lower layers come from the DUT and peer
// addresses (UDP source port from the two QP numbers, as Linux does).
//
// # Manifest
//
// PREFIX.manifest.json is one JSON object:
//
//	{"rocekit_gen_manifest": 1,
//	 "command": "rocekit gen ...", "source": "scenario s.json", "seed": 1,
//	 "faults_requested": ["bad-icrc:0.01", "tver:@7"],
//	 "format": {"stream": "axis", "width": 64, "byte_order": "le"},
//	 "files": {"in": ["x.in.axis"], "out": ["x.out.axis"]},
//	 "dut": {...},                            // as the packet list's "dut"
//	 "frames": [                              // causal order: each input, then what it caused
//	   {"stream":"in","index":0,"time_ns":1000,"qp":18,"opcode":"RC_SEND_ONLY","opcode_num":4,
//	    "psn":0,"length":70,"purpose":"RC_SEND_ONLY of WR 0","source":0,"fault":null,
//	    "expect":"accept","responses":[0],
//	    "completions":[{"wr_id":0,"status":"SUCCESS","opcode":"RECV","byte_len":12}]},
//	   {"stream":"out","index":0,"time_ns":1005.6,"qp":18,"opcode":"RC_ACKNOWLEDGE",
//	    "opcode_num":17,"psn":0,"length":62,"purpose":"ACK for PSN 0 (MSN 1)","cause":0},
//	   ...],
//	 "faults": [{"kind":"tver","source":7,"frame":7,"other":null,"field":"BTH.TVer",
//	             "offset":43,"size":1,"bit":null,"old":0,"new":5,"icrc":"recomputed",
//	             "vcrc_recomputed":false,"ipv4_checksum_recomputed":false,"detail":"TVer 0 -> 5"}],
//	 "summary": {"in": 62, "out": 40, "faults": 1, "expect": {"accept": 61, "silent drop": 1}}}
//
// Input entries: "qp" is the DUT QP number the frame names (null if none),
// "opcode"/"psn" null for a frame too damaged to show them, "source" the
// source frame (null for an inserted one), "fault" the Fault record (as in
// "faults"), "expect" the reaction (Reaction: accept, silent drop, NAK PSN
// sequence error, NAK invalid request, NAK remote access error, NAK remote
// operational error, RNR NAK, duplicate: re-ACK, duplicate: READ response
// replayed, duplicate: ATOMIC ACK replayed, duplicate: response replayed,
// duplicate: silent drop), "reason" why a frame is dropped or NAKed,
// "responses" the output indices it caused and "completions" the work
// completions the DUT reports for it. Output entries name their "cause".
// Every frame entry is one line. Removed frames (psn-gap, drop) appear only
// in "faults", with "frame" null.
package gen
