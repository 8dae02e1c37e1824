#!/usr/bin/env bash
# Issue 4 on a GPU+CPU node: three ranks (rank 0 master, rank 1 the GPU, rank 2 the CPU through
# PoCL with all cores but three, left to the three MPI ranks), calibrate every kernel, then bench
# every strategy at two sizes per kernel, and a 16x check of the model's prediction.
#   [PARTS="bench check16"] [KERNELS="quad matmul"] cluster/gpu-bench.sh OUTDIR   (worksize and
#   mpiexec on PATH; gpu-ranks.sh beside this script). PARTS picks and orders the parts after the
#   calibration (default both); KERNELS limits everything to some kernels (default all four).
set -uo pipefail
out=${1:?usage: gpu-bench.sh OUTDIR}
mkdir -p "$out"
source "$(dirname "$0")/gpu-ranks.sh"
kernels=${KERNELS:-}
wanted() { [ -z "$kernels" ] || [[ " $kernels " == *" $1 "* ]]; }
if [ -z "$kernels" ]; then
  step 150 calibrate --kernel all --runs-csv "$out/calibration-runs.csv"
else
  for k in $kernels; do step 150 calibrate --kernel "$k" --runs-csv "$out/calibration-runs-$k.csv"; done
fi
parts=${PARTS:-bench check16}
run_benches() {
  csv="$out/bench.csv"
  for spec in "quad 4194304 10" "matmul 1024 3" "sort 1048576 1" "interp 2048 10" \
              "quad 16777216 10" "matmul 2048 3" "sort 4194304 1" "interp 4096 10"; do
    set -- $spec
    wanted "$1" || continue
    step 120 bench --kernel "$1" --size "$2" --iterations "$3" --csv "$csv" --append --sweep --phases-csv "$out/bench-phases.csv"
  done
}
run_check16() {
  # The 16x check: calibrate each kernel with the adaptive ladder capped at 1/16 of a large job's
  # work-items (--max-size: matmul and interp a quarter of the side, sort and quad 1/16 of the items),
  # then run that job planned by this model, without recalibrating, and compare the predicted
  # makespan with the measured one. The GPU saturates below the cap, so the fit is on saturated sizes.
  local -x WORKSIZE_DB="$out/db-16x.json"
  for spec in "matmul 2048 8192 1" "interp 2048 8192 10" "sort 1048576 16777216 1" "quad 16777216 268435456 10"; do
    set -- $spec
    wanted "$1" || continue
    step 150 calibrate --kernel "$1" --max-size "$2" --iterations "$4" --runs-csv "$out/calibration-16x-$1.csv"
    step 150 bench --kernel "$1" --size "$3" --iterations "$4" --strategies model --repeats 3 --no-calibrate \
         --csv "$out/bench-16x.csv" --append --phases-csv "$out/bench-16x-phases.csv"
  done
}
for p in $parts; do
  case $p in
    bench) run_benches ;;
    check16) run_check16 ;;
    *) echo "gpu-bench.sh: unknown part '$p' (bench, check16)" >&2; exit 2 ;;
  esac
done
