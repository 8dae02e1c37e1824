#!/usr/bin/env bash
# Issue 11 follow-up: quad and sort, old and new builds interleaved in alternating order, 8 rounds.
#   cluster/gpu-refactor-rerun.sh OUTDIR NEW OLD
set -u
out=$1; new=$2; old=$3; mkdir -p $out
cpus=13; sel=1=gpu,2=cpu
ws3() { local bin=$1; shift; timeout 120 mpiexec -n 2 "$bin" "$@" --select "$sel" : -n 1 env POCL_MAX_PTHREAD_COUNT=$cpus POCL_CPU_MAX_CU_NUM=$cpus "$bin" "$@" --select "$sel"; }
echo "build,kernel,size,rep,verified,makespan_s,gpu_kernel_s,cpu_kernel_s,send_gpu_s,recv_gpu_s" > $out/rerun.csv
for rep in 1 2 3 4 5 6 7 8; do
  order="new old"; [ $((rep % 2)) = 0 ] && order="old new"
  for spec in "quad 67108864 10" "sort 16777216 1"; do
    set -- $spec
    for b in $order; do
      bin=$old; [ $b = new ] && bin=$new
      ws3 $bin run $1 --size $2 --iterations $3 --json 2>/dev/null | jq -r --arg b $b --arg k $1 --arg s $2 --arg r $rep \
        '[$b,$k,$s,$r,.verified,.makespan_s,.devices[0].times.kernel,(.devices[1].times.kernel // 0),.devices[0].times.send,.devices[0].times.recv]|@csv' >> $out/rerun.csv
    done
  done
done
