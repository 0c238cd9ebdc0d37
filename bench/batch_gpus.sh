#!/usr/bin/env bash
# Batch throughput on one GPU against all GPUs, and against the PNG codec bound.
# usage: bench/batch_gpus.sh OUTDIR [PAGES...]      (default PAGES: 200)
#   Makes max(PAGES) synthetic A4 300 dpi pages (docbin-synth --a4 --seed 1..N, RGB), then, $REPS times
#   (default 2) for each count N in PAGES (the first N pages): --codec-only, Sauvola with the gpu map on
#   the first GPU (default lanes, and --in-flight 1), and Howe and DBS with the gpu map on the first GPU
#   and on every GPU (--gpu-device all). Each configuration prints one line "batch LABEL pages=N ...
#   pages_per_s=R cpu_s=C" (also in OUTDIR/batch.log) from the wall time of one docbin-run over the N pages
#   (C: its user and system CPU seconds).
#   With BASE=path/to/another/docbin-run every configuration but the codec's also runs with that binary,
#   labelled B- (this build's lines are labelled N-), side by side in the same round.
#   Two counts give the marginal rate, (N2 - N1) / (wall(N2) - wall(N1)): what a run pays once
#   (opening devices, filling and draining the pipeline) left out. With LOGS=1 each run also writes
#   its --log-json to OUTDIR/LABEL-N-REP.jsonl (run_start_ms and run_ms per image: the lanes' timeline).
#   ALGOS="sauvola howe" (default "sauvola howe dbs") limits the algorithms.
set -u
out=${1:?usage: batch_gpus.sh OUTDIR [PAGES...]}
shift
counts=${*:-200}
mkdir -p "$out"
out=$(cd "$out" && pwd)
. "$(dirname "$0")/device_setup.sh"
max=$(printf '%s\n' $counts | sort -n | tail -1)
pages=/tmp/docbin-gpus-pages
mkdir -p $pages
make_page='f=$0/page-$(printf %04d $1).png; [ -e "$f" ] || "$2" --a4 --seed "$1" -o "$f"'
seq 1 "$max" | xargs -P "$(nproc)" -I{} sh -c "$make_page" $pages {} "$build/docbin-synth" || exit 1
for n in $counts; do
    mkdir -p /tmp/docbin-gpus-$n
    ls $pages | head -n "$n" | while read -r f; do ln -sf $pages/$f /tmp/docbin-gpus-$n/$f; done
done
g0=$($run --list-devices | awk '/type: gpu/ {print $1}' | sed -n 1p)
log=$out/batch.log
echo "cores $(nproc), GPUs: $($run --list-devices | awk '/type: gpu/ {print $1}' | tr '\n' ' ')" | tee "$log"
measure() {  # LABEL BINARY N OPTIONS...
    local label=$1 bin=$2 n=$3
    shift 3
    [ -n "${LOGS:-}" ] && set -- "$@" --log-json "$out/$label-$n-$rep.jsonl"
    rm -rf /tmp/docbin-gpus-out
    local t0 t1 rc
    local TIMEFORMAT='%U %S'
    t0=$(date +%s.%N)
    { time $bin --out-dir /tmp/docbin-gpus-out "$@" /tmp/docbin-gpus-$n 2>>"$out/stderr.txt"; } 2>/tmp/docbin-gpus-cpu
    rc=$?
    t1=$(date +%s.%N)
    awk -v l="$label" -v t0="$t0" -v t1="$t1" -v n="$n" -v m="$(ls /tmp/docbin-gpus-out | wc -l)" -v rc=$rc \
        -v cpu="$(awk '{print $1 + $2}' /tmp/docbin-gpus-cpu)" \
        -v o="$*" 'BEGIN { printf "batch %-22s pages=%d written=%d exit=%d wall_s=%.3f pages_per_s=%.2f cpu_s=%.1f",
                                   l, n, m, rc, t1 - t0, n / (t1 - t0), cpu
                           printf " options=\"%s\"\n", o }' | tee -a "$log"
}
for a in ${ALGOS:-sauvola howe dbs}; do
    $run --algo $a --map gpu --gpu-device "$g0" $pages/page-0001.png -o /tmp/docbin-gpus-warm.png
done
builds="N"
[ -n "${BASE:-}" ] && builds="B N"
for rep in $(seq 1 "${REPS:-2}"); do
    for n in $counts; do
        measure codec-only "$run" "$n" --codec-only
        for v in $builds; do
            bin=$run
            [ $v = B ] && bin=$BASE
            for a in ${ALGOS:-sauvola howe dbs}; do
                measure $v-$a-gpu0 "$bin" "$n" --algo $a --map gpu --gpu-device "$g0"
                if [ $a = sauvola ]; then
                    measure $v-$a-gpu0-if1 "$bin" "$n" --algo $a --map gpu --gpu-device "$g0" --in-flight 1
                else
                    measure $v-$a-all "$bin" "$n" --algo $a --map gpu --gpu-device all
                fi
            done
        done
    done
done
rm -rf /tmp/docbin-gpus-out /tmp/docbin-gpus-warm.png
