// Command dpi is librocekit: rocekit's RC model, frame builder and parser
// and conformance checker behind a C ABI, for SystemVerilog benches that
// call them through DPI-C (Verilator, commercial simulators) and for C or
// C++ testbenches. Build it as a shared library or a static archive:
//
//	go build -buildmode=c-shared  -o librocekit.so ./dpi
//	go build -buildmode=c-archive -o librocekit.a  ./dpi
//
// and use the hand-written header dpi/rocekit.h (not the one go build
// writes next to the library) from C, or the package dpi/rocekit_pkg.sv,
// which declares every function as an import "DPI-C", from SystemVerilog.
// A static archive links with -lpthread (and -ldl on older C libraries).
//
// The functions parse a frame into the fields a scoreboard checks, build a
// frame from fields, run an RC peer (package rc) that answers the device
// under test live, with ACK coalescing, READ response pacing, RNR and the
// faults of rocekit gen, and check the device's traffic with the checker
// of rocekit check, by the same rule names. Every function returns a
// status: 0 (ROCEKIT_OK), 1 (ROCEKIT_EMPTY: nothing to return) or a
// negative ROCEKIT_ERR_* code, with a message from rocekit_last_error. No
// Go pointer is kept by C or passed to it; peers and scoreboards are int32
// handles. A panic never crosses into C: it becomes ROCEKIT_ERR_INTERNAL.
// The library is safe for one simulator thread: calls must not overlap.
//
// The Go implementation is package internal/dpicore; this command only
// converts between C and Go.
package main

func main() {}
