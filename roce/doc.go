// Package roce is rocekit's RoCEv2 host model: it joins the RC transport
// state machine (package rc) to the discrete-event network (package sim) so
// that real RoCEv2 frames, ICRC included, travel the simulated wires, and it
// drives the connections with generated work whose every byte is checked
// where it lands. `rocekit sim` is its command line.
//
// # Hosts and NICs
//
// Each host has one NIC on one link. The NIC holds the host's QP ends (an
// rc.QP each) and sends for them one frame at a time: when the wire frees
// (the frame before has been serialised) it pulls the next packet from the
// first QP of a round-robin ring of QPs that have output, builds it with
// packet.FrameFields as an Ethernet/IPv4/UDP/BTH frame (the host's MAC and
// IP addresses, ECT(0), DF, UDP source port packet.UDPSourcePort of the two
// QP numbers, destination port 4791, ICRC) straight into a frame buffer from
// the network's pool, and hands it to the port. Nothing queues in the host:
// packets wait inside their QPs, as in a NIC that schedules its send queues.
//
// An arriving frame is decoded with one reused packet.Frame. Like hardware,
// the NIC drops and counts frames that do not decode as RoCEv2/IPv4, are not
// addressed to its MAC and IP, have a bad IPv4 header checksum or a bad
// ICRC, name no QP of the host (BTH DestQP) or do not come from the QP's
// peer; the rest go to rc.QP.Receive. After every call into a QP the NIC
// takes its completions, puts it in the send ring if it has output, and
// schedules a wake-up at its NextWake (timers are lazy: a wake-up that finds
// its timer moved later re-arms itself). Connection i has QP numbers
// 0x11+2i (requester) and 0x12+2i (responder).
//
// The switch marks ECN with MarkCE, which sets the IPv4 ECN field to CE and
// rewrites the header checksum; the ICRC masks both, so the frame stays
// valid. Receivers count CE arrivals; with congestion control (the
// scenario's cc key, package cc) a DCQCN receiver answers with CNP frames
// and an HPCC sender reads the switches' telemetry echoed in ACKs.
//
// # Work and data integrity
//
// A connection's requester posts Count work requests, at most Outstanding
// at a time: each completion lets the generator post the next, so memory
// follows Outstanding, never Count. WR n's op and size are a function of
// (seed, connection, n), and so are its bytes: a window of a seeded noise
// buffer at an offset that differs for each of 1,024 consecutive WRs, with
// atomics' operands drawn the same way. Buffers are rings of Outstanding
// slots (the largest message each), WR n using slot n mod Outstanding: on
// the requester for READ results and atomic return values, in the
// responder's one memory region for WRITE targets, READ sources and atomic
// targets, and RecvDepth receive buffers for SENDs. WRITEs and SENDs send
// straight from the (read-only) noise.
//
// Scenario.MemoryEstimate says what a run takes at its peak: each
// connection's state (its conn, two QPs with their queues, a few KiB), its
// buffers, the frames that can be in flight and a fixed base. New refuses a
// scenario whose estimate is over Options.MaxMemoryBytes (8 GiB by default)
// with a *MemoryError, before it allocates anything.
//
// Every completion is checked when it arrives, before its slot is reused:
// it must be the next WR in posting order; a successful WRITE's bytes must
// be in the responder's region, a READ's in the requester's buffer, a
// SEND's in the receive buffer (checked at the receive completion, which
// must come first), an atomic's original value returned and the target
// updated (FetchAdd adds, CmpSwap swaps when the compare value matches,
// which it does for half of them). Summary.DataIntegrityOK is true only if
// every check passed, CompletionOrderOK only if every completion came once,
// in order.
//
// # Scenario JSON
//
// ParseScenario reads this format strictly: an unknown key is an error that
// names it, and values are range-checked. Durations are nanoseconds (JSON
// numbers, fractions allowed); probabilities are per frame in [0, 1]. Keys
// marked optional may be left out.
//
//	{
//	  "seed": 1,                         // optional, default 0: faults and work
//	  "stop_ns": 0,                      // optional: stop at this simulated time; 0 = when all work is done
//	  "hosts": [                         // one or more; each host has one NIC and one link
//	    {"name": "a",
//	     "mac": "02:00:00:00:00:01",     // optional, default 02:00:00:00:HH:LL from the 1-based index
//	     "ip": "10.0.0.1"}               // optional, default 10.0.HH.LL
//	  ],
//	  "switch": {                        // optional: a store-and-forward switch
//	    "name": "sw",
//	    "queue_bytes": 1048576,          // optional: drop-tail limit of each output queue; 0 = unlimited
//	    "ecn_bytes": 65536               // optional: mark CE when a queue holds more; 0 = never
//	  },
//	  "links": [                         // each joins two hosts, or a host and the switch
//	    {"a": "a", "b": "sw",
//	     "bandwidth_gbps": 100,          // > 0
//	     "delay_ns": 1000,               // propagation delay
//	     "faults": {                     // optional: both directions
//	       "loss": 0.01,                 // independent loss
//	       "burst": {"p_good_bad": 0.001, "p_bad_good": 0.3,
//	                 "loss_bad": 1, "loss_good": 0},  // Gilbert-Elliott burst loss
//	       "reorder": 0.01,              // held back by up to reorder_delay_ns
//	       "reorder_delay_ns": 10000,    // default 10000 when reorder > 0
//	       "duplicate": 0.01,            // delivered twice
//	       "corrupt": 0.001},            // one bit flipped (the receiver's ICRC check drops it)
//	     "a_to_b": {...}, "b_to_a": {...},  // optional: replace "faults" for one direction
//	     "dead": [{"from_ns": 5e6, "to_ns": 6e6,  // optional: to_ns 0 = for good
//	               "dir": "both"}]       // both (default), a_to_b or b_to_a
//	    }
//	  ],
//	  "qps": [                           // connections: a requester QP on "from", a responder on "to"
//	    {"from": "a", "to": "b",         // joined by a link, or both linked to the switch
//	     "count": 1,                     // optional: this many identical connections
//	     "mtu": 4096,                    // optional: 256, 512, 1024, 2048 or 4096 (default 4096)
//	     "timeout": 14,                  // optional: local ACK timeout code, 4.096 us x 2^t, 0 = none (default 14)
//	     "retry_cnt": 7,                 // optional: 0-7 (default 7 = seven retries)
//	     "retry_cnt_7_infinite": false,  // optional: retry_cnt 7 means forever, as rxe does
//	     "rnr_retry": 7,                 // optional: 0-7, 7 = infinite (default 7)
//	     "min_rnr_timer": 12,            // optional: RNR NAK timer code (default 12 = 0.64 ms)
//	     "ord": 16, "ird": 16,           // optional: max_rd_atomic, max_dest_rd_atomic, 0-128 (default 16);
//	                                     //   ord at most ird (left out: 16, or ird if less)
//	     "sq_psn": 0,                    // optional: the requester's first PSN (= the responder's rq_psn)
//	     "rq_psn": 0,                    // optional: the responder's sq_psn (= the requester's rq_psn)
//	     "window": 0,                    // optional: PSNs in flight at most; 0 = 2^23 (rxe uses 128)
//	     "outstanding": 8,               // optional: WRs posted and not completed at most (default 8)
//	     "recv_depth": 8,                // optional: receive WQEs kept posted (default outstanding)
//	     "recv_repost_delay_ns": 0,      // optional: delay before a consumed receive is posted again
//	     "work": {
//	       "op": "write",                // write, send, read, atomic, fetch_add, cmp_swap or mix (default write)
//	       "count": 1000,                // WRs to post
//	       "size": 65536,                // bytes per WR (atomics: 8)
//	       "size_max": 0,                // optional: sizes uniform in [size, size_max]
//	       "mix": {"write": 1, "send": 1, "read": 1, "atomic": 1},  // optional weights for op "mix"
//	       "wrs": [{"op": "read", "size": 100}, ...]  // optional instead of op/size/size_max/mix:
//	     }                                            // posted in order; count > len cycles through it
//	    }
//	  ]
//	}
//
// (The comments above are not JSON; the file may not have them.)
// DefaultScenario is the scenario `rocekit sim` runs without --scenario;
// `rocekit sim --print-scenario` prints it, or any scenario after the
// command line's changes.
//
// # Running
//
// New builds a Sim from a scenario and Options (a pcap or pcapng trace of
// every frame on every link, progress reports); Run runs it and returns a
// Summary: work requests by completion status, bytes and goodput, packets,
// retransmissions, NAKs by kind, timeouts, RNR NAKs, completion latency
// (Histogram: log-linear buckets, no per-sample storage), what the links
// dropped, events and wall time, and the integrity verdict. Runs are
// deterministic: the same scenario gives the same frames at the same times,
// so the same trace, byte for byte.
//
// # Collectives
//
// RunCollective runs a collective of package coll on a fabric scenario
// instead of its traffic: every chunk between hosts is an RDMA WRITE with
// immediate of real data into a landing slot of the receiver, whose
// receive completion hands it to the receiving rank; every rank's output
// is checked against coll.Reference. CollConfig.Sharp runs the all-reduce
// by SHARP, with aggregation nodes in the switches (collsharp.go);
// CollConfig.Node puts several ranks (GPUs) on each host and carries the
// chunks inside a machine over NodeSpec's NVLink, PCIe and host memory,
// with or without GPUDirect RDMA.
package roce
