#!/usr/bin/env bash
# The fabric simulator against htsim on the same experiment (fabric-facts §6):
# a k=8 fat tree (128 hosts, 80 switches), 100 Gb/s everywhere, a random
# permutation of 10 MB flows, ECMP, PFC lossless; htsim at MTU 4000 (its
# RoCE model's), rocekit at 4096 with every frame real and its ICRC built
# and checked. Runs the two alternated, ROUNDS rounds (default 6), and prints
# each one's wall time and data packets per wall second, and rocekit's over
# htsim's in the same round (median and range), then rocekit's peak memory.
# Each round also runs the floor (roce's BenchmarkFabricFloor/inflight=16384:
# per data packet only the frame built with its ICRC, parsed and checked,
# its payload copied and verified, frames cold as in the fabric) and prints
# its data packets per second over htsim's: the most any simulator of real
# frames could reach here, against the 10x goal.
#
#   bash bench/fabric.sh GIT_DIR   # GIT_DIR: a clone of Broadcom/csg-htsim (once, to build htsim)
#
# htsim is built by ../shared/bench/htsim-perm.sh into ${HTSIM_DIR:-/tmp/htsim}.
set -eu
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-6}
d=${HTSIM_DIR:-/tmp/htsim}
bash ../shared/bench/htsim-perm.sh "$@" >/dev/null
mkdir -p bench/out
go build -o bench/out/rocekit ./cmd/rocekit
go test -c -o bench/out/roce.test ./roce
htsim="cd $d/sim/datacenter && ./htsim_roce -nodes 128 -tm /tmp/htsim-perm128.cm -strat ecmp_host -paths 16 -queue_type lossless_input -mtu 4000 -end 100000 -seed 7"
ours="bench/out/rocekit sim --topology fat-tree:k=8 --traffic permutation:size=10MB --seed 7 --json"
pk_h=$((128 * 10000000 / 4000))
pk_r=$(bench/out/rocekit sim --topology fat-tree:k=8 --traffic permutation:size=10MB --seed 7 --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["data_packets"])')
python3 - "$rounds" "$htsim" "$ours" "$pk_h" "$pk_r" <<'PY'
import re, statistics, subprocess, sys, time
n, cmds, pk = int(sys.argv[1]), sys.argv[2:4], [int(sys.argv[4]), int(sys.argv[5])]
ts = [[], []]
floor = []
for i in range(n):
    for j in ([0, 1, 2] if i % 2 == 0 else [2, 1, 0]):
        if j == 2:
            out = subprocess.run(["bench/out/roce.test", "-test.run", "^$", "-test.bench", "FabricFloor/inflight=16384",
                                  "-test.benchtime", "300000x"], capture_output=True, text=True, check=True).stdout
            floor.append(float(re.search(r"([0-9.e+]+) datapkts/s", out).group(1)))
            continue
        t = time.perf_counter()
        subprocess.run(cmds[j], shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        ts[j].append(time.perf_counter() - t)
for j, name in enumerate(["htsim", "rocekit"]):
    rate = [pk[j] / t for t in ts[j]]
    print(f"{name:8s} {statistics.median(ts[j]):6.2f} s median wall, {min(ts[j]):6.2f} s best; "
          f"{statistics.median(rate)/1e3:6.0f} k data packets/s median ({pk[j]} data packets)")
r = [(pk[1] / ts[1][i]) / (pk[0] / ts[0][i]) for i in range(n)]
print(f"rocekit / htsim data packets per wall second: {statistics.median(r):.2f}x median by round "
      f"(range {min(r):.2f}-{max(r):.2f}x, {n} rounds)")
fr = [floor[i] / (pk[0] / ts[0][i]) for i in range(n)]
print(f"floor    {statistics.median(floor)/1e3:6.0f} k data packets/s median; floor / htsim: {statistics.median(fr):.2f}x "
      f"(range {min(fr):.2f}-{max(fr):.2f}x); rocekit / floor: {statistics.median([pk[1] / ts[1][i] / floor[i] for i in range(n)]):.2f}x")
PY
/usr/bin/time -f "rocekit peak memory: %M KB" $ours >/dev/null
