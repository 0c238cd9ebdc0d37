#!/usr/bin/env bash
# On a machine with an NVIDIA GPU and PoCL: build, run the test suite with the
# gpu role on the GPU and again on PoCL, check that every map of every algorithm
# gives the same image on both, and profile an A4 300 dpi page (2516x3272).
# usage: bench/device_check.sh OUTDIR [DATA_DIR]
set -u
out=${1:?usage: device_check.sh OUTDIR [DATA_DIR]}
data=${2:-}
mkdir -p "$out"
if [ ! -e /etc/OpenCL/vendors/nvidia.icd ] && ldconfig -p | grep -q libnvidia-opencl.so.1; then
    mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
clinfo -l
nproc
build=build-device
meson setup "$build" -Dtest_gpu_device=nvidia ${data:+-Ddata_dir=$data} >/dev/null && meson compile -C "$build" >/dev/null || exit 1
run="$build/docbin-run"
algos=$($run --list-algos | sed -n 's/^\([a-z-]*\) — .*/\1/p')
# Every map of an algorithm, in --map syntax ("cpu,cpu,cpu" ... "gpu,gpu,gpu").
maps_of() {
    local n=$($run --list-algos | sed -n "/^$1 — /,/^\$/s/.*stages (map order, \([0-9]*\) maps).*/\1/p")
    local k=0
    while [ $k -lt "$n" ]; do
        local m="" b=$((n / 2))
        while [ $b -ge 1 ]; do
            m="$m${m:+,}$([ $((k & b)) -ne 0 ] && echo gpu || echo cpu)"
            b=$((b / 2))
        done
        echo "$m"
        k=$((k + 1))
    done
}
export DOCBIN_CACHE_DIR=$PWD/$build/kernel-cache
$run --list-devices --gpu-device nvidia

echo "== tests, gpu role = NVIDIA GPU"
meson test -C "$build" --print-errorlogs --no-suite fuzz 2>&1 | grep -v ' 0 differing pixels' | tail -40
cp "$build/meson-logs/testlog.txt" "$out/testlog-gpu-nvidia.txt"
echo "== tests, gpu role = PoCL"
meson configure "$build" -Dtest_gpu_device=portable
meson test -C "$build" --print-errorlogs --no-suite fuzz --no-suite oclgrind 2>&1 | grep -v ' 0 differing pixels' | tail -40
cp "$build/meson-logs/testlog.txt" "$out/testlog-gpu-pocl.txt"

echo "== same image on both devices, every map: A4 sample page, and the Doxa page when data is given"
page=/tmp/docbin-a4.png
$run --write-sample "$page" --sample-size 2516x3272
mismatch=0
for page in $page ${data:+$data/doxa-page/2JohnC1V3.ppm}; do
echo "page $page"
for algo in $algos; do
    sums=""
    nmaps=0
    for gpu in portable nvidia; do
        for map in $(maps_of $algo); do
            nmaps=$((nmaps + 1))
            $run --algo $algo --map $map --gpu-device $gpu "$page" -o /tmp/docbin-id.png || { echo "FAIL run $algo $map $gpu"; mismatch=1; }
            sums="$sums $(md5sum < /tmp/docbin-id.png | cut -c1-32)"
        done
    done
    n=$(echo $sums | tr ' ' '\n' | sort -u | wc -l)
    echo "$algo: $nmaps runs (every map x {PoCL, NVIDIA}), $n distinct image(s) $(echo $sums | cut -c1-32)"
    [ "$n" = 1 ] || mismatch=1
done
for algo in niblack sauvola nick wolf; do
    sums=""
    for v in sliding global global-shared shared; do
        $run --algo $algo --map gpu --gpu-device nvidia --variant $v --param window=31 "$page" -o /tmp/docbin-id.png
        sums="$sums $(md5sum < /tmp/docbin-id.png | cut -c1-32)"
    done
    n=$(echo $sums | tr ' ' '\n' | sort -u | wc -l)
    echo "$algo variants on NVIDIA: $n distinct image(s)"
    [ "$n" = 1 ] || mismatch=1
done
done
echo "identity: $([ $mismatch = 0 ] && echo all equal || echo MISMATCH)"

echo "== profile, A4 300 dpi sample page, median of 10 warm runs"
$build/docbin-synth --a4 --seed 1 -o /tmp/docbin-synth-a4.png --gt /tmp/docbin-synth-a4-gt.png
for map in $(maps_of hbk); do
    $run --algo hbk --map $map --gpu-device nvidia /tmp/docbin-synth-a4.png --repeat 11 --profile -o /tmp/docbin-p.png 2>&1
    echo
done
for algo in otsu niblack sauvola nick wolf; do
    for map in cpu,cpu,cpu gpu,gpu,gpu gpu,cpu,gpu cpu,gpu,cpu; do
        $run --algo $algo --map $map --gpu-device nvidia --sample --sample-size 2516x3272 --repeat 11 --profile \
            -o /tmp/docbin-p.png 2>&1
        echo
    done
done
for v in global global-shared shared; do
    echo "stats variant: $v"
    $run --algo sauvola --map gpu --variant $v --gpu-device nvidia --sample --sample-size 2516x3272 --repeat 6 \
        --profile -o /tmp/docbin-p.png 2>&1
    echo
done
$run --algo sauvola --map gpu,cpu,gpu --gpu-device nvidia --sample --sample-size 2516x3272 --repeat 3 \
    --trace "$out/trace-sauvola-gpu-cpu-gpu.json" -o /tmp/docbin-p.png
if [ -n "$data" ] && [ -d "$data/dibco" ]; then
    echo "== hbk on DIBCO images, every map, median of 5 warm runs"
    for img in "$data"/dibco/*/Originals/*.png; do
        for map in $(maps_of hbk); do
            echo "image $(basename "$img")"
            $run --algo hbk --map $map --gpu-device nvidia "$img" --repeat 6 --profile -o /tmp/docbin-p.png 2>&1
            echo
        done
    done
fi
rm -f /tmp/docbin-id.png /tmp/docbin-p.png
