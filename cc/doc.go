// Package cc is rocekit's congestion control: DCQCN and HPCC as pure,
// deterministic state machines in the manner of package rc, with no I/O, no
// clock, no goroutines and no randomness. Time (package sim's Time, integer
// picoseconds) is passed in; rates are int64 bits per second; windows and
// counters are bytes.
//
// The NIC model holds one Algorithm per QP and tells it what happens to the
// QP: bytes sent (OnSent), CNPs received (OnCNP), ACKs with the in-band
// telemetry they echo (OnAck). It paces the QP at Rate, keeps at most
// Window bytes in flight when Window is positive, and calls Advance at
// NextWake, when a timer of the algorithm is due. Nothing allocates after
// construction, so one Algorithm per QP costs only its own memory (a few
// hundred bytes).
//
// # DCQCN
//
// DCQCN (Zhu et al., SIGCOMM 2015; fabric-facts §4) has three parts. The
// congestion point is the switch's ECN marking (fabric-facts §3), which
// belongs to the network model. The notification point, NP, sits at the
// receiving NIC and answers a CE-marked packet with a CNP at most once per
// interval per QP. The reaction point, DCQCN, sits at the sender: a CNP
// cuts the current rate RC by alpha/2 after setting the target rate RT to
// it, and alpha, an estimate of how often CNPs come, rises by g; a timer
// and a byte counter then raise the rate back in stages, fast recovery
// toward RT first, then additive and hyper increase of RT itself. Two
// models are offered, the paper's (a CNP acts at once) and HPCC ns-3's
// Mellanox-style one (CNPs are sampled by an alpha timer and a decrease
// timer); DCQCNParams says which parameters select which.
//
// Presets (Preset, DCQCNPresets): "paper" (bobzhuyb/ns3-rdma's
// configuration, also "ns3-rdma"), "ns3-mellanox" (HPCC ns-3's defaults)
// and "htsim". DCQCNParams.Set takes --cc-param KEY=VALUE pairs.
//
// # HPCC
//
// HPCC (Li et al., SIGCOMM 2019; fabric-facts §5) reads, from each ACK, the
// queue length, transmitted bytes and rate that every switch hop stamped
// on the data packet (INTHop), computes each hop's normalised inflight U
// from two consecutive samples, and sets its window from the most loaded
// hop: multiplicatively toward the target utilisation eta, or additively
// by W_AI for at most maxStage steps while below it; the reference window
// moves once per RTT and each ACK in between can react from it. The rate
// is the window over the base RTT. Presets (HPCCPreset): "ns3" and
// "paper"; HPCCParams.Set takes KEY=VALUE pairs.
//
// # None
//
// None is the line rate with no window, for runs without congestion
// control.
package cc
