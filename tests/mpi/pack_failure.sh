#!/usr/bin/env bash
# Rank 0's packing of a worker's slice input throws after the worker was sent its command
# (WORKSIZE_FAULT=pack-throw on rank 0): the worker gets an error header instead of a payload,
# answers, and goes back to serving; the job ends with one clear line and exit 1, and no rank
# waits forever (each run has a time limit).
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"

for kernel in matmul quad; do
  RANK_ENV_0="WORKSIZE_FAULT=pack-throw" mpmd_cmd "$mpx" "$ws" "2 1 2" run "$kernel" --size 64
  run 120 "${MPMD[@]}"
  expect_fail_line 1 "^worksize: error: rank 0: packing the input of rank 1, device .*injected by WORKSIZE_FAULT=pack-throw" \
    "$kernel: rank 0's packing failure ends the job under mpiexec -n 3 with one line"
done

# Without the fault the same job runs (the hook costs nothing).
mpmd_cmd "$mpx" "$ws" "2 1 2" run quad --size 64
run 120 "${MPMD[@]}"
expect_rc 0 "quad under mpiexec -n 3 without the fault"
finish
