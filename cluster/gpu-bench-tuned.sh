#!/usr/bin/env bash
# Issue 4's interp benches with tuned local sizes (issue 5) instead of the paper's rule, on the
# three ranks of gpu-bench.sh: tune interp at the bench sizes, calibrate with --local tuned, bench.
#   cluster/gpu-bench-tuned.sh OUTDIR   (worksize and mpiexec on PATH)
set -uo pipefail
out=${1:?usage: gpu-bench-tuned.sh OUTDIR}
mkdir -p "$out"
cpus=$(( $(nproc) > 6 ? $(nproc) - 3 : $(nproc) ))
export WORKSIZE_DB="$out/db.json"
sel=${WORKSIZE_SELECT:-1=gpu,2=cpu}
log="$out/bench-log.txt"
echo "# machine: $(hostname), $(nproc) CPU cores (PoCL on rank 2 limited to $cpus), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); date: $(date -u +%Y-%m-%dT%H:%MZ)" >"$log"
ws3() {
  mpiexec -n 2 worksize "$@" --select "$sel" : \
          -n 1 env POCL_MAX_PTHREAD_COUNT="$cpus" POCL_CPU_MAX_CU_NUM="$cpus" worksize "$@" --select "$sel"
}
step() { # limit ARGS...
  local limit=$1; shift
  echo "\$ mpiexec -n 3 worksize $* --select $sel" >>"$log"
  local t0=$SECONDS
  timeout "$limit" bash -c "$(declare -f ws3); cpus=$cpus; sel=$sel; ws3 \"\$@\"" _ "$@" >>"$log" 2>&1
  echo "exit $? after $((SECONDS-t0)) s" >>"$log"
}
for s in 2048 4096; do step 100 tune --kernel interp --size "$s" --iterations 10; done
step 100 calibrate --kernel interp --local tuned
for s in 2048 4096; do
  step 100 bench --kernel interp --size "$s" --iterations 10 --local tuned --csv "$out/bench.csv" --append --sweep \
       --phases-csv "$out/bench-phases.csv"
done
tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"
