// Package dpicore is what librocekit (directory dpi, the C ABI for
// SystemVerilog DPI-C benches) does, as a plain Go API that the C exports
// wrap and that Go tests call directly: parse a frame into the fields a
// scoreboard checks, build a frame from fields, run an RC peer (package rc)
// against a device under test, and check the device's traffic with the
// conformance checker of rocekit check (package conform).
//
// Every failure is an *Error with one of the status codes the C ABI
// returns (OK, Empty and the negative Err codes) and a message naming the
// argument or field at fault. Objects live in a Handles table under int32
// handles, so no Go pointer ever crosses into C. Nothing here is safe for
// concurrent use: a simulator calls from one thread.
//
// After warm-up, Parser.Parse, Builder.Build, Peer.Rx, Peer.Tick, Peer.Tx
// and Scoreboard.Feed of conforming traffic allocate nothing but the byte
// per frame in which the scoreboard remembers the frame's direction
// (BenchmarkLoop: 0 allocs/op, 4 B/op).
package dpicore
