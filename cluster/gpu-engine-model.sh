#!/usr/bin/env bash
# Issue 26 on the nvidia-h200-x2 kind. PART=ab: this build against another one (its examples
# copied into the bundle's bin/ as *_old), same call: heat 16384^2 x 500 and k-means 16.8 M x 16
# (k 16, 20 iterations; its 1 GiB of points scattered from rank 0, which this build sends in
# pieces) on one GPU, two GPUs in one rank and two GPU ranks; heat 8192^2 x 2000 (ab/ also ran it
# with WORKSIZE_EAGER_FLUSH=1, an experiment of build 4c29a83 since removed).
# PART=matmul: `worksize bench` (every strategy, the oracle's sweep with each GPU alone) of
# matmul 8192 x 1 and 4096 x 10 on the two GPUs, over MPI and in one rank, links calibrated.
# PART=data: heat and k-means with --strategy model (links calibrated) against even and one GPU.
# PART=model: bench of matmul 8192 x 1 and 4096 x 10, --strategy model against even, over MPI, in
# one rank and on one GPU, on a database seeded with an earlier call's calibration (DB_SEED).
# PART=interp: bench of interp 5000x3001 x 10 over a GPU rank and a CPU rank (every strategy,
# the oracle), then k-means' setup against the build before while the budget lasts.
# PART=kmeans-local: k-means with --points local against rank 0's points, whole runs.
# PART=recheck: what this build's changes move, against the build before (old), same call: heat
# 8192^2 in every layout (rank 0's own final reads are now the gather's, not the steps'), heat
# 16384^2 on one GPU, k-means with its points made on each rank (now in pieces through pinned halves).
# PART=gather: the final gather's rate from the other rank (the report's line) beside mpi-bw's,
# heat 16384^2 and 8192^2 and k-means over two GPU ranks; heat 16384^2 on one GPU and in one rank.
# PART=gather3: the same gathers with rank 0 driving no device (3 ranks: the GPUs on ranks 1 and
# 2), beside two GPU ranks, in one call: whether rank 0's reads of its own outputs slow the link.
# PART=pieces: the gathers' and the kernel tasks' pieces (several in flight, receives posted
# ahead, a worker uploading each input piece as it comes) against the build before (old), same
# call: heat 16384^2 and k-means over two GPU ranks (the final gather's rate beside mpi-bw's),
# matmul 8192 offloaded from rank 0 to two GPU ranks (mm.csv; the bound from mpi-bw's rates),
# then the issue's figures of this build: heat 16384^2 and 8192^2, k-means on one GPU, two in one
# rank and two ranks; matmul with rank-local inputs on one GPU, two in one rank and two ranks.
# PART=piecesize: whether the pieces' size holds the link back: mpi-bw with 16, 64 and 256 MiB
# messages, then heat 16384^2 and k-means over two GPU ranks and matmul 8192 offloaded to two,
# with pieces of 16 (the default) and 64 MiB (WORKSIZE_PIECE_BYTES), against the build before.
# PART=buildoverlap: the setup with the programs built while the inputs move (new) against the
# build just before that change (prev: its examples copied in as *_prev), alternating: heat
# 16384^2 and k-means over two GPU ranks, on one GPU, k-means in one rank driving both.
# PART=declared: matmul, interp and quad slices on the engine (instruction lists, new) against the
#   build before (old), one GPU and matmul offloaded to two GPU ranks, kernel times and makespans.
# PART=clblast: matmul with --backend clblast (SGEMM a library routine of the slice's list, new)
#   against the build before (old), one GPU, offloaded to two GPU ranks, one rank driving both.
# PART=sort: sort's radix and bitonic sorts as library routines of the slice's list (new) against
#   its own executor before (old): one GPU, and rank 0 partitioning for two GPU ranks.
# PART=staging: the halo staging slots pinned (they were ordinary memory under the 256 KiB
# threshold) and made before the steps, against the build before (old), same call: heat 8192^2 x
# 2000 with WORKSIZE_STEP_LOG (steplog.txt: cluster/step_log.py), heat 16384^2 and k-means, in
# every layout.
# PART=ownstaged: rank 0's own inputs through two pinned halves, copied in several threads while
# the piece before moves (new), against one blocking write from the job's memory each
# (WORKSIZE_STAGED_UPLOADS=0, +direct), same build: k-means 16.8 M and heat 16384^2, setup and
# whole run, on one GPU and two in one rank.
# PART=events: launches keep an event only where something waits on it (the interior launches
# only in the lists that check the overlap) and a rank's devices set up a thread each (new),
# against the build before (old) and against new with every list checked
# (WORKSIZE_OVERLAP_SAMPLE=1, +every), same call: heat 8192^2 x 2000 with step logs in every
# layout; the plain program's half (8192 x 4096 rows) in one launch a step, in two (PLAIN_SPLIT=1)
# and in two with an event each (PLAIN_EVENTS=1); k-means 16.8 M whole runs (the setup's phases
# in the step logs; +seq: WORKSIZE_SETUP_THREADS=0).
# PART=pinned: k-means 16.8 M with rank 0's points in pinned memory (Cluster::host_vector, the
# example's default, written onto each device in one write) against pageable memory (+pageable:
# copied through two pinned halves), same build: setup and whole run on one GPU, two in one rank
# and two GPU ranks; the time to pin and fill the points is in runs.log ("kmeans: ... made and
# filled in").
# PART=shared: Cluster::host_vector's memory pinned in one context over the rank's GPUs, so that
# both GPUs of one rank take k-means' points as pinned: k-means 16.8 M on one GPU, two in one
# rank (and +pageable) and two GPU ranks, with step logs (each device's write time); then heat
# 16384^2 x 500 in every layout (this build's steps against one GPU).
# PART=gathers: the data jobs' gathers (and scatter) as instructions of the ranks' lists (new)
# against the build before (old), same call: MPI's rate between two ranks under UCX's settings
# (mpibw.txt); heat 16384^2 x 500 and k-means over two GPU ranks (the final gather's rate beside
# mpi-bw's), heat 8192^2 x 2000 over two ranks and in one rank (steps), k-means over two ranks
# under two UCX settings; matmul 8192 with rank-local inputs on one GPU, two in one rank and two
# ranks (mm.csv).
# PART=heat16k: why heat 16384^2 in one rank driving both GPUs is slower than over MPI: traces of
# 300 steps in both layouts (cluster/timeline_gaps.py), then 500-step runs on one GPU, two in one
# rank (also with the halo writes on the compute queue, WORKSIZE_HALO_QUEUE=compute) and two GPU
# ranks; each run's final gather (gather_ms) beside mpi-bw's rate in machine.txt.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build/apps/worksize build/examples/worksize_example_heat \
#            build/examples/worksize_example_kmeans && cp OLD/build/examples/worksize_example_{heat,kmeans} .devbundle/bin/ ...
#          (renamed *_old) && mpicc -O2 cluster/mpi-bw.c -o .devbundle/bin/mpi-bw &&
#          git rev-parse --short HEAD >.devbundle/build.txt && tar -cJf .devbundle.tar.xz .devbundle
#   There: tar -xJf .devbundle.tar.xz && PART=ab bash cluster/gpu-engine-model.sh  (run tool, carry [".devbundle.tar.xz"])
# Writes $OUT/machine.txt, runs.csv (example,size,config,build,rep,setup_ms,steps_ms,total_ms,status), runs.log,
# bench*.csv, summary.txt.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH
OUT=${OUT:-/tmp/engine-model}
REPS=${REPS:-3}
PART=${PART:-ab}
T0=$(date +%s)
mkdir -p "$OUT"
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; echo "build $(cat "$B/build.txt" 2>/dev/null), old $(cat "$B/old.txt" 2>/dev/null)"; } | tee -a "$OUT/machine.txt"
for n in 2 3; do echo "mpi-bw $n ranks (256 MiB): $(timeout 60 mpiexec -n $n mpi-bw 256 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/machine.txt"; done
mapfile -t G < <(worksize devices --json | python3 -c \
    'import json,sys; [print(d["index"]) for d in json.load(sys.stdin)["devices"] if d["type"] == "gpu"]')
