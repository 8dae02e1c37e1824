#!/usr/bin/env bash
# Issue 5 on a GPU+CPU node: `worksize tune --report` at two size sets, one process driving both
# devices (every candidate measured, the guided search replayed on the same times).
#   cluster/gpu-tune.sh OUTDIR   (worksize on PATH)
# PoCL gets all cores but two: the process's GPU thread and the OS keep theirs.
# Time: the confirmation (3 finalists x 3 re-timings, both searches) and the head-to-head (9 + 9
# when the choices differ) add up to 36 measurements per kernel and device to the sweep; the
# issue-5 H200 run took 109 s and 214 s without them (344 and more steps), hence the limits.
set -uo pipefail
out=${1:?usage: gpu-tune.sh OUTDIR}
mkdir -p "$out"
cpus=$(( $(nproc) > 4 ? $(nproc) - 2 : $(nproc) ))
export POCL_MAX_PTHREAD_COUNT=$cpus POCL_CPU_MAX_CU_NUM=$cpus
export WORKSIZE_DB="$out/tune-db.json"
log="$out/tune-log.txt"
echo "# machine: $(hostname), $(nproc) CPU cores (PoCL limited to $cpus, POCL_AFFINITY=${POCL_AFFINITY:-unset}), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); date: $(date -u +%Y-%m-%dT%H:%MZ)" >"$log"
pass() { # name limit sizes...
  local name=$1 limit=$2; shift 2
  local args=(); for s in "$@"; do args+=(--size "$s"); done
  echo "\$ worksize tune --report --kernel all ${args[*]} --select all --repeats 3 --json --heatmap-csv tune-$name-heatmap.csv" >>"$log"
  local t0=$SECONDS
  timeout "$limit" worksize tune --report --kernel all "${args[@]}" --select all --repeats 3 \
    --json --heatmap-csv "$out/tune-$name-heatmap.csv" >"$out/tune-$name.json" 2>>"$log"
  echo "exit $? after $((SECONDS-t0)) s" >>"$log"
}
pass a "${LIMIT_A:-350}" matmul=512 interp=1024 sort=262144 quad=1048576
pass b "${LIMIT_B:-450}" matmul=384 interp=1536 sort=524288 quad=2097152
