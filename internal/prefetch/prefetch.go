// Package prefetch asks the CPU to bring memory into its cache ahead of
// use: a hint, with no effect on what a program computes. The simulator
// uses it for the state of the QP it will serve next, which with thousands
// of QPs is otherwise a cache miss at every packet.
package prefetch
