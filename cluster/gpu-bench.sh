#!/usr/bin/env bash
# Issue 4 on a GPU+CPU node: three ranks (rank 0 master, rank 1 the GPU, rank 2 the CPU through
# PoCL with all cores but three, left to the three MPI ranks), calibrate every kernel, then bench
# every strategy at two sizes per kernel, and a 16x check of the model's prediction.
#   cluster/gpu-bench.sh OUTDIR   (worksize and mpiexec on PATH; gpu-ranks.sh beside this script)
set -uo pipefail
out=${1:?usage: gpu-bench.sh OUTDIR}
mkdir -p "$out"
source "$(dirname "$0")/gpu-ranks.sh"
step 150 calibrate --kernel all --runs-csv "$out/calibration-runs.csv"
csv="$out/bench.csv"
for spec in "quad 4194304 10" "matmul 1024 3" "sort 1048576 1" "interp 2048 10" \
            "quad 16777216 10" "matmul 2048 3" "sort 4194304 1" "interp 4096 10"; do
  set -- $spec
  step 120 bench --kernel "$1" --size "$2" --iterations "$3" --csv "$csv" --append --sweep --phases-csv "$out/bench-phases.csv"
done

# The 16x check: calibrate from small sizes only (the largest 1/16 of the job's work-items), then
# run the job 16x larger planned by that model and compare the predicted makespan with the measured.
export WORKSIZE_DB="$out/db-small.json"
for spec in "matmul 128,256,512 2048 3" "interp 256,512,1024 4096 10" \
            "sort 65536,131072,262144 4194304 1" "quad 262144,524288,1048576 16777216 10"; do
  set -- $spec
  step 120 calibrate --kernel "$1" --sizes "$2" --iterations "$4" --runs-csv "$out/calibration-small-$1.csv"
  step 120 bench --kernel "$1" --size "$3" --iterations "$4" --strategies model,even --no-calibrate \
       --csv "$out/bench-16x.csv" --append --phases-csv "$out/bench-16x-phases.csv"
done
