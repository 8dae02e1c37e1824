#!/usr/bin/env bash
# The sample kernels against the field's libraries on one GPU node (issue 14), in one call:
#   PART=kernels (default): PyTorch's FP32 GEMM, device copy and sort (cluster/torch_baselines.py)
#     in the same call as worksize's matmul 4096 (register-tiled default, a few tile sets, the
#     tiled kernel, CLBlast through --backend clblast), interp 8192² (vw 4, 8, 16; vw 4, 8 × ry 1, 2, 4, 8; input staged in local memory,
#     stage 1, at vw 4 × ry 2, 4, 8 × stage_x 32, 64, 128 and vw 2, 8 ry 4; the default), sort 2^26
#     (radix settings, bitonic) on the GPU alone, and the awkward sizes against the nearest
#     powers of two (time per operation);
#   PART=split: `bench --strategies paper,model,oracle` on the GPU beside the node's CPU (PoCL) for
#     the split sort (2^24) and the awkward sizes, plus each device alone;
#   PART=all: both.
# Prints the tables; raw JSON, CSV and logs under $OUT.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build-cc/apps/worksize
#   There: PART=kernels bash cluster/gpu-libs.sh   (run tool, carry [".devbundle"])
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
OUT=${OUT:-/tmp/gpu-libs}
PART=${PART:-kernels}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH WORKSIZE_DB=$OUT/db.json
mkdir -p "$OUT"
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; git rev-parse --short HEAD 2>/dev/null; echo "PART=$PART"; } | tee "$OUT/machine.txt"
mapfile -t DEV < <(worksize devices --json | python3 -c \
    'import json,sys; ds=json.load(sys.stdin)["devices"]; print([d["index"] for d in ds if d["type"]=="gpu"][0]); print([d["index"] for d in ds if d["type"]=="cpu"][0])')
GPU=${DEV[0]}; CPU=${DEV[1]}
echo "GPU index $GPU, CPU index $CPU"

# One run on the GPU alone: prints kernel,size,label,iterations,kernel_s_per_iter,local,variant,verified.
one() {  # one LABEL KERNEL SIZE ITER [args...]
    local label=$1 k=$2 s=$3 it=$4; shift 4
    local f="$OUT/run-$k-$s-$label.json"
    timeout -k 5 120 mpiexec -n 1 worksize run --kernel "$k" --size "$s" --iterations "$it" --select "0=$GPU" --json "$@" \
        > "$f" 2>>"$OUT/run.log"
    python3 - "$f" "$k" "$s" "$label" "$it" <<'PY'
import json, sys
f, k, s, label, it = sys.argv[1:]
try:
    d = json.load(open(f)); a = d["devices"][0]
    print(f'{k},{s},{label},{it},{a["times"]["kernel"] / int(it)},{a["local"][0]}x{a["local"][1]},'
          f'"{d.get("variant", "")}",{d["verified"]}')
except Exception as e:
    print(f'{k},{s},{label},{it},nan,-,"",error {type(e).__name__}')
PY
}

if [ "$PART" = kernels ] || [ "$PART" = all ]; then
    timeout -k 5 150 python3 cluster/torch_baselines.py > "$OUT/baselines.csv" 2> "$OUT/baselines.log"
    echo "--- torch baselines (exit $?)"; cat "$OUT/baselines.csv"

    echo "kernel,size,label,iterations,kernel_s,local,variant,verified" > "$OUT/kernels.csv"
    {
        one reg-default matmul 4096 10
        one reg-128x128-bk16 matmul 4096 10 --param bk=16
        one reg-64x64-bk16 matmul 4096 10 --param bm=64 --param bn=64 --param bk=16
        one reg-128x64 matmul 4096 10 --param bm=128 --param bn=64
        one tiled-paper matmul 4096 10 --param variant=tiled
        one clblast matmul 4096 10 --backend clblast
        one default interp 8192 20  # on a GPU: vw 4, ry 8, input staged by (64,2) work-groups
        for vw in 4 8 16; do one "vw$vw-paper" interp 8192 20 --param vw=$vw; done  # ry 1, the paper rule's (1,512)
        # Rows per work-item (the column taps once for ry rows), NULL local size.
        for vw in 4 8; do for ry in 1 2 4 8; do
            one "vw$vw-ry$ry-null" interp 8192 20 --param vw=$vw --param ry=$ry --local null
        done; done
        # Input staged in local memory (stage 1: required work-groups of 128, stage_x along x).
        for ry in 2 4 8; do for sx in 32 64 128; do
            one "vw4-ry$ry-stage-x$sx" interp 8192 20 --param vw=4 --param ry=$ry --param stage=1 --param stage_x=$sx
        done; done
        for vw in 2 8; do one "vw$vw-ry4-stage-x32" interp 8192 20 --param vw=$vw --param ry=4 --param stage=1; done
        # The paper rule's y priority makes (1,512) groups, one pixel column each: also x first,
        # and NULL.
        for vw in 4 8; do
            one "vw$vw-priority-x" interp 8192 20 --param vw=$vw --priority x
            one "vw$vw-null" interp 8192 20 --param vw=$vw --local null
        done
        one radix-default sort 67108864 5
        one radix-b4 sort 67108864 5 --param radix_bits=4
        one radix-i16 sort 67108864 5 --param radix_items=16
        one radix-i4 sort 67108864 5 --param radix_items=4
        one radix-b4-i16 sort 67108864 5 --param radix_bits=4 --param radix_items=16
        one radix-b6 sort 67108864 5 --param radix_bits=6
        one radix-s1 sort 67108864 5 --param radix_split=1
        one bitonic sort 67108864 2 --param algo=bitonic
        # Awkward sizes against the nearest powers of two (per operation).
        for s in 3000017 2097152 4194304; do one awkward sort $s 10; done
        for s in 12345679 8388608 16777216; do one awkward quad $s 20; done
        for s in 1531 1024 2048; do one awkward matmul $s 10; done
    } | tee -a "$OUT/kernels.csv"

    python3 - "$OUT" <<'PY'
