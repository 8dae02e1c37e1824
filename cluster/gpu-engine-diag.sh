#!/usr/bin/env bash
# Issue 26 on the nvidia-h200-x2 kind, one call: (1) matmul 8192 with rank-local inputs
# (`run --inputs local`: each rank makes its slices' inputs, the outputs stay and are checked
# there) on one GPU, two GPUs in one rank and two GPU ranks, beside the offload from rank 0 to two
# GPU ranks; (2) where a two-GPU heat step loses time: WORKSIZE_TIMELINE traces (launches, halo
# reads and writes, messages) of heat 8192^2 x 300 steps in both layouts, with the halo writes'
# events as now and with the host waiting for them (WORKSIZE_HALO_QUEUE=host-wait), summarised by
# cluster/timeline_gaps.py; (3) heat 8192^2 x 2000 untraced on one and two GPUs, same call.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build/apps/worksize build/examples/worksize_example_heat &&
#          mpicc -O2 cluster/mpi-bw.c -o .devbundle/bin/mpi-bw && git rev-parse --short HEAD >.devbundle/build.txt &&
#          tar -cJf .devbundle.tar.xz .devbundle
#   There: tar -xJf .devbundle.tar.xz && bash cluster/gpu-engine-diag.sh  (run tool, carry [".devbundle.tar.xz"])
# Writes $OUT/matmul_local.csv (config,rep,makespan_ms,made_ms,status), matmul.log, heat.csv
# (config,rep,steps_s,run_s,status), heat.log, tl-*.csv* (the traces), gaps.txt, summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH
OUT=${OUT:-/tmp/engine-diag}
REPS=${REPS:-3}
PART=${PART:-all}  # matmul | heat | all | ab | links
# PART=ab: heat through worksize_example_heat_old (another build's, copied into the bundle's bin/)
# beside this build's, alternating, in the same call. PART=links: `worksize calibrate --links` on
# the two GPUs (one rank each, and one rank driving both) into $OUT/links.json, then heat with
# --strategy model on the calibrated links and on the defaults (an empty database): the
# predicted against the measured step (model.csv).
mkdir -p "$OUT"
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; echo "build $(cat "$B/build.txt" 2>/dev/null)"; } | tee "$OUT/machine.txt"
for n in 2 3; do echo "mpi-bw $n ranks (256 MiB): $(timeout 60 mpiexec -n $n mpi-bw 256 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/machine.txt"; done
mapfile -t G < <(worksize devices --json | python3 -c \
    'import json,sys; [print(d["index"]) for d in json.load(sys.stdin)["devices"] if d["type"] == "gpu"]')
[ "${#G[@]}" -ge 2 ] || { echo "gpu-engine-diag: fewer than two GPUs (${G[*]:-none})" >&2; exit 1; }

# mm CONFIG REP LAUNCHER... -- RUN-ARGS...: matmul 8192 through `worksize run`.
mm() {
    local cfg=$1 rep=$2; shift 2
    local pre=() text ms made st
    while [ "$1" != -- ]; do pre+=("$1"); shift; done
    shift
    text=$(timeout 200 "${pre[@]}" worksize run --kernel matmul --size 8192 "$@" 2>&1)
    printf '=== matmul %s rep %s: %s\n%s\n' "$cfg" "$rep" "${pre[*]} $*" "$text" >>"$OUT/matmul.log"
    ms=$(echo "$text" | grep -Eo '^makespan [0-9.]+ ms' | grep -Eo '[0-9.]+')
    made=$(echo "$text" | grep -Eo 'in up to [0-9.]+ ms' | grep -Eo '[0-9.]+')
    st=$(echo "$text" | grep -q '^makespan .* verified:' && echo verified || echo FAILED)
    echo "$cfg,$rep,${ms:-nan},${made:-0},$st" | tee -a "$OUT/matmul_local.csv"
}
# heat CONFIG REP ARGS...: the heat example; steps and run seconds from its report.
heat() {
    local cfg=$1 rep=$2; shift 2
    local n=1 sel="0=${G[0]}" text steps res
    case $cfg in
        *2ranks*) n=2 sel="0=${G[0]},1=${G[1]}";;
        *1rank2gpus*) sel="0=${G[0]}+${G[1]}";;
    esac
    text=$(EXAMPLE_KERNEL_DIR=$PWD/examples/heat timeout 120 mpiexec -n $n "${HEATBIN:-worksize_example_heat}" "$@" \
        --select "$sel" --local null --strategy "${STRATEGY:-even}" 2>&1)
    printf '=== heat %s rep %s: %s\n%s\n' "$cfg" "$rep" "$*" "$text" >>"$OUT/heat.log"
    steps=$(echo "$text" | grep -Eo 'steps [0-9.]+ ms, gather' | tail -1 | grep -Eo '[0-9.]+')
    res=$(echo "$text" | grep '^worksize,' | tail -1)
    echo "$cfg,$rep,$(python3 -c "print(${steps:-nan}/1e3)"),$(echo "$res" | cut -d, -f5),$(echo "$res" | cut -d, -f6)" | tee -a "$OUT/heat.csv"
}

echo "config,rep,makespan_ms,made_ms,status" >"$OUT/matmul_local.csv"
echo "config,rep,steps_s,run_s,status" >"$OUT/heat.csv"
if [ "$PART" = quick ]; then  # what the last seconds of a session's device time allow
    export EXAMPLE_NOVERIFY=1
    for r in 1 2; do
        heat 1rank2gpus-16384 "$r" 16384 16384 500
        HEATBIN=worksize_example_heat_old heat old-1rank2gpus-16384 "$r" 16384 16384 500
    done
    WORKSIZE_DB=$OUT/links.json timeout 60 mpiexec -n 2 worksize calibrate --links --select "0=${G[0]},1=${G[1]}" >"$OUT/links.txt" 2>&1
    WORKSIZE_DB=$OUT/links.json STRATEGY=model heat model-calibrated-2ranks-8192 1 8192 8192 2000
    grep -E "predicted|links:" "$OUT/heat.log"
    exit 0
