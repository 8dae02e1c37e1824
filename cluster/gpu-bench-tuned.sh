#!/usr/bin/env bash
# Issue 4's interp benches with tuned local sizes (issue 5) instead of the paper's rule, on the
# three ranks of gpu-bench.sh: tune interp at the bench sizes, calibrate with --local tuned, bench.
#   cluster/gpu-bench-tuned.sh OUTDIR   (worksize and mpiexec on PATH; gpu-ranks.sh beside this script)
set -uo pipefail
out=${1:?usage: gpu-bench-tuned.sh OUTDIR}
mkdir -p "$out"
source "$(dirname "$0")/gpu-ranks.sh"
for s in 2048 4096; do step 100 tune --kernel interp --size "$s" --iterations 10; done
step 100 calibrate --kernel interp --local tuned
for s in 2048 4096; do
  step 100 bench --kernel interp --size "$s" --iterations 10 --local tuned --csv "$out/bench.csv" --append --sweep \
       --phases-csv "$out/bench-phases.csv"
done
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
