#!/usr/bin/env bash
# Issue 14, interp near the copy bandwidth: interp SIZE² output (from (SIZE/2)², scale 2) on one
# GPU for each pixels-per-work-item variant (--param vw=N) with the paper rule's local size, NULL
# and, for TUNE_VWS, the tuned local size (a guided `worksize tune` at the same size first),
# against PyTorch's device copy measured in the same call (cluster/torch_baselines.py, which also
# prints the GEMM and sort baselines). Bandwidth = the job's byte count, the input read once plus
# the output written once ((in² + out²)·4 bytes per iteration), over the kernel time per
# iteration (OpenCL events, ITER iterations per run); the copy counts bytes read plus written.
# Every run is verified bit-exact against the CPU reference. Prints a table; raw files in $OUT.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build/apps/worksize
#   There: bash cluster/gpu-interp.sh   (run tool, carry [".devbundle"])
# Knobs: SIZE (8192), ITER (20), VWS, TUNE_VWS, TUNE_LIMIT (s per tune), TUNE_ARGS, GPU (device
# index), OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
[ -d "$B" ] && export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH
OUT=${OUT:-/tmp/interp}
mkdir -p "$OUT"
export WORKSIZE_DB=$OUT/db.json
SIZE=${SIZE:-8192}
ITER=${ITER:-20}
VWS=${VWS:-"1 2 4 8 16"}
TUNE_VWS=${TUNE_VWS:-"4 8"}
TUNE_LIMIT=${TUNE_LIMIT:-35}
# Every tuning run is verified on the host (about a second for 8192²), hence a small search.
TUNE_ARGS=${TUNE_ARGS:-"--budget 0.1 --iterations 10 --warmup 1 --repeats 1 --confirm-top 1 --confirm-runs 1 --baseline-runs 1"}
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; git rev-parse --short HEAD 2>/dev/null; } | tee "$OUT/machine.txt"
GPU=${GPU:-$(worksize devices --json | python3 -c \
    'import json,sys; ds=json.load(sys.stdin)["devices"]; g=[d["index"] for d in ds if d["type"]=="gpu"]; print(g[0] if g else "")')}
[ -n "$GPU" ] || { echo "gpu-interp: no GPU among worksize's devices" >&2; exit 1; }
echo "GPU index $GPU"

timeout 90 python3 cluster/torch_baselines.py > "$OUT/baselines.csv" 2> "$OUT/baselines.log"
echo "torch_baselines exit $?"; cat "$OUT/baselines.csv"; head -3 "$OUT/baselines.log"

run() { # run VW LOCAL
    timeout 60 mpiexec -n 1 worksize run interp --size "$SIZE" --iterations "$ITER" --param vw="$1" \
        --local "$2" --select "0=$GPU" --json > "$OUT/run-vw$1-$2.json" 2>> "$OUT/run.log"
}
for vw in $VWS; do run "$vw" paper; run "$vw" null; done
for vw in $TUNE_VWS; do
    # shellcheck disable=SC2086
    timeout "$TUNE_LIMIT" worksize tune --kernel interp --size "$SIZE" --param vw="$vw" --select "0=$GPU" \
        $TUNE_ARGS > "$OUT/tune-vw$vw.txt" 2>&1
    echo "tune vw=$vw exit $?" >> "$OUT/run.log"
    run "$vw" tuned
done

python3 - "$OUT" "$SIZE" "$ITER" <<'PY' | tee "$OUT/table.txt"
import csv, glob, json, os, sys
out, size, it = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
inw = max(1, round(size / 2))
bytes_it = (inw * inw + size * size) * 4
copy = None
try:
    for r in csv.DictReader(open(os.path.join(out, "baselines.csv"))):
        if r["name"] == "copy" and r["size"] == "8192x8192" and r["metric"] == "bandwidth":
            copy = float(r["value"])
except (OSError, KeyError, ValueError):
    pass
print(f"interp {size}x{size} from {inw}x{inw}: {bytes_it / 1e6:.1f} MB per iteration; "
      f"device copy (torch, 8192^2 floats, read+written) {copy if copy else 'n/a'} GB/s")
print(f'{"vw":>3s} {"local":>6s} {"shape":>9s} {"ms/iter":>8s} {"GB/s":>8s} {"/copy":>6s} verified')
rows = []
for f in sorted(glob.glob(os.path.join(out, "run-vw*.json"))):
    vw, pol = os.path.basename(f)[6:-5].split("-")
    try:
        d = json.load(open(f)); a = d["devices"][0]
        ms = a["times"]["kernel"] / it * 1e3
        gbs = bytes_it / (ms * 1e-3) / 1e9
        rows.append((int(vw), pol, f'{a["local"][0]}x{a["local"][1]}', ms, gbs, d["verified"]))
    except Exception as e:
        rows.append((int(vw), pol, "-", float("nan"), float("nan"), f"error {e}"))
for vw, pol, shape, ms, gbs, ok in sorted(rows):
    ratio = f"{gbs / copy:.3f}" if copy else "-"
    print(f"{vw:3d} {pol:>6s} {shape:>9s} {ms:8.4f} {gbs:8.1f} {ratio:>6s} {ok}")
PY
