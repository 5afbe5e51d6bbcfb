package main

import (
	"io"
	"os"

	"testing"
)

// BenchmarkDecodeFile runs `rocekit decode` in-process on the capture
// bench/decode.sh makes (bench/out/mixed.pcap), for CPU profiles:
//
//	bash bench/decode.sh     # once, to make the file
//	GOMAXPROCS=1 go test -run '^$' -bench DecodeFile/summary -benchtime 10x -cpuprofile cpu.prof ./cmd/rocekit
func BenchmarkDecodeFile(b *testing.B) {
	const file = "../../bench/out/mixed.pcap"
	if _, err := os.Stat(file); err != nil {
		b.Skip("no bench/out/mixed.pcap: run bench/decode.sh first")
	}
	for _, mode := range []struct {
		name string
		args []string
	}{{"summary", []string{"--summary"}}, {"json", []string{"--format", "json"}}, {"text", nil}} {
		b.Run(mode.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if code := runDecode(append(mode.args, file), io.Discard, io.Discard); code != 0 {
					b.Fatalf("exit status %d", code)
				}
			}
		})
	}
}
