// Package iverilog is an example, not a library: tb_axis.v is an Icarus
// Verilog testbench that replays stimulus written by package stim (the memh
// and axismem formats) as an AXI4-Stream, and iverilog_test.go proves that a
// simulator reads those files byte for byte. See README.md.
package iverilog