[ -n "${GPUS:-}" ] && read -ra G <<<"$GPUS"  # a dry run of the script on other devices
[ "${#G[@]}" -ge 2 ] || { echo "gpu-engine-model: fewer than two GPUs (${G[*]:-none})" >&2; exit 1; }
late() { [ $(( $(date +%s) - T0 )) -gt "${BUDGET:-520}" ]; }

# ex EXAMPLE BUILD CONFIG REP ARGS...: one run of an example (CONFIG: 1gpu, 1rank2gpus, 2ranks,
# with +suffixes for the environment's variants); its setup, steps and total from the report.
ex() {
    local name=$1 build=$2 cfg=$3 rep=$4; shift 4
    local n=1 sel="0=${G[0]}" bin=worksize_example_$name text setup steps total st
    case $cfg in
        2ranks*) n=2 sel="0=${G[0]},1=${G[1]}";;
        1rank2gpus*) sel="0=${G[0]}+${G[1]}";;
        1gpuB*) sel="0=${G[1]}";;  # the second GPU alone
        3ranks*) n=3 sel="1=${G[0]},2=${G[1]}";;  # rank 0 drives no device
    esac
    [ "$build" != new ] && bin=${bin}_$build  # old, prev: another build's examples
    text=$(EXAMPLE_KERNEL_DIR=$PWD/examples/$name timeout 150 mpiexec -n $n "$bin" "$@" \
        --select "$sel" --local null --strategy "${STRATEGY:-even}" 2>&1)
    printf '=== %s %s %s rep %s: %s (strategy %s)\n%s\n' "$name" "$build" "$cfg" "$rep" "$*" "${STRATEGY:-even}" "$text" >>"$OUT/runs.log"
    setup=$(echo "$text" | grep -Eo '^  setup [0-9.]+ ms' | tail -1 | grep -Eo '[0-9.]+')
    steps=$(echo "$text" | grep -Eo ', steps [0-9.]+ ms, gather' | tail -1 | grep -Eo '[0-9.]+')
    total=$(echo "$text" | grep -Eo 'total [0-9.]+ ms' | tail -1 | grep -Eo '[0-9.]+')
    gather=$(echo "$text" | grep -Eo ', gather [0-9.]+ ms' | tail -1 | grep -Eo '[0-9.]+')
    rate=$(echo "$text" | grep -Eo 'final gather from the other ranks: .* \([0-9.]+ GB/s\)' | tail -1 | grep -Eo '[0-9.]+ GB/s' | grep -Eo '[0-9.]+')
    st=$(echo "$text" | grep -Eo '^worksize,.*,(verified|unverified|FAILED)$' | tail -1 | awk -F, '{print $NF}')
    echo "$name,$(echo "$*" | sed -e 's/ --points [a-z0-9]*//' -e 's/ --host [a-z]*//' | tr ' ' x),$cfg,$build,$rep,${setup:-nan},${steps:-nan},${total:-nan},${st:-FAILED},${gather:-nan},${rate:-nan}" | tee -a "$OUT/runs.csv"
}
# mm CONFIG BUILD REP LAUNCHER... -- ARGS...: one `worksize run --kernel matmul --size 8192` (MM_SIZE);
# its makespan and verdict into mm.csv.
mm() {
    local cfg=$1 build=$2 rep=$3 pre=() text ms st bin=worksize; shift 3
    [ "$build" = old ] && bin=worksize_old
    while [ "$1" != -- ]; do pre+=("$1"); shift; done
    shift
    text=$(timeout 200 "${pre[@]}" "$bin" run --kernel matmul --size "${MM_SIZE:-8192}" "$@" 2>&1)
    printf '=== matmul %s %s rep %s: %s\n%s\n' "$cfg" "$build" "$rep" "${pre[*]} $*" "$text" >>"$OUT/mm.log"
    ms=$(echo "$text" | grep -Eo '^makespan [0-9.]+ ms' | grep -Eo '[0-9.]+')
    st=$(echo "$text" | grep -q '^makespan .*verified' && echo verified || echo FAILED)
    [ -f "$OUT/mm.csv" ] || echo "config,build,rep,makespan_ms,status" >"$OUT/mm.csv"
    echo "$cfg,$build,$rep,${ms:-nan},$st" | tee -a "$OUT/mm.csv"
}
# kr KERNEL SIZE CONFIG BUILD REP LAUNCHER... -- ARGS...: one `worksize run` of a sample kernel; its
# makespan, its devices' kernel time (summed) and verdict into kr.csv.
kr() {
    local kernel=$1 size=$2 cfg=$3 build=$4 rep=$5 pre=() text ms kms st bin=worksize; shift 5
    [ "$build" = old ] && bin=worksize_old
    while [ "$1" != -- ]; do pre+=("$1"); shift; done
    shift
    text=$(timeout 200 "${pre[@]}" "$bin" run --kernel "$kernel" --size "$size" "$@" 2>&1)
    printf '=== %s %s %s %s rep %s: %s\n%s\n' "$kernel" "$size" "$cfg" "$build" "$rep" "${pre[*]} $*" "$text" >>"$OUT/kr.log"
    ms=$(echo "$text" | grep -Eo '^makespan [0-9.]+ ms' | grep -Eo '[0-9.]+')
    kms=$(echo "$text" | awk '/^[0-9]+: / { s += $(NF-5) } END { if (NR) print s }')
    st=$(echo "$text" | grep -q '^makespan .*verified' && echo verified || echo FAILED)
    [ -f "$OUT/kr.csv" ] || echo "kernel,size,config,build,rep,makespan_ms,kernel_ms,status" >"$OUT/kr.csv"
    echo "$kernel,$size,$cfg,$build,$rep,${ms:-nan},${kms:-nan},$st" | tee -a "$OUT/kr.csv"
}
[ -f "$OUT/runs.csv" ] || echo "example,size,config,build,rep,setup_ms,steps_ms,total_ms,status,gather_ms,gather_gbps" >"$OUT/runs.csv"

