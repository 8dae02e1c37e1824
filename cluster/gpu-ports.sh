#!/usr/bin/env bash
# Issue 27's figures for the public applications ported with their kernels as published
# (examples/fdtd2d: PolyBench-ACC's fdtd-2d; examples/pathfinder: Rodinia's pathfinder), in one
# call on the nvidia-h200-x2 kind: each first verified against its CPU reference at a small size
# on one GPU, on two GPUs as two MPI ranks and on two GPUs driven by one rank; then, at the large
# size, the worksize host on one GPU against its plain single-device host (examples/*/plain_*),
# alternating, REPS times each (medians), and the two-GPU layouts. Writes $OUT/ports.csv:
#   example,size,config,rep,seconds,status
# (seconds: the plain host's timed part, or the worksize run's steps and gather, run_s), every
# run's output in $OUT/runs.log and medians with ratios in $OUT/summary.txt.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build/apps/worksize \
#            build/examples/{worksize_example,plain}_{fdtd2d,pathfinder} && tar -cJf .devbundle.tar.xz .devbundle
#   There: tar -xJf .devbundle.tar.xz && bash cluster/gpu-ports.sh   (carry [".devbundle.tar.xz"])
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH
OUT=${OUT:-/tmp/ports}
REPS=${REPS:-5}
# PART=all: everything above; PART=flush: the per-step flush experiment on pathfinder (the worksize
# host with WORKSIZE_STEP_FLUSH=0, config 1gpu-noflush, beside the default and the plain host) and
# the two-GPU layouts (REPS2 times). PART=diag: k-means (examples/kmeans, host-step centres)
# against plain_kmeans, verified then REPS times at 16.8 M points x 16, k 16, 20 iterations, and on
# two GPUs (REPS2); Rodinia's srad (examples/srad) 8192 x 8192, 100 iterations, likewise; fdtd2d
# and pathfinder again: each verified first at a small size, then REPS alternating rounds of the
# four plain hosts and their worksize hosts on one GPU.
PART=${PART:-all}
REPS2=${REPS2:-3}
mkdir -p "$OUT"
CSV=$OUT/ports.csv
echo "example,size,config,rep,seconds,status" >"$CSV"
LOG=$OUT/runs.log
: >"$LOG"
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; git rev-parse --short HEAD 2>/dev/null; } | tee "$OUT/machine.txt"
mapfile -t G < <(worksize devices --json | python3 -c \
    'import json,sys; [print(d["index"]) for d in json.load(sys.stdin)["devices"] if d["type"] == "gpu"]')
[ "${#G[@]}" -ge 1 ] || { echo "gpu-ports: no GPU" >&2; exit 1; }
echo "GPU indices: ${G[*]}"

# ws EXAMPLE CONFIG REP ARGS...: the worksize host; its run_s.
ws() {
    local ex=$1 cfg=$2 rep=$3; shift 3
    local n=1 sel="0=${G[0]}"
    case $cfg in
        2ranks) n=2 sel="0=${G[0]},1=${G[1]}";;
        1rank2gpus) sel="0=${G[0]}+${G[1]}";;
    esac
    local text res
    text=$(EXAMPLE_KERNEL_DIR=$PWD/examples/$ex timeout 300 mpiexec -n $n "$B/bin/worksize_example_$ex" "$@" --select "$sel" \
        ${LOCAL:+--local "$LOCAL"} 2>&1)
    printf '=== %s %s rep %s: %s\n%s\n' "$ex" "$cfg" "$rep" "$*" "$text" >>"$LOG"
    res=$(echo "$text" | grep '^worksize,' | tail -1)
    echo "$ex,$(echo "$*" | tr ' ' x),$cfg,$rep,$(echo "$res" | cut -d, -f5),$(echo "$res" | cut -d, -f6)" | tee -a "$CSV"
}
# plain EXAMPLE REP ARGS...: the plain host on the first GPU; PROFILE=1: with a profiling queue as
# worksize's (config plain+prof: the hypothesis that profiling costs the short launches).
plain() {
    local ex=$1 rep=$2; shift 2
    local text res cfg=plain
    [ "${PROFILE:-0}" = 1 ] && cfg=plain+prof
    text=$(PLAIN_PROFILE=${PROFILE:-0} PLAIN_DEVICE=gpu EXAMPLE_KERNEL_DIR=$PWD/examples/$ex timeout 300 "$B/bin/plain_$ex" "$@" 2>&1)
    printf '=== %s %s rep %s: %s\n%s\n' "$ex" "$cfg" "$rep" "$*" "$text" >>"$LOG"
    res=$(echo "$text" | grep '^plain,' | tail -1)
    echo "$ex,$(echo "$*" | tr ' ' x),$cfg,$rep,$(echo "$res" | cut -d, -f5),$(echo "$res" | cut -d, -f6)" | tee -a "$CSV"
}

export EXAMPLE_NOVERIFY=0
FDTD="8192 8192 500" PATH_ARGS="1000000 1800 20"
if [ "$PART" = flush ]; then
    export EXAMPLE_NOVERIFY=1
    for rep in $(seq 1 "$REPS"); do
        plain pathfinder "$rep" $PATH_ARGS
        ws pathfinder 1gpu "$rep" $PATH_ARGS
        WORKSIZE_STEP_FLUSH=0 ws pathfinder 1gpu-noflush "$rep" $PATH_ARGS
    done
