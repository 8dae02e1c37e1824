#!/usr/bin/env bash
# Job files on the GPU machine: the 2-D filter job (examples/jobs/filter5x5.json) tuned on the
# GPU with `tune --report`, which also measures every candidate, the paper's rule and NULL and
# compares them with the tuned choice; the saxpy and filter jobs verified on the GPU and across a
# GPU rank and a CPU rank. Prints everything; writes $OUT/job_files.txt and the heat maps.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build-cc/apps/worksize
#   There: bash cluster/gpu-job-files.sh   (run tool, carry [".devbundle"])
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH
OUT=${OUT:-/tmp/job-files}
mkdir -p "$OUT"
export WORKSIZE_DB=$OUT/db.json
exec > >(tee "$OUT/job_files.txt") 2>&1
date -u +%FT%TZ; nvidia-smi -L 2>/dev/null
cpus=$(( $(nproc) - 3 ))
for size in 4096x4096 8192x8192; do  # each bounded, so that one slow size cannot eat the call
    echo "=== tune --report --job filter5x5, $size, GPU"
    timeout 250 mpiexec -n 1 worksize tune --report --job examples/jobs/filter5x5.json --size "$size" --select 0=gpu \
        --heatmap-csv "$OUT/heatmap-$size.csv"
done
echo "=== run --job filter5x5 8192x8192 on the GPU, local tuned / paper / null, 20 iterations"
for l in tuned paper null; do
    mpiexec -n 1 worksize run --job examples/jobs/filter5x5.json --size 8192x8192 --iterations 20 --local $l --select 0=gpu
done
echo "=== verified across a GPU rank and a CPU rank"
for j in saxpy filter5x5; do
    POCL_MAX_PTHREAD_COUNT=$cpus POCL_CPU_MAX_CU_NUM=$cpus mpiexec -n 3 worksize run --job examples/jobs/$j.json --select 1=gpu,2=cpu
done