if [ "$PART" = ab ]; then
    # Verified first at sizes the CPU reference checks whole.
    for cfg in 2ranks 1rank2gpus; do
        ex heat new "$cfg" 0 1024 1024 200
        ex kmeans new "$cfg" 0 1000000 16 16 5
    done
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            for b in new old; do ex heat $b "$cfg" "$r" 16384 16384 500; done
            for b in new old; do ex kmeans $b "$cfg" "$r" 16777216 16 16 20; done
        done
        ex heat new 1gpu "$r" 8192 8192 2000
        for cfg in 1rank2gpus 2ranks; do
            ex heat new "$cfg" "$r" 8192 8192 2000
        done
    done
fi

if [ "$PART" = matmul ]; then
    export WORKSIZE_DB=$OUT/db.json
    timeout 120 mpiexec -n 2 worksize calibrate --links --select "0=${G[0]},1=${G[1]}" >"$OUT/links.txt" 2>&1
    timeout 120 worksize calibrate --links --select "0=${G[0]}+${G[1]}" >>"$OUT/links.txt" 2>&1
    for spec in "8192 1" "4096 10"; do
        set -- $spec
        for lay in 2ranks 1rank; do
            late && break
            pre=(mpiexec -n 2) sel="0=${G[0]},1=${G[1]}"
            [ $lay = 1rank ] && pre=() sel="0=${G[0]}+${G[1]}"
            timeout 420 "${pre[@]}" worksize bench --kernel matmul --size "$1" --iterations "$2" --repeats 3 --sweep \
                --select "$sel" --csv "$OUT/bench-$lay.csv" --append >>"$OUT/bench.log" 2>&1
            echo "bench matmul $1 x $2 $lay: rc $?" | tee -a "$OUT/machine.txt"
        done
    done
fi

if [ "$PART" = model ]; then
    # --strategy model against even and one GPU alone (bench, medians of 3), on a database seeded
    # with a calibration of these GPUs (DB_SEED: matmul/db.json of an earlier call), so that the
    # call measures the model's choice, not a calibration.
    cp "${DB_SEED:?DB_SEED names the database to start from}" "$OUT/db.json"
    export WORKSIZE_DB=$OUT/db.json
    for spec in "8192 1" "4096 10"; do
        set -- $spec
        for lay in 2ranks 1rank 1gpu; do
            late && break
            pre=(mpiexec -n 2) sel="0=${G[0]},1=${G[1]}" strat=even,model
            [ $lay = 1rank ] && pre=() sel="0=${G[0]}+${G[1]}"
            [ $lay = 1gpu ] && pre=() sel="0=${G[0]}" strat=even
            timeout 200 "${pre[@]}" worksize bench --kernel matmul --size "$1" --iterations "$2" --repeats 3 \
                --strategies $strat --no-calibrate --select "$sel" --csv "$OUT/bench-$lay.csv" --append >>"$OUT/bench.log" 2>&1
            echo "bench matmul $1 x $2 $lay: rc $?" | tee -a "$OUT/machine.txt"
        done
    done
    grep -A8 "^strategy " "$OUT/bench.log"
fi

if [ "$PART" = interp ]; then
    # interp 5000x3001 x 10 over a GPU rank and a CPU rank (PoCL on the Xeon, 28 threads: the
    # cores less the MPI ranks' own): every strategy, the oracle with its seeds (each device
    # alone), calibrated on three sizes first. Then, while the budget lasts, k-means' setup with
    # rank 0 writing its own inputs whole (this build) against the build before (*_old).
    export WORKSIZE_DB=$OUT/db.json
    args=(bench --kernel interp --size 5000x3001 --iterations 10 --repeats 3 --sweep --calibration-sizes 1024,2048,4096
          --select "0=${G[0]},1=0" --csv "$OUT/bench-interp.csv" --phases-csv "$OUT/bench-interp-phases.csv")
    timeout 300 mpiexec -n 1 worksize "${args[@]}" : -n 1 env POCL_MAX_PTHREAD_COUNT=28 worksize "${args[@]}" \
        >"$OUT/bench.log" 2>&1
    echo "bench interp 5000x3001 x 10, GPU + CPU: rc $?" | tee -a "$OUT/machine.txt"
    grep -B2 -A12 "^strategy " "$OUT/bench.log"
    export EXAMPLE_NOVERIFY=1
    for r in 1 2; do
        late && break
        for cfg in 1gpu 2ranks; do
            for b in new old; do ex kmeans $b "$cfg" "$r" 16777216 16 16 20; done
        done
    done
fi

if [ "$PART" = kmeans-local ]; then
    # k-means 16.8 M x 16 with its points made on each rank (--points local) against sent from
    # rank 0: the whole run (setup, steps, gather) on one GPU, two in one rank and two GPU ranks.
    ex kmeans new 2ranks 0 1000000 16 16 5 --points local
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            ex kmeans new "$cfg" "$r" 16777216 16 16 20
            ex kmeans new "$cfg+local" "$r" 16777216 16 16 20 --points local
        done
    done
fi

if [ "$PART" = recheck ]; then
    ex heat new 1rank2gpus 0 1024 1024 200
    ex kmeans new 1rank2gpus 0 1000000 16 16 5 --points local
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            for b in new old; do ex heat $b "$cfg" "$r" 8192 8192 2000; done
            for b in new old; do ex kmeans $b "$cfg+local" "$r" 16777216 16 16 20 --points local; done
        done
        for b in new old; do ex heat $b 1gpu "$r" 16384 16384 500; done
        ex kmeans new 1gpu "$r" 16777216 16 16 20
    done
fi

if [ "$PART" = gather ]; then
    ex heat new 2ranks 0 1024 1024 200
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do ex heat new "$cfg" "$r" 16384 16384 500; done
        ex heat new 2ranks "$r" 8192 8192 2000
        ex kmeans new 2ranks "$r" 16777216 16 16 20
    done
    for n in 2; do echo "mpi-bw $n ranks (256 MiB), after: $(timeout 60 mpiexec -n $n mpi-bw 256 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/machine.txt"; done
fi

if [ "$PART" = gather3 ]; then
    ex heat new 3ranks 0 1024 1024 200
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 2ranks 3ranks; do
            ex heat new "$cfg" "$r" 16384 16384 500
            ex heat new "$cfg" "$r" 8192 8192 2000
        done
    done
    echo "mpi-bw 2 ranks (256 MiB), after: $(timeout 60 mpiexec -n 2 mpi-bw 256 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/machine.txt"