fi
if [ "$PART" = diag ]; then
    KM="16777216 16 16 20" SRAD="8192 8192 100"
    for cfg in 1gpu 2ranks 1rank2gpus; do
        ws kmeans $cfg v 1000000 16 16 5
        ws srad $cfg v 1024 1024 10
        ws fdtd2d $cfg v 1000 1000 50
        ws pathfinder $cfg v 1000000 200 20
    done
    plain kmeans v 1000000 16 16 5
    plain srad v 1024 1024 10
    plain fdtd2d v 1000 1000 50
    plain pathfinder v 1000000 200 20
    export EXAMPLE_NOVERIFY=1
    for rep in $(seq 1 "$REPS"); do
        plain kmeans "$rep" $KM
        ws kmeans 1gpu "$rep" $KM
        plain srad "$rep" $SRAD
        ws srad 1gpu "$rep" $SRAD
        plain fdtd2d "$rep" $FDTD
        ws fdtd2d 1gpu "$rep" $FDTD
        plain pathfinder "$rep" $PATH_ARGS
        ws pathfinder 1gpu "$rep" $PATH_ARGS
    done
    for rep in $(seq 1 "$REPS2"); do
        for cfg in 2ranks 1rank2gpus; do
            ws kmeans $cfg "$rep" $KM
            ws srad $cfg "$rep" $SRAD
        done
    done
fi
# PART=srad: srad verified small on each layout, then REPS rounds of srad and pathfinder against
# their plain hosts, every launch's times of pathfinder in $OUT/tl-*.csv (WORKSIZE_TIMELINE,
# PLAIN_TIMELINE), and srad on two GPUs (REPS2).
if [ "$PART" = srad ]; then
    SRAD="8192 8192 100"
    for cfg in 1gpu 2ranks 1rank2gpus; do ws srad $cfg v 1024 1024 10; done
    plain srad v 1024 1024 10
    export EXAMPLE_NOVERIFY=1
    for rep in $(seq 1 "$REPS"); do
        plain srad "$rep" $SRAD
        ws srad 1gpu "$rep" $SRAD
        PLAIN_TIMELINE=$OUT/tl-plain-$rep.csv plain pathfinder "$rep" $PATH_ARGS
        WORKSIZE_TIMELINE=$OUT/tl-ws-$rep.csv ws pathfinder 1gpu "$rep" $PATH_ARGS
    done
    for rep in $(seq 1 "$REPS2"); do for cfg in 2ranks 1rank2gpus; do ws srad $cfg "$rep" $SRAD; done; done
    tar -czf "$OUT/timelines.tgz" -C "$OUT" $(cd "$OUT" && ls tl-*.csv) && rm -f "$OUT"/tl-*.csv
fi
# PART=path: pathfinder alone, its fixed per-run cost: verified small, then REPS rounds of the plain
# host, the plain host with a profiling queue, worksize, and both again with their timelines
# (launches, final reads and the host's marks at the end: $OUT/timelines.tgz).
if [ "$PART" = path ]; then
    ws pathfinder 1gpu v 1000000 200 20
    plain pathfinder v 1000000 200 20
    export EXAMPLE_NOVERIFY=1
    for rep in $(seq 1 "$REPS"); do
        plain pathfinder "$rep" $PATH_ARGS
        PROFILE=1 plain pathfinder "$rep" $PATH_ARGS
        ws pathfinder 1gpu "$rep" $PATH_ARGS
        PLAIN_TIMELINE=$OUT/tl-plain-$rep.csv plain pathfinder "t$rep" $PATH_ARGS
        WORKSIZE_TIMELINE=$OUT/tl-ws-$rep.csv ws pathfinder 1gpu "t$rep" $PATH_ARGS
    done
    tar -czf "$OUT/timelines.tgz" -C "$OUT" $(cd "$OUT" && ls tl-*.csv) && rm -f "$OUT"/tl-*.csv
fi
# Verified first, at sizes the CPU reference checks quickly.
[ "$PART" = all ] && for cfg in 1gpu 2ranks 1rank2gpus; do
    ws fdtd2d $cfg v 1000 1000 50
    ws pathfinder $cfg v 1000000 200 20
done
[ "$PART" = all ] && plain fdtd2d v 1000 1000 50 && plain pathfinder v 1000000 200 20

export EXAMPLE_NOVERIFY=1
[ "$PART" = all ] && for rep in $(seq 1 "$REPS"); do
    plain fdtd2d "$rep" $FDTD
    ws fdtd2d 1gpu "$rep" $FDTD
    plain pathfinder "$rep" $PATH_ARGS
    PROFILE=1 plain pathfinder "$rep" $PATH_ARGS
    ws pathfinder 1gpu "$rep" $PATH_ARGS
done
[ "$PART" = all ] || [ "$PART" = flush ] && for rep in $(seq 1 "$REPS2"); do
    for cfg in 2ranks 1rank2gpus; do
        ws fdtd2d $cfg "$rep" $FDTD
        ws pathfinder $cfg "$rep" $PATH_ARGS
    done
done

python3 - "$CSV" >"$OUT/summary.txt" <<'PY'
import csv, statistics, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["rep"] != "v"]
med = {}
for r in rows:  # traced runs (rep tN: PLAIN_TIMELINE, WORKSIZE_TIMELINE) apart: their events cost time
    cfg = r["config"] + ("+trace" if r["rep"].startswith("t") else "")
    try: med.setdefault((r["example"], cfg), []).append(float(r["seconds"]))
    except ValueError: pass
for ex in sorted({k[0] for k in med}):
    base = med.get((ex, "plain"))
    p = statistics.median(base) if base else float("nan")
    for cfg in ("plain", "plain+prof", "1gpu", "1gpu-noflush", "2ranks", "1rank2gpus", "plain+trace", "1gpu+trace"):
        v = med.get((ex, cfg))
        if not v: continue
        m = statistics.median(v)
        print(f"{ex:11s} {cfg:11s} median {m*1e3:9.2f} ms of {len(v)}; plain/this {p/m:5.3f}")
PY
cat "$OUT/summary.txt"
grep -c verified "$CSV" | sed 's/^/verified rows: /'
