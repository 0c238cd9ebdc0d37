#!/usr/bin/env bash
# docbin and its peers side by side on a machine with an NVIDIA GPU and PoCL, in one run.
# usage: bench/device_bench.sh OUTDIR [PAGES] [DIBCO_DIR]
#   kernels: on an A4 300 dpi gray page (docbin-synth --a4 --gray --seed 3), Sauvola with every
#            stage on the GPU and on the CPU (docbin-bench, RUNS timed runs: stage device times and
#            submission to result; on the GPU also the 1-bit result, packed there: --depth 1),
#            beside bench/peers.py (DoxaPy one thread,
#            scikit-image, cuCIM on the GPU, OpenCV); HBK on the RGB A4 page; DBS on a
#            4096x3072 picture; Howe on the DIBCO pages in DIBCO_DIR (default .dev/dibco).
#   start-up: process start to file for one Sauvola page, beside clinfo -l, 6 times each; the
#            same with NVIDIA's driver alone, and bench/startup_probe's steps (with --exit too).
#   batches:  PAGES A4 pages (default 200) as PNG, LZW and uncompressed TIFF, and JPEG (q 90):
#            --codec-only, Sauvola and Howe with the GPU map into 1-bit PNG or Group 4 TIFF
#            (each with its steady rate and busy shares, bench/batch_timeline.py --brief), and
#            the Sauvola batches again over the pages three times over (long-*),
#            beside OpenCV in as many processes as cores (bench/opencv_batch.py);
#            docbin's PNG decode and encode through libdeflate and libpng, its Group 4 encode
#            against libtiff's on a Sauvola result, and its LZW decode against libtiff's (codec_bench).
#   PARTS picks among "kernels startup batches" (default all three); ONLY=REGEX runs only the
#   batches whose names match; ROUNDS=N runs each batch N times (default 2). With BASE=PATH (another
#   build's docbin-run), every batch also runs with it, just before, as an A/B in one call.
#   Every line that matters starts with "bench ", "peer ", "png " or "g4 " (OUTDIR/bench.log; the
#   batches' --log-json files in OUTDIR/batch-logs.tgz);
#   bench/device_summary.py makes the tables.
set -u
out=${1:?usage: device_bench.sh OUTDIR [PAGES] [DIBCO_DIR]}
n=${2:-200}
dibco=${3:-.dev/dibco}
runs=${RUNS:-20}
parts=${PARTS:-kernels startup batches}
part() { case " $parts " in *" $1 "*) return 0 ;; esac; return 1; }
mkdir -p "$out"
. "$(dirname "$0")/device_setup.sh"
log="$out/bench.log"
: > "$log"
say() { echo "$*" | tee -a "$log"; }
bench="$build/docbin-bench"
export DOCBIN_GPU_DEVICE=nvidia
nproc | tee -a "$log"
$run --list-devices | tee -a "$log"
a4=/tmp/a4.png; a4rgb=/tmp/a4rgb.png; photo=/tmp/photo.png
$build/docbin-synth --a4 --gray --seed 3 -o $a4
$build/docbin-synth --a4 --seed 3 -o $a4rgb
$build/docbin-synth --photo --size 4096x3072 -o $photo