fi

if [ "$PART" = pieces ]; then
    for cfg in 2ranks 1rank2gpus; do ex heat new "$cfg" 0 1024 1024 200; done
    ex kmeans new 2ranks 0 1000000 16 16 5
    MM_SIZE=1000 mm verify2 new 0 mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for b in new old; do
            ex heat $b 2ranks "$r" 16384 16384 500
            ex kmeans $b 2ranks "$r" 16777216 16 16 20
            mm offload2 $b "$r" mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
        done
        for cfg in 1gpu 1rank2gpus; do ex heat new "$cfg" "$r" 16384 16384 500; done
        for cfg in 1gpu 1rank2gpus 2ranks; do ex heat new "$cfg" "$r" 8192 8192 2000; done
        for cfg in 1gpu 1rank2gpus; do ex kmeans new "$cfg" "$r" 16777216 16 16 20; done
        mm local1 new "$r" env -- --select "0=${G[0]}" --inputs local
        mm local2 new "$r" env -- --select "0=${G[0]}+${G[1]}" --strategy even --inputs local
        mm local2ranks new "$r" mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even --inputs local
    done
    for n in 2 3; do echo "mpi-bw $n ranks (256 MiB), after: $(timeout 60 mpiexec -n $n mpi-bw 256 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/machine.txt"; done
fi

if [ "$PART" = declared ]; then
    # Declared slices (matmul, interp, quad) as instruction lists on the engine (new) against the
    # build before (old, execute_declared's own phases), alternating, one GPU and matmul offloaded
    # to two GPU ranks; the small runs first, verified.
    kr matmul 1000 verify new 0 mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
    kr interp 1000 verify new 0 env -- --select "0=${G[0]}+${G[1]}" --strategy even
    kr quad 1000000 verify new 0 env -- --select "0=${G[0]}+${G[1]}" --strategy even
    for r in $(seq "$REPS"); do
        late && break
        for b in new old; do
            kr matmul 8192 1gpu $b "$r" env -- --select "0=${G[0]}" --iterations 3
            kr interp 8192 1gpu $b "$r" env -- --select "0=${G[0]}" --iterations 10
            kr quad 268435456 1gpu $b "$r" env -- --select "0=${G[0]}" --iterations 10
            kr matmul 8192 offload2 $b "$r" mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
            kr matmul 8192 local2ranks $b "$r" mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even --inputs local
        done
    done
    echo "mpi-bw 3 ranks (256 MiB), after: $(timeout 60 mpiexec -n 3 mpi-bw 256 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/machine.txt"
fi

if [ "$PART" = clblast ]; then
    # matmul's CLBlast backend as a library routine in the slice's instruction list (new) against
    # its own path before (old), alternating; the data jobs' steps on the executor beside.
    kr matmul 1000 verify new 0 mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even --backend clblast
    kr matmul 1531 verify1 new 0 env -- --select "0=${G[0]}" --backend clblast --iterations 2
    ex heat new 2ranks 0 1024 1024 200
    export EXAMPLE_NOVERIFY=1  # heat 8192^2 x 2000 verified on the CPU takes minutes
    for r in $(seq "$REPS"); do
        late && break
        for b in new old; do
            kr matmul 8192 1gpu-clblast $b "$r" env -- --select "0=${G[0]}" --backend clblast --iterations 3
            kr matmul 8192 offload2-clblast $b "$r" mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even --backend clblast
            kr matmul 4096 1rank2gpus-clblast $b "$r" env -- --select "0=${G[0]}+${G[1]}" --strategy even --backend clblast --iterations 10
        done
        for cfg in 2ranks 1rank2gpus 1gpu; do ex heat new "$cfg" "$r" 8192 8192 2000; done
    done
fi

if [ "$PART" = sort ]; then
    # sort's radix and bitonic sorts as library routines in the slice's instruction list (new)
    # against its own executor before (old), alternating; small runs verified first.
    kr sort 1000000 verify new 0 mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
    kr sort 100000 verify-bitonic new 0 env -- --select "0=${G[0]}" --param algo=bitonic
    for r in $(seq "$REPS"); do
        late && break
        for b in new old; do
            kr sort 67108864 1gpu $b "$r" env -- --select "0=${G[0]}" --iterations 5
            [ -n "${SORT_ONE_GPU:-}" ] && continue  # the radix sort on one GPU alone, more repeats
            kr sort 16777216 1gpu-bitonic $b "$r" env -- --select "0=${G[0]}" --param algo=bitonic --iterations 3
            kr sort 67108864 offload2 $b "$r" mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
        done
    done
fi

if [ "$PART" = piecesize ]; then
    bw() { for m in 16 64 256; do echo "mpi-bw 2 ranks ($m MiB)$1: $(timeout 60 mpiexec -n 2 mpi-bw $m 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/machine.txt"; done; }
    bw ""
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for v in new old new+p64; do
            b=${v%+*} pb=
            [ "$v" = new+p64 ] && pb=$((64 << 20))
            WORKSIZE_PIECE_BYTES=$pb ex heat $b "2ranks${pb:++p64}" "$r" 16384 16384 500
            WORKSIZE_PIECE_BYTES=$pb ex kmeans $b "2ranks${pb:++p64}" "$r" 16777216 16 16 20
            WORKSIZE_PIECE_BYTES=$pb mm "offload2${pb:++p64}" $b "$r" mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
        done
    done
    bw ", after"
fi

if [ "$PART" = buildoverlap ]; then
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for b in new prev; do
            ex heat $b 2ranks "$r" 16384 16384 500
            ex kmeans $b 2ranks "$r" 16777216 16 16 20
            ex heat $b 1gpu "$r" 16384 16384 500
            ex kmeans $b 1gpu "$r" 16777216 16 16 20
            ex kmeans $b 1rank2gpus "$r" 16777216 16 16 20
        done
    done
fi

if [ "$PART" = heat16k ]; then
    ex heat new 1rank2gpus 0 1024 1024 200
    export EXAMPLE_NOVERIFY=1
    for cfg in 1rank2gpus 2ranks; do
        rm -f "$OUT/tl-$cfg.csv"*
        WORKSIZE_TIMELINE=$OUT/tl-$cfg.csv ex heat new "$cfg+trace" 1 16384 16384 300
        echo "== heat 16384^2 x 300, $cfg (traced)" >>"$OUT/gaps.txt"
        python3 cluster/timeline_gaps.py "$OUT/tl-$cfg.csv"* >>"$OUT/gaps.txt" 2>&1
    done
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do ex heat new "$cfg" "$r" 16384 16384 500; done
        WORKSIZE_HALO_QUEUE=compute ex heat new 1rank2gpus+hq-compute "$r" 16384 16384 500
    done
    rm -f "$OUT"/tl-*
