#!/usr/bin/env bash
# Retrains howe-predict's built-in model on DIBCO 2013 (the pages are kept apart
# from 2009-2012, on which bench/howe_tuning_quality.py judges the model).
# usage: bench/train_howe.sh [BUILD_DIR] [DATA_DIR]
#   Runs docbin-bench --train-howe on DATA_DIR/dibco/2013 (default ../shared/data),
#   on whatever devices are bound (every map gives the same numbers), writes
#   algorithms/howe_model.txt and the per-page log bench/results/howe-train.log.
#   Rebuild afterwards: the model is embedded in the library.
set -eu
build=${1:-build}
data=${2:-../shared/data}
cd "$(dirname "$0")/.."
{
    echo "# docbin-bench --train-howe $data/dibco/2013: per page the grid search's best thi and c, its F-measure"
    echo "# and the features (contrast, homogeneity, edge mean, background deviation)"
    "$build/docbin-bench" --train-howe "$data/dibco/2013" --model algorithms/howe_model.txt
} > bench/results/howe-train.log
cat bench/results/howe-train.log algorithms/howe_model.txt
