#!/usr/bin/env bash
# The stencil and k-means examples on one H200 against two H200s of one node (the nvidia-h200-x2
# kind), in the same call, REPS times each: one rank driving one GPU; two ranks with a GPU each
# (halos and reduction partials over MPI); one rank driving both GPUs (halos as host copies).
# First a verified run of each split at a size the CPU reference checks. Prints one CSV line per
# run (and writes $OUT/data_jobs_x2.csv): tool,example,size,ranks,seconds,status,config,arguments.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build-cc/apps/worksize \
#            build-cc/examples/worksize_example_{heat,kmeans}
#   There: bash cluster/gpu-data-jobs-x2.sh   (run tool, kind nvidia-h200-x2, carry [".devbundle"])
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH
OUT=${OUT:-/tmp/data-jobs-x2}
REPS=${REPS:-3}
mkdir -p "$OUT"
CSV=$OUT/data_jobs_x2.csv
: > "$CSV"
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; git rev-parse --short HEAD 2>/dev/null; } | tee "$OUT/machine.txt"

# The GPUs' indices as `worksize devices` numbers them (the PoCL CPU device may come first).
mapfile -t G < <(worksize devices --json | python3 -c \
    'import json,sys; [print(d["index"]) for d in json.load(sys.stdin)["devices"] if d["type"] == "gpu"]')
[ "${#G[@]}" -ge 2 ] || { echo "gpu-data-jobs-x2: fewer than two GPUs (${G[*]:-none})" >&2; exit 1; }
echo "GPU indices: ${G[*]}"

one() {  # one <example> <config: 1gpu|2ranks|1rank2gpus> <args...>
    local ex=$1 cfg=$2; shift 2
    local n=1 sel="0=${G[0]}"
    case $cfg in
        2ranks) n=2 sel="0=${G[0]},1=${G[1]}";;
        1rank2gpus) sel="0=${G[0]}+${G[1]}";;
    esac
    EXAMPLE_KERNEL_DIR=$PWD/examples/$ex mpiexec -n $n "$B/bin/worksize_example_$ex" "$@" --select "$sel" --local null \
        2>>"$OUT/$ex-$cfg.log" | tee -a "$OUT/$ex-$cfg.log" | grep "^worksize," | sed "s/\$/,$cfg,$(IFS=x; echo "$*")/" | tee -a "$CSV"
}

# Verified: the split matches the CPU reference.
for cfg in 2ranks 1rank2gpus; do
    one heat $cfg 1024 1024 200
    one heat $cfg 1024 1024 200 4
    one kmeans $cfg 1000000 8 16 10
done

export EXAMPLE_NOVERIFY=1
for r in $(seq "$REPS"); do
    for cfg in 1gpu 2ranks 1rank2gpus; do
        one heat $cfg 16384 16384 500
        one heat $cfg 16384 16384 500 8
        one kmeans $cfg 16777216 16 16 20
    done
done
echo "--- report of the last two-rank heat run"; tail -8 "$OUT/heat-2ranks.log"
python3 - "$CSV" <<'PY'
import csv, statistics, sys, collections
t = collections.defaultdict(list)
for row in csv.reader(open(sys.argv[1])):
    if len(row) >= 8 and row[5] == "unverified":
        t[(row[1], row[7], row[6])].append(float(row[4]))
for (ex, size, cfg), v in sorted(t.items()):
    one = t.get((ex, size, "1gpu"))
    ratio = statistics.median(one) / statistics.median(v) if one else float("nan")
    print(f"{ex:8s} {size:18s} {cfg:11s} median {statistics.median(v)*1e3:9.1f} ms  speed-up over 1 GPU {ratio:5.2f}")
PY