fi

if [ "$PART" = staging ]; then
    for cfg in 2ranks 1rank2gpus; do ex heat new "$cfg" 0 1024 1024 200; ex kmeans new "$cfg" 0 1000000 16 16 5; done
    export EXAMPLE_NOVERIFY=1
    mkdir -p "$OUT/steplog"
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            for b in new old; do WORKSIZE_STEP_LOG=$OUT/steplog/h8k-$cfg-$b-$r.csv ex heat $b "$cfg" "$r" 8192 8192 2000; done
        done
    done
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            for b in new old; do ex heat $b "$cfg" "$r" 16384 16384 500; done
            for b in new old; do ex kmeans $b "$cfg" "$r" 16777216 16 16 20; done
        done
    done
    python3 cluster/step_log.py "$OUT"/steplog/*.csv* >"$OUT/steplog.txt" 2>&1
fi

# plainheat CFG REP W H STEPS ENV... : the plain heat program on the first GPU.
plainheat() {
    local cfg=$1 rep=$2 w=$3 h=$4 n=$5 text res; shift 5
    text=$(env "$@" PLAIN_DEVICE=gpu EXAMPLE_KERNEL_DIR=$PWD/examples/heat timeout 120 plain_heat "$w" "$h" "$n" 2>&1)
    printf '=== heat plain %s rep %s: %s\n%s\n' "$cfg" "$rep" "$*" "$text" >>"$OUT/runs.log"
    res=$(echo "$text" | grep '^plain,' | tail -1)
    echo "heat,${w}x${h}x$n,$cfg,plain,$rep,nan,$(echo "$res" | cut -d, -f5),nan,$(echo "$res" | cut -d, -f6),nan,nan" | tee -a "$OUT/runs.csv"
}
if [ "$PART" = events ]; then
    for cfg in 2ranks 1rank2gpus; do ex heat new "$cfg" 0 1024 1024 200; ex kmeans new "$cfg" 0 1000000 16 16 5; done
    WORKSIZE_OVERLAP_SAMPLE=1 ex heat new 2ranks+every 0 1024 1024 200
    plainheat plain+split+ev 0 1024 512 200 PLAIN_SPLIT=1 PLAIN_EVENTS=1
    export EXAMPLE_NOVERIFY=1
    mkdir -p "$OUT/steplog"
    for r in $(seq "$REPS"); do
        late && break
        for b in new old; do ex heat $b 1gpu "$r" 8192 8192 2000; done
        for cfg in 1rank2gpus 2ranks; do
            for b in new old; do WORKSIZE_STEP_LOG=$OUT/steplog/h8k-$cfg-$b-$r.csv ex heat $b "$cfg" "$r" 8192 8192 2000; done
            WORKSIZE_OVERLAP_SAMPLE=1 WORKSIZE_STEP_LOG=$OUT/steplog/h8k-$cfg+every-new-$r.csv ex heat new "$cfg+every" "$r" 8192 8192 2000
        done
        plainheat plain "$r" 8192 4096 2000 PLAIN_SPLIT=0
        plainheat plain+split "$r" 8192 4096 2000 PLAIN_SPLIT=1
        plainheat plain+split+ev "$r" 8192 4096 2000 PLAIN_SPLIT=1 PLAIN_EVENTS=1
    done
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            for b in new old; do WORKSIZE_STEP_LOG=$OUT/steplog/km-$cfg-$b-$r.csv ex kmeans $b "$cfg" "$r" 16777216 16 16 20; done
        done
        WORKSIZE_SETUP_THREADS=0 WORKSIZE_STEP_LOG=$OUT/steplog/km-1rank2gpus+seq-new-$r.csv ex kmeans new 1rank2gpus+seq "$r" 16777216 16 16 20
    done
    python3 cluster/step_log.py "$OUT"/steplog/*.csv* >"$OUT/steplog.txt" 2>&1
fi

if [ "$PART" = pinned ]; then
    for cfg in 1gpu 1rank2gpus 2ranks; do ex kmeans new "$cfg" 0 1000000 16 16 5; done
    ex kmeans new 1rank2gpus+pageable 0 1000000 16 16 5 --host pageable
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            ex kmeans new "$cfg" "$r" 16777216 16 16 20
            ex kmeans new "$cfg+pageable" "$r" 16777216 16 16 20 --host pageable
        done
    done
fi

if [ "$PART" = shared ]; then
    for cfg in 1rank2gpus 2ranks; do ex kmeans new "$cfg" 0 1000000 16 16 5; ex heat new "$cfg" 0 1024 1024 200; done
    export EXAMPLE_NOVERIFY=1
    mkdir -p "$OUT/steplog"
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            WORKSIZE_STEP_LOG=$OUT/steplog/km-$cfg-$r.csv ex kmeans new "$cfg" "$r" 16777216 16 16 20
        done
        WORKSIZE_STEP_LOG=$OUT/steplog/km-1rank2gpus+pageable-$r.csv ex kmeans new 1rank2gpus+pageable "$r" 16777216 16 16 20 --host pageable
    done
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do ex heat new "$cfg" "$r" 16384 16384 500; done
    done
    python3 cluster/step_log.py "$OUT"/steplog/*.csv* >"$OUT/steplog.txt" 2>&1
fi

if [ "$PART" = gathers ]; then
    for u in "" "UCX_TLS=self,sm" "UCX_TLS=self,posix,cma" "UCX_TLS=self,posix,cma UCX_RNDV_SCHEME=get_zcopy" \
             "UCX_RNDV_SCHEME=get_zcopy"; do
        echo "mpi-bw 2 ranks (256 MiB) ${u:-default}: $(env $u timeout 60 mpiexec -n 2 mpi-bw 256 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/mpibw.txt"
    done
    for cfg in 2ranks 1rank2gpus 3ranks; do ex heat new "$cfg" 0 1024 1024 200; ex kmeans new "$cfg" 0 1000000 16 16 5; done
    MM_SIZE=1000 mm verify-local2ranks new 0 mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even --inputs local
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for b in new old; do ex heat $b 2ranks "$r" 16384 16384 500; ex kmeans $b 2ranks "$r" 16777216 16 16 20; done
        for b in new old; do ex heat $b 2ranks "$r" 8192 8192 2000; ex heat $b 1rank2gpus "$r" 8192 8192 2000; done
    done
    for r in $(seq $((REPS < 2 ? REPS : 2))); do
        late && break
        UCX_TLS=self,sm ex kmeans new 2ranks+sm "$r" 16777216 16 16 20
        UCX_TLS=self,posix,cma UCX_RNDV_SCHEME=get_zcopy ex kmeans new 2ranks+cma "$r" 16777216 16 16 20
    done
    for r in $(seq "$REPS"); do
        late && break
        mm local1 new "$r" env -- --select "0=${G[0]}" --inputs local
        mm local2 new "$r" env -- --select "0=${G[0]}+${G[1]}" --strategy even --inputs local
        mm local2ranks new "$r" mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even --inputs local
    done
fi

# PART=prepared: each rank's step and gather staging made before the ranks' go (new) against the
# build before that (old: the gathers on the lists, their slots made after the go), same call:
# heat 8192^2 x 2000 and k-means over two GPU ranks.
if [ "$PART" = prepared ]; then
    for cfg in 2ranks 3ranks; do ex heat new "$cfg" 0 1024 1024 200; ex kmeans new "$cfg" 0 1000000 16 16 5; done
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for b in new old; do ex heat $b 2ranks "$r" 8192 8192 2000; ex kmeans $b 2ranks "$r" 16777216 16 16 20; done
    done
fi

# PART=pinwrites: why k-means' pinned points go onto two GPUs of one rank slower than heat's
# (docs/results/pinned-h200-x2/shared/). First `h2d-bw` (cluster/h2d-bw.c: pinned writes of 256
# MiB to 1 GiB onto each GPU alone and both at once, from memory pinned in each GPU's context or
# in one context over both, whole and in 64 MiB writes, the first of four repeats into new
# buffers) into h2dbw.csv; then k-means 4 M (256 MiB) and 16.8 M (1 GiB) on the first GPU, the
# second alone (1gpuB), two in one rank and two in one rank set up one after the other
# (WORKSIZE_SETUP_THREADS=0, +seq), one write per device against writes of 64 MiB
# (WORKSIZE_PINNED_WRITE_BYTES, +w64), each device's write time in the step logs (steplog.txt).
if [ "$PART" = pinwrites ]; then
    timeout 120 h2d-bw 256 512 1024 >"$OUT/h2dbw.csv" 2>&1
    echo "h2d-bw: rc $?" | tee -a "$OUT/machine.txt"
    ex kmeans new 1rank2gpus 0 1000000 16 16 5
    export EXAMPLE_NOVERIFY=1
    mkdir -p "$OUT/steplog"
    for r in $(seq "$REPS"); do
        late && break
        for n in 4194304 16777216; do
            for cfg in 1gpu 1gpuB 1rank2gpus 1rank2gpus+seq; do
                [ $n = 4194304 ] && [ $cfg != 1gpu ] && [ $cfg != 1rank2gpus ] && continue
                seq=1; [ $cfg = 1rank2gpus+seq ] && seq=0
                WORKSIZE_SETUP_THREADS=$seq WORKSIZE_STEP_LOG=$OUT/steplog/km$n-$cfg-$r.csv ex kmeans new "$cfg" "$r" $n 16 16 20
                WORKSIZE_SETUP_THREADS=$seq WORKSIZE_PINNED_WRITE_BYTES=67108864 WORKSIZE_STEP_LOG=$OUT/steplog/km$n-$cfg+w64-$r.csv \
                    ex kmeans new "$cfg+w64" "$r" $n 16 16 20
            done
        done
    done
    python3 cluster/step_log.py "$OUT"/steplog/*.csv* >"$OUT/steplog.txt" 2>&1
fi

# PART=outputs: k-means' labels and filter2d's output image declared no_init (an output only:
# rank 0's memory is not sent or written onto the devices) in this build (new) against the build
# before (old: both uploaded), same call: k-means 16.8 M x 16, k 16, 20 iterations on one GPU, two
# in one rank and two GPU ranks (whole runs; the step logs with each input write's host and
# device times, steplog.txt), filter2d 8192^2 x 20 on one GPU (setup).
if [ "$PART" = outputs ]; then
    for cfg in 1rank2gpus 2ranks; do ex kmeans new "$cfg" 0 1000000 16 16 5; ex filter2d new "$cfg" 0 1024 1024 5; done
    export EXAMPLE_NOVERIFY=1
    mkdir -p "$OUT/steplog"
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            for b in new old; do WORKSIZE_STEP_LOG=$OUT/steplog/km-$cfg-$b-$r.csv ex kmeans $b "$cfg" "$r" 16777216 16 16 20; done
        done
        for b in new old; do ex filter2d $b 1gpu "$r" 8192 8192 20; done
    done
    python3 cluster/step_log.py "$OUT"/steplog/*.csv* >"$OUT/steplog.txt" 2>&1
    tar -czf "$OUT/steplog.tgz" -C "$OUT" steplog && rm -rf "$OUT/steplog"
fi

# PART=final: this build's figures for every two-GPU goal of issue 26 in one call. Verified
# first (heat 1024^2, k-means 1 M in each layout, pageable and rank-local points, matmul 1000
# rank-local over two ranks), then REPS rounds of: heat 8192^2 x 2000 and 16384^2 x 500 and
# k-means 16.8 M (rank 0's pinned points, and --points local: each rank makes its own) on one
# GPU, two in one rank and two GPU ranks; matmul 8192 with rank-local inputs on one GPU, two in
# one rank and two GPU ranks; k-means from pageable memory on one GPU and two in one rank with
# the freed pinned staging kept (+spare, the default) and released (WORKSIZE_PINNED_SPARE_BYTES=0).
if [ "$PART" = final ]; then
    for cfg in 1rank2gpus 2ranks; do
        ex heat new "$cfg" 0 1024 1024 200
        ex kmeans new "$cfg" 0 1000000 16 16 5
        ex kmeans new "$cfg+local" 0 1000000 16 16 5 --points local
    done
    ex kmeans new 1rank2gpus+pageable 0 1000000 16 16 5 --host pageable
    MM_SIZE=1000 mm verify-local2ranks new 0 mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even --inputs local
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus 2ranks; do
            ex heat new "$cfg" "$r" 8192 8192 2000
            ex heat new "$cfg" "$r" 16384 16384 500
            ex kmeans new "$cfg" "$r" 16777216 16 16 20
            ex kmeans new "$cfg+local" "$r" 16777216 16 16 20 --points local
        done
        mm local1 new "$r" env -- --select "0=${G[0]}" --inputs local
        mm local2 new "$r" env -- --select "0=${G[0]}+${G[1]}" --strategy even --inputs local
        mm local2ranks new "$r" mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even --inputs local
        for cfg in 1gpu 1rank2gpus; do
            ex kmeans new "$cfg+pageable+spare" "$r" 16777216 16 16 20 --host pageable
            WORKSIZE_PINNED_SPARE_BYTES=0 ex kmeans new "$cfg+pageable" "$r" 16777216 16 16 20 --host pageable
        done
    done
fi

# PART=inplace: rank 0's own kernel-job slices with their data moved in place (InputParts: each
# upload straight from the job's memory; OutputInPlace: the download straight into it) against
# the build before them (old, c51a095: packed, then copied), same call. Verified at matmul 1000
# first; then REPS rounds of matmul 8192 from rank 0's memory on one GPU, two in one rank, two GPU
# ranks, and offloaded to two GPU ranks (3 ranks; its bound from mpi-bw's 3-rank rates, before
# and after), kernel times beside (kr.csv); matmul with rank-local inputs on this build; then
# k-means from pageable memory once (its inputs through the same HostCopy); then
# PART=modelphases' bench (the model's one-rank prediction, phase by phase) on this build.
if [ "$PART" = inplace ]; then
    for b in new old; do
        kr matmul 1000 verify-1rank2gpus $b 0 env -- --select "0=${G[0]}+${G[1]}" --strategy even
        kr matmul 1000 verify-2ranks $b 0 mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even
        kr matmul 1000 verify-offload2 $b 0 mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
    done
    ex kmeans new 1rank2gpus+pageable 0 1000000 16 16 5 --host pageable
    for r in $(seq "$REPS"); do
        late && break
        for b in new old; do
            kr matmul "${MM_SIZE:-8192}" rank0-1gpu $b "$r" env -- --select "0=${G[0]}"
            kr matmul "${MM_SIZE:-8192}" rank0-1rank2gpus $b "$r" env -- --select "0=${G[0]}+${G[1]}" --strategy even
            kr matmul "${MM_SIZE:-8192}" rank0-2ranks $b "$r" mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even
            kr matmul "${MM_SIZE:-8192}" offload2 $b "$r" mpiexec -n 3 -- --select "1=${G[0]},2=${G[1]}" --strategy even
        done
        kr matmul "${MM_SIZE:-8192}" local-1gpu new "$r" env -- --select "0=${G[0]}" --inputs local
        kr matmul "${MM_SIZE:-8192}" local-1rank2gpus new "$r" env -- --select "0=${G[0]}+${G[1]}" --strategy even --inputs local
        kr matmul "${MM_SIZE:-8192}" local-2ranks new "$r" mpiexec -n 2 -- --select "0=${G[0]},1=${G[1]}" --strategy even --inputs local
        [ "$r" = 1 ] && for cfg in 1gpu 1rank2gpus; do
            EXAMPLE_NOVERIFY=1 ex kmeans new "$cfg+pageable" "$r" 16777216 16 16 20 --host pageable
        done
    done
    for n in 2 3; do echo "mpi-bw $n ranks (256 MiB), after: $(timeout 60 mpiexec -n $n mpi-bw 256 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/machine.txt"; done
    late || PART=modelphases
fi

# PART=jobfiles: a job file (examples/jobs/saxpy.json, JOB_SIZE items, default 2^26) run from
# rank 0's memory on one GPU and on two in one rank, this build (its buffers in rank 0's pinned
# memory) against the build before the in-place copies (old), alternating, each run verified
# against the single-device reference; makespans into jf.csv.
if [ "$PART" = jobfiles ]; then
    jf() {
        local cfg=$1 build=$2 rep=$3 bin=worksize text ms st; shift 3
        [ "$build" = old ] && bin=worksize_old
        text=$(timeout 100 "$bin" run --job examples/jobs/saxpy.json --size "${JOB_SIZE:-67108864}" "$@" 2>&1)
        printf '=== saxpy %s %s rep %s: %s\n%s\n' "$cfg" "$build" "$rep" "$*" "$text" >>"$OUT/jf.log"
        ms=$(echo "$text" | grep -Eo '^makespan [0-9.]+ ms' | grep -Eo '[0-9.]+')
        st=$(echo "$text" | grep -q '^makespan .*verified' && echo verified || echo FAILED)
        [ -f "$OUT/jf.csv" ] || echo "config,build,rep,makespan_ms,status" >"$OUT/jf.csv"
        echo "$cfg,$build,$rep,${ms:-nan},$st" | tee -a "$OUT/jf.csv"
    }
    for r in $(seq "$REPS"); do
        late && break
        for b in new old; do
            jf 1gpu $b "$r" --select "0=${G[0]}"
            jf 1rank2gpus $b "$r" --select "0=${G[0]}+${G[1]}" --strategy even
        done
    done
fi

# PART=gatherhost: whether rank 0's memory decides the final gather's rate over MPI: heat 16384^2
# x 500 over two GPU ranks with its arrays in pinned memory (Cluster::host_vector, the default)
# against pageable (--host pageable), alternating, with mpi-bw before and after.
if [ "$PART" = gatherhost ]; then
    ex heat new 2ranks+pageable 0 1024 1024 200 --host pageable
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        ex heat new 2ranks "$r" 16384 16384 500
        ex heat new 2ranks+pageable "$r" 16384 16384 500 --host pageable
    done
    echo "mpi-bw 2 ranks (256 MiB), after: $(timeout 60 mpiexec -n 2 mpi-bw 256 2>&1 | tail -2 | tr '\n' ' ')" | tee -a "$OUT/machine.txt"
fi

# PART=modelphases: where `--strategy model`'s prediction of matmul 8192 in one rank driving both
# GPUs misses (-16.3 % in docs/results/model-sim-h200-x2/): bench of even and model on a fresh
# calibration, each strategy's median run phase by phase, measured and predicted (phases.csv).
if [ "$PART" = modelphases ]; then
    export WORKSIZE_DB=$OUT/db.json
    timeout 300 worksize bench --kernel matmul --size "${MM_SIZE:-8192}" --iterations 1 --repeats 3 --strategies even,model \
        --select "0=${G[0]}+${G[1]}" --csv "$OUT/bench.csv" --phases-csv "$OUT/phases.csv" >"$OUT/bench.log" 2>&1
    echo "bench matmul ${MM_SIZE:-8192} 1rank: rc $?" | tee -a "$OUT/machine.txt"
    grep -A6 "^strategy " "$OUT/bench.log"
fi

# PART=plain: one GPU through the engine against the plain single-device programs
# (examples/*/plain_*.cpp), run for run in the same call, by their result lines' seconds (the
# steps and the read-back on both sides): heat 8192^2 x 2000 and 16384^2 x 500, filter2d 8192^2 x
# 20, k-means 16.8 M x 16, k 16, 20 iterations. Into plain.csv (example,size,side,rep,seconds,status).
# pair EXAMPLE REP ARGS...: the plain program, then worksize's example on the first GPU.
pair() {
    local name=$1 rep=$2 text res; shift 2
    [ -f "$OUT/plain.csv" ] || echo "example,size,side,rep,seconds,status" >"$OUT/plain.csv"
    text=$(PLAIN_DEVICE=${PLAIN_DEVICE:-gpu} EXAMPLE_KERNEL_DIR=$PWD/examples/$name timeout 150 "plain_$name" "$@" 2>&1)
    printf '=== %s plain rep %s: %s\n%s\n' "$name" "$rep" "$*" "$text" >>"$OUT/runs.log"
    res=$(echo "$text" | grep '^plain,' | tail -1)
    echo "$name,$(echo "$*" | tr ' ' x),plain,$rep,$(echo "$res" | cut -d, -f5),$(echo "$res" | cut -d, -f6)" | tee -a "$OUT/plain.csv"
    text=$(EXAMPLE_KERNEL_DIR=$PWD/examples/$name timeout 150 "worksize_example_$name" "$@" --select "0=${G[0]}" --local null 2>&1)
    printf '=== %s worksize 1gpu rep %s: %s\n%s\n' "$name" "$rep" "$*" "$text" >>"$OUT/runs.log"
    res=$(echo "$text" | grep '^worksize,' | tail -1)
    echo "$name,$(echo "$*" | tr ' ' x),worksize,$rep,$(echo "$res" | cut -d, -f5),$(echo "$res" | cut -d, -f6)" | tee -a "$OUT/plain.csv"
}
if [ "$PART" = plain ]; then
    pair heat v 1024 1024 200
    pair filter2d v 1024 1024 5
    pair kmeans v 1000000 16 16 5
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        pair heat "$r" 8192 8192 2000
        pair heat "$r" 16384 16384 500
        pair filter2d "$r" 8192 8192 20
        pair kmeans "$r" 16777216 16 16 20
    done
