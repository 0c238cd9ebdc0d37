#!/usr/bin/env bash
# The cpu role on PoCL: a serial batch over pages of 8 sizes with PoCL's kernel cache emptied first, and
# warm docbin-bench runs of the cpu map, for this build (N) and another (B) side by side.
# usage: BASE=path/to/other/build bench/cpu_groups_device.sh DIBCO_DIR
#   DIBCO_DIR holds the DIBCO pages as PNG (2009-H01.png ...); B is $BASE/docbin-run and $BASE/docbin-bench.
set -u
dibco=${1:?usage: BASE=BUILD bench/cpu_groups_device.sh DIBCO_DIR}
base=${BASE:?set BASE to the other build directory}
. "$(dirname "$0")/device_setup.sh"
a4=/tmp/docbin-cpu-groups-a4.png
[ -e $a4 ] || $build/docbin-synth --a4 --seed 1 -o $a4
pages=/tmp/docbin-cpu-groups-pages
mkdir -p $pages
for p in 2009-H01 2009-H03 2009-H04 2009-H05 2009-P01 2009-P02 2009-P03 2009-P04; do
    ln -sf "$(cd "$dibco" && pwd)/$p.png" $pages/
done
echo "== new page sizes: --serial --map cpu over 8 DIBCO pages, PoCL cache emptied first"
for v in B N; do
    bin=$run
    [ $v = B ] && bin=$base/docbin-run
    for a in otsu sauvola howe; do
        rm -rf ~/.cache/pocl /tmp/docbin-cpu-groups-out
        t0=$(date +%s%N)
        log=/tmp/docbin-cpu-groups.jsonl
        $bin --algo $a --map cpu --serial --out-dir /tmp/docbin-cpu-groups-out --log-json $log $pages
        ms=$(python3 -c "import json, sys; print(*(round(json.loads(l)['run_ms']) for l in open(sys.argv[1])))" $log)
        echo "$v $a: $(( ($(date +%s%N) - t0) / 1000000 )) ms for 8 pages; run_ms: $ms"
    done
done
echo "== warm runs, map cpu, docbin-bench --runs 5 (median total ms), B and N alternated"
for r in 1 2; do
    for v in B N; do
        b=$build/docbin-bench
        [ $v = B ] && b=$base/docbin-bench
        for a in otsu niblack sauvola wolf hbk howe dbs; do
            for img in "$dibco/2009-H02.png" $a4; do
                t=$($b --algo $a --maps cpu --runs 5 "$img" 2>&1 | awk '/total/ {print $3}')
                echo "$r $v $a $(basename "$img") $t"
            done
        done
    done
done
rm -rf /tmp/docbin-cpu-groups-out /tmp/docbin-cpu-groups.jsonl
