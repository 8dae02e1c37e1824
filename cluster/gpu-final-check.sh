#!/usr/bin/env bash
# Issue 4 follow-up on a GPU+CPU node (docs/results/issue4-h200-pinned/paired-check): the full
# adaptive calibration's time (after sort's input cache), and interp 4096 with tuned local sizes
# for model, paper and pe-ratio with 15 interleaved repeats and the paired comparison.
#   cluster/gpu-final-check.sh OUTDIR TUNED_DB   (worksize and mpiexec on PATH; gpu-ranks.sh beside;
#   TUNED_DB: a database with interp's tuned entries and --local tuned model, e.g.
#   docs/results/issue4-h200-pinned/interp-tuned/db.json)
set -u
out=${1:?usage: gpu-final-check.sh OUTDIR TUNED_DB}; tuned=${2:?TUNED_DB}
mkdir -p "$out"
source "$(dirname "$0")/gpu-ranks.sh"
step 200 calibrate --kernel all --runs-csv "$out/calibration-runs.csv"
cp "$tuned" "$out/db-tuned.json"
WORKSIZE_DB="$out/db-tuned.json" step 150 bench --kernel interp --size 4096 --iterations 10 --local tuned --no-calibrate \
  --strategies model,paper,pe-ratio --repeats 15 --csv "$out/bench-paired.csv" --phases-csv "$out/bench-paired-phases.csv"
