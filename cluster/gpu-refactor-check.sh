#!/usr/bin/env bash
# Issue 11 check on a GPU+CPU node: the refactored worksize against the build before it, in the
# same call. Both run the same three-rank jobs (rank 0 master, rank 1 the GPU, rank 2 PoCL),
# interleaved, and the plans, verdicts, kernel times and makespans are compared; then the new
# one-format path `devices --json > f && plan --devices f` and the packing-failure path.
#   cluster/gpu-refactor-check.sh OUTDIR NEW OLD   (NEW, OLD: the two worksize programs; mpiexec on PATH)
set -u
out=${1:?usage: gpu-refactor-check.sh OUTDIR NEW OLD}; new=${2:?NEW}; old=${3:?OLD}
mkdir -p "$out"
cpus=$(( $(nproc) > 6 ? $(nproc) - 3 : $(nproc) ))
sel=${WORKSIZE_SELECT:-1=gpu,2=cpu}
export WORKSIZE_DB="$out/db.json"
log="$out/log.txt"
echo "# machine: $(hostname), $(nproc) CPU cores (PoCL on rank 2 limited to $cpus), $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null); date: $(date -u +%Y-%m-%dT%H:%MZ)" >"$log"
ws3() { # BIN ARGS: ARGS on 3 ranks
  local bin=$1; shift
  timeout 120 mpiexec -n 2 "$bin" "$@" --select "$sel" : \
          -n 1 env POCL_MAX_PTHREAD_COUNT="$cpus" POCL_CPU_MAX_CU_NUM="$cpus" "$bin" "$@" --select "$sel"
}
csv="$out/runs.csv"
echo "build,kernel,size,rep,verified,makespan_s,gpu_units,gpu_local,gpu_kernel_s,cpu_units,cpu_local,cpu_kernel_s" >"$csv"
for spec in "matmul 2048 3" "interp 4096 10" "sort 16777216 1" "quad 67108864 10"; do
  set -- $spec; k=$1; size=$2; it=$3
  for rep in 1 2 3; do
    for b in old new; do
      bin=$old; [ $b = new ] && bin=$new
      echo "\$ [$b] mpiexec -n 3 worksize run $k --size $size --iterations $it --json" >>"$log"
      ws3 "$bin" run "$k" --size "$size" --iterations "$it" --json >"$out/run-$b-$k-$rep.json" 2>>"$log"
      echo "exit $?" >>"$log"
      jq -r --arg b $b --arg k $k --arg s $size --arg r $rep \
        '[$b,$k,$s,$r,.verified,.makespan_s,
          (.devices[0].units),(.devices[0].local|join("x")),(.devices[0].times.kernel),
          (.devices[1].units // 0),((.devices[1].local // [])|join("x")),(.devices[1].times.kernel // 0)] | @csv' \
        "$out/run-$b-$k-$rep.json" >>"$csv" 2>>"$log"
    done
  done
done
# One device-JSON format: what devices --json writes, plan --devices reads (new build only).
ws3 "$new" devices --json >"$out/devices.json" 2>>"$log"; echo "devices --json exit $?" >>"$log"
for k in matmul interp sort quad; do
  "$new" plan --devices "$out/devices.json" --kernel $k >>"$out/plan-from-devices-json.txt" 2>&1
  echo "plan --devices devices.json --kernel $k exit $?" >>"$log"
done
# Rank 0's packing throws: one line, non-zero exit, no hang.
t0=$SECONDS
WORKSIZE_FAULT=pack-throw ws3 "$new" run matmul --size 512 >"$out/pack-throw.out" 2>"$out/pack-throw.err"
echo "pack-throw exit $? after $((SECONDS-t0)) s, $(wc -l <"$out/pack-throw.err") stderr line(s)" >>"$log"
