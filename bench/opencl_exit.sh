#!/usr/bin/env bash
# What a process pays the OpenCL drivers to start and end (bench/opencl_exit.c), REPS times (default 3)
# per mode: one line "MODE: start S | steps | exit E | total T", in ms: S from exec to main's entry,
# E from main's return to the process's end (the drivers' teardown), T the whole process.
# usage: bench/opencl_exit.sh BUILD_DIR
set -u
bin=${1:?usage: opencl_exit.sh BUILD_DIR}/opencl_exit
for mode in list one gpus keep keep-exit all; do
    for r in $(seq 1 "${REPS:-3}"); do
        s=$(date +%s%N)
        out=$("$bin" $mode) || exit 1
        e=$(date +%s%N)
        entry=$(awk '/^entry/ {print $2}' <<<"$out")
        ret=$(awk '/^return/ {print $2}' <<<"$out")
        echo "$mode: start $(( (entry - s) / 1000000 )) | $(grep -v '^entry\|^return' <<<"$out" | tr '\n' ' ')|" \
             "exit $(( (e - ret) / 1000000 )) | total $(( (e - s) / 1000000 ))"
    done
done
