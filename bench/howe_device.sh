#!/usr/bin/env bash
# Howe's binarization on a machine with an NVIDIA GPU and PoCL.
# usage: bench/howe_device.sh OUTDIR check|dibco [IMAGE_DIR] [GLOB]
#   check: build; the Howe tests with the gpu role on the GPU (not with
#          TESTS=0); every map on
#          PoCL and on the GPU gives one image (A4 synthetic page and the
#          images of IMAGE_DIR matching GLOB); the relabel strategies; every
#          map on an A4 300 dpi page, median of 5 warm runs per stage.
#   dibco: every map (or those of $MAPS) on each image of IMAGE_DIR matching
#          GLOB (default *.png), median of 5 warm runs per stage.
# Tabulate with bench/profile_table.py.
set -u
out=${1:?usage: howe_device.sh OUTDIR check|dibco [IMAGE_DIR] [GLOB]}
part=${2:?usage: howe_device.sh OUTDIR check|dibco [IMAGE_DIR] [GLOB]}
images=${3:-}
glob=${4:-*.png}
mkdir -p "$out"
. "$(dirname "$0")/device_setup.sh"
maps="cpu,cpu,cpu cpu,cpu,gpu cpu,gpu,cpu cpu,gpu,gpu gpu,cpu,cpu gpu,cpu,gpu gpu,gpu,cpu gpu,gpu,gpu"
a4=/tmp/docbin-synth-a4.png
[ -e $a4 ] || $build/docbin-synth --a4 --seed 1 -o $a4 --gt /tmp/docbin-synth-a4-gt.png

if [ "$part" = check ]; then
    clinfo -l
    nproc
    $run --list-devices --gpu-device nvidia
    echo "== tests, gpu role = NVIDIA GPU"
    [ "${TESTS:-1}" = 0 ] || meson test -C "$build" --print-errorlogs --timeout-multiplier 2 howe canny pushrelabel maxflow kernels runtime 2>&1 |
        tail -25
    [ "${TESTS:-1}" = 0 ] || cp "$build/meson-logs/testlog.txt" "$out/testlog-howe-nvidia.txt"
    echo "== same image on both devices, every map (the A4 page on the GPU only: PoCL's cut takes minutes)"
    mismatch=0
    for page in $a4 $(ls "$images"/$glob 2>/dev/null | head -3); do
        sums=""
        gpus="portable nvidia"
        [ $page = $a4 ] && gpus=nvidia
        for gpu in $gpus; do
            for map in $maps; do
                $run --algo howe --map $map --gpu-device $gpu "$page" -o /tmp/docbin-id.png ||
                    { echo "FAIL run $map $gpu"; mismatch=1; }
                sums="$sums $(md5sum < /tmp/docbin-id.png | cut -c1-32)"
            done
        done
        n=$(echo $sums | tr ' ' '\n' | sort -u | wc -l)
        echo "$(basename $page): 8 maps x {$gpus}, $n distinct image(s)"
        [ "$n" = 1 ] || mismatch=1
    done
    echo "identity: $([ $mismatch = 0 ] && echo all equal || echo MISMATCH)"
    echo "== profile"
    for s in initial fixed exponential; do
        for page in $(ls "$images"/$glob 2>/dev/null | head -2); do
            echo "relabel: $s"
            echo "image $(basename $page)"
            timeout 30 $run --algo howe --map gpu --param relabel=$s --gpu-device nvidia "$page" --repeat 4 --profile \
                -o /tmp/docbin-p.png 2>&1 || echo "relabel $s: stopped after 30 s or failed" 
            echo
        done
    done
    for map in $maps; do
        echo "image $(basename $a4)"
        $run --algo howe --map $map --gpu-device nvidia $a4 --repeat 6 --profile -o /tmp/docbin-p.png 2>&1
        echo
    done
fi

if [ "$part" = dibco ]; then
    echo "== profile"
    for img in "$images"/$glob; do
        for map in ${MAPS:-$maps}; do
            echo "image $(basename "$img")"
            $run --algo howe --map $map --gpu-device nvidia "$img" --repeat 6 --profile -o /tmp/docbin-p.png 2>&1
            echo
        done
    done
fi
rm -f /tmp/docbin-id.png /tmp/docbin-p.png