fi

if [ "$PART" = ownstaged ]; then
    for cfg in 1gpu 1rank2gpus; do ex kmeans new "$cfg" 0 1000000 16 16 5; ex heat new "$cfg" 0 1024 1024 200; done
    export EXAMPLE_NOVERIFY=1
    for r in $(seq "$REPS"); do
        late && break
        for cfg in 1gpu 1rank2gpus; do
            ex kmeans new "$cfg" "$r" 16777216 16 16 20
            WORKSIZE_STAGED_UPLOADS=0 ex kmeans new "$cfg+direct" "$r" 16777216 16 16 20
            ex heat new "$cfg" "$r" 16384 16384 500
            WORKSIZE_STAGED_UPLOADS=0 ex heat new "$cfg+direct" "$r" 16384 16384 500
        done
    done
fi

if [ "$PART" = data ]; then
    export WORKSIZE_DB=$OUT/db.json EXAMPLE_NOVERIFY=1
    timeout 120 mpiexec -n 2 worksize calibrate --links --select "0=${G[0]},1=${G[1]}" >"$OUT/links.txt" 2>&1
    timeout 120 worksize calibrate --links --select "0=${G[0]}+${G[1]}" >>"$OUT/links.txt" 2>&1
    for r in $(seq "$REPS"); do
        late && break
        for job in "heat 8192 8192 2000" "kmeans 16777216 16 16 20"; do
            set -- $job
            name=$1; shift
            ex "$name" new 1gpu "$r" "$@"
            for cfg in 1rank2gpus 2ranks; do
                ex "$name" new "$cfg" "$r" "$@"
                STRATEGY=model ex "$name" new "$cfg+model" "$r" "$@"
            done
        done
    done
    # The A/B of PART=ab for heat 16384^2 in one rank, the old build first this time (there the
    # new build ran first, after a run that left the second GPU idle).
    for r in $(seq "$REPS"); do
        late && break
        for b in old new; do ex heat $b 1rank2gpus "ab$r" 16384 16384 500; done
    done
    grep -h "links:\|predicted" "$OUT/runs.log" | sort | uniq -c >"$OUT/model-lines.txt"