import csv, sys, statistics
out = sys.argv[1]
base = {}
for r in csv.DictReader(open(f"{out}/baselines.csv")):
    try:
        base[(r["name"], r["size"], r["metric"])] = float(r["value"])
    except ValueError:
        pass  # the device's name, versions
rows = list(csv.DictReader(open(f"{out}/kernels.csv")))
def get(name, size, metric):
    return base.get((name, str(size), metric))
print("\n--- worksize on the GPU against the libraries (same call)")
print(f'{"kernel":7s} {"size":>9s} {"label":18s} {"local":>8s} {"figure":>14s} {"library":>14s} {"ratio":>6s} verified')
gemm = get("gemm_fp32", 4096, "tflops")
copy = get("copy", "8192x8192", "bandwidth")
tsort = get("sort", 67108864, "keys_per_s")
clb = None
for r in rows:
    k, s, lab = r["kernel"], r["size"], r["label"]
    t = float(r["kernel_s"])
    if lab == "awkward" or t != t:
        continue
    if k == "matmul":
        n = int(s); fig = 2 * n**3 / t / 1e12; unit = "TFLOPS"; lib = gemm
        if lab == "clblast": clb = fig
    elif k == "interp":
        n = int(s); fig = ((n // 2)**2 + n * n) * 4 / t / 1e9; unit = "GB/s"; lib = copy
    elif k == "sort":
        fig = int(s) / t / 1e9; unit = "Gkeys/s"; lib = tsort
    ratio = f"{fig / lib:.3f}" if lib else "-"
    libs = f"{lib:.1f}" if lib else "-"
    print(f'{k:7s} {s:>9s} {lab:18s} {r["local"]:>8s} {fig:9.2f} {unit:>4s} {libs:>14s} {ratio:>6s} {r["verified"]}')
regs = [r for r in rows if r["kernel"] == "matmul" and r["label"] == "reg-default"]
if clb and regs and float(regs[0]["kernel_s"]) == float(regs[0]["kernel_s"]):
    print(f'matmul 4096 reg-default / CLBlast: {2 * 4096**3 / float(regs[0]["kernel_s"]) / 1e12 / clb:.3f}')
print("\n--- awkward sizes: time per item / nearest power of two")
aw = {(r["kernel"], int(r["size"])): r for r in rows if r["label"] == "awkward"}
def per(k, s):
    r = aw.get((k, s)); t = float(r["kernel_s"]) if r else float("nan")
    ops = s**3 if k == "matmul" else s
    return t / ops
for k, s, near in [("sort", 3000017, [2097152, 4194304]), ("quad", 12345679, [8388608, 16777216]), ("matmul", 1531, [1024, 2048])]:
    r = aw.get((k, s))
    print(f'{k} {s} (local {r["local"] if r else "-"}, {r["verified"] if r else "-"}): ' +
          ", ".join(f'/{n}: {per(k, s) / per(k, n):.3f}' for n in near))
PY
fi

if [ "$PART" = split ] || [ "$PART" = all ]; then
    export POCL_MAX_PTHREAD_COUNT=$(( $(nproc) - 3 )) POCL_CPU_MAX_CU_NUM=$(( $(nproc) - 3 ))
    for ks in "sort 16777216" "sort 3000017" "quad 12345679" "matmul 1531"; do
        set -- $ks
        timeout -k 5 100 mpiexec -n 3 worksize bench --kernel "$1" --size "$2" --strategies paper,model,oracle --repeats 3 \
            --select "1=$GPU,2=$CPU" --csv "$OUT/bench-$1-$2.csv" > "$OUT/bench-$1-$2.txt" 2> "$OUT/bench-$1-$2.log"
        echo "--- bench $1 $2, GPU + CPU (exit $?)"; cat "$OUT/bench-$1-$2.txt"; grep -i "warning\|error" "$OUT/bench-$1-$2.log" | head -5
    done
fi
true  # (the last grep finds nothing when a bench warned of nothing)
