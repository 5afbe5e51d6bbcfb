// Package traffic turns a traffic description into a list of flows for
// rocekit's fabric simulator: each Flow is Size bytes from one host to
// another starting at a given time, which the roce package runs as one RC
// connection doing RDMA WRITEs. Hosts are indices 0 .. hosts-1 into
// topo.Topology.Hosts(); times are package sim's Time, integer
// picoseconds.
//
// # Specs
//
// A spec string names a pattern and its keys, in the style of topo.Parse:
// "permutation:size=10MB", "incast:n=15,size=2MB",
// "all-to-all:size=1MB", "poisson:load=0.3,cdf=websearch,duration=10ms".
// Parse reads one into a Spec; Spec.String writes it back in canonical
// form; Generate expands it for a number of hosts and a host link rate.
//
//   - permutation: every host sends one flow and receives one, never to
//     itself: a derangement drawn uniformly at random with the seed. All
//     flows start at start= (default 0).
//   - incast: n= senders each send one flow to one receiver, dst= (default
//     host 0). Choice: the senders are the n hosts after the receiver,
//     wrapping around (dst+1, dst+2, ... mod hosts), so by default hosts
//     1 .. n send to host 0. n must be below the host count.
//   - all-to-all: one flow for every ordered pair of different hosts.
//   - poisson: each host starts flows as a Poisson process whose mean gap
//     is mean flow size x 8 / (load x host rate), so that it offers load of
//     its link rate on average (fabric-facts §6, as HPCC ns-3's traffic_gen
//     does); each flow goes to a host drawn uniformly among the others, its
//     size drawn from a flow-size CDF (cdf=websearch, cdf=fbhadoop, or the
//     path of a CDF file); flows start in [0, duration). Unlike traffic_gen,
//     times start at 0 (traffic_gen adds 2 s) and the last arrival before
//     the end is kept.
//   - incasts: incast events as one Poisson process over the fabric, each
//     n senders drawn uniformly (distinct) sending size bytes to a receiver
//     drawn uniformly, all at the event's time, at the rate that makes the
//     events' bytes load of all the hosts' capacity (HPCC's "2% incast"
//     beside a Poisson load); events start in [0, duration).
//
// Sizes are bytes: a plain number, or B, KB, MB, GB (decimal, 10^3: 10MB
// is 10,000,000 bytes, as htsim's "10 MB" flows), or KiB, MiB, GiB
// (binary, 2^10). Durations take ps, ns, us, ms or s. A fraction is
// allowed when the value comes out whole ("1.5MB", "2.5us").
//
// # Determinism and limits
//
// Generate gives the same flows for the same spec, host count, rate and
// seed, sorted by start time, then source, then destination. Its random
// stream is PCG-DXSM seeded with the seed (a spec's own seed= wins over
// Generate's argument), with the uniform and exponential draws derived in
// this package, so a seed's flows do not change with the Go release.
//
// What a spec asks for is bounded before memory is taken: more than
// MaxFlows flows (10 million, 320 MB of Flows) is an error naming the
// count, which for poisson is the expected count hosts x duration / mean
// gap.
//
// # Files
//
// Flow-size CDFs are piecewise linear (CDF): ReadCDF reads HPCC ns-3's
// traffic_gen distribution files, one "size percent" point per line;
// WebSearch and FBHadoop are the two distributions HPCC ships, point for
// point. Sample inverts a CDF by linear interpolation, as traffic_gen does.
//
// ReadHPCCFlows and WriteHPCCFlows read and write HPCC ns-3's flow file: a
// count line, then "src dst pg port size start-seconds" per flow. Errors
// from the readers read "file:line: message"; errors from Parse name the
// spec and the key.
package traffic