fi

python3 - "$OUT" <<'PY' | tee "$OUT/summary.txt"
import csv, statistics, sys, collections
out = sys.argv[1]
t = collections.defaultdict(lambda: collections.defaultdict(list))
for r in csv.DictReader(open(f"{out}/runs.csv")):
    if r["rep"] == "0" or r["status"] not in ("verified", "unverified"):
        continue
    for k in ("setup_ms", "steps_ms", "total_ms", "gather_ms", "gather_gbps"):
        try: v = float(r.get(k) or "nan")
        except ValueError: continue
        if v == v: t[(r["example"], r["size"], r["config"], r["build"])][k].append(v)
med = {k: {m: statistics.median(v) for m, v in d.items() if v} for k, d in t.items()}
for (ex, size, cfg, b), m in sorted(med.items()):
    base = "1gpu+local" if cfg.endswith("+local") else "1gpu"  # local points against local points
    one = med.get((ex, size, base, b), {})
    line = f"{ex} {size} {cfg} {b}: " + ", ".join(f"{k[:-3]} {v:.1f} ms" if k.endswith("_ms") else f"gather rate {v:.2f} GB/s" for k, v in m.items())
    if one and cfg != base:
        line += ", x one GPU: steps %.2f, total %.2f" % (one["steps_ms"] / m["steps_ms"], one["total_ms"] / m["total_ms"])
    print(line)
