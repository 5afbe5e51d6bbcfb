// Package workload is rocekit's training-step model: a list of compute
// stretches and collectives, overlapped as a framework overlaps them, with
// each collective's duration simulated on a fabric. It reports the step
// time and the share of it spent waiting on the network.
//
// # Items and streams
//
// A Workload is a step's Items, repeated Steps times over Ranks ranks. An
// item is a compute stretch (on the compute stream), a collective (issued
// on the communication stream once the compute before it in the list is
// done; with Wait the compute stream waits for it, as a forward pass waits
// for an FSDP all-gather) or a barrier (the compute stream waits for every
// collective issued so far, as the optimizer waits for the last gradient
// bucket). Parse reads the JSON form, DDP generates PyTorch
// DistributedDataParallel's step from a spec, and Open takes either.
//
// # Durations and the timeline
//
// Run simulates each distinct collective (operation, size, algorithm,
// element type) once with roce.RunCollective on the user's fabric scenario,
// on the idle fabric and one at a time, and Schedule, a pure function of
// the items and those durations, lays the step out: the communication
// stream runs one collective at a time in issue order, as NCCL runs a
// communicator's collectives on its stream, so the network never carries
// two at once and simulating them alone is exact for one communicator.
// What it leaves out: two communicators sharing the network, and the
// compute's own traffic (PCIe, memory) slowing the collectives.
//
// Per step, Schedule gives the step time, the compute time, the
// communication time and the exposed communication, the time the compute
// stream is held waiting on the network; the step time is the compute time
// plus the exposed communication, and the rest of the communication is
// hidden behind compute. Every step is the same: the next starts when both
// streams of the last are done. Times are package sim's Time, integer
// picoseconds, so these sums are exact.
//
// # Errors
//
// A JSON workload's errors name the key path and the line and column
// ("items[2].bytes: ... at line 5 column 34"), a spec's the spec and the
// key, and a collective refused at a rank count the item that issued it.
package workload
