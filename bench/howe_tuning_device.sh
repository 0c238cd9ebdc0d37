#!/usr/bin/env bash
# Howe's parameter tuning (howe-auto) and prediction (howe-predict) on a machine
# with an NVIDIA GPU and PoCL.
# usage: bench/howe_tuning_device.sh OUTDIR check|speed|batch|all [DIBCO_DIR]
#   DIBCO_DIR holds YEAR/Originals/*.png (default ../shared/data/dibco).
#   check: build; the Howe tests with the gpu role on the GPU (not with TESTS=0);
#          on three DIBCO pages, howe-auto on the all-GPU map, on a mixed map and
#          on the all-CPU map (PoCL) gives one image, thi and c.
#   speed: docbin-bench on every DIBCO page, RUNS timed runs (default 3) after a
#          warm-up: plain howe and howe-predict on the all-GPU map; howe-auto on
#          the all-GPU map and on the mixed maps of $MIXED (default: each chain
#          alone on the cpu role, and the laplacian or canny on the cpu role).
#          CSVs in OUTDIR; bench/howe_tuning_summary.py OUTDIR/*.csv tabulates
#          them (median and worst page per map, howe-predict over howe).
#   batch: howe-auto over all DIBCO pages as one batch on the all-GPU map, with
#          the CPU lane off and on, 2 and 4 images in flight: wall time, pages/s,
#          pages the CPU lane took.
set -u
out=${1:?usage: howe_tuning_device.sh OUTDIR check|speed|batch|all [DIBCO_DIR]}
part=${2:?usage: howe_tuning_device.sh OUTDIR check|speed|batch|all [DIBCO_DIR]}
dibco=${3:-../shared/data/dibco}
mkdir -p "$out"
. "$(dirname "$0")/device_setup.sh"
bench="$build/docbin-bench"
pages=$(ls "$dibco"/*/Originals/*.png | sort)
[ -n "$pages" ] || { echo "no DIBCO pages under $dibco"; exit 1; }
export DOCBIN_GPU_DEVICE=nvidia
# Stage order: laplacian, canny, chain-a, chain-b, chain-c, select.
mixed=${MIXED:-"gpu,gpu,cpu,gpu,gpu,gpu gpu,gpu,gpu,cpu,gpu,gpu gpu,gpu,gpu,gpu,cpu,gpu cpu,gpu,gpu,gpu,gpu,gpu gpu,cpu,gpu,gpu,gpu,gpu"}

if [ "$part" = check ] || [ "$part" = all ]; then
    {
        nproc
        $run --list-devices
        echo "== tests, gpu role = NVIDIA GPU"
        [ "${TESTS:-1}" = 0 ] || meson test -C "$build" --print-errorlogs --timeout-multiplier 3 \
            howe_tune howe_features howe canny pushrelabel 2>&1 | tail -12
        echo "== one image, thi and c on every map tried"
        for page in $(echo "$pages" | awk 'NR % 22 == 1'); do
            sums=""
            for map in gpu gpu,gpu,cpu,gpu,gpu,gpu cpu; do
                report=$($run --algo howe-auto --map $map "$page" -o /tmp/docbin-ha.png --profile 2>&1 |
                         grep -E '^(thi_x1000|c_index):' | tr '\n' ' ')
                sums="$sums $(md5sum < /tmp/docbin-ha.png | cut -c1-32)/${report// /}"
            done
            n=$(echo $sums | tr ' ' '\n' | sort -u | wc -l)
            echo "$(basename "$page"): $sums -> $n distinct"
        done
    } 2>&1 | tee "$out/check.log"
fi

if [ "$part" = speed ] || [ "$part" = all ]; then
    runs=${RUNS:-3}
    $bench --algo howe --maps gpu --runs "$runs" --csv "$out/howe.csv" $pages > "$out/howe.txt" 2>&1
    $bench --algo howe-predict --maps gpu --runs "$runs" --csv "$out/howe-predict.csv" $pages \
        > "$out/howe-predict.txt" 2>&1
    $bench --algo howe-auto --maps "gpu;$(echo $mixed | tr ' ' ';')" --runs "$runs" --csv "$out/howe-auto.csv" \
        $pages > "$out/howe-auto.txt" 2>&1
    python3 "$(dirname "$0")/howe_tuning_summary.py" "$out"/howe.csv "$out"/howe-predict.csv "$out"/howe-auto.csv |
        tee "$out/summary.md"
fi

if [ "$part" = batch ] || [ "$part" = all ]; then
    list="$out/pages.txt"
    echo "$pages" > "$list"
    n=$(wc -l < "$list")
    for inflight in 2 4; do
        for lane in off on; do
            rm -rf /tmp/docbin-tune-out
            t0=$(date +%s.%N)
            $run --algo howe-auto --map gpu --cpu-lane $lane --in-flight $inflight --out-dir /tmp/docbin-tune-out \
                --log-json "$out/batch-$inflight-$lane.jsonl" @"$list" 2>>"$out/batch-stderr.txt"
            rc=$?
            t1=$(date +%s.%N)
            cpu=$(grep -c '"map":"cpu' "$out/batch-$inflight-$lane.jsonl")
            awk -v l=$lane -v f=$inflight -v t0=$t0 -v t1=$t1 -v n=$n -v rc=$rc -v c=$cpu 'BEGIN {
                printf "howe-auto batch in_flight=%d cpu_lane=%s pages=%d exit=%d wall_s=%.3f pages_per_s=%.2f cpu_pages=%d\n",
                       f, l, n, rc, t1 - t0, n / (t1 - t0), c }' | tee -a "$out/batch.log"
        done
    done
    rm -rf /tmp/docbin-tune-out
fi
rm -f /tmp/docbin-ha.png
