#!/usr/bin/env bash
# What congestion control costs the fabric simulator: the htsim experiment of
# bench/fabric.sh (k=8 fat tree, permutation of 10 MB flows) with --cc none,
# dcqcn and hpcc, alternated for ROUNDS rounds (default 6); prints each one's
# events per wall second and data packets per wall second (medians), and
# each CC's events per second over none's in the same round (median, range).
#
#   bash bench/fabric-cc.sh
set -eu
cd "$(dirname "$0")/.."
mkdir -p bench/out
go build -o bench/out/rocekit ./cmd/rocekit
python3 - "${ROUNDS:-6}" <<'PY'
import json, statistics, subprocess, sys
n = int(sys.argv[1])
ccs = ["none", "dcqcn", "hpcc"]
ev = {c: [] for c in ccs}
dp = {c: [] for c in ccs}
for i in range(n):
    for c in (ccs if i % 2 == 0 else ccs[::-1]):
        out = subprocess.run(["bench/out/rocekit", "sim", "--topology", "fat-tree:k=8", "--traffic", "permutation:size=10MB",
                              "--seed", "7", "--cc", c, "--json"], capture_output=True, text=True, check=True).stdout
        s = json.loads(out)
        ev[c].append(s["events_per_second"])
        dp[c].append(s["data_packets_per_wall_second"])
for c in ccs:
    r = [ev[c][i] / ev["none"][i] for i in range(n)]
    print(f"--cc {c:6s} {statistics.median(ev[c])/1e6:5.2f} M events/s, {statistics.median(dp[c])/1e3:5.0f} k data packets/s; "
          f"events/s over none's: {statistics.median(r):.2f}x (range {min(r):.2f}-{max(r):.2f}x, {n} rounds)")
PY
