#!/usr/bin/env bash
# Surviving a lost rank (docs/cluster.md, "The fault model"): a worker killed for real (kill -9)
# or stopped (SIGSTOP, until the job has ended) in the middle of a run is reported by rank 0 as
# lost, by its --rank-timeout deadline (2 s here: "nothing heard from it for"; without the
# deadline the stopped worker would hold the job until the hang guard), rank, host and device
# named, one line, exit 1; with --on-failure replan the job is planned again on
# the ranks left and finishes verified. hydra ends the whole job when a rank dies of a signal, so
# the victim runs under a shell (it exits with 137, as a batch system's launcher reports it) and
# mpiexec gets -disable-auto-cleanup.
ws=$1; mpx=$2
source "$(dirname "$0")/../lib.sh"

E=(env POCL_MAX_PTHREAD_COUNT=1 POCL_CPU_MAX_CU_NUM=1)
# lost_run SIGNAL ARGS...: run matmul on two workers, send SIGNAL to rank 1's worksize once it
# has spent 1.5 s of CPU (it is then inside the timed run, past the start's collectives); sets
# rc, $out and $err.
lost_run() {
  local sig=$1; shift
  local args=(run matmul --size 512 --iterations 40 --strategy even --rank-timeout 2 "$@")
  local tag="WORKSIZE_TEST_VICTIM=$$.$RANDOM"
  timeout --kill-after=10 120 "$mpx" -disable-auto-cleanup -n 1 "${E[@]}" "$ws" "${args[@]}" \
    : -n 1 bash -c 'trap "" USR1; "$@"; exit $?' victim "${E[@]}" "$tag" "$ws" "${args[@]}" \
    : -n 1 "${E[@]}" "$ws" "${args[@]}" >"$out" 2>"$err" &
  local job=$! pid=""
  for _ in $(seq 600); do
    for p in $(pgrep -f -- "$ws run matmul"); do
      if [ "$(cat /proc/$p/comm 2>/dev/null)" = worksize ] && grep -qz "$tag" /proc/$p/environ 2>/dev/null; then pid=$p; fi
    done
    if [ -n "$pid" ]; then
      local ticks; ticks=$(awk '{print $14 + $15}' /proc/$pid/stat 2>/dev/null || echo 0)
      [ "$ticks" -ge $((15 * $(getconf CLK_TCK) / 10)) ] && break
    fi
    sleep 0.1
  done
  if [ -z "$pid" ]; then rc=99; wait "$job"; return; fi
  kill -"$sig" "$pid"
  rc=0; wait "$job" || rc=$?
  [ "$sig" = STOP ] && kill -CONT "$pid" 2>/dev/null  # (MPI_Abort has normally killed it)
  echo "    $sig: the job ended, exit $rc"
  # The shell's own "Killed" notice is not worksize's output.
  grep -v 'Killed' "$err" >"$err.tmp"; mv "$err.tmp" "$err"
}
lost_run KILL
expect_fail_line 1 "rank 1 on host .* \(device '.*'\) is lost: nothing heard from it for" "a killed worker is reported by name, exit 1"

lost_run STOP
expect_fail_line 1 "rank 1 on host .* \(device '.*'\) is lost: nothing heard from it for" "a stopped (hung) worker is reported by name, exit 1"

lost_run KILL --on-failure replan --json
expect_rc 0 "--on-failure replan finishes the job on the worker left"
expect_jq '.verified == true' "the re-planned run is verified"
expect_jq '(.replanned | length) == 1 and (.replanned[0] | test("rank 1 .* is lost"))' "run --json says it re-planned, and why"
expect_jq '[.devices[] | select(.units > 0) | .rank] == [2]' "the re-planned job ran on rank 2 only"
if grep -Eq "warning: rank 1 on host .* is lost: .*re-planning the job on the 1 device\(s\) left" "$err"; then
  ok "a warning says it re-planned"; else bad "no re-planning warning"; fi

# No false alarm: healthy workers under a short --rank-timeout are heard in time (their
# heartbeats come every third of it), three runs of each.
for t in 0.6 1; do
  for i in 1 2 3; do
    mpmd_cmd "$mpx" "$ws" "1 1 1" run matmul --size 256 --iterations 20 --strategy even --rank-timeout "$t" --json
    run 120 "${MPMD[@]}"
    if [ "$rc" -eq 0 ] && jq -e '.verified == true' "$out" >/dev/null; then ok "--rank-timeout $t, run $i: no worker lost, verified"
    else bad "--rank-timeout $t, run $i: a healthy worker was counted lost (exit $rc)"; fi
  done
done

# A bad --on-failure and --rank-timeout are usage errors.
mpmd_cmd "$mpx" "$ws" "1 1" run quad --size 1000 --on-failure retry; run 60 "${MPMD[@]}"
expect_fail_line 2 "--on-failure must be abort or replan, not 'retry'" "--on-failure retry is refused"
mpmd_cmd "$mpx" "$ws" "1 1" run quad --size 1000 --rank-timeout 0; run 60 "${MPMD[@]}"
expect_fail_line 2 "rank-timeout" "--rank-timeout 0 is refused"
finish