PY
[ -f "$OUT/mm.csv" ] && python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import csv, statistics, sys, collections
t = collections.defaultdict(list)
for r in csv.DictReader(open(f"{sys.argv[1]}/mm.csv")):
    if r["rep"] != "0" and r["status"] == "verified": t[(r["config"], r["build"])].append(float(r["makespan_ms"]))
for (cfg, b), v in sorted(t.items()):
    print(f"matmul 8192 {cfg} {b}: makespan median {statistics.median(v):.1f} ms ({', '.join(f'{x:.1f}' for x in v)})")
PY
[ -f "$OUT/kr.csv" ] && python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import csv, statistics, sys, collections
t = collections.defaultdict(lambda: ([], []))
for r in csv.DictReader(open(f"{sys.argv[1]}/kr.csv")):
    if r["rep"] != "0" and r["status"] == "verified":
        t[(r["kernel"], r["size"], r["config"], r["build"])][0].append(float(r["makespan_ms"]))
        t[(r["kernel"], r["size"], r["config"], r["build"])][1].append(float(r["kernel_ms"]))
for (k, n, cfg, b), (ms, kms) in sorted(t.items()):
    print(f"{k} {n} {cfg} {b}: makespan median {statistics.median(ms):.1f} ms ({', '.join(f'{x:.1f}' for x in ms)}), "
          f"kernel time median {statistics.median(kms):.2f} ms")
PY
[ -f "$OUT/jf.csv" ] && python3 - "$OUT" <<'PY' | tee -a "$OUT/summary.txt"
import csv, statistics, sys, collections
t = collections.defaultdict(list)
for r in csv.DictReader(open(f"{sys.argv[1]}/jf.csv")):
    if r["status"] == "verified": t[(r["config"], r["build"])].append(float(r["makespan_ms"]))
for (cfg, b), v in sorted(t.items()):
    print(f"saxpy job file {cfg} {b}: makespan median {statistics.median(v):.2f} ms ({', '.join(f'{x:.2f}' for x in v)})")
PY
echo "elapsed $(( $(date +%s) - T0 )) s"
