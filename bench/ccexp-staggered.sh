#!/usr/bin/env bash
# The staggered experiment (the HPCC paper's fairness test): hosts 1-4 send
# to host 0 over one 100 Gb/s port, starting GAP apart (default 1 ms) and
# sized to end, at a fair share of 95 Gb/s, in reverse order GAP apart (1,
# 2, 3, 4, 3, 2, 1 flows). For each congestion control, prints every
# phase's flows, how long after the phase began every running flow stayed
# within 15% of the running flows' mean in every WINDOW (default 50us) to
# the phase's end ("-" if never), and the flows' mean total rate. The
# convergence rule is TestStaggeredHPCC's.
#
#   bash bench/ccexp-staggered.sh
#   GAP=10ms WINDOW=1ms bash bench/ccexp-staggered.sh   # phases at DCQCN's pace
set -eu
cd "$(dirname "$0")/.."
mkdir -p bench/out
go build -o bench/out/rocekit ./cmd/rocekit
python3 - "${GAP:-1ms}" "${WINDOW:-50us}" <<'PY'
import csv, subprocess, sys
def t(s):
    for u, m in (("ms", 1e-3), ("us", 1e-6), ("s", 1.0)):
        if s.endswith(u):
            return float(s[:-len(u)]) * m
    raise SystemExit(f"{s}: want a time in s, ms or us")
gap, win = t(sys.argv[1]), t(sys.argv[2])
share = lambda n: 95e9 / 8 * gap / n
sizes = [sum(share(n) for n in (1, 2, 3, 4, 3, 2, 1)), sum(share(n) for n in (2, 3, 4, 3, 2)),
         sum(share(n) for n in (3, 4, 3)), share(4)]
with open("bench/out/staggered.txt", "w") as f:
    f.write(f"{len(sizes)}\n")
    for i, sz in enumerate(sizes):
        f.write(f"{i + 1} 0 3 100 {int(sz)} {i * gap:.9f}\n")
runs = [("hpcc n=4", ["--cc", "hpcc", "--cc-param", "n=4"]), ("hpcc (ns3)", ["--cc", "hpcc"]),
        ("dcqcn:ns3-mellanox", ["--cc", "dcqcn:ns3-mellanox"]), ("dcqcn:paper", ["--cc", "dcqcn:paper"]),
        ("dcqcn:htsim", ["--cc", "dcqcn:htsim"])]
for name, args in runs:
    subprocess.run(["bench/out/rocekit", "sim", "--topology", "star:hosts=5", "--traffic", "bench/out/staggered.txt",
                    "--fct", "bench/out/staggered.fct.csv", "--samples", "bench/out/staggered",
                    "--sample-interval", sys.argv[2]] + args, check=True, capture_output=True)
    flows = list(csv.DictReader(open("bench/out/staggered.fct.csv")))
    rates = {}
    for r in csv.DictReader(open("bench/out/staggered.rates.csv")):
        rates.setdefault(round(float(r["time_ns"])), {})[int(r["flow"])] = float(r["gbps"])
    cuts = sorted({float(f["start_ns"]) for f in flows} | {float(f["finish_ns"]) for f in flows})
    print(f"{name}:")
    w = win * 1e9
    for a, b in zip(cuts, cuts[1:]):
        if b - a < 4 * w:
            continue
        run = [int(f["flow"]) for f in flows if float(f["start_ns"]) <= a and float(f["finish_ns"]) >= b]
        at = (a // w + 2) * w
        conv, tot, n = 0.0, 0.0, 0
        while at <= b:
            r = [rates.get(round(at), {}).get(i, 0.0) for i in run]
            mean = sum(r) / len(r)
            if any(abs(x - mean) > 0.15 * mean for x in r):
                conv = at - a
            tot += sum(r)
            n += 1
            at += w
        c = "-" if conv >= b - a - w else f"{conv / 1e3:.0f} us"
        print(f"  {a / 1e6:7.3f}-{b / 1e6:7.3f} ms  {len(run)} flows  converged after {c:>8s}  {tot / n:5.1f} Gb/s")
PY
