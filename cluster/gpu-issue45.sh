#!/usr/bin/env bash
# Measurements for issues 4 (models, oracle, bench) and 5 (local-size tuning) on a GPU+CPU node.
#   cluster/gpu-issue45.sh OUTDIR   (worksize and mpiexec on PATH)
# Issue 5: one process drives both devices; tune --report measures every candidate on each.
# Issue 4: three ranks (rank 0 master, rank 1 the GPU, rank 2 the CPU): calibrate at small sizes,
# then bench every strategy at two sizes per kernel.
set -uo pipefail
out=${1:?usage: gpu-issue45.sh OUTDIR}
mkdir -p "$out"
sel=${WORKSIZE_SELECT:-1=gpu,2=cpu}
export WORKSIZE_DB="$out/db.json"
hdr="# machine: $(hostname), $(nproc) CPU cores, $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); date: $(date -u +%Y-%m-%dT%H:%MZ)"
log="$out/issue45-log.txt"
echo "$hdr" >"$log"

tune_pass() { # name sizes...
  local name=$1; shift
  local args=(); for s in "$@"; do args+=(--size "$s"); done
  echo "\$ worksize tune --report --kernel all ${args[*]} --select all --repeats 3 --json" >>"$log"
  timeout "${TUNE_LIMIT:-150}" worksize tune --report --kernel all "${args[@]}" --select all --repeats 3 \
    --json --heatmap-csv "$out/tune-$name-heatmap.csv" >"$out/tune-$name.json" 2>>"$log"
  echo "exit $?" >>"$log"
}
tune_pass small matmul=512 interp=1024 sort=262144 quad=1048576
tune_pass large matmul=1024 interp=2048 sort=1048576 quad=4194304

mpx=(mpiexec -n 3)
echo "\$ mpiexec -n 3 worksize calibrate --kernel all --select $sel" >>"$log"
timeout 120 "${mpx[@]}" worksize calibrate --kernel all --select "$sel" >>"$log" 2>&1; echo "exit $?" >>"$log"
csv="$out/bench.csv"
bench() { # kernel size iterations
  echo "\$ mpiexec -n 3 worksize bench --kernel $1 --size $2 --iterations $3 --select $sel --csv bench.csv --append --sweep" >>"$log"
  timeout 150 "${mpx[@]}" worksize bench --kernel "$1" --size "$2" --iterations "$3" --select "$sel" \
    --csv "$csv" --append --sweep >>"$log" 2>&1
  echo "exit $?" >>"$log"
}
bench quad 4194304 10
bench matmul 1024 3
bench sort 1048576 1
bench interp 2048 10
bench quad 16777216 10
bench matmul 2048 3
bench sort 4194304 1
bench interp 4096 10
