#!/usr/bin/env bash
# Frame building speed: rocekit's builder against scapy building the same
# frames (RoCEv2 RC RDMA WRITE Only, 64-byte payload, RETH, ICRC; PSN i
# for frame i).
#
#   bash bench/gen_scapy.sh [N_SCAPY] [N_ROCEKIT]    (defaults 20000, 1000000)
#
# 1. scapy (Debian python3-scapy, /usr/bin/python3) builds N_SCAPY frames
#    in a Python loop (bench/gen_scapy.py): seconds and ns per frame.
# 2. rocekit: the Go benchmark of the packet-list builder
#    (BenchmarkBuildFrames: JSON list with "repeat", FrameFields encode,
#    ICRC), ns per frame; and the whole `rocekit gen --packets` process on
#    N_ROCEKIT frames (build, golden model, hex files, manifest), wall
#    seconds per input frame.
# 3. Checks that the first N_SCAPY frames are byte for byte the same in
#    both, then prints the ratios.
set -euo pipefail
cd "$(dirname "$0")/.."
ns=${1:-20000}
nr=${2:-1000000}
out=bench/out/gen_scapy
mkdir -p "$out"
go build -o bench/out/rocekit ./cmd/rocekit

read -r _ s_sec s_ns < <(/usr/bin/python3 bench/gen_scapy.py "$ns" "$out/scapy.hex")
echo "scapy:   $ns frames in $s_sec s = $s_ns ns/frame"

b_ns=$(go test ./gen -run XXX -bench 'BuildFrames$' -benchtime 20x | awk '/BenchmarkBuildFrames/ { for (i = 1; i <= NF; i++) if ($(i+1) == "ns/frame") print $i }')
echo "rocekit builder (BenchmarkBuildFrames): $b_ns ns/frame"

printf '[{"opcode": "RC_RDMA_WRITE_ONLY", "payload": {"len": 64}, "repeat": %d}]\n' "$nr" > "$out/list.json"
/usr/bin/time -f "%e" -o "$out/t" bench/out/rocekit gen --packets "$out/list.json" --format hex -o "$out/rk" > /dev/null
w=$(cat "$out/t")
w_ns=$(awk "BEGIN { printf \"%.0f\", $w / $nr * 1e9 }")
echo "rocekit gen --packets (whole process, $nr input + $nr output frames, hex + manifest): $w s = $w_ns ns/input frame"

# Same bytes: the first $ns frames of rocekit's input stream are scapy's.
awk -v n="$ns" '!/^#/ { print; if (++c == n) exit }' "$out/rk.in.hex" > "$out/rk.head.hex"
if cmp -s "$out/rk.head.hex" "$out/scapy.hex"; then
  echo "the $ns frames are byte for byte identical"
else
  echo "MISMATCH between scapy's and rocekit's frames"; diff <(head -2 "$out/scapy.hex") <(head -2 "$out/rk.head.hex") || true; exit 1
fi
awk "BEGIN { printf \"builder: %.0fx faster than scapy; whole rocekit gen: %.0fx faster per frame\n\", $s_ns / $b_ns, $s_ns / $w_ns }"
