#!/usr/bin/env bash
# A lost rank ends the whole job, mpiexec included (issue 28 item 4; docs/cluster.md, "The fault
# model"), in both launch layouts: the docs' MPMD recipe (`mpiexec -disable-auto-cleanup`, every
# worker under `bash -c 'trap "" USR1; "$@"; exit $?'`) and plain `mpiexec -n 3` (hydra's own
# cleanup). Three
# ranks, `kill -9` of a worker in the middle of a command: under the recipe rank 0 names the
# lost rank in one line, exit 1; in both layouts every rank and mpiexec have ended within
# --rank-timeout (2 s) + 5 s of the kill, and no rank outlives mpiexec. tune stops at the first
# lost rank and keeps what it stored before. Each case says how long the job took to end.
# Default tier: run, tune and the heat example under the recipe, run in the plain layout. Full
# tier: run, tune, bench, calibrate and the heat, filter2d and k-means examples in both layouts,
# and k-means under the recipe's older wrapper without the trap (bare-wrapper: hydra's SIGUSR1
# ends the wrapper, hydra then kills rank 0, and a worker whose wrapper is gone used to wait for
# rank 0 forever, spinning; now it ends with its wrapper, launcher::end_with_parent).
#   lost_end.sh WORKSIZE MPIEXEC HEAT FILTER2D KMEANS
ws=$1; mpx=$2; heat=$3; filter2d=$4; kmeans=$5
source "$(dirname "$0")/../lib.sh"
E=(env POCL_MAX_PTHREAD_COUNT=1 POCL_CPU_MAX_CU_NUM=1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
limit=7  # --rank-timeout 2 + 5 s
# mpiexec's exit code under the recipe ORs the ranks' statuses, signals included (hydra's SIGUSR1
# ends a worker's `bash -c` wrapper, MPI_Abort rank 0): any non-zero code counts here.

# killed VICTIM_RANK WHEN PROGRAM ARGS...: PROGRAM with ARGS on three ranks, launched as $LAYOUT
# says (recipe, the default, or plain); kill -9 the victim's PROGRAM once it has spent 2 s of CPU (WHEN=cpu: inside the run; at 1 s a loaded machine's
# worker could still be starting, a loss the start's collectives do not survive: docs/cluster.md,
# "What is not survived"; a calibrate case hung so once), or once $tmp/db.json holds a
# tuning entry (WHEN=db: device 0 is tuned, the victim's device next); sets rc, $out, $err,
# `ended` (whether the job was over $limit s after the kill) and `took` (seconds from the kill to
# the end, to 0.1 s).
killed() {
  local victim=$1 when=$2 prog=$3; shift 3
  local tag="WORKSIZE_TEST_VICTIM=$$.$RANDOM" w1=() w2=()
  # every rank of this case carries `mark`: a rank that outlives mpiexec is found (and ended)
  local mark="WORKSIZE_TEST_CASE=$$.$RANDOM"
  if [ "$victim" = 1 ]; then w1=("$tag"); else w2=("$tag"); fi
  local wrap=(bash -c 'trap "" USR1; "$@"; exit $?' worker) cleanup=(-disable-auto-cleanup)
  if [ "${LAYOUT:-recipe}" = plain ]; then wrap=(); cleanup=(); fi
  if [ "${LAYOUT:-recipe}" = bare-wrapper ]; then wrap=(bash -c '"$@"; exit $?' worker); fi
  timeout --kill-after=5 120 "$mpx" "${cleanup[@]}" -n 1 "${E[@]}" "$mark" "$prog" "$@" \
    : -n 1 "${wrap[@]}" "${E[@]}" "$mark" "${w1[@]}" "$prog" "$@" \
    : -n 1 "${wrap[@]}" "${E[@]}" "$mark" "${w2[@]}" "$prog" "$@" >"$out" 2>"$err" &
  local job=$! pid=""
  for _ in $(seq 1200); do
    for p in $(pgrep -x "$(basename "$prog" | cut -c1-15)"); do
      grep -qz "$tag" /proc/$p/environ 2>/dev/null && pid=$p
    done
    if [ -n "$pid" ] && [ "$when" = cpu ]; then
      local ticks; ticks=$(awk '{print $14 + $15}' /proc/$pid/stat 2>/dev/null || echo 0)
      [ "$ticks" -ge $((2 * $(getconf CLK_TCK))) ] && break
    fi
    if [ -n "$pid" ] && [ "$when" = db ] && grep -q '"tuning"' "$tmp/db.json" 2>/dev/null; then sleep 0.3; break; fi
    sleep 0.1
  done
  ended=no
  if [ -z "$pid" ]; then rc=99; wait "$job"; return; fi
  kill -9 "$pid"
  local t0; t0=$(date +%s%N)
  for _ in $(seq $((limit * 10))); do kill -0 "$job" 2>/dev/null || { ended=yes; break; }; sleep 0.1; done
  took=$(( ($(date +%s%N) - t0) / 100000000 )); took="$((took / 10)).$((took % 10))"
  if [ "$ended" = no ]; then kill -- "$job" 2>/dev/null; fi
  rc=0; wait "$job" || rc=$?
  grep -v 'Killed' "$err" >"$err.tmp"; mv "$err.tmp" "$err"
  # No rank may outlive its mpiexec for long (one spun for 45 minutes after a manual run): a
  # worker told of the loss ends 2 s after rank 0's line (mpi::end_unfinalized), so each case
  # waits up to 5 s more; a rank still there then fails the case and is ended here.
  local left="" ids
  for _ in $(seq 50); do
    left=""
    for p in $(pgrep -x "$(basename "$prog" | cut -c1-15)"); do grep -qz "$mark" /proc/$p/environ 2>/dev/null && left="$left $p"; done
    [ -z "$left" ] && break
    sleep 0.1
  done
  if [ -n "$left" ]; then
    ids=${left# }
    echo "FAIL: rank process(es) $ids outlived mpiexec by 5 s: $(ps -o args= -p "${ids// /,}" | head -n 1)"
    checks=$((checks+1)); fails=$((fails+1))
    kill -9 $left 2>/dev/null
  fi
}

# ended_in WHAT: the job and every rank were over within $limit s of the kill.
ended_in() {
  if [ "$ended" = yes ]; then ok "${LAYOUT:-recipe}: $1: every rank and mpiexec ended within $limit s of the kill (${took} s)"
  else bad "${LAYOUT:-recipe}: $1: the job still ran $limit s after the kill"; fi
}
# named WHAT: under the recipe rank 0 names the lost rank in one line, non-zero exit; in the
# plain layout hydra ends every rank first, so only the exit is non-zero.
named() {
  if [ "${LAYOUT:-recipe}" != recipe ]; then
    if [ "$rc" -ne 0 ]; then ok "${LAYOUT}: $1: non-zero exit ($rc)"; else bad "${LAYOUT}: $1: exit 0 after a lost rank"; fi
  else
    expect_fail_line any "rank 1 on host .* is lost: nothing heard from it for" "recipe: $1: rank 0 names the lost rank, non-zero exit"
  fi
}
lost_run() {
  killed 1 cpu "$ws" run matmul --size 512 --iterations 400 --strategy even --rank-timeout 2
  ended_in run; named run
}
# rank 2's device is tuned second: device 0's result is stored before the loss.
lost_tune() {
  rm -f "$tmp/db.json"
  killed 2 db "$ws" tune --kernel matmul --size 256 --search exhaustive --repeats 3 --baseline-runs 0 --quiet \
    --rank-timeout 2 --db "$tmp/db.json"
  ended_in tune
  if [ "${LAYOUT:-recipe}" = recipe ]; then
    expect_fail_line any "rank 2 on host .* is lost: .*; tune stopped at matmul on device 1 .*, 1 result\(s\) stored before" \
      "recipe: tune: stops at the lost rank, says what it stored, non-zero exit"
  else named tune; fi
  if [ "$(jq '[.entries[] | select(.kind == "tuning")] | length' "$tmp/db.json" 2>/dev/null)" = 1 ]; then
    ok "${LAYOUT:-recipe}: tune: device 0's result was stored before the loss"
  else bad "${LAYOUT:-recipe}: tune: the database lacks device 0's result"; fi
}
# bench (one strategy, one repeat) and calibrate (one size), killed inside a run of each.
lost_bench() {
  killed 1 cpu "$ws" bench --kernel matmul --size 512 --iterations 400 --strategies even --repeats 1 --quiet \
    --rank-timeout 2 --db "$tmp/bench.json"
  ended_in bench; named bench
}
lost_calibrate() {
  killed 1 cpu "$ws" calibrate --kernel matmul --sizes 512 --iterations 400 --min-repeats 1 --max-repeats 1 --quiet \
    --rank-timeout 2 --db "$tmp/cal.json"
  ended_in calibrate; named calibrate
}
# The examples (data jobs on cluster_main), long enough to be killed in their steps.
lost_example() {
  local name=$1; shift
  EXAMPLE_NOVERIFY=1 killed 1 cpu "$@" --rank-timeout 2
  ended_in "example $name"; named "example $name"
}
lost_run; lost_tune
lost_example heat "$heat" 256 256 2000000
LAYOUT=plain lost_run
if full_tier; then
  lost_bench; lost_calibrate
  lost_example filter2d "$filter2d" 1000 1000 100000
  lost_example kmeans "$kmeans" 200000 4 5 100000
  LAYOUT=plain lost_tune; LAYOUT=plain lost_bench; LAYOUT=plain lost_calibrate
  LAYOUT=plain lost_example heat "$heat" 256 256 2000000
  LAYOUT=plain lost_example filter2d "$filter2d" 1000 1000 100000
  LAYOUT=plain lost_example kmeans "$kmeans" 200000 4 5 100000
  LAYOUT=bare-wrapper lost_example kmeans "$kmeans" 200000 4 5 100000
fi
finish
