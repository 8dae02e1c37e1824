#!/usr/bin/env bash
# Awkward sizes on one GPU (issue 14, "no slice stuck with local size 1"): sort 3,000,017, quad
# 12,345,679 and matmul 1531 against the nearest powers of two, one rank driving the GPU with the
# paper's local-size rule on the padded NDRange; kernel time per operation from `run --json`
# (medians of REPS runs of ITER iterations). Then `bench --strategies paper,model,oracle` of the
# awkward sizes on the GPU beside the node's CPU (PoCL). Prints tables; raw JSON and logs in $OUT.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build-cc/apps/worksize
#   There: bash cluster/gpu-padding.sh   (run tool, carry [".devbundle"])
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH WORKSIZE_DB=${OUT:-/tmp}/db.json
OUT=${OUT:-/tmp/padding}
REPS=${REPS:-3}
mkdir -p "$OUT"
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; git rev-parse --short HEAD 2>/dev/null; } | tee "$OUT/machine.txt"
mapfile -t DEV < <(worksize devices --json | python3 -c \
    'import json,sys; ds=json.load(sys.stdin)["devices"]; print([d["index"] for d in ds if d["type"]=="gpu"][0]); print([d["index"] for d in ds if d["type"]=="cpu"][0])')
GPU=${DEV[0]}; CPU=${DEV[1]}
echo "GPU index $GPU, CPU index $CPU"

echo "kernel,size,iterations,rep,local,padded_global,kernel_s,ops,verified" > "$OUT/per_op.csv"
for ks in "sort 3000017 10" "sort 2097152 10" "sort 4194304 10" "quad 12345679 20" "quad 8388608 20" "quad 16777216 20" \
          "matmul 1531 5" "matmul 1024 5" "matmul 2048 5"; do
    set -- $ks; k=$1 s=$2 it=$3
    ops=$(worksize plan --kernel "$k" --size "$s" --iterations "$it" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["ops"])')
    for r in $(seq "$REPS"); do
        mpiexec -n 1 worksize run --kernel "$k" --size "$s" --iterations "$it" --select "0=$GPU" --json > "$OUT/run-$k-$s-$r.json" 2>>"$OUT/run.log"
        python3 - "$OUT/run-$k-$s-$r.json" "$k" "$s" "$it" "$r" "$ops" >> "$OUT/per_op.csv" <<'PY'
import json, sys
f, k, s, it, r, ops = sys.argv[1:]
try:
    d = json.load(open(f)); a = d["devices"][0]
    print(f'{k},{s},{it},{r},{a["local"][0]}x{a["local"][1]},{a["padded_global"][0]}x{a["padded_global"][1]},{a["times"]["kernel"]},{ops},{d["verified"]}')
except Exception as e:
    print(f'{k},{s},{it},{r},-,-,nan,{ops},error {e}')
PY
    done
done
python3 - "$OUT/per_op.csv" <<'PY'
import csv, sys, statistics, collections
rows = list(csv.DictReader(open(sys.argv[1])))
m = collections.OrderedDict()
for r in rows:
    m.setdefault((r["kernel"], int(r["size"])), []).append(r)
print(f'{"kernel":7s} {"size":>9s} {"local":>8s} {"padded":>10s} {"kernel ms":>10s} {"ps/op":>8s} verified')
per = {}
for (k, s), rs in m.items():
    t = statistics.median(float(r["kernel_s"]) for r in rs)
    per[(k, s)] = t / float(rs[0]["ops"])
    print(f'{k:7s} {s:9d} {rs[0]["local"]:>8s} {rs[0]["padded_global"]:>10s} {t*1e3:10.3f} {per[(k, s)]*1e12:8.3f} {",".join(sorted(set(r["verified"] for r in rs)))}')
for k, s in [("sort", 3000017), ("quad", 12345679), ("matmul", 1531)]:
    near = [(kk, ss) for (kk, ss) in per if kk == k and ss != s]
    print(f'{k} {s}: time per operation / nearest powers of two: ' + ", ".join(f'{ss}: {per[(k, s)] / per[(k, ss)]:.3f}' for _, ss in near))
PY

# The split on the GPU and the CPU: model against the oracle at the awkward sizes.
export POCL_MAX_PTHREAD_COUNT=$(( $(nproc) - 3 )) POCL_CPU_MAX_CU_NUM=$(( $(nproc) - 3 ))
for ks in "sort 3000017" "quad 12345679" "matmul 1531"; do
    set -- $ks
    timeout 170 mpiexec -n 3 worksize bench --kernel "$1" --size "$2" --strategies paper,model,oracle --repeats 3 \
        --select "1=$GPU,2=$CPU" --csv "$OUT/bench-$1.csv" > "$OUT/bench-$1.txt" 2> "$OUT/bench-$1.log"
    echo "--- bench $1 $2 (exit $?)"; cat "$OUT/bench-$1.txt"; grep -i "warning\|error" "$OUT/bench-$1.log" | head -5
done
