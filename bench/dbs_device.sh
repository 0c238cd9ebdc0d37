#!/usr/bin/env bash
# Clipping-free DBS halftoning on a machine with an NVIDIA GPU and PoCL.
# usage: bench/dbs_device.sh OUTDIR
#   build; the DBS tests with the gpu role on the GPU; every map gives one
#   halftone (4096x3072 photo-like picture, gpu = the GPU, so PoCL and the GPU
#   both take part); the first run with an empty threshold-array cache against
#   a warm one; every map on the 4096x3072 picture, median of 5 warm runs per
#   stage; the all-GPU map on a 4096x3072 document page and the 2048x512 ramp.
# Tabulate with bench/profile_table.py.
set -u
out=${1:?usage: dbs_device.sh OUTDIR}
mkdir -p "$out"
. "$(dirname "$0")/device_setup.sh"
maps="cpu,cpu,cpu cpu,cpu,gpu cpu,gpu,cpu cpu,gpu,gpu gpu,cpu,cpu gpu,cpu,gpu gpu,gpu,cpu gpu,gpu,gpu"
photo=/tmp/docbin-photo-4096x3072.pgm
page=/tmp/docbin-page-4096x3072.pgm
ramp=/tmp/docbin-ramp-2048x512.pgm
$build/docbin-synth --photo --size 4096x3072 -o $photo
$build/docbin-synth --gray --size 4096x3072 -o $page
python3 -c "
import sys
w, h = 2048, 512
sys.stdout.buffer.write(b'P5\n%d %d\n255\n' % (w, h) + bytes(x // 8 for x in range(w)) * h)" > $ramp

clinfo -l
nproc
$run --list-devices --gpu-device nvidia
echo "== tests, gpu role = NVIDIA GPU"
meson test -C "$build" --print-errorlogs dbs dbs_tarray reference_dbs 2>&1 | tail -8
cp "$build/meson-logs/testlog.txt" "$out/testlog-dbs-nvidia.txt"

echo "== threshold array: empty cache, warm cache, then only the array removed (kernels cached)"
fresh=$(mktemp -d)
wall() {
    local t0 t1
    t0=$(date +%s%N)
    env DOCBIN_CACHE_DIR=$fresh $run --algo dbs --map gpu --gpu-device nvidia $ramp -o /tmp/docbin-dbs.pgm
    t1=$(date +%s%N)
    echo "$1: $(( (t1 - t0) / 1000000 )) ms wall"
}
wall "empty cache"
wall "warm cache"
ls -l $fresh | grep tarray
rm -f $fresh/dbs-tarray-*
wall "array removed"
wall "warm cache"
rm -rf "$fresh"

echo "== same halftone on every map (4096x3072 photo-like, gpu = NVIDIA, cpu = PoCL)"
sums=""
for map in $maps; do
    $run --algo dbs --map $map --gpu-device nvidia $photo -o /tmp/docbin-dbs.pgm || echo "FAIL run $map"
    sums="$sums $(md5sum < /tmp/docbin-dbs.pgm | cut -c1-32)"
done
n=$(echo $sums | tr ' ' '\n' | sort -u | wc -l)
echo "photo 4096x3072: 8 maps, $n distinct halftone(s): $([ "$n" = 1 ] && echo all equal || echo MISMATCH)"

echo "== profile"
for map in $maps; do
    echo "image $(basename $photo)"
    $run --algo dbs --map $map --gpu-device nvidia $photo --repeat 6 --profile -o /tmp/docbin-dbs.pgm 2>&1
    echo
done
for img in $page $ramp; do
    echo "image $(basename $img)"
    $run --algo dbs --map gpu --gpu-device nvidia $img --repeat 6 --profile -o /tmp/docbin-dbs.pgm 2>&1
    echo
done
rm -f /tmp/docbin-dbs.pgm