# Kernels. docbin-bench's "total" is submission to result; its stage rows are device times.
stage() { # ALGO MAP PAGE NAME [options]: one line per stage and the wall time
    local algo=$1 map=$2 page=$3 name=$4; shift 4
    $bench --algo $algo --maps $map --runs $runs "$@" $page | awk -v n="$name" -v m="$map" '
        /^ +[a-z+]+ +[a-z-]+ +[0-9.]+ ms/ { printf "bench kernel=%s map=%s stage=%s ms=%s range=%s-%s\n", n, m, $1, $3, $5, $7 }' \
        | tr -d '()' | tee -a "$log"
}
if part kernels; then
stage sauvola gpu $a4 sauvola-a4
stage sauvola gpu $a4 sauvola-a4-1bit --depth 1
stage sauvola cpu $a4 sauvola-a4
stage hbk gpu $a4rgb hbk-a4
stage hbk gpu $a4rgb hbk-a4-1bit --depth 1
stage dbs gpu $photo dbs-4096x3072 --runs 5
for p in "$dibco"/*.png; do [ -e "$p" ] && stage howe gpu "$p" "howe-$(basename "$p" .png)" --runs 5; done
python3 bench/peers.py $a4 $runs 2>&1 | tee -a "$log"
fi

if part startup; then
# Start-up: one page through a fresh process, on the GPU and on PoCL alone
# (which never starts NVIDIA's context), and the PNG decode and encode alone.
# Then what the driver itself costs (bench/startup_probe.c): bare OpenCL and
# docbin's API step by step, each also ending with _exit() instead of releasing
# its context (--exit), and clinfo, one page and the probes with the ICD loader
# given NVIDIA's driver alone (OCL_ICD_VENDORS), so that PoCL is never loaded.
nvonly=/tmp/docbin-nvidia-only
mkdir -p $nvonly && cp /etc/OpenCL/vendors/nvidia.icd $nvonly/
ms() { awk -v a=$1 -v b=$2 'BEGIN { printf "%.1f", (b - a) * 1e3 }'; }
for i in 1 2 3 4 5 6; do
    t0=$(date +%s.%N); clinfo -l >/dev/null 2>&1; t1=$(date +%s.%N)
    $run --algo sauvola --map gpu $a4 -o /tmp/one.png; t2=$(date +%s.%N)
    $run --list-devices >/dev/null; t3=$(date +%s.%N)
    $run --algo sauvola --map cpu $a4 -o /tmp/one.png; t4=$(date +%s.%N)
    say "bench startup clinfo_ms=$(ms $t0 $t1) one_page_ms=$(ms $t1 $t2) list_devices_ms=$(ms $t2 $t3)" \
        "one_page_cpu_ms=$(ms $t3 $t4)"
    t0=$(date +%s.%N); OCL_ICD_VENDORS=$nvonly clinfo -l >/dev/null 2>&1; t1=$(date +%s.%N)
    OCL_ICD_VENDORS=$nvonly $run --algo sauvola --map gpu $a4 -o /tmp/one.png; t2=$(date +%s.%N)
    say "bench startup-nvidia-only clinfo_ms=$(ms $t0 $t1) one_page_ms=$(ms $t1 $t2)"
    for how in "" "--exit"; do
        for vendors in all nvidia; do
            env=""; [ $vendors = nvidia ] && env="OCL_ICD_VENDORS=$nvonly"
            t0=$(date +%s.%N); steps=$(env $env $build/startup_probe opencl $how); t1=$(date +%s.%N)
            say "bench probe=opencl${how} vendors=$vendors$steps total $(ms $t0 $t1)"
            t0=$(date +%s.%N); steps=$(env $env $build/startup_probe docbin $a4 $how); t1=$(date +%s.%N)
            say "bench probe=docbin${how} vendors=$vendors$steps total $(ms $t0 $t1)"
        done
    done
done
fi

if part batches; then
# Batches over the same pages in four formats.
pages=/tmp/pages
mkdir -p $pages/png $pages/lzw $pages/raw $pages/jpg
if [ "$(ls $pages/png | wc -l)" != "$n" ]; then
    seq 1 "$n" | xargs -P "$(nproc)" -I{} sh -c "$build/docbin-synth --a4 --gray --seed {} -o $pages/png/p\$(printf %04d {}).png"
    python3 - "$pages" <<'PY'
import os, sys
from multiprocessing import Pool
from PIL import Image
d = sys.argv[1]
def conv(name):
    im = Image.open(os.path.join(d, 'png', name))
    stem = name[:-4]
    im.save(os.path.join(d, 'lzw', stem + '.tif'), compression='tiff_lzw', dpi=(300, 300))
    im.save(os.path.join(d, 'raw', stem + '.tif'), dpi=(300, 300))
    im.save(os.path.join(d, 'jpg', stem + '.jpg'), quality=90, dpi=(300, 300))
with Pool(os.cpu_count()) as p:
    p.map(conv, sorted(os.listdir(os.path.join(d, 'png'))))
PY
fi
$run --algo sauvola --map cpu $pages/png/p0001.png -o /tmp/p0001-bin.png
$build/codec_bench $pages/png/p0001.png 20 /tmp/p0001-bin.png $pages/lzw/p0001.tif | tee -a "$log"
batch() { # NAME INPUT_DIR OPTIONS...: one timed batch, process start to end, and its steady rate
    local name=$1 dir=$2 who exe; shift 2
    [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]] && return 0
    for who in ${BASE:+base} new; do
        exe=$run; [ "$who" = base ] && exe=$BASE
        rm -rf /tmp/bout
        local t0 t1 json="$out/batch-$name-$who-$round.jsonl"; t0=$(date +%s.%N)
        $exe --out-dir /tmp/bout --log-json "$json" "$@" $dir 2>>"$out/stderr.txt"; local rc=$?
        t1=$(date +%s.%N)
        say "bench batch=$name${BASE:+ build=$who} pages=$(ls /tmp/bout | wc -l) exit=$rc $(awk -v a=$t0 -v b=$t1 \
            -v n=$n 'BEGIN { printf "pages_per_s=%.2f", n / (b - a) }') $(python3 bench/batch_timeline.py --brief "$json")"
    done
}
$run --algo sauvola --map gpu $pages/png/p0001.png -o /tmp/warm.png   # kernels built and cached
$run --algo howe --map gpu $pages/png/p0001.png -o /tmp/warm.png
for round in $(seq "${ROUNDS:-2}"); do
    batch codec-only-png $pages/png --codec-only
    batch sauvola-png-to-png $pages/png --algo sauvola --map gpu
    batch sauvola-lzw-to-g4 $pages/lzw --algo sauvola --map gpu --format tif
    batch sauvola-raw-to-g4 $pages/raw --algo sauvola --map gpu --format tif
    batch sauvola-jpg-to-g4 $pages/jpg --algo sauvola --map gpu --format tif
    batch howe-png-to-png $pages/png --algo howe --map gpu
    batch sauvola-png-map-auto-cpu-lane-auto $pages/png --algo sauvola
    say "bench opencv round=$round $(python3 bench/opencv_batch.py /tmp/cvout "$(nproc)" $pages/png/*.png)"
done
# Long batches: the same pages three times over (linked under other names), for the steady rate
# of a batch that has left its start far behind.
long=/tmp/pages-long
for f in png lzw raw jpg; do
    mkdir -p $long/$f
    for i in 1 2 3; do for p in $pages/$f/*; do ln -sf "$p" "$long/$f/r$i-${p##*/}"; done; done
done
n0=$n; n=$((3 * n0))
for round in $(seq "${ROUNDS:-2}"); do
    batch long-sauvola-png-to-png $long/png --algo sauvola --map gpu
    batch long-sauvola-lzw-to-g4 $long/lzw --algo sauvola --map gpu --format tif
    batch long-sauvola-raw-to-g4 $long/raw --algo sauvola --map gpu --format tif
    batch long-sauvola-jpg-to-g4 $long/jpg --algo sauvola --map gpu --format tif
done
n=$n0
# The batches' logs in one file, so that bench.log is among the few files a device call returns.
if ls "$out"/batch-*.jsonl >/dev/null 2>&1; then
    tar czf "$out/batch-logs.tgz" -C "$out" $(cd "$out" && ls batch-*.jsonl) && rm -f "$out"/batch-*.jsonl
fi
fi
