#!/usr/bin/env python3
"""Whole-process A/B timing on a machine whose speed drifts: runs each
command once per round, N rounds, the order of the commands reversed every
other round, and prints each command's median and best wall time and the
median over rounds of its time divided by the first command's in the same
round (runs seconds apart see the same machine), and of the first's time
divided by its (how many times faster it is), with the range over rounds.

    python3 bench/alternate.py N 'CMD A' 'CMD B' ...

For example, an older build against this one:
    python3 bench/alternate.py 20 '/tmp/old decode --summary F' 'bench/out/rocekit decode --summary F'
"""
import statistics
import subprocess
import sys
import time

if len(sys.argv) < 3:
    sys.exit(__doc__)
n = int(sys.argv[1])
cmds = sys.argv[2:]
ts = [[] for _ in cmds]
for i in range(n):
    order = list(range(len(cmds)))
    if i % 2:
        order.reverse()
    for j in order:
        t = time.perf_counter()
        subprocess.run(cmds[j], shell=True, stdout=subprocess.DEVNULL, check=True)
        ts[j].append(time.perf_counter() - t)
for j, c in enumerate(cmds):
    r = [ts[j][i] / ts[0][i] for i in range(n)]
    inv = [ts[0][i] / ts[j][i] for i in range(n)]
    print(f"{statistics.median(ts[j])*1000:7.1f} ms median, {min(ts[j])*1000:7.1f} ms best, "
          f"{statistics.median(r):.4g} x the first's time, {statistics.median(inv):.4g} x as fast "
          f"(medians by round; range {min(inv):.4g}-{max(inv):.4g} x as fast)  {c}")
