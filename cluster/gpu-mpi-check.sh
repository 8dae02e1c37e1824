#!/usr/bin/env bash
# Noise check of issue 4 on a GPU+CPU node (docs/results/issue4-h200-pinned/README.md): intra-node
# MPI bandwidth (cluster/mpi-bw.c, built as `mpi-bw` on PATH) as bundled and with UCX's loadable
# transports (CMA) on UCX_MODULE_DIR, and interp 4096 (tuned) for model and paper, 7 repeats, on
# the three ranks of gpu-ranks.sh.
#   cluster/gpu-mpi-check.sh OUTDIR DB UCX_MODULE_DIR   (DB: with interp's tuned entries and model)
set -u
out=${1:?usage: gpu-mpi-check.sh OUTDIR DB UCX_MODULE_DIR}; db=${2:?DB}; modules=${3:?UCX_MODULE_DIR}
mkdir -p "$out"
source "$(dirname "$0")/gpu-ranks.sh"
cp "$db" "$WORKSIZE_DB"
for mode in bundle cma; do
  if [ $mode = cma ]; then export UCX_MODULE_DIR=$modules; fi
  echo "== $mode: $(timeout 60 mpiexec -n 2 mpi-bw | tr '\n' ' ')" | tee -a "$log"
  step 120 bench --kernel interp --size 4096 --iterations 10 --local tuned --no-calibrate --strategies model,paper \
       --repeats 7 --csv "$out/bench-$mode.csv" --phases-csv "$out/phases-$mode.csv"
done