fi
# Verified first at a size the CPU reference checks whole.
heat 2ranks 0 1024 1024 200
heat 1rank2gpus 0 1024 1024 200
if [ "$PART" = ab ] || [ "$PART" = links ]; then
    export EXAMPLE_NOVERIFY=1
    if [ "$PART" = ab ]; then
        for r in $(seq "$REPS"); do
            for cfg in 1gpu 1rank2gpus 2ranks; do
                for size in "8192 8192 2000" "16384 16384 500"; do
                    t=${size%% *}
                    # shellcheck disable=SC2086
                    heat "$cfg-$t" "$r" $size
                    # shellcheck disable=SC2086
                    HEATBIN=worksize_example_heat_old heat "old-$cfg-$t" "$r" $size
                done
            done
        done
    else
        echo "example,size,config,links,rep,predicted_step_ms,measured_step_ms" >"$OUT/model.csv"
        WORKSIZE_DB=$OUT/links.json timeout 120 mpiexec -n 2 worksize calibrate --links --select "0=${G[0]},1=${G[1]}" | tee "$OUT/links.txt"
        WORKSIZE_DB=$OUT/links.json timeout 120 worksize calibrate --links --select "0=${G[0]}+${G[1]}" | tee -a "$OUT/links.txt"
        for r in $(seq "$REPS"); do
            for db in calibrated defaults; do
                for cfg in 1gpu 1rank2gpus 2ranks; do
                    for size in "8192 8192 2000" "16384 16384 500"; do
                        path=$OUT/links.json
                        [ $db = defaults ] && path=$OUT/empty.json
                        # shellcheck disable=SC2086
                        WORKSIZE_DB=$path STRATEGY=model heat "model-$db-$cfg-${size%% *}" "$r" $size
                        pm=$(tail -30 "$OUT/heat.log" | grep -Eo 'step: predicted [0-9.]+ ms, measured [0-9.]+ ms' | tail -1 | grep -Eo '[0-9.]+' | tr '\n' ',')
                        echo "heat,${size// /x},$cfg,$db,$r,${pm%,}" >>"$OUT/model.csv"
                    done
                done
            done
        done
        grep -h "links:" "$OUT/heat.log" | sort | uniq -c >"$OUT/links-used.txt"
    fi
    REPS=0 PART=none
fi
for r in $(seq "$REPS"); do
    [ "$PART" = heat ] && break
    mm local-1gpu "$r" env -- --select "0=${G[0]}" --inputs local
    mm local-1rank2gpus "$r" env -- --select "0=${G[0]}+${G[1]}" --strategy even --inputs local
    mm local-2ranks "$r" mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even --inputs local
    mm local-3ranks "$r" mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even --inputs local
    mm offload-3ranks "$r" mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
done
export EXAMPLE_NOVERIFY=1
[ "$PART" = matmul ] && REPS=0
for cfg in 1rank2gpus 2ranks; do
    case $PART in matmul|none) break;; esac
    for hq in copy host-wait; do
        rm -f "$OUT/tl-$cfg-$hq.csv"*
        WORKSIZE_HALO_QUEUE=$hq WORKSIZE_TIMELINE=$OUT/tl-$cfg-$hq.csv heat "$cfg+trace+$hq" 1 8192 8192 300
        echo "== heat 8192^2 x 300, $cfg, halo writes $hq (traced)" >>"$OUT/gaps.txt"
        python3 cluster/timeline_gaps.py "$OUT/tl-$cfg-$hq.csv"* >>"$OUT/gaps.txt" 2>&1
    done
done
for r in $(seq "$REPS"); do
    for cfg in 1gpu 1rank2gpus 2ranks; do heat $cfg "$r" 8192 8192 2000; done
    WORKSIZE_HALO_QUEUE=host-wait heat 1rank2gpus+hw "$r" 8192 8192 2000
    WORKSIZE_HALO_QUEUE=host-wait heat 2ranks+hw "$r" 8192 8192 2000
    [ "${BIG:-0}" = 1 ] && for cfg in 1gpu 1rank2gpus 2ranks; do heat "$cfg-16384" "$r" 16384 16384 500; done
done
python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import csv, statistics, sys, collections
out = sys.argv[1]
def med(path, key, val):
    t = collections.defaultdict(list)
    for r in csv.DictReader(open(f"{out}/{path}")):
        if r["rep"] != "0" and r["status"] in ("verified", "unverified"):
            try: t[r[key]].append(float(r[val]))
            except ValueError: pass
    return {k: statistics.median(v) for k, v in t.items() if v}
m = med("matmul_local.csv", "config", "makespan_ms")
for k, v in sorted(m.items()):
    print(f"matmul 8192 {k}: makespan {v:.1f} ms" + (f", x{m['local-1gpu'] / v:.2f} of one GPU (local inputs)" if "local-1gpu" in m else ""))
h = med("heat.csv", "config", "steps_s")
for k, v in sorted(h.items()):
    one = h.get("1gpu-16384" if "16384" in k else "1gpu")
    print(f"heat {k}: steps {v:.4f} s" + (f", x{one / v:.2f} of one GPU" if one else ""))
PY
cat "$OUT/gaps.txt"
