#!/usr/bin/env bash
# --local tuned with slices aligned to the tuned shapes, against --local paper, on the H200 node
# (one process, both devices), using the tuning database of docs/results/porting-tune-h200.
set -uo pipefail
o=${1:?usage: gpu-aligned.sh OUTDIR DB}; db=${2:?}
mkdir -p "$o"
export POCL_MAX_PTHREAD_COUNT=14 POCL_CPU_MAX_CU_NUM=14
echo "# $(hostname) $(nproc) cores, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader); $(date -u +%Y-%m-%dT%H:%MZ); PoCL 14 threads" > "$o/env.txt"
for ks in "matmul 512" "interp 1024" "matmul 1024" "interp 2048"; do
  set -- $ks
  for st in paper pe-ratio; do
    for l in paper tuned; do
      tag="$1-$2-$st-$l"
      worksize plan --kernel "$1" --size "$2" --iterations 10 --strategy "$st" --local "$l" --db "$db" > "$o/plan-$tag.txt" 2>&1
      for r in 1 2 3; do
        timeout 120 worksize run "$1" --size "$2" --iterations 10 --strategy "$st" --local "$l" --db "$db" --json > "$o/run-$tag-$r.json" 2>> "$o/errors.txt"
      done
    done
  done
done
echo done >> "$o/env.txt"
