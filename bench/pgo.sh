#!/usr/bin/env bash
# Regenerates cmd/rocekit/default.pgo, the CPU profile the Go compiler uses
# to optimise the rocekit binary (profile-guided optimisation: `go build`
# and `go install` of ./cmd/rocekit apply it by themselves, -pgo=auto).
#
#   bash bench/pgo.sh
#
# The profile is the merge of CPU profiles of the main jobs, each run as a
# benchmark on built-in inputs: decode --summary and --format json of
# bench/out/mixed.pcap (made by bench/decode.sh's generator, 300,000 frames),
# the one-QP simulator stream, stimulus generation and the conformance
# checker. Rerun it after a change that moves the hot code a lot; a stale
# profile only costs speed, never correctness.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p bench/out
go build -o bench/out/mkcap ./bench/mkcap
f=bench/out/mixed.pcap
[ -f "$f.300000" ] || { bench/out/mkcap -n 300000 -o "$f" && touch "$f.300000"; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
go test -run '^$' -bench 'DecodeFile/summary' -benchtime 60x -o "$t/rocekit.test" -cpuprofile "$t/summary.prof" ./cmd/rocekit
go test -run '^$' -bench 'DecodeFile/json' -benchtime 25x -o "$t/rocekit.test" -cpuprofile "$t/json.prof" ./cmd/rocekit
go test -run '^$' -bench 'Stream/mtu=4096/64KiB' -benchtime 150000x -o "$t/roce.test" -cpuprofile "$t/sim.prof" ./roce
go test -run '^$' -bench 'Generate' -benchtime 5x -o "$t/gen.test" -cpuprofile "$t/gen.prof" ./gen
go test -run '^$' -bench 'CheckerFrame' -o "$t/conform.test" -cpuprofile "$t/check.prof" ./conform
go tool pprof -proto "$t"/summary.prof "$t"/json.prof "$t"/sim.prof "$t"/gen.prof "$t"/check.prof > cmd/rocekit/default.pgo
echo "wrote cmd/rocekit/default.pgo ($(wc -c < cmd/rocekit/default.pgo) bytes)"
