#!/usr/bin/env bash
# matmul 4096 on one GPU of the GPU machine: rank 0 + one GPU worker over MPI, and one rank driving
# the GPU itself; even split, --iterations 1 and 10, 4 repeats each; prints one CSV-like line per
# run with the phases (ms). Also the intra-node MPI rate (cluster/mpi-bw.c, built into the bundle).
#   There: OUT=... bash cluster/gpu-one-matmul.sh   (run tool, kind nvidia-h200, carry [".devbundle"])
cd "$(dirname "$0")/.."
set -uo pipefail
B=$PWD/.devbundle; export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH
date -u +%FT%TZ; nvidia-smi -L
G=$(worksize devices --json | python3 -c 'import json,sys; print([d["index"] for d in json.load(sys.stdin)["devices"] if d["type"]=="gpu"][0])')
timeout 60 mpiexec -n 2 mpi-bw 64 | tail -2
for it in 1 10; do for rep in 1 2 3 4; do
 for cfg in mpi local; do
  if [ $cfg = mpi ]; then cmd=(mpiexec -n 2 worksize run --select 1=$G); else cmd=(worksize run --select 0=$G); fi
  timeout 120 "${cmd[@]}" --kernel matmul --size 4096 --iterations $it --strategy even --json 2>>$OUT/err.log | python3 -c "
import json,sys; d=json.load(sys.stdin); x=d['devices'][0]; t=x['times']
print('$cfg,x$it,$rep,%.2f,%s,send %.2f,recv %.2f,h2d %.2f,kernel %.2f,d2h %.2f,done %.2f'%(d['makespan_s']*1e3,d['verified'],t['send']*1e3,t['recv']*1e3,t['h2d']*1e3,t['kernel']*1e3,t['d2h']*1e3,x['done_s']*1e3))"
 done; done; done
