#!/usr/bin/env bash
# The planner on a machine with an NVIDIA GPU and PoCL.
# usage: bench/planner_device.sh OUTDIR DIBCO_PAGE [PAGES]
#   For every algorithm on DIBCO_PAGE and on a synthetic A4 300 dpi page (dbs: a 1024x768
#   photo-like picture, its input kind): --map measure into a fresh wisdom file, then a separate
#   docbin-bench timing of every map (RUNS timed runs, default 5), then --map auto with that
#   wisdom. bench/planner_summary.py checks measure's pick against the fastest median.
#   Then Sauvola and Howe batches over PAGES gray A4 pages (default 200): --map measure once to
#   fill the wisdom, then --map auto with the CPU lane off, auto and on, side by side, ROUNDS
#   times (default 2). Logs in OUTDIR.
set -u
out=${1:?usage: planner_device.sh OUTDIR DIBCO_PAGE [PAGES]}
dibco=${2:?usage: planner_device.sh OUTDIR DIBCO_PAGE [PAGES]}
n=${3:-200}
mkdir -p "$out"
. "$(dirname "$0")/device_setup.sh"
bench="$build/docbin-bench"
a4=/tmp/docbin-a4.png
photo=/tmp/docbin-photo.png
$build/docbin-synth --a4 --seed 3 -o $a4
$build/docbin-synth --photo --size 1024x768 -o $photo
nproc | tee "$out/machine.txt"
$run --list-devices --gpu-device nvidia | tee -a "$out/machine.txt"
export DOCBIN_GPU_DEVICE=nvidia
log="$out/planner.log"
: > "$log"
for algo in ${ALGOS:-otsu niblack sauvola nick wolf hbk howe dbs}; do
    pages="$dibco $a4"
    [ $algo = dbs ] && pages=$photo
    for page in $pages; do
        [ -n "${SKIP_MAPS:-}" ] && continue
        wisdom="$out/wisdom-$algo-$(basename "$page" .png)"
        rm -f "$wisdom"
        {
            echo "== $algo $page"
            $run --algo $algo --map measure --measure-runs 3 --wisdom "$wisdom" --explain "$page" -o /tmp/o.png 2>&1
            echo "-- bench"
            $bench --algo $algo --runs "${RUNS:-5}" "$page" 2>&1
            echo "-- auto"
            $run --algo $algo --wisdom "$wisdom" --explain "$page" -o /tmp/o.png 2>&1
        } | tee -a "$log"
    done
done

pages=/tmp/docbin-batch-pages-$n
if [ "$(ls "$pages" 2>/dev/null | wc -l)" != "$n" ]; then
    rm -rf "$pages" && mkdir -p "$pages"
    seq 1 "$n" | xargs -P "$(nproc)" -I{} sh -c \
        "$build/docbin-synth --a4 --gray --seed {} -o $pages/page-\$(printf %04d {}).png" || exit 1
fi
blog="$out/batch.log"
: > "$blog"
for algo in sauvola howe; do
    $run --algo $algo --map measure --wisdom "$out/wisdom-batch-$algo" "$pages/page-0001.png" -o /tmp/o.png
done
for round in $(seq 1 "${ROUNDS:-2}"); do
    for algo in sauvola howe; do
        for lane in off auto on; do
            rm -rf /tmp/docbin-lane-out
            t0=$(date +%s.%N)
            $run --algo $algo --wisdom "$out/wisdom-batch-$algo" --cpu-lane $lane \
                 --out-dir /tmp/docbin-lane-out --log-json "$out/lane-$algo-$lane-$round.jsonl" "$pages" \
                 2>>"$out/batch-stderr.txt"
            rc=$?
            t1=$(date +%s.%N)
            cpu=$(grep -c '"map":"cpu' "$out/lane-$algo-$lane-$round.jsonl")
            awk -v a=$algo -v l=$lane -v r=$round -v t0=$t0 -v t1=$t1 -v n=$n -v rc=$rc -v c=$cpu 'BEGIN {
                printf "batch round=%d algo=%s cpu_lane=%s pages=%d exit=%d wall_s=%.3f pages_per_s=%.2f cpu_pages=%d\n",
                       r, a, l, n, rc, t1 - t0, n / (t1 - t0), c }' | tee -a "$blog"
        done
    done
done
rm -rf /tmp/docbin-lane-out
