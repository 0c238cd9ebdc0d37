#!/usr/bin/env bash
# Batch throughput of docbin-run on a machine with an NVIDIA GPU and PoCL.
# usage: bench/batch_device.sh OUTDIR [PAGES]
#   Makes PAGES (default 200) synthetic A4 300 dpi pages (RGB; GRAY=1 for gray
#   pages), then for sauvola and howe measures pages/s from wall time of:
#     serial  one image at a time, decode, run, encode (--serial), under each
#             map of $SAUVOLA_MAPS (default "gpu cpu") or $HOWE_MAPS (default
#             "gpu cpu gpu,gpu,cpu"); leave out maps known to be several times
#             slower per page (docbin-bench) when time is short
#     batch   the same maps with the default in-flight (2 per device lane)
#     measure --map measure: every map timed on the first page, the fastest
#             for the rest (a fresh wisdom file in OUTDIR)
#     all     --gpu-device all (one lane per GPU), when there are several GPUs
#   and once --codec-only (decode, host threshold, encode: the PNG codec bound).
#   Every configuration prints one line "batch key=value ..." (also in
#   OUTDIR/batch.log); a warm-up run per map builds the kernels first.
set -u
out=${1:?usage: batch_device.sh OUTDIR [PAGES]}
n=${2:-200}
mkdir -p "$out"
. "$(dirname "$0")/device_setup.sh"
pages=/tmp/docbin-batch-pages-$n${GRAY:+-gray}
dst=/tmp/docbin-batch-out
log="$out/batch.log"
: > "$log"

if [ "$(ls "$pages" 2>/dev/null | wc -l)" != "$n" ]; then
    rm -rf "$pages" && mkdir -p "$pages"
    seq 1 "$n" | xargs -P "$(nproc)" -I{} sh -c \
        "$build/docbin-synth --a4 ${GRAY:+--gray} --seed {} -o $pages/page-\$(printf %04d {}).png" || exit 1
fi
gpus=$($run --list-devices | grep -c 'type: gpu')
{
    nproc
    $run --list-devices --gpu-device nvidia
    echo "pages: $n in $pages ($(du -sh "$pages" | cut -f1)), GPUs: $gpus"
} | tee -a "$log"

# measure ALGO MODE MAP [docbin-run options...]: one timed batch over every page.
measure() {
    local algo=$1 mode=$2 map=$3
    shift 3
    rm -rf "$dst"
    local t0 t1 rc made
    t0=$(date +%s.%N)
    $run --out-dir "$dst" "$@" "$pages" 2>>"$out/batch-stderr.txt"
    rc=$?
    t1=$(date +%s.%N)
    made=$(ls "$dst" 2>/dev/null | wc -l)
    awk -v a="$algo" -v m="$mode" -v map="$map" -v t0="$t0" -v t1="$t1" -v n="$n" -v made="$made" \
        -v rc="$rc" -v opts="$*" 'BEGIN {
        w = t1 - t0
        printf "batch algo=%s mode=%s map=%s pages=%d written=%d exit=%d wall_s=%.3f pages_per_s=%.2f options=\"%s\"\n",
               a, m, map, n, made, rc, w, n / w, opts }' | tee -a "$log"
}

measure codec codec-only - --codec-only
for algo in ${ALGOS:-sauvola howe}; do
    maps=${SAUVOLA_MAPS:-gpu cpu}
    [ $algo = howe ] && maps=${HOWE_MAPS:-gpu cpu gpu,gpu,cpu}
    for map in $maps; do
        # Warm-up: builds and caches every kernel of the map on both devices.
        $run --algo $algo --map $map --gpu-device nvidia "$(ls "$pages"/*.png | head -1)" -o /tmp/docbin-warm.png
        measure $algo serial $map --algo $algo --map $map --gpu-device nvidia --serial
        measure $algo batch $map --algo $algo --map $map --gpu-device nvidia
        if [ "$gpus" -gt 1 ]; then
            measure $algo all $map --algo $algo --map $map --gpu-device all
        fi
    done
    measure $algo measure measure --algo $algo --map measure --wisdom "$out/wisdom" --gpu-device nvidia
done
rm -rf "$dst" /tmp/docbin-warm.png
echo "summary (pages/s):"
grep '^batch ' "$log" | sed 's/.*algo=\([^ ]*\) mode=\([^ ]*\) map=\([^ ]*\).*pages_per_s=\([^ ]*\).*/  \1 \2 \3 \4/'
