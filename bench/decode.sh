#!/usr/bin/env bash
# Whole-process comparison of `rocekit decode` with tshark on the same file.
#
#   bash bench/decode.sh [FRAMES]      (default 300000)
#
# Makes bench/out/mixed.pcap with bench/mkcap (rocekit's own frame builder),
# then times, with output to /dev/null:
#   tshark -T fields extracting the BTH fields (best of 3 runs),
#   rocekit decode --format json (best and median of RUNS runs),
#   rocekit decode --summary (likewise)
# Wall time is taken to the microsecond (bash's EPOCHREALTIME: GNU time's
# %e has 10 ms steps, a fifth of a 50 ms run); GNU time gives the peak
# memory (max RSS) and the CPU time, user + system, of the best run (on a
# busy machine it varies less than wall time). Peak memory is also taken on
# a file 10x larger.
#
#   bash bench/decode.sh [FRAMES] [RUNS]      (defaults 300000 and 9)
#
# Then, because this VM's speed drifts between spells minutes long (and the
# best runs above may come from different spells), ROUNDS rounds (default 5)
# that each time tshark once and then each rocekit command 3 times; a round's
# ratio is tshark's time over the median of the 3 (and over the best), and
# the script prints the median and range of the rounds' ratios.
#
#   ROUNDS=8 bash bench/decode.sh
#
# The file's page cache is first dropped and read back in (KEEP_CACHE=1
# skips that), and its state printed: see below.
#
# Beside them, bench/floor: a process that only reads the file the way
# decode does and checks every frame's ICRC (no decoding, tracking or
# output): the floor under any decoder that reads the file this way and
# checks every ICRC, on the machine it runs on.
#
# Needs tshark and GNU time (/usr/bin/time; apt-get install -y time).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-300000}
runs=${2:-9}
mkdir -p bench/out
go build -o bench/out/rocekit ./cmd/rocekit
go build -o bench/out/mkcap ./bench/mkcap
go build -o bench/out/floor ./bench/floor
f=bench/out/mixed.pcap
[ -f "$f.$n" ] || { bench/out/mkcap -n "$n" -o "$f" && touch "$f.$n"; }
# The page cache as a fresh read leaves it: the file's cached pages are
# dropped (posix_fadvise DONTNEED through dd, no root needed) and read back
# in, in large folios. On this VM the kernel splits a cached file into single
# 4 KiB pages within half an hour or so, and a mapped reader then spends about
# twice the system time on it (BENCHMARKS.md, "How to read these figures");
# KEEP_CACHE=1 measures the cache as it is. `bench/membw -folios FILE`
# reports the state (as root).
if [ -z "${KEEP_CACHE:-}" ]; then
  dd if="$f" iflag=nocache count=0 status=none
fi
cat "$f" > /dev/null
go run ./bench/membw -folios "$f" || true

# runs N CMD...: runs CMD N times; prints the best and the median wall
# seconds, and the max RSS (KB) and CPU seconds (user+sys) of the best run.
runs() {
  local k=$1 w=() b=999999 m=0 c=0
  shift
  for _ in $(seq "$k"); do
    local t0=$EPOCHREALTIME
    /usr/bin/time -f "%M %U %S" -o bench/out/t "$@" > /dev/null 2>bench/out/err || { cat bench/out/err; return 1; }
    local t1=$EPOCHREALTIME
    local s
    s=$(awk "BEGIN{printf \"%.4f\", $t1 - $t0}")
    w+=("$s")
    read -r kb u y < bench/out/t
    if awk "BEGIN{exit !($s < $b)}"; then b=$s; m=$kb; c=$(awk "BEGIN{print $u+$y}"); fi
  done
  local med
  med=$(printf '%s\n' "${w[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  echo "$b $med $m $c"
}

frames=$(bench/out/rocekit decode --format json "$f" | wc -l)
echo "file: $f, $frames frames, $(du -h "$f" | cut -f1)"
tshark_cmd=(tshark -r "$f" -T fields -e frame.number -e infiniband.bth.opcode -e infiniband.bth.se
  -e infiniband.bth.m -e infiniband.bth.padcnt -e infiniband.bth.tver -e infiniband.bth.p_key
  -e infiniband.bth.destqp -e infiniband.bth.a -e infiniband.bth.psn)
read -r ts _ tm _ < <(runs 3 "${tshark_cmd[@]}")
read -r js jmed jm jc < <(runs "$runs" bench/out/rocekit decode --format json "$f")
read -r ss smed sm sc < <(runs "$runs" bench/out/rocekit decode --summary "$f")
read -r fs fmed fm fc < <(runs "$runs" bench/out/floor "$f")
printf "%-32s best %7.3f s  %8s KB max RSS\n" "tshark -T fields (BTH fields)" "$ts" "$tm"
for x in "json $js $jmed $jm $jc" "summary $ss $smed $sm $sc"; do
  read -r name b med m c <<< "$x"
  arg="--format json"; [ "$name" = summary ] && arg="--summary"
  printf "%-32s best %7.3f s (%3.0fx faster), median %7.3f s (%3.0fx); %s KB max RSS; %s s CPU\n" \
    "rocekit decode $arg" "$b" "$(awk "BEGIN{print $ts/$b}")" "$med" "$(awk "BEGIN{print $ts/$med}")" "$m" "$c"
done
printf "%-32s best %7.3f s (%3.0fx faster), median %7.3f s (%3.0fx); %s KB max RSS; %s s CPU\n" \
  "floor (read + ICRC only)" "$fs" "$(awk "BEGIN{print $ts/$fs}")" "$fmed" "$(awk "BEGIN{print $ts/$fmed}")" "$fm" "$fc"

# Peak memory on a file 10 times larger (made the same way, 10x the frames).
f10=bench/out/mixed10.pcap
[ -f "$f10.$n" ] || { bench/out/mkcap -n $((n * 10)) -o "$f10" && touch "$f10.$n"; }
read -r _ _ jm10 _ < <(runs 3 bench/out/rocekit decode --format json "$f10")
read -r _ _ sm10 _ < <(runs 3 bench/out/rocekit decode --summary "$f10")
echo "peak memory (max RSS), 10x file: json $jm10 KB (1x: $jm KB), summary $sm10 KB (1x: $sm KB)"

# Alternated rounds: ratios taken within a round, seconds apart.
rounds=${ROUNDS:-5}
declare -A rat
for _ in $(seq "$rounds"); do
  read -r t _ _ _ < <(runs 1 "${tshark_cmd[@]}")
  for name in json summary floor; do
    cmd=(bench/out/rocekit decode --format json "$f")
    [ "$name" = summary ] && cmd=(bench/out/rocekit decode --summary "$f")
    [ "$name" = floor ] && cmd=(bench/out/floor "$f")
    read -r b med _ _ < <(runs 3 "${cmd[@]}")
    rat[$name.med]+="$(awk "BEGIN{print $t/$med}") "
    rat[$name.best]+="$(awk "BEGIN{print $t/$b}") "
  done
done
stat() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END{printf "median %.0fx (range %.0f-%.0fx)", a[int((NR+1)/2)], a[1], a[NR]}'; }
for name in json summary floor; do
  label="rocekit decode $name"; [ "$name" = floor ] && label=floor
  echo "alternated, $rounds rounds, ${label}: vs its median of 3 $(stat <<< "${rat[$name.med]}"); vs its best of 3 $(stat <<< "${rat[$name.best]}")"
done
go run ./bench/membw -folios "$f" || true
