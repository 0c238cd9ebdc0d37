#!/usr/bin/env bash
# Howe's binarization with the graph cut on an NVIDIA GPU: the push-relabel
# kernels over all nodes in global memory (DOCBIN_PUSHRELABEL=global, the
# older path) against the block-local tiles (DOCBIN_PUSHRELABEL=tiles, the
# default on GPU devices), side by side.
# usage: bench/pushrelabel_device.sh OUTDIR IMAGE_DIR [GLOB]
#   For every image under IMAGE_DIR (recursively) matching GLOB (default
#   *.png), in name order: `docbin-run --algo howe --map gpu --repeat 6
#   --profile` with each kernel choice; prints one line per image with the
#   median wall time of runs 2..6 of each, their ratio, and whether the two
#   images are identical (they must be). The full profiles go to OUTDIR.
set -u
out=${1:?usage: pushrelabel_device.sh OUTDIR IMAGE_DIR [GLOB]}
images=${2:?usage: pushrelabel_device.sh OUTDIR IMAGE_DIR [GLOB]}
glob=${3:-*.png}
mkdir -p "$out"
. "$(dirname "$0")/device_setup.sh"
$run --list-devices --gpu-device nvidia
printf '%-28s %11s %13s %13s %7s %s\n' image size global_ms tiles_ms ratio same
find "$images" -name "$glob" | sort | while read -r img; do
    name=$(basename "$img" .png)
    declare -A wall=()
    for k in global tiles; do
        log="$out/$name-$k.txt"
        DOCBIN_PUSHRELABEL=$k timeout 300 $run --algo howe --map gpu --gpu-device nvidia "$img" --repeat 6 --profile \
            -o "/tmp/docbin-pr-$k.png" > "$log" 2>&1 || echo "FAIL $name $k (exit $?), see $log"
        wall[$k]=$(awk '/^wall/ {print $(NF-3); exit}' "$log")
    done
    size=$(sed -n 's/^howe \([0-9]*x[0-9]*\),.*/\1/p' "$out/$name-tiles.txt" | head -1)
    same=no
    cmp -s /tmp/docbin-pr-global.png /tmp/docbin-pr-tiles.png && same=yes
    ratio=$(awk -v a="${wall[global]:-0}" -v b="${wall[tiles]:-0}" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')
    printf '%-28s %11s %13s %13s %7s %s\n' "$name" "${size:--}" "${wall[global]:--}" "${wall[tiles]:--}" "$ratio" "$same"
done | tee "$out/summary.txt"
rm -f /tmp/docbin-pr-global.png /tmp/docbin-pr-tiles.png
