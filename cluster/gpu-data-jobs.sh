#!/usr/bin/env bash
# The data-job examples (examples/filter2d, heat, kmeans) on one GPU of the GPU machine: each
# through worksize (local size by the paper's rule and NULL) and its plain single-device OpenCL
# program (plain_*), at the same sizes, in the same call, REPS times each; first a verified run
# of each at a size the CPU reference can check. Prints one CSV line per run (and writes
# $OUT/data_jobs.csv): tool,example,size,device-or-ranks,seconds,status.
#   Here:  bash ../shared/gpu-machine/bundle.sh .devbundle build-cc/examples/worksize_example_{filter2d,heat,kmeans} \
#            build-cc/examples/plain_{filter2d,heat,kmeans}
#   There: bash cluster/gpu-data-jobs.sh   (run tool, carry [".devbundle"])
# worksize runs one rank driving the GPU only (--select 0=gpu); the plain programs PLAIN_DEVICE=gpu.
set -uo pipefail
cd "$(dirname "$0")/.."
B=${BUNDLE:-$PWD/.devbundle}
export LD_LIBRARY_PATH=$B/lib PATH=$B/bin:$PATH PLAIN_DEVICE=gpu
OUT=${OUT:-/tmp/data-jobs}
REPS=${REPS:-3}
mkdir -p "$OUT"
CSV=$OUT/data_jobs.csv
: > "$CSV"
{ date -u +%FT%TZ; nvidia-smi -L 2>/dev/null; git rev-parse --short HEAD 2>/dev/null; } | tee "$OUT/machine.txt"

one() {  # one <example> <worksize|plain> <local: paper|null|-> <args...>
    local ex=$1 tool=$2 local=$3; shift 3
    local dir=$PWD/examples/$ex log=$OUT/$ex-$tool-$local.log line
    if [ "$tool" = plain ]; then
        line=$(EXAMPLE_KERNEL_DIR=$dir "$B/bin/plain_$ex" "$@" 2>>"$log")
    else
        line=$(EXAMPLE_KERNEL_DIR=$dir mpiexec -n 1 "$B/bin/worksize_example_$ex" "$@" --select 0=gpu --local "$local" 2>>"$log" | tee -a "$log" | grep "^worksize,")
        line="$line,local=$local"
    fi
    echo "$line" | tee -a "$CSV"
}

# Verified at sizes the CPU reference checks in seconds.
one filter2d plain - 2048 2048 5
one filter2d worksize paper 2048 2048 5
one heat plain - 1024 1024 200
one heat worksize paper 1024 1024 200
one kmeans plain - 1000000 8 16 10
one kmeans worksize paper 1000000 8 16 10

# Verified across ranks: the GPU on rank 1 and the node's CPU (PoCL) on rank 2, halo rows and
# reduction totals crossing MPI between NVIDIA and PoCL devices.
for ex_args in "heat 1024 1024 200" "kmeans 1000000 8 16 10" "filter2d 2048 2048 5"; do
    set -- $ex_args; ex=$1; shift
    EXAMPLE_KERNEL_DIR=$PWD/examples/$ex POCL_MAX_PTHREAD_COUNT=$(( $(nproc) - 3 )) POCL_CPU_MAX_CU_NUM=$(( $(nproc) - 3 )) \
        mpiexec -n 3 "$B/bin/worksize_example_$ex" "$@" --select 1=gpu,2=cpu 2>>"$OUT/$ex-gpu-cpu.log" \
        | tee -a "$OUT/$ex-gpu-cpu.log" | grep "^worksize," | sed 's/$/,gpu+cpu/' | tee -a "$CSV"
done
grep -h "rank [12]:" "$OUT"/heat-gpu-cpu.log | tail -2

# Timed at large sizes (the reference would take minutes: unverified).
export EXAMPLE_NOVERIFY=1
for r in $(seq "$REPS"); do
    for l in plain paper null; do
        t=worksize; [ $l = plain ] && t=plain && l=-
        one filter2d $t $l 8192 8192 20
        one heat $t $l 8192 8192 500
        one kmeans $t $l 4194304 16 16 20
    done
done
echo "--- report of the last worksize heat run"; tail -8 "$OUT/heat-worksize-null.log"
