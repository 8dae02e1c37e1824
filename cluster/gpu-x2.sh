#!/usr/bin/env bash
# Two H200s of one node (the nvidia-h200-x2 kind), one call: the intra-node MPI rates, then
# matmul 4096 on one GPU against two GPUs (issue 15): rank 0 the master and one worker rank per
# GPU, and one rank driving both GPUs; --strategy model after a calibration, and even. Then the
# data jobs of cluster/gpu-data-jobs-x2.sh (issue 12, DATA_REPS=2 repeats) unless PART=matmul.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build-cc/apps/worksize \
#            build-cc/examples/worksize_example_{heat,kmeans} && mpicc -O2 cluster/mpi-bw.c -o .devbundle/bin/mpi-bw
#   There: bash cluster/gpu-x2.sh   (run tool, kind nvidia-h200-x2, carry [".devbundle"])
# Writes $OUT/matmul_x2.csv (config,strategy,iterations,rep,makespan_s,verified,shares,sends) and
# the run JSONs; prints a summary.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH
OUT=${OUT:-/tmp/gpu-x2}
REPS=${REPS:-3}
PART=${PART:-all}
mkdir -p "$OUT/json"
export WORKSIZE_DB=$OUT/db.json
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; nvidia-smi topo -m 2>/dev/null | head -4; git rev-parse --short HEAD 2>/dev/null; } | tee "$OUT/machine.txt"
mapfile -t G < <(worksize devices --json | python3 -c \
    'import json,sys; [print(d["index"]) for d in json.load(sys.stdin)["devices"] if d["type"] == "gpu"]')
[ "${#G[@]}" -ge 2 ] || { echo "gpu-x2: fewer than two GPUs (${G[*]:-none})" >&2; exit 1; }
echo "GPU indices: ${G[*]}"

echo "--- intra-node MPI: peers,MiB,out GB/s,in GB/s (aggregate at rank 0)"
for n in 2 3; do timeout 60 mpiexec -n $n mpi-bw 64 | tail -3; done
echo "--- the same with UCX's CMA module on the path"
for n in 2 3; do UCX_MODULE_DIR=$B/lib/ucx UCX_TLS=self,sm,cma timeout 60 mpiexec -n $n mpi-bw 64 2>&1 | tail -3; done

CSV=$OUT/matmul_x2.csv
: > "$CSV"
runone() {  # runone <config> <strategy> <iterations> <rep> <mpiexec args...> -- <run args...>
    local cfg=$1 strat=$2 it=$3 rep=$4; shift 4
    local f="$OUT/json/$cfg-$strat-x$it-$rep.json"
    timeout 120 "$@" --kernel matmul --size 4096 --strategy "$strat" --iterations "$it" --json >"$f" 2>>"$OUT/runs.log"
    python3 - "$f" "$cfg" "$strat" "$it" "$rep" <<'PY' | tee -a "$CSV"
import json, sys
f, cfg, strat, it, rep = sys.argv[1:]
try:
    d = json.load(open(f))
except Exception as e:
    print(f"{cfg},{strat},{it},{rep},nan,failed,,"); sys.exit()
shares = "/".join(f'{x["share"]:.3f}' for x in d["devices"])
sends = "/".join(f'{x["transfer"]["send_start_s"]*1e3:.1f}-{x["transfer"]["send_end_s"]*1e3:.1f}' for x in d["devices"] if "transfer" in x)
kern = "/".join(f'{x["times"]["kernel"]*1e3:.2f}' for x in d["devices"])
print(f'{cfg},{strat},{it},{rep},{d["makespan_s"]:.5f},{d["verified"]},{shares},{sends},{kern}')
PY
}
M1=(mpiexec -n 2 worksize run --select "1=${G[0]}")
M2=(mpiexec -n 3 worksize run --select "1=${G[0]},2=${G[1]}")
L1=(worksize run --select "0=${G[0]}")
L2=(worksize run --select "0=${G[0]}+${G[1]}")
echo "--- calibrate matmul: ranks 1,2 = GPU 0,1 (MPI); with LOCAL_MODEL=1 also one rank driving both"
/usr/bin/time -f "calibrate mpi %e s" timeout 200 mpiexec -n 3 worksize calibrate --kernel matmul --runs-csv $OUT/calibration-mpi.csv --select "1=${G[0]},2=${G[1]}" 2>&1 | tail -4
[ "${LOCAL_MODEL:-0}" = 1 ] && /usr/bin/time -f "calibrate local %e s" timeout 150 worksize calibrate --kernel matmul --runs-csv $OUT/calibration-local.csv --select "0=${G[0]}+${G[1]}" 2>&1 | tail -4
echo "config,strategy,iterations,rep,makespan_s,verified,shares,sends_ms,kernel_ms"
for it in 1 10; do
  for rep in $(seq "$REPS"); do
    runone mpi-1gpu even $it $rep "${M1[@]}"
    runone mpi-2gpu model $it $rep "${M2[@]}"
    runone mpi-2gpu even $it $rep "${M2[@]}"
    runone local-1gpu even $it $rep "${L1[@]}"
    [ "${LOCAL_MODEL:-0}" = 1 ] && runone local-2gpu model $it $rep "${L2[@]}"
    runone local-2gpu even $it $rep "${L2[@]}"
  done
done
python3 - "$CSV" <<'PY'
import csv, statistics, sys, collections
t = collections.defaultdict(list)
for r in csv.reader(open(sys.argv[1])):
    if r[4] != "nan": t[(r[0].split("-")[0], r[2], r[0].split("-")[1], r[1])].append(float(r[4]))
for (mode, it, g, s), v in sorted(t.items()):
    base = t.get((mode, it, "1gpu", "even"))
    print(f"matmul 4096 x{it:3s} {mode:6s} {g} {s:6s} median {statistics.median(v)*1e3:8.2f} ms"
          f"  speed-up over 1 GPU {statistics.median(base)/statistics.median(v) if base else float('nan'):.2f}")
PY
echo "--- one two-GPU MPI model run's report"
timeout 120 "${M2[@]}" --kernel matmul --size 4096 --strategy model 2>&1 | tail -12
[ "$PART" = matmul ] && exit 0
OUT=$OUT/data-jobs REPS=${DATA_REPS:-2} bash cluster/gpu-data-jobs-x2.sh
