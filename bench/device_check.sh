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
for algo in otsu niblack sauvola nick wolf; do
    sums=""
    for gpu in portable nvidia; do
        for map in cpu,cpu,cpu cpu,cpu,gpu cpu,gpu,cpu cpu,gpu,gpu gpu,cpu,cpu gpu,cpu,gpu gpu,gpu,cpu gpu,gpu,gpu; do
            $run --algo $algo --map $map --gpu-device $gpu "$page" -o /tmp/docbin-id.png || { echo "FAIL run $algo $map $gpu"; mismatch=1; }
            sums="$sums $(md5sum < /tmp/docbin-id.png | cut -c1-32)"
        done
    done
    n=$(echo $sums | tr ' ' '\n' | sort -u | wc -l)
    echo "$algo: 16 runs (8 maps x {PoCL, NVIDIA}), $n distinct image(s) $(echo $sums | cut -c1-32)"
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
rm -f /tmp/docbin-id.png /tmp/docbin-p.png
