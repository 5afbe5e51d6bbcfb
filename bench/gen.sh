#!/usr/bin/env bash
# Whole-process timing of `rocekit gen`: frames written per second (both
# streams counted) and peak memory, best of RUNS runs each.
#
#   bash bench/gen.sh [N] [RUNS]        (defaults 1000000 and 3)
#
# Workloads, all fault-free except the last:
#   packets   a packet list of N RDMA WRITE Only (64-byte payload; "repeat"),
#             answered by N ACKs: 2N frames of 138 and 58 bytes
#   scenario  a simulator scenario of N 64-byte RDMA WRITEs (the simulator
#             runs first: its own time is shown, as `rocekit sim` takes it)
#   mtu256    a scenario of N/16 WRITEs of 4 KiB at path MTU 256: N request
#             frames of 318 bytes and N/16 ACKs
#   faults    the packets workload with duplicate, flip-masked and ghost-ack
#             on 1% of the frames each (faults that leave the stream in
#             sequence: a bad ICRC would leave the rest of an open-loop
#             stream unanswered)
# each written as pcap and as hex, with and without the manifest, into
# bench/out/gen (on disk). Needs GNU time (/usr/bin/time).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000000}
runs=${2:-3}
out=bench/out/gen
mkdir -p "$out"
go build -o bench/out/rocekit ./cmd/rocekit
rk=bench/out/rocekit

printf '[{"opcode": "RC_RDMA_WRITE_ONLY", "payload": {"len": 64}, "repeat": %d}]\n' "$n" > "$out/packets.json"
cat > "$out/scenario.json" <<EOF
{"seed": 1, "hosts": [{"name": "a"}, {"name": "b"}],
 "links": [{"a": "a", "b": "b", "bandwidth_gbps": 100, "delay_ns": 1000}],
 "qps": [{"from": "a", "to": "b", "mtu": 1024, "outstanding": 64, "work": {"op": "write", "count": $n, "size": 64}}]}
EOF
cat > "$out/mtu256.json" <<EOF
{"seed": 1, "hosts": [{"name": "a"}, {"name": "b"}],
 "links": [{"a": "a", "b": "b", "bandwidth_gbps": 100, "delay_ns": 1000}],
 "qps": [{"from": "a", "to": "b", "mtu": 256, "outstanding": 16, "work": {"op": "write", "count": $((n / 16)), "size": 4096}}]}
EOF

best() { # best wall seconds and its max RSS (KB) of $runs runs of "$@"
  local b=999999 m=0
  for _ in $(seq "$runs"); do
    rm -f "$out"/x.*
    /usr/bin/time -f "%e %M" -o "$out/t" "$@" > "$out/stdout" 2> "$out/err" || { cat "$out/err"; return 1; }
    read -r s k < "$out/t"
    if awk "BEGIN{exit !($s < $b)}"; then b=$s; m=$k; fi
  done
  echo "$b $m"
}

frames() { # frames of both streams, from gen's summary line
  awk '/input frames/ { print $1 + $4 }' "$out/stdout"
}

printf "%-10s %-7s %-9s %10s %9s %13s %10s\n" workload format manifest frames seconds "frames/s" "max RSS MB"
for w in packets scenario mtu256 faults; do
  case $w in
    packets) src=(--packets "$out/packets.json") ;;
    scenario) src=(--scenario "$out/scenario.json") ;;
    mtu256) src=(--scenario "$out/mtu256.json") ;;
    faults) src=(--packets "$out/packets.json" --fault duplicate:0.01 --fault flip-masked:0.01 --fault ghost-ack:0.01) ;;
  esac
  for f in pcap hex; do
    for man in yes no; do
      extra=()
      [ "$man" = no ] && extra=(--no-manifest)
      read -r s k < <(best "$rk" gen "${src[@]}" --format "$f" -o "$out/x" "${extra[@]}")
      fr=$(frames)
      printf "%-10s %-7s %-9s %10d %9s %13.0f %10.0f\n" "$w" "$f" "$man" "$fr" "$s" "$(awk "BEGIN{print $fr / $s}")" "$(awk "BEGIN{print $k / 1024}")"
    done
  done
  if [ "$w" = scenario ] || [ "$w" = mtu256 ]; then
    read -r s _ < <(best "$rk" sim --scenario "$out/$w.json" --json)
    echo "           (rocekit sim alone on the $w scenario: $s s)"
  fi
done
rm -f "$out"/x.*
