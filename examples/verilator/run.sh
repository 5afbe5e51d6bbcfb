#!/usr/bin/env bash
# run.sh: build librocekit and one of the Verilator benches, and run it.
#
#   ./run.sh [-o DIR] resp|req [+PLUSARG...]
#
# resp: resp_bench.sv, the DUT is a responder driven by the rocekit requester
# peer; req: req_bench.sv, the DUT is a requester answered by the rocekit
# responder peer. Plusargs go to the bench (+break=1 runs the broken stand-in,
# +seed=N, +loss=PERMILLE; see the top of each .sv file). DIR (default
# ./build) keeps librocekit.a and the verilated benches; what is there is
# reused, so delete DIR after changing the sources. Needs go, verilator (5.x,
# with --timing: apt-get install verilator) and a C++ compiler. Exits with the
# bench's status: 0 when it prints PASS.
set -euo pipefail

usage() {
	sed -n '4,4s/^# *//p' "$0" >&2
	exit 2
}

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$here/build
while getopts o:h opt; do
	case $opt in
	o) out=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || usage
bench=$1
shift
case $bench in
resp | req) ;;
*) usage ;;
esac
mkdir -p "$out"
out=$(cd "$out" && pwd)

lib=$out/librocekit.a
if [ ! -f "$lib" ]; then
	(cd "$root" && go build -buildmode=c-archive -o "$lib" ./dpi)
fi

exe=$out/$bench/Vtb_$bench
if [ ! -x "$exe" ]; then
	# -O1 compiles about as fast as -O0 and runs the bench several times
	# faster; the Verilator runtime is compiled once per bench.
	verilator --binary -j 2 -Wno-fatal -Wno-WIDTH --top-module "tb_$bench" \
		"-I$here" "$root/dpi/rocekit_pkg.sv" "$here/${bench}_bench.sv" \
		-LDFLAGS "$lib -lpthread -ldl" --Mdir "$out/$bench" -o "Vtb_$bench" \
		-MAKEFLAGS "OPT_FAST=-O1 OPT_SLOW=-O0 OPT_GLOBAL=-O1" >"$out/$bench.build.log" 2>&1 ||
		{
			cat "$out/$bench.build.log" >&2
			exit 1
		}
fi
exec "$exe" "$@"
