#!/usr/bin/env bash
# Why k-means under --strategy model runs slower on a GPU rank beside a CPU (PoCL) rank than its
# plan predicts (docs/results/data-model-h100): each device alone at the share the model gives it,
# then both together, with the CPU device's threads at all cores, at cores-2, and with the two
# ranks pinned to disjoint cores. REPS runs each; prints the runs' "worksize," lines and step
# reports, and a median table (also $OUT/corun.csv: config,seconds,step_ms).
#   There: bash cluster/gpu-corun.sh   (run tool, a one-GPU kind, carry [".devbundle"])
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH EXAMPLE_NOVERIFY=1 EXAMPLE_KERNEL_DIR=$PWD/examples/kmeans
OUT=${OUT:-/tmp/corun}
REPS=${REPS:-3}
N=${N:-2097152} D=16 K=16 IT=10
mkdir -p "$OUT"
CSV=$OUT/corun.csv
: > "$CSV"
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; nproc; } | tee "$OUT/machine.txt"
index_of() {
    worksize devices --json | python3 -c \
        'import json,sys; [print(d["index"]) for d in json.load(sys.stdin)["devices"] if d["type"] == sys.argv[1]]' "$1"
}
G=${G:-$(index_of gpu | head -n 1)} C=${C:-$(index_of cpu | head -n 1)}
P=$(nproc)
EX=$B/bin/worksize_example_kmeans
one() {  # one <config> <mpiexec arguments...>
    local cfg=$1; shift
    local res step
    res=$(MPIEXEC_TIMEOUT=${MPIEXEC_TIMEOUT:-120} mpiexec "$@" 2>>"$OUT/$cfg.err" | tee -a "$OUT/$cfg.log")
    step=$(echo "$res" | sed -nE 's/^  steps ([0-9.]+) ms.*//p; s/^  setup [0-9.]+ ms, steps ([0-9.]+) ms.*/\1/p' | tail -n 1)
    echo "$res" | grep "^worksize," | sed "s/^/$cfg: /"
    echo "$cfg,$(echo "$res" | grep '^worksize,' | cut -d, -f5),${step}" >> "$CSV"
}
# The model's CPU share, from one model run's plan.
CPU_UNITS=$(mpiexec -n 2 "$EX" $N $D $K $IT --select "0=$G,1=$C" --strategy model |
    sed -nE 's/^  device [0-9]+ \(rank 1,.*units ([0-9]+)\.\.([0-9]+),.*/\2 \1/p' | awk '{print $1-$2}' | head -n 1)
echo "model's CPU share: ${CPU_UNITS:-?} of $N points"
CPU_UNITS=${CPU_UNITS:-239616}
THR="POCL_MAX_PTHREAD_COUNT=$((P-2)) POCL_CPU_MAX_CU_NUM=$((P-2))"
for _ in $(seq "$REPS"); do
    one gpu-alone-N -n 1 "$EX" $N $D $K $IT --select "0=$G"
    one gpu-alone-gpushare -n 1 "$EX" $((N-CPU_UNITS)) $D $K $IT --select "0=$G"
    one cpu-alone-cpushare -n 1 "$EX" $CPU_UNITS $D $K $IT --select "0=$C"
    one cpu-alone-cpushare-p2 -n 1 env $THR "$EX" $CPU_UNITS $D $K $IT --select "0=$C"
    one corun-paper -n 2 "$EX" $N $D $K $IT --select "0=$G,1=$C" --strategy paper
    one corun-model -n 2 "$EX" $N $D $K $IT --select "0=$G,1=$C" --strategy model
    one corun-model-p2 -n 1 "$EX" $N $D $K $IT --select "0=$G,1=$C" --strategy model : \
        -n 1 env $THR "$EX" $N $D $K $IT --select "0=$G,1=$C" --strategy model
    [ "$P" -ge 4 ] && one corun-model-pinned -n 1 taskset -c 0,1 "$EX" $N $D $K $IT --select "0=$G,1=$C" --strategy model : \
        -n 1 env $THR taskset -c 2-$((P-1)) "$EX" $N $D $K $IT --select "0=$G,1=$C" --strategy model
    # Both devices at once but in separate jobs, each alone at its share: contention without the
    # reduction's exchange between them.
    ( mpiexec -n 1 "$EX" $((N-CPU_UNITS)) $D $K $IT --select "0=$G" > "$OUT/sep-gpu.txt" 2>&1 & \
      mpiexec -n 1 "$EX" $CPU_UNITS $D $K $IT --select "0=$C" > "$OUT/sep-cpu.txt" 2>&1; wait )
    echo "separate-gpu: $(grep '^  setup' "$OUT/sep-gpu.txt")"; echo "separate-cpu: $(grep '^  setup' "$OUT/sep-cpu.txt")"
    echo "separate-gpu,$(grep '^worksize,' "$OUT/sep-gpu.txt" | cut -d, -f5)," >> "$CSV"
    echo "separate-cpu,$(grep '^worksize,' "$OUT/sep-cpu.txt" | cut -d, -f5)," >> "$CSV"
done
echo "--- last reports"; for f in "$OUT"/*.log; do echo "== $f"; grep -E '^  (device|setup|step|rank)' "$f" | tail -6; done
python3 - "$CSV" <<'PY'
import csv, statistics, sys, collections
t = collections.defaultdict(list)
for row in csv.reader(open(sys.argv[1])):
    if len(row) >= 2 and row[1]:
        t[row[0]].append(float(row[1]))
for cfg, v in t.items():
    print(f"{cfg:24s} median {statistics.median(v)*1e3:8.1f} ms  ({len(v)} runs)")
PY
