#!/usr/bin/env bash
# Whole-process comparison of `rocekit decode` with tshark on the same file.
#
#   bash bench/decode.sh [FRAMES]      (default 300000)
#
# Makes bench/out/mixed.pcap with bench/mkcap (rocekit's own frame builder),
# then times, best of 3 runs each, with output to /dev/null:
#   tshark -T fields extracting the BTH fields,
#   rocekit decode --format json,
#   rocekit decode --summary
# (with the CPU time, user + system, of the best run: on a busy machine it
# varies less than wall time), and peak memory (max RSS) of rocekit on that
# file and on one 10x larger.
# Needs tshark and GNU time (/usr/bin/time; apt-get install -y time).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-300000}
mkdir -p bench/out
go build -o bench/out/rocekit ./cmd/rocekit
go build -o bench/out/mkcap ./bench/mkcap
f=bench/out/mixed.pcap
[ -f "$f.$n" ] || { bench/out/mkcap -n "$n" -o "$f" && touch "$f.$n"; }
cat "$f" > /dev/null # page cache

best() { # best wall seconds, its max RSS (KB) and its CPU seconds (user+sys) of 3 runs of "$@"
  local b=999999 m=0 c=0
  for _ in 1 2 3; do
    /usr/bin/time -f "%e %M %U %S" -o bench/out/t "$@" > /dev/null 2>bench/out/err || { cat bench/out/err; return 1; }
    read -r s k u y < bench/out/t
    if awk "BEGIN{exit !($s < $b)}"; then b=$s; m=$k; c=$(awk "BEGIN{print $u+$y}"); fi
  done
  echo "$b $m $c"
}

frames=$(bench/out/rocekit decode --format json "$f" | wc -l)
echo "file: $f, $frames frames, $(du -h "$f" | cut -f1)"
read -r ts tm _ < <(best tshark -r "$f" -T fields -e frame.number -e infiniband.bth.opcode -e infiniband.bth.se \
  -e infiniband.bth.m -e infiniband.bth.padcnt -e infiniband.bth.tver -e infiniband.bth.p_key \
  -e infiniband.bth.destqp -e infiniband.bth.a -e infiniband.bth.psn)
read -r js jm jc < <(best bench/out/rocekit decode --format json "$f")
read -r ss sm sc < <(best bench/out/rocekit decode --summary "$f")
printf "%-40s %8s s  %8s KB max RSS\n" "tshark -T fields (BTH fields)" "$ts" "$tm"
printf "%-40s %8s s  %8s KB max RSS  (%.0fx faster; %s s CPU)\n" "rocekit decode --format json" "$js" "$jm" "$(awk "BEGIN{print $ts/$js}")" "$jc"
printf "%-40s %8s s  %8s KB max RSS  (%.0fx faster; %s s CPU)\n" "rocekit decode --summary" "$ss" "$sm" "$(awk "BEGIN{print $ts/$ss}")" "$sc"

# Peak memory on a file 10 times larger (made the same way, 10x the frames).
f10=bench/out/mixed10.pcap
[ -f "$f10.$n" ] || { bench/out/mkcap -n $((n * 10)) -o "$f10" && touch "$f10.$n"; }
read -r _ jm10 _ < <(best bench/out/rocekit decode --format json "$f10")
read -r _ sm10 _ < <(best bench/out/rocekit decode --summary "$f10")
echo "peak memory (max RSS), 10x file: json $jm10 KB (1x: $jm KB), summary $sm10 KB (1x: $sm KB)"
