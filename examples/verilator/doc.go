// Package verilator is an example, not a library: two Verilator benches
// that put rocekit's models next to a device under test through DPI-C
// (librocekit, directory dpi). resp_bench.sv drives a small responder with
// the rocekit requester peer; req_bench.sv answers a small requester with
// the rocekit responder peer, losing a share of its frames; in both the
// scoreboard checks the device's port with the rules of rocekit check, and
// a broken variant of each device fails its bench. verilator_test.go builds
// and runs them; run.sh does the same by hand. See README.md.
package verilator
