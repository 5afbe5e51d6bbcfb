// Package plot draws what RDMA engineers look at, from rocekit's inputs
// and outputs, with gonum.org/v1/plot.
//
// From a capture (ReadCapture: any file rocekit decode reads, decoded by
// package decode and followed by package analysis): each QP's request
// PSNs against time as Wireshark's stevens graph draws TCP sequence
// numbers, with the ACKs as a step line as tcptrace draws them, and
// retransmissions, NAKs, RNR NAKs and CNPs marked apart (PSNPlot); the
// payload throughput of each flow in bins of a chosen width
// (ThroughputPlot); the ACK round-trip time of each request that asked
// for an ACK (RTTPlot), sampled as the analysis samples it (ib-facts
// §5.6-5.9).
//
// From the fabric simulator's outputs (rocekit sim --topology ...): each
// flow's sending rate and each switch port's queue length over time
// (ReadSamples, RatePlot, QueuePlot), as the DCQCN and HPCC papers plot
// them; each port's PFC paused time (ReadRun, PausePlot); the FCT
// slowdown p50, p95 and p99 per flow-size bucket (ReadFCT and Slowdowns,
// or the --json fct_slowdown; SlowdownPlot), as HPCC's evaluation does;
// and the CDF of the FCTs (CDFPlot). Several runs overlay on one plot,
// each series named by its run.
//
// Every plot has a title, axes with units and a legend. Save writes one
// as SVG or PNG by the file's extension; WriteHTML writes a
// self-contained page of figures (SVG images inlined as data URIs) and
// tables.
//
// Reading an input never panics: a missing file, a CSV header that is not
// the simulator's, a field that is not a number, or JSON that is not a
// fabric run's summary is an error naming the file and the line or key.
package plot
