#!/usr/bin/env bash
# The planner on a machine with an NVIDIA GPU and PoCL.
# usage: bench/planner_device.sh OUTDIR calibrate|accuracy IMAGE [ALGOS]
#   calibrate: docbin-bench --calibrate for ALGOS (default: all) with the gpu
#              role on the GPU, the stats variant $VARIANT only (default
#              sliding, the default variant; the shared-memory variants take
#              seconds a run on PoCL), again while it warns that the host's
#              speed moved or the hypervisor took its CPU time, $CAL_TRIES
#              times at most (default 3), and
#              OUTDIR/unsteady when the last try warned too; the
#              calibration file goes to OUTDIR/perf, or stays in
#              $DOCBIN_PERF_DIR when that is set.
#   accuracy:  for each of ALGOS, every map on IMAGE (a DIBCO-size page) and on
#              an A4 300 dpi synthetic page, one warm-up and $RUNS timed runs
#              (default 5; calibrate also takes $RUNS, default docbin-bench's), with
#              the planner's prediction beside each map's median and the map
#              --map auto picks against the fastest one (docbin-bench --predict);
#              CSV and SVG per algorithm in OUTDIR. The maps run interleaved
#              (docbin-bench --order), or as $ORDER says.
set -u
out=${1:?usage: planner_device.sh OUTDIR calibrate|accuracy IMAGE [ALGOS]}
part=${2:?usage: planner_device.sh OUTDIR calibrate|accuracy IMAGE [ALGOS]}
image=${3:?usage: planner_device.sh OUTDIR calibrate|accuracy IMAGE [ALGOS]}
algos=${4:-otsu niblack sauvola nick wolf hbk howe dbs}
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$(dirname "$0")/device_setup.sh"
export DOCBIN_PERF_DIR=${DOCBIN_PERF_DIR:-$out/perf}
a4=/tmp/docbin-synth-a4.png
[ -e $a4 ] || $build/docbin-synth --a4 --seed 1 -o $a4 --gt /tmp/docbin-synth-a4-gt.png

if [ "$part" = calibrate ]; then
    $run --list-devices --gpu-device nvidia
    # docbin-bench warns when the host's speed moved while it calibrated (a fresh
    # machine settling, or load arriving) or the hypervisor took 1% or more of the
    # CPU time between two checkpoints; do what the warning asks, up to
    # $CAL_TRIES times in all (default 3), and say how many it took. When the
    # last try warned too, OUTDIR/unsteady says so, and the accuracy part repeats
    # it: its figures then describe the machine's moves, not the planner.
    tries=${CAL_TRIES:-3}
    rm -f "$out/unsteady"
    for try in $(seq 1 "$tries"); do
        echo "calibration $try of at most $tries"
        time $build/docbin-bench --calibrate --gpu-device nvidia --algo "$(echo $algos | tr ' ' ,)" \
            --variant "${VARIANT:-sliding}" ${RUNS:+--runs $RUNS} 2>&1 | tee "$out/calibrate-$try.log"
        grep -q "calibrate again when it is steady" "$out/calibrate-$try.log" || break
        [ "$try" = "$tries" ] && echo "the calibration warned in all $tries tries: the host was not steady" |
            tee "$out/unsteady"
    done
fi
if [ "$part" = accuracy ]; then
    [ -e "$out/unsteady" ] && echo "planner_device.sh: note: $(cat "$out/unsteady"); these predictions come from it"
    for algo in $algos; do
        echo "== $algo"
        $build/docbin-bench --algo $algo --gpu-device nvidia --runs "${RUNS:-5}" ${ORDER:+--order $ORDER} \
            --predict "$image" $a4 \
            --csv "$out/$algo.csv" --svg "$out/$algo.svg"
    done
fi
