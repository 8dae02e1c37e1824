#!/usr/bin/env bash
# Issue 5 diagnosis (docs/results/issue5-h200-h2h9/cpu-drift): CPU matmul 512 tuning landscape stability, without and with PoCL thread pinning.
#   cluster/gpu-cpu-drift.sh OUTDIR   (worksize and python3 on PATH): tune --report of matmul 512 on the
#   CPU alone, three times without and three times with POCL_AFFINITY=1.
set -u
out=$1; mkdir -p "$out"
cpus=$(( $(nproc) > 4 ? $(nproc) - 2 : $(nproc) ))
export POCL_MAX_PTHREAD_COUNT=$cpus POCL_CPU_MAX_CU_NUM=$cpus WORKSIZE_DB="$out/db.json"
for aff in 0 1; do
  for i in 1 2 3; do
    POCL_AFFINITY=$aff timeout 150 worksize tune --report --kernel matmul --size 512 --select 0=cpu --repeats 3 --json \
      --heatmap-csv "$out/hm-aff$aff-$i.csv" > "$out/r-aff$aff-$i.json" 2>/dev/null
    python3 - "$out/r-aff$aff-$i.json" $aff $i <<'PY'
import json,sys
r=json.load(open(sys.argv[1]))['results'][0]
hm=sorted([h for h in r['heatmap'] if h['seconds']],key=lambda h:h['seconds'])[:5]
print('aff',sys.argv[2],'run',sys.argv[3],'tuned',r['tuned_local'],'%.1f'%(1e3*r['tuned_s']),'best',r['exhaustive_best_local'],'%.1f'%(1e3*r['exhaustive_best_s']),'ratio %.3f'%r['tuned_over_exhaustive'],'scan top',[(h['x'],h['y'],round(1e3*h['seconds'],1)) for h in hm])
PY
  done
done
