#!/usr/bin/env bash
# run.sh: compile tb_axis.v with Icarus Verilog and replay a rocekit stimulus
# stream through it; the frames the AXI-Stream sink received go to OUT, one
# lower-case hex line per frame.
#
#   ./run.sh [-w WIDTH] [-b le|be] [-s SEED] memh    PREFIX OUT   # PREFIX.mem + PREFIX.idx.mem
#   ./run.sh [-w WIDTH] [-b le|be] [-s SEED] axismem PREFIX OUT   # PREFIX.axis.mem
#
# WIDTH (default 64) and the byte order (default le) must be those the files
# were written with (their first comment line says). SEED (default 1) seeds
# the random idle cycles of the source and tready stalls of the sink.
# Needs iverilog and vvp (apt-get install iverilog). Exits non-zero if the
# bench reports an ERROR.
set -euo pipefail

usage() {
	sed -n '6,7s/^# *//p' "$0" >&2
	exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
width=64 order=le seed=1
while getopts w:b:s:h opt; do
	case $opt in
	w) width=$OPTARG ;;
	b) order=$OPTARG ;;
	s) seed=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 3 ] || usage
mode=$1 prefix=$2 out=$3
case $order in
le) be=0 ;;
be) be=1 ;;
*) usage ;;
esac

# data lines of a $readmemh file: not blank, not a // comment
count() { grep -cvE '^[[:space:]]*(//.*)?$' "$1" || true; }

case $mode in
memh)
	words=$(count "$prefix.mem")
	frames=$(($(count "$prefix.idx.mem") - 1)) # minus the end entry
	depth=$((words > 0 ? words : 1))
	nframes=$((frames + 1))
	plusargs=("+mem=$prefix.mem" "+idx=$prefix.idx.mem" "+words=$words" "+frames=$frames")
	;;
axismem)
	beats=$(($(count "$prefix.axis.mem") - 1)) # minus the end word
	depth=$((beats + 1))
	nframes=1
	plusargs=("+axismem=$prefix.axis.mem" "+beats=$beats")
	;;
*) usage ;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
iverilog -g2012 -Wall \
	-P tb_axis.W="$width" -P tb_axis.BE="$be" \
	-P tb_axis.MAXWORDS="$depth" -P tb_axis.MAXFRAMES="$nframes" \
	-o "$tmp/tb.vvp" "$here/tb_axis.v"
vvp -n "$tmp/tb.vvp" "+out=$out" "+seed=$seed" "${plusargs[@]}" | tee "$tmp/log"
! grep -q '^ERROR' "$tmp/log"
