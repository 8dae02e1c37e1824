#!/usr/bin/env bash
# A lost rank ends the whole job, mpiexec included (issue 28 item 4; docs/cluster.md, "The fault
# model"): the docs' MPMD recipe (`mpiexec -disable-auto-cleanup`, every worker under
# `bash -c '"$@"; exit $?'`), three ranks, `kill -9` of a worker in the middle of `run` and of
# `tune`, `bench` and `calibrate`: rank 0 names the lost rank in one line, exit 1, and every rank
# and mpiexec have ended within --rank-timeout (2 s) + 8 s of the kill (the hang guard; a healthy
# worker once sat in MPI_Finalize forever). tune stops at the first lost rank and keeps what it
# stored before. Each case says how long the job took to end after the kill.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"
E=(env POCL_MAX_PTHREAD_COUNT=1 POCL_CPU_MAX_CU_NUM=1)
tmp=$(mktemp -d); trap 'rm -rf "$tmp" "$out" "$err"' EXIT
# mpiexec's exit code under the recipe ORs the ranks' statuses, signals included (hydra's SIGUSR1
# ends a worker's `bash -c` wrapper, MPI_Abort rank 0): any non-zero code counts here.

# killed VICTIM_RANK WHEN ARGS...: the recipe with ARGS on every rank; kill -9 the victim's
# worksize once it has spent 2 s of CPU (WHEN=cpu: inside the run; at 1 s a loaded machine's
# worker could still be starting, a loss the start's collectives do not survive: docs/cluster.md,
# "What is not survived"; a calibrate case hung so once), or once $tmp/db.json holds a
# tuning entry (WHEN=db: device 0 is tuned, the victim's device next); sets rc, $out, $err,
# `ended` (whether the job was over 10 s after the kill) and `took` (seconds from the kill to
# the end, to 0.1 s).
killed() {
  local victim=$1 when=$2; shift 2
  local tag="WORKSIZE_TEST_VICTIM=$$.$RANDOM" w1=() w2=()
  # every rank of this case carries `mark`: a rank that outlives mpiexec is found (and ended)
  local mark="WORKSIZE_TEST_CASE=$$.$RANDOM"
  if [ "$victim" = 1 ]; then w1=("$tag"); else w2=("$tag"); fi
  timeout --kill-after=5 120 "$mpx" -disable-auto-cleanup -n 1 "${E[@]}" "$mark" "$ws" "$@" \
    : -n 1 bash -c '"$@"; exit $?' worker "${E[@]}" "$mark" "${w1[@]}" "$ws" "$@" \
    : -n 1 bash -c '"$@"; exit $?' worker "${E[@]}" "$mark" "${w2[@]}" "$ws" "$@" >"$out" 2>"$err" &
  local job=$! pid=""
  for _ in $(seq 1200); do
    for p in $(pgrep -x worksize); do
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
  for _ in $(seq 100); do kill -0 "$job" 2>/dev/null || { ended=yes; break; }; sleep 0.1; done
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
    for p in $(pgrep -x worksize); do grep -qz "$mark" /proc/$p/environ 2>/dev/null && left="$left $p"; done
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

killed 1 cpu run matmul --size 512 --iterations 400 --strategy even --rank-timeout 2
if [ "$ended" = yes ]; then ok "run: every rank and mpiexec ended within 10 s of the kill (${took} s)"
else bad "run: the job still ran 10 s after the kill"; fi
expect_fail_line any "rank 1 on host .* \(device '.*'\) is lost: nothing heard from it for" "run: rank 0 names the lost rank, non-zero exit"

# rank 2's device is tuned second: device 0's result is stored before the loss.
killed 2 db tune --kernel matmul --size 256 --search exhaustive --repeats 3 --baseline-runs 0 --quiet --rank-timeout 2 \
  --db "$tmp/db.json"
if [ "$ended" = yes ]; then ok "tune: every rank and mpiexec ended within 10 s of the kill (${took} s)"
else bad "tune: the job still ran 10 s after the kill"; fi
expect_fail_line any "rank 2 on host .* is lost: .*; tune stopped at matmul on device 1 .*, 1 result\(s\) stored before" \
  "tune: stops at the lost rank, says what it stored, non-zero exit"
if [ "$(jq '[.entries[] | select(.kind == "tuning")] | length' "$tmp/db.json" 2>/dev/null)" = 1 ]; then
  ok "tune: device 0's result was stored before the loss"
else bad "tune: the database lacks device 0's result"; fi

# bench (one strategy, one repeat) and calibrate (one size), killed inside a run of each.
killed 1 cpu bench --kernel matmul --size 512 --iterations 400 --strategies even --repeats 1 --quiet --rank-timeout 2 \
  --db "$tmp/bench.json"
if [ "$ended" = yes ]; then ok "bench: every rank and mpiexec ended within 10 s of the kill (${took} s)"
else bad "bench: the job still ran 10 s after the kill"; fi
expect_fail_line any "rank 1 on host .* is lost: nothing heard from it for" "bench: rank 0 names the lost rank, non-zero exit"
killed 1 cpu calibrate --kernel matmul --sizes 512 --iterations 400 --min-repeats 1 --max-repeats 1 --quiet --rank-timeout 2 \
  --db "$tmp/cal.json"
if [ "$ended" = yes ]; then ok "calibrate: every rank and mpiexec ended within 10 s of the kill (${took} s)"
else bad "calibrate: the job still ran 10 s after the kill"; fi
expect_fail_line any "rank 1 on host .* is lost: nothing heard from it for" "calibrate: rank 0 names the lost rank, non-zero exit"
finish
