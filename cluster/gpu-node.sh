#!/usr/bin/env bash
# Measurements for issue 3 on a heterogeneous node (one NVIDIA GPU + the CPU through PoCL):
# three MPI ranks (rank 0 master, rank 1 the GPU, rank 2 the CPU) run the four sample kernels
# at the paper's sizes and at larger sizes, verified, then the paper experiment.
#   cluster/gpu-node.sh OUTDIR   (with worksize and mpiexec on PATH)
set -uo pipefail
out=${1:?usage: gpu-node.sh OUTDIR}
mkdir -p "$out"
sel=${WORKSIZE_SELECT:-1=gpu,2=cpu}
mpx=(mpiexec -n 3)
log="$out/issue3-run.txt"
{
  echo "# worksize issue 3 measurements"
  echo "# machine: $(hostname), $(nproc) CPU cores; date: $(date -u +%Y-%m-%dT%H:%MZ)"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | sed 's/^/# GPU: /'
  echo
  echo "\$ mpiexec -n 3 worksize devices --select $sel"
  "${mpx[@]}" worksize devices --select "$sel"
  echo
} >"$log" 2>&1
jsonl="$out/issue3-runs.jsonl"
: >"$jsonl"
runcase() { # kernel size iterations [extra...]
  local k=$1 s=$2 r=$3; shift 3
  echo "\$ mpiexec -n 3 worksize run $k --size $s --iterations $r --select $sel $*" >>"$log"
  local t0=$SECONDS
  timeout 300 "${mpx[@]}" worksize run "$k" --size "$s" --iterations "$r" --select "$sel" "$@" >>"$log" 2>&1
  echo "exit $? after $((SECONDS-t0)) s" >>"$log"
  timeout 300 "${mpx[@]}" worksize run "$k" --size "$s" --iterations "$r" --select "$sel" --json "$@" 2>>"$log" |
    tr -d '\n' >>"$jsonl"
  echo >>"$jsonl"
  echo >>"$log"
}
# The paper's sizes (METHOD.md 1; sort once), then larger ones.
runcase matmul 1024 10
runcase interp 1024 10000
runcase sort 262144 1
runcase quad 262144 10000
runcase matmul 4096 3
runcase interp 4096 1000
runcase sort 16777216 1
runcase quad 16777216 1000
# The same at the paper's sizes with PE-ratio split and NULL local size.
runcase matmul 1024 10 --strategy pe-ratio --local null
runcase quad 262144 10000 --strategy pe-ratio --local null
echo "\$ mpiexec -n 3 worksize run --paper-experiment --select $sel" >>"$log"
timeout 600 "${mpx[@]}" worksize run --paper-experiment --select "$sel" >"$out/issue3-paper-experiment.txt" 2>&1
echo "exit $?" >>"$out/issue3-paper-experiment.txt"
