// Package prefetch asks the CPU to bring memory into its cache ahead of
// use: a hint, with no effect on what a program computes. The simulator
// uses it for the state of the QP it will serve next, which with thousands
// of QPs is otherwise a cache miss at every packet, and (through a Queue,
// a few lines at a time) for the region bytes a WRITE will fill; the
// decoder for the next chunk of a memory-mapped capture.
package prefetch
