#!/usr/bin/env bash
# --kernel-timeout (docs/user-guide.md, docs/cluster.md "The fault model"): a kernel that never
# ends (tests/jobs/spin.json, which PoCL cannot stop) ends the command once its slice is past the
# limit, with one line on rank 0 naming the kernel, the rank and the device, exit 1, and every
# rank gone: on one rank (its own device), under mpiexec (a worker's device), and in tune (which
# stops at the first such kernel instead of timing its other candidates). Each case runs under a
# time limit far below a hang, and no worksize of the case may be left behind.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"
spin="$(cd "$(dirname "$0")/../jobs" && pwd)/spin.json"
E=(env POCL_MAX_PTHREAD_COUNT=1 POCL_CPU_MAX_CU_NUM=1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT

# left_behind DESCRIPTION: no process of this script's cases still runs (they end themselves).
left_behind() {
  local left; left=$(pgrep -f -- "--job $spin" || true)
  if [ -n "$left" ]; then bad "$1: a rank was left running"; kill -9 $left 2>/dev/null
  else ok "$1: no rank left running"; fi
}

run 40 "${E[@]}" "$ws" run --job "$spin" --iterations 1 --kernel-timeout 2
expect_fail_line 1 "rank 0, device '.*': kernel 'spin' did not finish within 2 s \(--kernel-timeout 2 s per iteration, 1 iteration" \
  "one rank: the kernel that never ends is named with its device, exit 1"
left_behind "one rank"

mpmd_cmd "$mpx" "$ws" "1 1" run --job "$spin" --iterations 1 --kernel-timeout 2
run 40 "${MPMD[@]}"
expect_fail_line 1 "rank 1, device '.*': kernel 'spin' did not finish within 2 s \(--kernel-timeout" \
  "two ranks: the worker's kernel is named with its rank and device, exit 1"
left_behind "two ranks"

# The full tier (each case spins a core for seconds): the limit is per iteration (3 iterations
# get 3 x 1 s, no warm-up run of 1 iteration first), and tune stops at the first.
if full_tier; then
  mpmd_cmd "$mpx" "$ws" "1 1" run --job "$spin" --iterations 3 --warmup 0 --kernel-timeout 1
  run 40 "${MPMD[@]}"
  expect_fail_line 1 "kernel 'spin' did not finish within 3 s \(--kernel-timeout 1 s per iteration, 3 iteration" \
    "the limit is per iteration of the slice"
  left_behind "three iterations"

  mpmd_cmd "$mpx" "$ws" "1 1" tune --job "$spin" --iterations 1 --kernel-timeout 1 --db "$tmp/db.json"
  run 40 "${MPMD[@]}"
  expect_fail_line 1 "rank 1, device '.*': kernel 'spin' did not finish within 1 s" \
    "tune stops at the first kernel past the limit, exit 1"
  left_behind "tune"

fi
run 10 "$ws" run --job "$spin" --kernel-timeout 0
expect_fail_line 2 "kernel-timeout" "--kernel-timeout 0 is refused"
finish
