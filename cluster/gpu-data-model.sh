#!/usr/bin/env bash
# --strategy model for data jobs against paper and even, on the nvidia-h200-x2 kind: heat (with
# and without ghost zones) and k-means over two ranks with a GPU each, and over a GPU rank and a
# CPU (PoCL) rank, where the devices' speeds differ most (on a one-GPU kind, the latter only). REPS runs of each, in the same call,
# after one verified run per configuration. Prints one CSV line per run (and writes
# $OUT/data_model.csv): tool,example,size,ranks,seconds,status,config,strategy,predicted_step_ms,
# measured_step_ms,arguments (the step figures from format_report's "step:" line; empty without
# a model), then the medians.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build-cc/apps/worksize \
#            build-cc/examples/worksize_example_{heat,kmeans}
#   There: bash cluster/gpu-data-model.sh   (run tool, kind nvidia-h200-x2, carry [".devbundle"])
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH
OUT=${OUT:-/tmp/data-model}
REPS=${REPS:-2}
mkdir -p "$OUT"
CSV=$OUT/data_model.csv
: > "$CSV"
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; git rev-parse --short HEAD 2>/dev/null; } | tee "$OUT/machine.txt"

# The devices' indices as `worksize devices` numbers them.
index_of() {  # index_of gpu|cpu
    worksize devices --json | python3 -c \
        'import json,sys; [print(d["index"]) for d in json.load(sys.stdin)["devices"] if d["type"] == sys.argv[1]]' "$1"
}
mapfile -t G < <(index_of gpu)
C=$(index_of cpu | head -n 1)
[ "${#G[@]}" -ge 1 ] || { echo "gpu-data-model: no GPU" >&2; exit 1; }
echo "GPU indices: ${G[*]}; CPU index: ${C:-none}"

one() {  # one <example> <config: 2gpus|gpu+cpu> <strategy> <args...>
    local ex=$1 cfg=$2 st=$3; shift 3
    local sel="0=${G[0]},1=${G[1]:-}" log=$OUT/$ex-$cfg-$st.log res step
    [ "$cfg" = gpu+cpu ] && sel="0=${G[0]},1=$C"
    res=$(EXAMPLE_KERNEL_DIR=$PWD/examples/$ex WORKSIZE_LOG_LEVEL=debug mpiexec -n 2 "$B/bin/worksize_example_$ex" "$@" \
        --select "$sel" --strategy "$st" 2>>"$log.err" | tee -a "$log")
    step=$(echo "$res" | sed -nE 's/^  step: predicted ([0-9.]+) ms, measured ([0-9.]+) ms.*/\1,\2/p' | tail -n 1)
    echo "$res" | grep "^worksize," | sed "s/\$/,$cfg,$st,${step:-,},$(IFS=x; echo "$*")/" | tee -a "$CSV"
}

configs=()  # on a one-GPU node (nvidia-h200, nvidia-h100-x1): the GPU beside the CPU only
[ "${#G[@]}" -ge 2 ] && configs+=(2gpus)
[ -n "${C:-}" ] && configs+=(gpu+cpu)

# Verified at sizes the CPU reference checks.
for cfg in "${configs[@]}"; do
    one heat "$cfg" model 1024 1024 200
    one heat "$cfg" model 1024 1024 200 4
    one kmeans "$cfg" model 1000000 8 16 10
done

# The CPU takes a share under paper and even: smaller sizes there, so that a run stays in seconds.
export EXAMPLE_NOVERIFY=1
for _ in $(seq "$REPS"); do
    for st in paper even model; do
        if [ "${#G[@]}" -ge 2 ]; then
            one heat 2gpus $st 16384 16384 500
            one heat 2gpus $st 16384 16384 500 8
            one heat 2gpus $st 2048 2048 500
            one kmeans 2gpus $st 16777216 16 16 20
        fi
        [ -n "${C:-}" ] || continue
        one heat gpu+cpu $st 4096 4096 100
        one kmeans gpu+cpu $st 2097152 16 16 10
    done
done
echo "--- reports of the last model runs"; for f in "$OUT"/*-model.log; do echo "$f"; tail -9 "$f"; done
python3 - "$CSV" <<'PY'
import csv, statistics, sys, collections
t = collections.defaultdict(list)
pred = collections.defaultdict(list)
for row in csv.reader(open(sys.argv[1])):
    if len(row) >= 11 and row[5] == "unverified":
        key = (row[1], row[10], row[6])
        t[key + (row[7],)].append(float(row[4]))
        if row[8]:
            pred[key].append((float(row[8]), float(row[9])))
for (ex, size, cfg, st), v in sorted(t.items()):
    paper = t.get((ex, size, cfg, "paper"))
    ratio = statistics.median(paper) / statistics.median(v) if paper else float("nan")
    line = f"{ex:7s} {size:18s} {cfg:8s} {st:6s} median {statistics.median(v)*1e3:9.1f} ms  speed-up over paper {ratio:5.2f}"
    if st == "model" and pred.get((ex, size, cfg)):
        p = pred[(ex, size, cfg)]
        line += f"  step predicted {statistics.median(x for x, _ in p):.3f} ms, measured {statistics.median(y for _, y in p):.3f} ms"
    print(line)
PY
