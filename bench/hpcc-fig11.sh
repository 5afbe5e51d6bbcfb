#!/usr/bin/env bash
# The shape of the HPCC paper's Fig. 11 (fabric-facts §6) on a k=8 fat tree
# (128 hosts, 100 Gb/s): WebSearch flows at 30% load plus 2% incast (60
# senders x 500 KB), arriving for DURATION (default 5ms), with DCQCN (HPCC
# ns-3's Mellanox-style preset) and with HPCC; prints each run's FCT
# slowdown p50/p95/p99 per flow-size bucket side by side, and writes the
# per-flow CSVs to bench/out/fig11-{dcqcn,hpcc}.csv.
#
#   bash bench/hpcc-fig11.sh
set -eu
cd "$(dirname "$0")/.."
mkdir -p bench/out
go build -o bench/out/rocekit ./cmd/rocekit
d=${DURATION:-5ms}
traffic="poisson:load=0.3,cdf=websearch,duration=$d+incasts:n=60,size=500KB,load=0.02,duration=$d"
for cc in dcqcn:ns3-mellanox hpcc; do
  name=${cc%%:*}
  bench/out/rocekit sim --topology fat-tree:k=8 --traffic "$traffic" --cc "$cc" \
    --fct "bench/out/fig11-$name.csv" --json > "bench/out/fig11-$name.json"
done
python3 - <<'PY'
import json
runs = {n: json.load(open(f"bench/out/fig11-{n}.json")) for n in ("dcqcn", "hpcc")}
print(f"{runs['hpcc']['flows']} flows, all completed: "
      + ", ".join(f"{n} {r['flows_completed']}" for n, r in runs.items()))
print(f"{'bucket':12s} {'flows':>6s}   {'DCQCN p50':>9s} {'p95':>7s} {'p99':>7s}   {'HPCC p50':>8s} {'p95':>7s} {'p99':>7s}")
for d, h in zip(runs["dcqcn"]["fct_slowdown"], runs["hpcc"]["fct_slowdown"]):
    print(f"{d['bucket']:12s} {d['flows']:6d}   {d['p50']:9.3g} {d['p95']:7.3g} {d['p99']:7.3g}   {h['p50']:8.3g} {h['p95']:7.3g} {h['p99']:7.3g}")
PY
